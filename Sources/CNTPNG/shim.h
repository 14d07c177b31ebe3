#ifndef NOUGHTYTOURS_CPNG_SHIM_H
#define NOUGHTYTOURS_CPNG_SHIM_H
#include <png.h>
#endif
