#ifndef NOUGHTYTOURS_CHEIF_SHIM_H
#define NOUGHTYTOURS_CHEIF_SHIM_H
#include <libheif/heif.h>
#endif
