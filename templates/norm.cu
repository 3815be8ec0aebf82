@-- norm.cu - template of one normalization module (one dtype).
@-- For each op: a functor (statistics kind, apply and results, from the
@-- catalogue) and one kernel per class, each a call into norm.cuh.
$(header)/*
 * Normalizations over $(dtype.name) inputs, accumulating in $(acc). Classes:
 * $(table.concat(classes, ", ")) (see templates/norm_params.h). Rows move $(vec)
 * elements per 16-byte load.
 */
#include "norm.cuh"
@for _, f in ipairs(functors) do
$(functor_struct(f))
extern "C" __global__ void __launch_bounds__($(f.rows_bound)) $(f.name)_rows(const kg_norm_args A) { kg_norm_rows<$(f.name), $(vec), 1, $(rows_nv), false, false>(A); }
@if f.residual == "true" then
extern "C" __global__ void __launch_bounds__(KG_NORM_MAX_GROUP, 1) $(f.name)_rows_res(const kg_norm_args A) { kg_norm_rows<$(f.name), $(vec), 1, $(rows_nv), false, true>(A); }
@end
extern "C" __global__ void __launch_bounds__(KG_NORM_LEAN_MAX_T, 1) $(f.name)_lean4(const kg_norm_args A) { kg_norm_lean<$(f.name), $(vec), 4, false>(A); }
extern "C" __global__ void __launch_bounds__(KG_NORM_LEAN_MAX_T, 1) $(f.name)_lean8(const kg_norm_args A) { kg_norm_lean<$(f.name), $(vec), 8, false>(A); }
@if f.residual == "true" then
extern "C" __global__ void __launch_bounds__(KG_NORM_MAX_GROUP, 1) $(f.name)_lean4_res(const kg_norm_args A) { kg_norm_lean<$(f.name), $(vec), 4, true>(A); }
extern "C" __global__ void __launch_bounds__(KG_NORM_MAX_GROUP, 1) $(f.name)_lean8_res(const kg_norm_args A) { kg_norm_lean<$(f.name), $(vec), 8, true>(A); }
@end
@if f.loose then
extern "C" __global__ void __launch_bounds__(KG_NORM_MAX_GROUP, 1) $(f.name)_lean4l(const kg_norm_args A) { kg_norm_lean<$(f.name), $(vec), 4, false>(A); }
extern "C" __global__ void __launch_bounds__(KG_NORM_MAX_GROUP, 1) $(f.name)_lean8l(const kg_norm_args A) { kg_norm_lean<$(f.name), $(vec), 8, false>(A); }
@end
@for _, v in ipairs(f.variants) do
extern "C" __global__ void __launch_bounds__($(v.bound)) $(f.name)_$(v.class)(const kg_norm_args A) { $(v.fn or "kg_norm_lean")<$(f.name), $(vec), $(v.nv), $(v.res and "true" or "false"), $(v.x)>(A); }
@end
@if f.leanu then
extern "C" __global__ void __launch_bounds__(KG_NORM_LEAN_MAX_T, 1) $(f.name)_leanu4(const kg_norm_args A) { kg_norm_leanu<$(f.name), $(vec), 4, false>(A); }
extern "C" __global__ void __launch_bounds__(KG_NORM_LEAN_MAX_T, 1) $(f.name)_leanu8(const kg_norm_args A) { kg_norm_leanu<$(f.name), $(vec), 8, false>(A); }
@if f.residual == "true" then
extern "C" __global__ void __launch_bounds__(KG_NORM_MAX_GROUP, 1) $(f.name)_leanu4_res(const kg_norm_args A) { kg_norm_leanu<$(f.name), $(vec), 4, true>(A); }
@end
extern "C" __global__ void __launch_bounds__($(f.u4s_bound)) $(f.name)_leanu4s(const kg_norm_args A) { kg_norm_leanu<$(f.name), $(vec), 4, false, true>(A); }
extern "C" __global__ void __launch_bounds__($(f.u8s_bound)) $(f.name)_leanu8s(const kg_norm_args A) { kg_norm_leanu<$(f.name), $(vec), 8, false, true>(A); }
@if f.residual == "true" then
extern "C" __global__ void __launch_bounds__(KG_NORM_MAX_GROUP, 1) $(f.name)_leanu4s_res(const kg_norm_args A) { kg_norm_leanu<$(f.name), $(vec), 4, true, true>(A); }
@end
extern "C" __global__ void __launch_bounds__(KG_NORM_LEAN_MAX_T, 1) $(f.name)_leanw8(const kg_norm_args A) { kg_norm_lean<$(f.name), $(f.wvec), 8, false, $(f.wx)>(A); }
extern "C" __global__ void __launch_bounds__(KG_NORM_LEAN_MAX_T, 1) $(f.name)_leanw16(const kg_norm_args A) { kg_norm_lean<$(f.name), $(f.wvec), 16, false, $(f.wx)>(A); }
@if f.residual == "true" then
extern "C" __global__ void __launch_bounds__(KG_NORM_MAX_GROUP, 1) $(f.name)_leanw8_res(const kg_norm_args A) { kg_norm_lean<$(f.name), $(f.wvec), 8, true>(A); }
@end
@end
extern "C" __global__ void __launch_bounds__(KG_NORM_THREADS) $(f.name)_packed(const kg_norm_args A) { kg_norm_rows<$(f.name), $(vec), KG_NORM_PACK, 1, false, $(f.residual)>(A); }
extern "C" __global__ void __launch_bounds__($(f.rows_bound)) $(f.name)_strided(const kg_norm_args A) { kg_norm_rows<$(f.name), 1, 1, KG_NORM_NV, true, $(f.residual)>(A); }
extern "C" __global__ void __launch_bounds__(KG_NORM_THREADS) $(f.name)_cols_stats(const kg_norm_args A) { kg_norm_cols_stats<$(f.name)>(A); }
extern "C" __global__ void __launch_bounds__(KG_NORM_THREADS) $(f.name)_cols_apply(const kg_norm_args A) { kg_norm_cols_apply<$(f.name)>(A); }
@if f.colsv then
extern "C" __global__ void __launch_bounds__(KG_NORM_THREADS, 2) $(f.name)_colsv_stats8(const kg_norm_args A) { kg_norm_colsv_stats<$(f.name), 8>(A); }
extern "C" __global__ void __launch_bounds__(KG_NORM_THREADS, 2) $(f.name)_colsv_apply8(const kg_norm_args A) { kg_norm_colsv_apply<$(f.name), 8>(A); }
@end
@end
