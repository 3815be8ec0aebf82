#!/usr/bin/env python3
"""One table of an attention A/B round: bench_attention's in-turn lines
(KG_BENCH_VS: the default and a candidate timed in turn in one process, best
of 3 rounds; or, for short-query rows, KG_BENCH_DECVS's "times:" lines, the
configuration "def" as the default and CANDIDATE the configuration of that
name) beside bench/torch_attention.py's PyTorch flash / cuDNN times of
the same rows (its own process, right after), and the decision each class
of rows supports.

usage: attn_ab_table.py AB_LOG TORCH_LOG CANDIDATE [--rule=GM:MIN] [CLASS=REGEX ...]

A class is the rows whose case text ("bf16 B32 Hq16 Hkv16 S1024 D64 causal")
matches REGEX. Rule (the round's, fixed before the run): the candidate
becomes the default for a class if the geometric mean of default / candidate
over the class's rows is at least 1.03 and no row of the class is below 0.99
(every row must have both times; a class with a missing row decides
nothing). --rule=GM:MIN sets those two bounds (the round's script fixes them
before the run, e.g. --rule=1.02:0.99).

A class REGEX of "@taken" is the rows where KG_BENCH_DECVS's configs line
shows the candidate's configuration took its change ("pr 1": session 31's
pair); "@nottaken" the others (their times should be level: same plan).
The took column prints 1 / 0 from that line (- without one).

A row the candidate was not timed on (it does not exist there) prints nan
in the cand, def/cand and cd/cand columns and belongs in no class. The
flash / cuDNN columns take TORCH_LOG's rows; with /dev/null (or a log
without the row) they are nan: round s29r1's control tables were printed
that way, while its torch.log had every time.
"""
import math
import re
import sys

ROW = re.compile(r"^(f16|bf16)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([01])\s+([\d.]+)\s")
INTURN = re.compile(r"in turn, best of 3: default \(([^)]*)\) ([\d.]+) us(.*)$")
DECTIMES = re.compile(r"^\s+times:((?:\s+\S+\s+[\d.]+)+)\s*$")
DECCFG = re.compile(r"\[(\S+): [^\]]*? pr (\d)")
TORCH = re.compile(r"^((?:f16|bf16) B\d+ Hq\d+ Hkv\d+ Sq\d+ Sk\d+ D\d+(?: causal)?)\s+([\d.]+)\s+([\d.na]+)\s+([\d.na]+)")


def case_text(dt, B, Hq, Hkv, Sq, Sk, D, causal):
    s = f"{dt} B{B} Hq{Hq} Hkv{Hkv} S{Sq}" if Sq == Sk else f"{dt} B{B} Hq{Hq} Hkv{Hkv} Sq{Sq} Sk{Sk}"
    return s + f" D{D}" + (" causal" if causal else "")


def read_ab(path, cand):
    rows, cur = [], None
    for line in open(path, errors="replace"):
        m = ROW.match(line)
        if m:
            dt, *n = m.groups()[:8]
            B, Hq, Hkv, Sq, Sk, D, causal = map(int, n)
            cur = {"case": case_text(dt, B, Hq, Hkv, Sq, Sk, D, causal),
                   "key": f"{dt} B{B} Hq{Hq} Hkv{Hkv} Sq{Sq} Sk{Sk} D{D}" + (" causal" if causal else ""),
                   "us": float(m.group(9)), "def": None, "cand": None, "took": None}
            rows.append(cur)
            continue
        if cur is not None and "configs (planner" in line:
            for name, pr in DECCFG.findall(line):
                if name == cand:
                    cur["took"] = int(pr)
            continue
        m = DECTIMES.match(line)
        if m and cur is not None:
            t = m.group(1).split()
            named = dict(zip(t[0::2], map(float, t[1::2])))
            cur["def"] = named.get("def")
            cur["cand"] = named.get(cand)
            continue
        m = INTURN.search(line)
        if m and cur is not None:
            cur["def"] = float(m.group(2))
            for part in m.group(3).split("|"):
                part = part.strip()
                if part.startswith(cand + " "):
                    cur["cand"] = float(part[len(cand):].split()[0])
    return rows


def read_torch(path):
    t = {}
    try:
        for line in open(path, errors="replace"):
            m = TORCH.match(line)
            if m:
                t[m.group(1)] = (float(m.group(3)), float(m.group(4)))
    except OSError:
        pass
    return t


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    rows, torch, cand = read_ab(sys.argv[1], sys.argv[3]), read_torch(sys.argv[2]), sys.argv[3]
    gm_min, lo_min = 1.03, 0.99
    rest = []
    for a in sys.argv[4:]:
        if a.startswith("--rule="):
            gm_min, lo_min = (float(x) for x in a[len("--rule="):].split(":"))
        else:
            rest.append(a)
    classes = [a.split("=", 1) for a in rest]
    nan = float("nan")
    print(f"{'case':40} {'default':>8} {'cand':>8} {'def/cand':>8} {'flash':>8} {'cudnn':>8} {'cd/def':>6} "
          f"{'cd/cand':>7} {'took':>4}  class")
    for r in rows:
        fl, cd = torch.get(r["key"], (nan, nan))
        d, c = r["def"] if r["def"] else r["us"], r["cand"]
        sp = d / c if c else nan
        r["ratio"] = sp
        cls = [n for n, rx in classes
               if (rx == "@taken" and r["took"] == 1) or (rx == "@nottaken" and r["took"] == 0)
               or (not rx.startswith("@") and re.search(rx, r["case"]))]
        r["classes"] = cls
        print(f"{r['case']:40} {d:8.1f} {c if c else nan:8.1f} {sp:8.3f} {fl:8.1f} {cd:8.1f} {cd / d:6.3f} "
              f"{cd / c if c else nan:7.3f} {'-' if r['took'] is None else r['took']:>4}  {','.join(cls) or '-'}")
    print(f"# ratios: def/cand > 1 = the candidate ({cand}) faster; cd/x > 1 = x faster than cuDNN")
    timed = [r for r in rows if r["ratio"] == r["ratio"]]
    if timed:
        w = min(timed, key=lambda r: r["ratio"])
        print(f"# worst row: {w['case']} def/cand {w['ratio']:.3f}")
    for name, rx in classes:
        rs = [r for r in rows if name in r["classes"]]
        vals = [r["ratio"] for r in rs]
        if not rs or any(v != v for v in vals):
            print(f"# class {name} ({rx}): {len(rs)} rows, a time missing: no decision")
            continue
        gm = math.exp(sum(math.log(v) for v in vals) / len(vals))
        lo = min(vals)
        take = gm >= gm_min and lo >= lo_min
        print(f"# class {name} ({rx}): {len(rs)} rows, geomean {gm:.3f}, min {lo:.3f} -> "
              f"{'MAKE DEFAULT' if take else 'keep main'} (rule: geomean >= {gm_min:g} and no row < {lo_min:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
