/*
 * kg_red_stripes.h - shared by the host planner (runtime/reduce_plan.c) and
 * the rows kernels (templates/reduce_stripes.cuh): the kg_red_args.run value
 * of a ROWS plan whose splits read interleaved lines of the row (tuning
 * rows_stripes). Its own header so that only the modules with the rows
 * kernels depend on it.
 */
#ifndef KG_RED_STRIPES_H
#define KG_RED_STRIPES_H

/* kg_red_args.run of a ROWS plan in block mode (group KG_RED_THREADS) with
   splits, each split reading lines s, s + splits, ... of KG_RED_THREADS
   16-byte vectors of the row (kg_red_run_stripes); other ROWS plans: 0. */
#define KG_RED_ROWS_STRIPES 2

#endif
