@-- normc.cu - template of one module of sm_90a kernels (one dtype): CLUSTER,
@-- softmax and log_softmax along an outer axis, each column strip held on
@-- chip by a thread-block cluster (templates/normc.cuh); BULK, the 2-byte
@-- norms with rows staged by the bulk copy engine (templates/normb.cuh). The
@-- functors come from templates/norm_functor.cu, as in norm.cu.
$(header)/*
 * Softmax along an outer axis over $(dtype.name) inputs, accumulating in $(acc):
 * the CLUSTER class (see templates/normc.cuh), configurations $(cfgnames).
 * The 2-byte norms' BULK class (templates/normb.cuh), where this dtype has it.
 */
#include "normb.cuh"
#include "normc.cuh"
#include "normt.cuh"
@for _, f in ipairs(functors) do
$(functor_struct(f))
@for _, k in ipairs(f.ccfgs) do
@if k.one and (k.ek or k.vs) then
extern "C" __global__ void __launch_bounds__($(k.t), $(k.mb)) $(f.name)_cl$(k.id)(const kg_norm_args A) { kg_norm_colt<$(f.name), $(vec), $(k.lpr), $(k.t), $(k.k), $(k.ex and "true" or "false"), $(k.ek and "true" or "false"), $(k.vs and "true" or "false")>(A); }
@elseif k.one then
extern "C" __global__ void __launch_bounds__($(k.t), $(k.mb)) $(f.name)_cl$(k.id)(const kg_norm_args A) { kg_norm_colt<$(f.name), $(vec), $(k.lpr), $(k.t), $(k.k), $(k.ex and "true" or "false")>(A); }
@elseif k.ph then
extern "C" __global__ void __launch_bounds__($(k.t), $(k.mb)) $(f.name)_cl$(k.id)(const kg_norm_args A) { kg_norm_cluster_ph<$(f.name), $(vec), $(k.lpr), $(k.t // 2), $(k.k), $(k.ks), $(k.ex and "true" or "false")>(A); }
@elseif k.p2 or k.vs then
extern "C" __global__ void __launch_bounds__($(k.t), $(k.mb)) $(f.name)_cl$(k.id)(const kg_norm_args A) { kg_norm_cluster<$(f.name), $(vec), $(k.lpr), $(k.t), $(k.k), $(k.ks), $(k.ex and "true" or "false"), $(k.tr and "true" or "false"), $(k.p2 and "true" or "false"), $(k.vs and "true" or "false")>(A); }
@else
extern "C" __global__ void __launch_bounds__($(k.t), $(k.mb)) $(f.name)_cl$(k.id)(const kg_norm_args A) { kg_norm_cluster<$(f.name), $(vec), $(k.lpr), $(k.t), $(k.k), $(k.ks), $(k.ex and "true" or "false"), $(k.tr and "true" or "false")>(A); }
@end
@end
@end
@for _, f in ipairs(bfunctors) do
$(functor_struct(f))
@for _, k in ipairs(f.bcfgs) do
@if k.r then
extern "C" __global__ void __launch_bounds__($(k.t), 1) $(f.name)_bulk$(k.id)(const kg_norm_args A) { kg_norm_bulkwr<$(f.name), $(vec), $(k.t), $(k.nv)>(A); }
@elseif k.w then
extern "C" __global__ void __launch_bounds__($(k.t), 1) $(f.name)_bulk$(k.id)(const kg_norm_args A) { kg_norm_bulkw<$(f.name), $(vec), $(k.t)>(A); }
@else
extern "C" __global__ void __launch_bounds__($(k.t), $(k.mb)) $(f.name)_bulk$(k.id)(const kg_norm_args A) { kg_norm_bulk<$(f.name), $(vec), $(k.nv), $(k.t), $(k.wr and "true" or "false")>(A); }
@end
@end
@end
