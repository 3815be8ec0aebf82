#!/usr/bin/env python3
"""Draws PNG plots from build/bench.json (what `ninja bench` writes):

  elementwise.png  GB/s against size for each op and dtype, kgen solid,
                   PyTorch dashed, with the same-run copy bandwidth as a line
  reduce.png       GB/s per reduction case, kgen and PyTorch, copy line
  gemm.png         TFLOP/s per GEMM case, kgen and PyTorch
  attention.png    TFLOP/s per attention case: kgen, PyTorch flash, cuDNN

usage: python3 bench/plot.py [build/bench.json [out dir, default build/plots]]
Needs matplotlib (pip install matplotlib); a family without cases is skipped.
"""
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot.py needs matplotlib (pip install matplotlib); the results are in the JSON file regardless")


def torch_val(row, key, backend="eager"):
    t = row.get("torch", {}).get(backend)
    return t.get(key) if t else None


def title(rows, what):
    gpu = next((r["gpu"] for r in rows if r.get("gpu")), "?")
    date = next((r["date"][:10] for r in rows if r.get("date")), "?")
    return f"{what} — {gpu}, {date}"


def copy_line(ax, rows):
    copies = [r["gbps"] for r in rows if r["family"] == "limit" and r.get("gbps")]
    if copies:
        ax.axhline(copies[-1], color="black", linestyle=":", linewidth=1,
                   label=f"device copy {copies[-1]:.0f} GB/s (limit)")


def elementwise(rows, out):
    ew = [r for r in rows if r["family"] == "elementwise" and len(r["shape"]) == 1 and r.get("gbps")]
    if not ew:
        return None
    dtypes = list(dict.fromkeys(r["dtype"] for r in ew))
    fig, axes = plt.subplots(1, len(dtypes), figsize=(6 * len(dtypes), 4.8), sharey=True, squeeze=False)
    for ax, dt in zip(axes[0], dtypes):
        cases = [r for r in ew if r["dtype"] == dt]
        names = list(dict.fromkeys(r["case"] for r in cases))
        for i, name in enumerate(names):
            pts = sorted((r["shape"][0], r["gbps"], torch_val(r, "gbps")) for r in cases if r["case"] == name)
            color = f"C{i}"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=f"{name} kgen")
            tp = [(p[0], p[2]) for p in pts if p[2]]
            if tp:
                ax.plot([p[0] for p in tp], [p[1] for p in tp], "x--", color=color, alpha=0.7,
                        label=f"{name} PyTorch")
        copy_line(ax, rows)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("elements")
        ax.set_title(dt)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    axes[0][0].set_ylabel("GB/s (inputs read + output written)")
    fig.suptitle(title(rows, "element-wise bandwidth"))
    fig.tight_layout()
    path = os.path.join(out, "elementwise.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def bars(rows, family, key, unit, out, fname, backends, limit=None):
    cases = [r for r in rows if r["family"] == family and r.get(key)]
    if not cases:
        return None
    labels = [f"{r['case']} {r['dtype']} {'x'.join(map(str, r['shape']))}" for r in cases]
    series = [("kgen", [r[key] for r in cases])]
    for b, label in backends:
        vals = [torch_val(r, key, b) for r in cases]
        if any(vals):
            series.append((label, [v or 0 for v in vals]))
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(cases) * len(series)), 5.5))
    width = 0.8 / len(series)
    for i, (name, vals) in enumerate(series):
        ax.bar([x + i * width for x in range(len(cases))], vals, width, label=name)
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(cases))])
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=7)
    ax.set_ylabel(unit)
    if limit:
        limit(ax, rows)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title(rows, f"{family} ({unit})"))
    fig.tight_layout()
    path = os.path.join(out, fname)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "bench.json")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(src) or ".", "plots")
    if not os.path.exists(src):
        sys.exit(f"plot.py: {src} does not exist: run `ninja bench` on a machine with a GPU first")
    with open(src) as f:
        rows = json.load(f)
    os.makedirs(out, exist_ok=True)
    made = [
        elementwise(rows, out),
        bars(rows, "reduce", "gbps", "GB/s", out, "reduce.png", [("eager", "PyTorch")], limit=copy_line),
        bars(rows, "gemm", "tflops", "TFLOP/s", out, "gemm.png", [("eager", "PyTorch")]),
        bars(rows, "attention", "tflops", "TFLOP/s", out, "attention.png",
             [("flash", "PyTorch flash"), ("efficient", "PyTorch mem-efficient"), ("cudnn", "PyTorch cuDNN")]),
    ]
    made = [m for m in made if m]
    for m in made:
        print("plot.py: wrote", m)
    if not made:
        print(f"plot.py: {src} holds no cases to plot")


if __name__ == "__main__":
    main()
