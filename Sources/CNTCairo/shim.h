#ifndef NOUGHTYTOURS_CCAIRO_SHIM_H
#define NOUGHTYTOURS_CCAIRO_SHIM_H
#include <cairo.h>
#include <cairo-pdf.h>
#endif
