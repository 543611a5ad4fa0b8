#!/usr/bin/env python3
"""Plots the size sweep of a tlrt-bench run (bench.json, written with --sweep): GB/s against
elements per operand on a log axis, one colour per op, tlrt solid and ATen dashed, the copy
bandwidth of the same run as a horizontal line.

    plot_bench.py [bench.json] [bench_sweep.png]

Without matplotlib, or without sweep points in the JSON, it says so and exits 0: the plot is an
extra next to bench.md, never a reason for a run to fail.
"""
import json
import os
import sys


def main(argv):
    src = argv[1] if len(argv) > 1 else "bench.json"
    dst = argv[2] if len(argv) > 2 else os.path.join(os.path.dirname(src) or ".",
                                                      "bench_sweep.png")
    with open(src) as f:
        data = json.load(f)
    sweep = data.get("sweep") or []
    if not sweep:
        print(f"plot_bench: {src} has no sweep points (tlrt-bench --sweep); no plot")
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench: matplotlib is not available; plot skipped")
        return 0

    dtypes = list(dict.fromkeys(p["dtype"] for p in sweep))
    copy = data.get("copy_gbps") or 0
    fig, axes = plt.subplots(1, len(dtypes), figsize=(9 * len(dtypes), 6), squeeze=False)
    colours = plt.get_cmap("tab10").colors
    for ax, dtype in zip(axes[0], dtypes):
        points = [p for p in sweep if p["dtype"] == dtype]
        ops = list(dict.fromkeys(p["op"] for p in points))
        for k, op in enumerate(ops):
            mine = sorted((p for p in points if p["op"] == op), key=lambda p: p["size"])
            colour = colours[k % len(colours)]
            ax.plot([p["size"] for p in mine], [p["gbps"] for p in mine], "-o", markersize=3,
                    color=colour, label=f"{op} tlrt")
            aten = [p for p in mine if p.get("aten_gbps", 0) > 0]
            if aten:
                ax.plot([p["size"] for p in aten], [p["aten_gbps"] for p in aten], "--",
                        color=colour, label=f"{op} ATen")
        if copy > 0:
            ax.axhline(copy, color="black", linewidth=1, linestyle=":",
                       label=f"copy {copy:.0f} GB/s")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("elements per operand")
        ax.set_ylabel("GB/s (bytes of one pass over every operand)")
        ax.set_title(f"{dtype}: tlrt solid, ATen dashed")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, ncol=2, loc="upper left")
    fig.suptitle(f"tlrt-bench elementwise sweep on {data.get('device', '?')}, "
                 f"{data.get('date', '')}")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"plot_bench: wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
