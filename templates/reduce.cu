@-- reduce.cu - template of one reduction module (one input dtype, one group of
@-- classes: gen/reduce.lua). For each op: a functor (identity, map, combine or
@-- better, finish, from the catalogue) and one kernel per class of the group
@-- (`has`), each a call into reduce.cuh.
$(header)/*
 * Reductions over $(dtype.name) inputs. Classes: $(table.concat(classes, ", "))
 * (see templates/kg_reduce_params.h). Rows move $(vec) elements per 16-byte
 * load, columns $(cvec).
 */
#include "reduce.cuh"
@if has.rows then
#include "reduce_stripes.cuh"
@end
@if has.flat and vec == 8 then
#include "reduce_flat_words.cuh"
@end
@if has.nest then
#include "reduce_cover.cuh"
@end
@if has.colsp then
#include "reduce_cols_runs.cuh"
@end
@if has.flatw or has.flatwr then
#include "reduce_flatw.cuh"
@end
@if has.runt then
#include "reduce_runt.cuh"
@end
@if has.slab then
#include "reduce_slab.cuh"
#include "reduce_trans.cuh"
@end
@if has.transv then
#include "reduce_transv.cuh"
@end
@for _, f in ipairs(functors) do

struct $(f.name) {
    typedef $(dtype.storage) in_t;
    typedef $(f.acc) acc_t;
    typedef $(f.out) out_t;
    static constexpr bool indexed = $(f.indexed);
    static constexpr int vec = $(vec);
    static constexpr int cvec = $(cvec);
    static __device__ __forceinline__ acc_t identity() { return $(f.identity); }
    static __device__ __forceinline__ acc_t map(in_t x_)
    {
        const acc_t x = (acc_t)($(f.load));
        return $(f.map);
    }
    static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return $(f.combine); }
    static __device__ __forceinline__ bool better(acc_t a, acc_t b) { return $(f.better); }
    static __device__ __forceinline__ out_t finish(acc_t acc, int64_t n) { return $(f.finish); }
};
@if has.rows then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_MIN_BLOCKS) $(f.name)_rows(const kg_red_args A) { kg_red_rows_any<$(f.name)>(A); }
@end
@if has.cols then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_WALK_MIN_BLOCKS) $(f.name)_cols(const kg_red_args A) { kg_red_cols<$(f.name)>(A); }
@end
@if has.strided32 then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_MIN_BLOCKS) $(f.name)_strided32(const kg_red_args A) { kg_red_strided<$(f.name), uint32_t>(A); }
@end
@if has.strided64 then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_MIN_BLOCKS) $(f.name)_strided64(const kg_red_args A) { kg_red_strided<$(f.name), int64_t>(A); }
@end
@if has.packed then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_MIN_BLOCKS) $(f.name)_packed(const kg_red_args A) { kg_red_rows_packed<$(f.name)>(A); }
@end
@if has.nest then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_WALK_MIN_BLOCKS) $(f.name)_nest(const kg_red_args A) { if (A.vec == KG_RED_NEST_COVER) { if constexpr (!$(f.name)::indexed) kg_red_nest_cover<$(f.name), KG_RED_UNROLL>(A); } else kg_red_nest<$(f.name)>(A); }
@end
@if has.colsn then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_NARROW_MIN_BLOCKS) $(f.name)_colsn(const kg_red_args A) { kg_red_cols_narrow<$(f.name)>(A); }
@end
@if has.nestn then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_NARROW_MIN_BLOCKS) $(f.name)_nestn(const kg_red_args A) { kg_red_nest_v<$(f.name), 1, true>(A); }
@end
@if has.flat and vec == 8 then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_FLAT_MIN_BLOCKS) $(f.name)_flat(const kg_red_args A) { kg_red_flat_words<$(f.name)>(A); }
@elseif has.flat then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_FLAT_MIN_BLOCKS) $(f.name)_flat(const kg_red_args A) { kg_red_flat<$(f.name)>(A); }
@end
@if has.colso then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_OCC_MIN_BLOCKS) $(f.name)_colso(const kg_red_args A) { if constexpr (!$(f.name)::indexed) kg_red_cols<$(f.name), KG_RED_OCC_UNROLL>(A); }
@end
@if has.colsq then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_OCC_MIN_BLOCKS) $(f.name)_colsq(const kg_red_args A) { if constexpr (!$(f.name)::indexed) kg_red_cols_q<$(f.name)>(A); }
@end
@if has.colsp then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_OCC3_MIN_BLOCKS) $(f.name)_colsp(const kg_red_args A) { if constexpr (!$(f.name)::indexed) { if (A.run > 1 && A.vec != KG_RED_CV_SCALAR) kg_red_cols_runs<$(f.name)>(A); else kg_red_cols<$(f.name), KG_RED_OCC3_UNROLL>(A); } }
@end
@if has.nesto then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_OCC_MIN_BLOCKS) $(f.name)_nesto(const kg_red_args A) { if constexpr (!$(f.name)::indexed) { if (A.vec == KG_RED_NEST_COVER) kg_red_nest_cover<$(f.name), KG_RED_OCC_UNROLL>(A); else kg_red_nest<$(f.name), KG_RED_OCC_UNROLL>(A); } }
@end
@if has.colsno then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_OCC_MIN_BLOCKS) $(f.name)_colsno(const kg_red_args A) { if constexpr (!$(f.name)::indexed) kg_red_cols_narrow<$(f.name), KG_RED_OCCN_UNROLL>(A); }
@end
@if has.nestno then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_OCC_MIN_BLOCKS) $(f.name)_nestno(const kg_red_args A) { if constexpr (!$(f.name)::indexed) kg_red_nest_v<$(f.name), 1, true, false, KG_RED_OCCN_UNROLL>(A); }
@end
@if has.tile then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_TILE_MIN_BLOCKS) $(f.name)_tile(const kg_red_args A) { kg_red_tile<$(f.name)>(A); }
@end
@if has.flatw then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_FLAT_MIN_BLOCKS) $(f.name)_flatw(const kg_red_args A) { kg_red_flatw<$(f.name)>(A); }
@end
@if has.flatwo then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_OCC_MIN_BLOCKS) $(f.name)_flatwo(const kg_red_args A) { kg_red_flatw<$(f.name), sizeof($(f.name)::in_t) == 2 ? KG_RED_FLATWO_UNROLL * 2 / 3 : KG_RED_FLATWO_UNROLL>(A); }
@end
@if has.slab then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_SLAB_MIN_BLOCKS) $(f.name)_slab(const kg_red_args A) { if constexpr (!$(f.name)::indexed && sizeof($(f.name)::in_t) <= 4) kg_red_slab<$(f.name)>(A); }
@end
@if has.trans then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_OCC_MIN_BLOCKS) $(f.name)_trans(const kg_red_args A) { if constexpr (!$(f.name)::indexed && sizeof($(f.name)::in_t) <= 4) kg_red_trans<$(f.name)>(A); }
@end
@if has.runt then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_RUNT_MIN_BLOCKS) $(f.name)_runt(const kg_red_args A) { kg_red_runt<$(f.name)>(A); }
@end
@if has.segw then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_RUNT_MIN_BLOCKS) $(f.name)_segw(const kg_red_args A) { kg_red_segw<$(f.name)>(A); }
@end
@if has.flatwr then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_FLAT_MIN_BLOCKS) $(f.name)_flatwr(const kg_red_args A) { kg_red_flatwr<$(f.name), sizeof($(f.name)::in_t) == 2 ? KG_RED_FLATWO_UNROLL * 2 / 3 : KG_RED_FLATWO_UNROLL>(A); }
@end
@if has.transv then
extern "C" __global__ void __launch_bounds__(KG_RED_THREADS, KG_RED_TRANSV_MIN_BLOCKS) $(f.name)_transv(const kg_red_args A) { if constexpr (!$(f.name)::indexed && sizeof($(f.name)::in_t) == 2) kg_red_transv<$(f.name)>(A); }
@end
@end
