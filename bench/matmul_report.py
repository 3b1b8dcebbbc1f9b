#!/usr/bin/env python3
"""Turns matmul_bench's JSON output into the markdown table of docs/benchmarks.md."""
import json
import sys
from collections import defaultdict


def main(path):
    data = json.load(open(path))
    ctx = data["context"]
    peak = float(ctx["fma_peak_gflops_per_core"])
    rows = defaultdict(dict)  # (m, n, threads) -> kernel -> GFLOP/s
    for b in data["benchmarks"]:
        name = b["name"].split("/")
        kernel = "/".join(name[:2]) if name[0] == "BM_Tessel" else name[0]
        m = int(b["name"].split("/m:")[1].split("/")[0])
        n = int(b["name"].split("/n:")[1].split("/")[0])
        threads = int(b["name"].split("threads:")[1].split("/")[0])
        rows[(m, n, threads)][kernel] = b["GFLOPS"] / 1e9 if b["GFLOPS"] > 1e6 else b["GFLOPS"]
    default = {(m, n): k["BM_Tessel/default"] for (m, n, t), k in rows.items() if "BM_Tessel/default" in k}
    print(f"CPU: {ctx.get('host_name', '?')}, {ctx['num_cpus']} cores at {ctx['mhz_per_cpu']} MHz (reported); "
          f"measured fp32 FMA peak {peak:.1f} GFLOP/s per core ({ctx['vector_bits']}-bit vectors).")
    print(f"Tessel target `{ctx.get('target', '?')}` ({ctx.get('isa', '?')}), register tile "
          f"{ctx.get('register_tile', '?')}, B {ctx.get('b_operand', 'packed in every call')}.\n")
    print("| m x n x k | threads | te default | te scheduled | % of peak | Eigen | OpenBLAS | scheduled / OpenBLAS | scheduled / Eigen |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (m, n, t) in sorted(rows, key=lambda k: (k[2], k[0] != k[1], k[1])):
        k = rows[(m, n, t)]
        s, e, o = k["BM_Tessel/scheduled"], k["BM_Eigen"], k["BM_OpenBLAS"]
        shape = f"{n}³" if m == n else f"{m} x {n} x {n}"
        print(f"| {shape} | {t} | {default.get((m, n), float('nan')):.2f} | {s:.1f} | {100 * s / (peak * t):.0f}% | "
              f"{e:.1f} | {o:.1f} | {s / o:.2f} | {s / e:.2f} |")
    print("\nAll figures in GFLOP/s; the default kernel is single-threaded whatever the pool size.")


if __name__ == "__main__":
    main(sys.argv[1])
