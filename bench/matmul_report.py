#!/usr/bin/env python3
"""Turns matmul_bench's JSON output into the markdown table of docs/benchmarks.md.

With --benchmark_repetitions=R (and --benchmark_enable_random_interleaving=true, so that the
engines' repetitions alternate through the VM's slow and quiet phases) each cell is the median
over the repetitions and the fastest one in parentheses; ratios are of the medians."""
import json
import statistics
import sys
from collections import defaultdict


def parse(path):
    data = json.load(open(path))
    runs = defaultdict(lambda: defaultdict(list))  # (m, n, threads) -> kernel -> [GFLOP/s]
    shares = defaultdict(list)  # (m, n, threads) -> [share of the peak of the scheduled kernel]
    l1_shares = defaultdict(list)  # (m, n, threads) -> [its paired share of the L1 micro-kernel]
    ob_l1_shares = defaultdict(list)  # the same for OpenBLAS
    peaks = []  # the peak per core measured before each run
    l1_over_peak = []  # the L1 micro-kernel's rate over the peak, both measured before each run
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":  # mean, median, stddev: recomputed below
            continue
        name = b["name"].split("/")
        kernel = "/".join(name[:2]) if name[0] == "BM_Tessel" else name[0]
        m = int(b["name"].split("/m:")[1].split("/")[0])
        n = int(b["name"].split("/n:")[1].split("/")[0])
        threads = int(b["name"].split("threads:")[1].split("/")[0])
        gflops = b["GFLOPS"] / 1e9 if b["GFLOPS"] > 1e6 else b["GFLOPS"]
        runs[(m, n, threads)][kernel].append(gflops)
        if "peak_GFLOPS" in b:
            peaks.append(b["peak_GFLOPS"] / threads)
            if kernel == "BM_Tessel/scheduled":
                shares[(m, n, threads)].append(100 * gflops / b["peak_GFLOPS"])
            if "l1_kernel_GFLOPS" in b:
                l1_over_peak.append(100 * b["l1_kernel_GFLOPS"] / b["peak_GFLOPS"])
                paired = {"BM_Tessel/scheduled": l1_shares, "BM_OpenBLAS": ob_l1_shares}.get(kernel)
                if paired is not None:
                    paired[(m, n, threads)].append(100 * b["paired_l1_share"])
    return data["context"], runs, shares, (l1_shares, ob_l1_shares, l1_over_peak), peaks


def cell(values, digits=1, unit=""):
    if not values:  # an engine that --benchmark_filter left out
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}{unit}"
    return f"{med:.{digits}f}{unit} ({max(values):.{digits}f}{unit})"


def ratio(a, b):
    return f"{statistics.median(a) / statistics.median(b):.2f}" if a and b else "-"


def main(path):
    ctx, runs, shares, (l1_shares, ob_l1_shares, l1_over_peak), peaks = parse(path)
    peak = float(ctx["fma_peak_gflops_per_core"])
    repetitions = max(len(v) for k in runs.values() for v in k.values())
    print(f"CPU: {ctx.get('host_name', '?')}, {ctx['num_cpus']} cores at {ctx['mhz_per_cpu']} MHz (reported); "
          f"measured fp32 FMA peak {peak:.1f} GFLOP/s per core at start-up, {min(peaks):.1f}-{max(peaks):.1f} "
          f"before the runs ({ctx['vector_bits']}-bit vectors).")
    print(f"Tessel target `{ctx.get('target', '?')}` ({ctx.get('isa', '?')}), register tile "
          f"{ctx.get('register_tile', '?')}, B {ctx.get('b_operand', 'packed in every call')}.")
    if l1_over_peak:
        print(f"The micro-kernel with its operands in L1 (bench/peak_flops.h) ran at "
              f"{min(l1_over_peak):.0f}-{max(l1_over_peak):.0f}% of the FMA peak before the runs.")
    if repetitions > 1:
        print(f"Median of {repetitions} repetitions, the fastest in parentheses; ratios of the medians.")
    print()
    print("| m x n x k | threads | te default | te scheduled | % of peak | % of L1 kernel, paired | Eigen | OpenBLAS | OpenBLAS % of L1 kernel, paired | scheduled / OpenBLAS | scheduled / Eigen |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    default = {(m, n): k["BM_Tessel/default"] for (m, n, t), k in runs.items() if "BM_Tessel/default" in k}
    for (m, n, t) in sorted(runs, key=lambda k: (k[2], k[0] != k[1], k[1])):
        k = runs[(m, n, t)]
        s, e, o = (k.get(name, []) for name in ("BM_Tessel/scheduled", "BM_Eigen", "BM_OpenBLAS"))
        shape = f"{n}³" if m == n else f"{m} x {n} x {n}"
        share = shares[(m, n, t)]  # each run's GFLOP/s over the peak measured before it
        d = cell(default[(m, n)], 2) if (m, n) in default else "-"
        print(f"| {shape} | {t} | {d} | {cell(s)} | {cell(share, 0, '%')} | "
              f"{cell(l1_shares[(m, n, t)], 0, '%')} | {cell(e)} | {cell(o)} | "
              f"{cell(ob_l1_shares[(m, n, t)], 0, '%')} | {ratio(s, o)} | "
              f"{ratio(s, e)} |")
    print("\nAll figures in GFLOP/s; the default kernel is single-threaded whatever the pool size. "
          "% of peak: each run over the FMA peak measured just before it. % of L1 kernel, paired: "
          "the median over a run's calls of each call's rate over the L1 micro-kernel's measured "
          "right after it (times the threads).")


if __name__ == "__main__":
    main(sys.argv[1])
