/*
 * reduce_trans.cuh - TRANS (kg_reduce_params.h): value reductions whose
 * outputs lie scattered in the input's order (to be written).
 */
#ifndef KG_REDUCE_TRANS_CUH
#define KG_REDUCE_TRANS_CUH

#include "reduce.cuh"

template <class Op> __device__ __forceinline__ void kg_red_trans(const kg_red_args &A) { (void)A; }

#endif
