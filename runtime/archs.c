/*
 * archs.c - what the bundle was built for: the arch list of build.ninja
 * (KG_BUNDLE_ARCHS, KG_BUNDLE_PTX, KG_BUNDLE_ARCHS_TEXT come from its
 * archflags). Below error.c and bundle.c, which both report it.
 */
#include <stddef.h>

#include "internal.h"

#ifndef KG_BUNDLE_ARCHS
#error "build.ninja defines KG_BUNDLE_ARCHS, e.g. -DKG_BUNDLE_ARCHS=\"80,90\" -DKG_BUNDLE_PTX=0"
#endif

int kgi_bundle_supports(int major, int minor)
{
    /* machine code for sm_XY runs on X.Z with Z >= Y; PTX for compute_XY
       (KG_BUNDLE_PTX, 0 when the bundle holds none) is compiled by the
       driver for any X.Z >= X.Y */
    static const int archs[] = {KG_BUNDLE_ARCHS};
    const int cc = major * 10 + minor;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (archs[i] / 10 == major && archs[i] % 10 <= minor)
            return 1;
    return KG_BUNDLE_PTX > 0 && cc >= KG_BUNDLE_PTX;
}

const char *kgi_bundle_archs(void) { return KG_BUNDLE_ARCHS_TEXT; }
