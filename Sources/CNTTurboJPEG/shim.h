#ifndef NOUGHTYTOURS_CTURBOJPEG_SHIM_H
#define NOUGHTYTOURS_CTURBOJPEG_SHIM_H
#include <stddef.h>
#include <turbojpeg.h>
#endif
