/*
 * kg_constants_check.c - every constant that two layers (the core and a
 * family, or a family's host and device code) must agree on and that no
 * single header defines for both, tied here by _Static_assert. The default
 * build compiles this file (nothing links it), so a drift fails the build.
 * (The generator checks the enum orders it shares with C: G:check_enum.
 * A tie inside one family's runtime file, e.g. layout.c's, stays there.)
 */
#include "internal.h"
#include "kg_reduce_params.h"
#include "norm_params.h"
#include "reduce_plan.h"

/* dims: what a family's kernel arguments hold against what the boundary
   check lets through */
_Static_assert(KG_RED_MAX_DIMS == KG_MAX_DIMS, "kg_reduce_params.h KG_RED_MAX_DIMS != kg_core.h KG_MAX_DIMS");
_Static_assert(KG_NORM_MAX_DIMS == KG_MAX_DIMS, "norm_params.h KG_NORM_MAX_DIMS != kg_core.h KG_MAX_DIMS");

/* scratch (internal.h's contract): the reduction kernels' semaphores (one
   unsigned each) fit the counters, and the planner's partial results the
   reserve that follows them (it plans within it, no growing) */
_Static_assert(KG_RED_MAX_SEMAPHORES * sizeof(unsigned) <= KG_SCRATCH_COUNTER_BYTES,
               "kg_reduce_params.h: the semaphores exceed the scratch counters");
_Static_assert(KG_RED_PARTIAL_BYTES == KGI_SCRATCH_RESERVE_BYTES - KG_SCRATCH_COUNTER_BYTES,
               "reduce_plan.h's partials != the scratch reserve after the counters");
