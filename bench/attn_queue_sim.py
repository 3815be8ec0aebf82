#!/usr/bin/env python3
"""Simulation of the persistent Hopper prefill kernel's work queue
(attention_sm90.cuh, D 32/64 three-warpgroup kernel, causal, shifted
blocks): the order coords() hands tiles out, each tile's key steps, and the
blocks' ends under a cost model (a us a key step, c us a tile).

Claim model (the producer, attention_sm90.cuh): a block's first tile is
blockIdx.x; it claims the next one (atomicAdd) as its producer starts a
tile, i.e. the tile for slot n+1 is claimed when the producer begins slot
n: at max(consumers done with slot n-2, producer issued the last K/V load
of slot n-1 = consumers within KS=3 key steps of slot n-1's end).
Claims at the same time go in block order with a random tie-break.
usage: att30b_sim.py [B H S D [x: print the queue order]] (default 4 16 1024 64)
       att30b_sim.py table (the round's causal rows, all four configurations)"""
import sys, random, heapq

def plan(B, H, S, D, order):
    # D 32/64: three consumer warpgroups (192 rows), shifted blocks; D 96/128
    # causal (persistent pp): two (128 rows), not shifted
    BM, BN = (192, 128) if D <= 64 else (128, 128)
    nmb = (S + BM - 1) // BM
    shift = nmb * BM - S if D <= 64 else 0
    steps = [min(S, mb * BM - shift + BM) for mb in range(nmb)]
    steps = [(e + BN - 1) // BN if e > 0 else 0 for e in steps]
    kv = S * D * 4
    tiles = []
    if order == "batch":     # main: sections of G heads within each batch
        G = max(1, min(H, (16 << 20) // kv))
        for b in range(B):
            for sec in range(0, H, G):
                gs = min(G, H - sec)
                for mb in range(nmb - 1, -1, -1):
                    for h in range(sec, sec + gs):
                        tiles.append((b, h, mb, steps[mb]))
    elif order in ("global", "global_g"):
        # candidate: sections of (batch, head) pairs across batches, at most
        # G (the 16 MB budget) each; "global": ceil(P / G) sections of equal
        # sizes (within one pair); "global_g": G each, the rest last
        P = B * H
        G = max(1, min(P, (16 << 20) // kv))
        if order == "global_g":
            secs = [(s0, min(G, P - s0)) for s0 in range(0, P, G)]
        else:
            ns = (P + G - 1) // G
            q, r = divmod(P, ns)
            secs, s0 = [], 0
            for i in range(ns):
                gs = q + 1 if i < r else q
                secs.append((s0, gs))
                s0 += gs
        for s0, gs in secs:
            for mb in range(nmb - 1, -1, -1):
                for pr in range(s0, s0 + gs):
                    tiles.append((pr // H, pr % H, mb, steps[mb]))
    return tiles, steps

def simulate(tiles, nsm, a, c, seed=1, ks=3, first=0.0):
    rng = random.Random(seed)
    n = len(tiles)
    nb = min(n, nsm)
    cost = lambda t: c + a * tiles[t][3]
    # per block: list of slots (tile ids), consumer start/end of each slot
    slots = [[i] for i in range(nb)]
    cend = [[] for _ in range(nb)]
    nxt = nb
    # events: (time, tiebreak, block, slot index being begun by the producer)
    ev = [(0.0, rng.random(), i, 0) for i in range(nb)]
    heapq.heapify(ev)
    # consumer timeline computed lazily: slot n starts at end of slot n-1
    def cons_times(bk, upto):
        while len(cend[bk]) <= upto and len(cend[bk]) < len(slots[bk]):
            k = len(cend[bk])
            st = cend[bk][-1] if k else 0.0
            t = slots[bk][k]
            cend[bk].append(st + cost(t) + (first if k == 0 else 0.0))
        return cend[bk]
    while ev:
        tm, _, bk, k = heapq.heappop(ev)
        # producer begins slot k at time tm: claims slot k+1
        if nxt < n:
            slots[bk].append(nxt); nxt += 1
            # when does the producer begin slot k+1? max(cons done slot k-1, cons within ks steps of slot k's end)
            ce = cons_times(bk, k)
            t_k = slots[bk][k]
            st_k = ce[k - 1] if k else 0.0
            near = ce[k] - a * min(ks, tiles[t_k][3])
            ready = max(tm, ce[k - 1] if k >= 1 else 0.0, near)
            heapq.heappush(ev, (ready, rng.random(), bk, k + 1))
    ends = []
    for bk in range(nb):
        ce = cons_times(bk, len(slots[bk]) - 1)
        ends.append(ce[-1])
    return slots, ends

def simulate_late(tiles, nsm, a, c, seed=1, ks=3):
    """The candidate late claim: a block claims slot n+1 once its producer
    has issued slot n's last K/V load (consumers within min(KS, key tiles)
    of slot n's end) and its consumers are done with slot n-1; returns
    the makespan."""
    rng = random.Random(seed)
    n = len(tiles)
    nb = min(n, nsm)
    cost = lambda t: c + a * tiles[t][3]
    cend = [[cost(i)] for i in range(nb)]
    last = list(range(nb))
    ev = [(max(0.0, cend[i][0] - a * min(ks, tiles[i][3])), rng.random(), i) for i in range(nb)]
    heapq.heapify(ev)
    nxt = nb
    while ev:
        t, _, b = heapq.heappop(ev)
        if nxt >= n:
            continue
        cend[b].append(cend[b][-1] + cost(nxt))
        last[b] = nxt
        nxt += 1
        heapq.heappush(ev, (max(t, cend[b][-1] - a * min(ks, tiles[last[b]][3])), rng.random(), b))
    return max(cb[-1] for cb in cend)


ROUND_ROWS = [(4, 16, 1024, 64), (8, 16, 1024, 64), (2, 16, 2048, 64), (4, 16, 2048, 64), (16, 16, 512, 64),
              (32, 16, 512, 64), (4, 32, 1024, 64), (4, 16, 1024, 128), (8, 16, 1024, 128), (32, 16, 1024, 64),
              (3, 20, 4096, 64), (2, 32, 6000, 128), (2, 16, 4096, 64), (4, 16, 4096, 128), (1, 16, 2048, 64),
              (1, 32, 1024, 128)]


def table():
    """The round's causal rows: simulated makespans (median of 11 tie-breaks),
    main / xorder / late / both, with session 21's fit."""
    for B, H, S, D in ROUND_ROWS:
        r = []
        for order in ("batch", "global"):
            tiles, _ = plan(B, H, S, D, order)
            r.append(sorted(max(simulate(tiles, 132, 1.53, 2.6, s)[1]) for s in range(11))[5])
            r.append(sorted(simulate_late(tiles, 132, 1.53, 2.6, s) for s in range(11))[5])
        print(f"B{B:<2} H{H} S{S} D{D}: main {r[0]:6.1f}  xorder {r[2]:6.1f} ({r[0] / r[2]:.3f})  "
              f"late {r[1]:6.1f} ({r[0] / r[1]:.3f})  both {r[3]:6.1f} ({r[0] / r[3]:.3f})")


def main():
    B, H, S, D = (int(x) for x in sys.argv[1:5]) if len(sys.argv) >= 5 else (4, 16, 1024, 64)
    for order in ("batch", "global", "global_g"):
        tiles, steps = plan(B, H, S, D, order)
        print(f"B{B} H{H} S{S} D{D} order {order}: {len(tiles)} tiles, key steps by query block {steps}, "
              f"total {sum(t[3] for t in tiles)}")
        if len(sys.argv) > 5:
            print("  tiles' key steps in queue order:", "".join(chr(48 + t[3]) for t in tiles[:600]))
        for a, c, first in ((1.53, 2.6, 0.0), (1.53, 2.6, 4.0), (1.0, 5.0, 0.0)):
            res = []
            for seed in range(20):
                slots, ends = simulate(tiles, 132, a, c, seed, first=first)
                ends.sort()
                res.append((ends[0], ends[len(ends) // 2], ends[-1], min(len(s) for s in slots), max(len(s) for s in slots)))
            mk = sorted(r[2] for r in res)
            r = res[0]
            print(f"  fit a {a} c {c} first+{first}: ends min/med/max {r[0]:.1f} / {r[1]:.1f} / {r[2]:.1f} "
                  f"(max over 20 tie-breaks {mk[0]:.1f}-{mk[-1]:.1f}), tiles a block {r[3]}-{r[4]}, "
                  f"mean work {sum(c + a * t[3] for t in tiles) / 132:.1f}")

if len(sys.argv) > 1 and sys.argv[1] == "table":
    table()
else:
    main()
