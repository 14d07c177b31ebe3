#ifndef NOUGHTYTOURS_CPOSTGRES_SHIM_H
#define NOUGHTYTOURS_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#endif
