/*
 * version.c - the library's version and what its embedded bundle holds, for
 * programs that see only the public headers (the demo, bindings, logs).
 */
#include "internal.h"
#include "kg_table.h"
#include "kgen.h" /* KG_VERSION_* */

#define KG_STR_(x) #x
#define KG_STR(x) KG_STR_(x)

const char *kg_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = KG_VERSION_MAJOR;
    if (minor)
        *minor = KG_VERSION_MINOR;
    if (patch)
        *patch = KG_VERSION_PATCH;
    return KG_STR(KG_VERSION_MAJOR) "." KG_STR(KG_VERSION_MINOR) "." KG_STR(KG_VERSION_PATCH);
}

const char *kg_bundle_info(int *kernels, int *modules, size_t *bytes)
{
    if (kernels)
        *kernels = KG_KERNEL_COUNT;
    if (modules)
        *modules = KG_MODULE_COUNT;
    if (bytes) {
        size_t total = 0;
        for (int m = 0; m < KG_MODULE_COUNT; m++)
            total += (size_t)(kg_modules[m].end - kg_modules[m].begin);
        *bytes = total;
    }
    return kg_bundle_archs();
}
