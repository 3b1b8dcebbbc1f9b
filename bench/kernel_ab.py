#!/usr/bin/env python3
"""Two builds of one model, kernel by kernel, in turns.

    bench/kernel_ab.py MODEL.onnx TESSEL_A TESSEL_B [--threads 1,2] [--rounds 8] [--target T]

Compiles MODEL with each `tessel` binary (kernel cache off, `--dump-ir tir`), finds the kernels
whose TIR differs, then at each thread count runs `TESSEL_A run PKG_A --profile` and `TESSEL_B
run PKG_B --profile` alternately for ROUNDS rounds (each binary runs its own package, so a
runtime change counts too). It prints, per changed kernel, the minimum and median time of each
build, and three summaries: the changed kernels' summed minima and medians, the unchanged ones'
(what the VM's phase did to both), and the median over rounds of the round's changed-kernel
ratio B/A over its unchanged-kernel ratio (paired, so a slow phase that falls on one round
moves both sides of that round alike). The docs' "kernels timed in the model in turns" figures
come from this. Use `chrt -f 10` on a noisy machine.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def functions(tir_text):
    """The primfns of a `--dump-ir tir` file by name."""
    out = {}
    for chunk in re.split(r"\n(?=primfn )", tir_text):
        m = re.match(r"primfn (\w+)", chunk)
        if m:
            out[m.group(1)] = chunk
    return out


def compile_model(tessel, model, target, workdir, tag):
    pkg = os.path.join(workdir, tag + ".tar")
    dump = os.path.join(workdir, tag + "_ir")
    cmd = [tessel, "compile", model, "-o", pkg, "--dump-ir", "tir", "--dump-dir", dump]
    if target:
        cmd += ["--target", target]
    env = dict(os.environ, TESSEL_CACHE_DIR="off")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    with open(os.path.join(dump, "tir.txt")) as f:
        return pkg, functions(f.read())


def profile(tessel, pkg, threads):
    """{kernel: ms} from one `tessel run --profile` (the fastest of its repeats)."""
    env = dict(os.environ, TESSEL_NUM_THREADS=str(threads))
    out = subprocess.run([tessel, "run", pkg, "--profile", "--repeat", "5"], check=True, env=env,
                         capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0].startswith("fused_"):
            times[fields[0]] = float(fields[2])
    if not times:
        sys.exit(f"kernel_ab: no kernel times in `{tessel} run {pkg} --profile`")
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("tessel_a")
    ap.add_argument("tessel_b")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--target", default="", help="passed to `tessel compile --target`")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        pkg_a, tir_a = compile_model(args.tessel_a, args.model, args.target, work, "a")
        pkg_b, tir_b = compile_model(args.tessel_b, args.model, args.target, work, "b")
        if set(tir_a) != set(tir_b):
            print("the builds fuse the model differently: every kernel counts as changed")
        changed = {k for k in tir_b if tir_a.get(k) != tir_b[k]}
        print(f"{len(changed)} of {len(tir_b)} kernels differ")
        if not changed:
            return
        for threads in [int(t) for t in args.threads.split(",")]:
            rounds = []
            for _ in range(args.rounds):
                rounds.append((profile(args.tessel_a, pkg_a, threads),
                               profile(args.tessel_b, pkg_b, threads)))
            report(threads, changed, rounds)


def report(threads, changed, rounds):
    print(f"\n{threads} thread(s), {len(rounds)} rounds: kernel, A min / median, B min / median (ms)")
    for k in sorted(changed, key=lambda k: int(re.findall(r"\d+$", k)[0])):
        a = [r[0][k] for r in rounds if k in r[0]]
        b = [r[1][k] for r in rounds if k in r[1]]
        if a and b:
            print(f"  {k:40} {min(a):8.3f} {statistics.median(a):8.3f}   "
                  f"{min(b):8.3f} {statistics.median(b):8.3f}   B/A {min(b) / min(a):.2f}")

    def sums(pick, side):
        per_kernel = {}
        for r in rounds:
            for k, t in r[side].items():
                if pick(k):
                    per_kernel.setdefault(k, []).append(t)
        return (sum(min(v) for v in per_kernel.values()),
                sum(statistics.median(v) for v in per_kernel.values()))

    for name, pick in (("changed", lambda k: k in changed), ("unchanged", lambda k: k not in changed)):
        (amin, amed), (bmin, bmed) = sums(pick, 0), sums(pick, 1)
        print(f"  {name} kernels summed: minima {amin:.3f} -> {bmin:.3f} ({bmin / amin:.3f}x), "
              f"medians {amed:.3f} -> {bmed:.3f} ({bmed / amed:.3f}x)")
    ratios = []
    for a, b in rounds:
        ca = sum(t for k, t in a.items() if k in changed)
        cb = sum(t for k, t in b.items() if k in changed)
        ua = sum(t for k, t in a.items() if k not in changed)
        ub = sum(t for k, t in b.items() if k not in changed)
        if ca > 0 and ua > 0 and ub > 0:
            ratios.append((cb / ca) / (ub / ua))
    if ratios:
        print(f"  paired: the median over rounds of (changed B/A) / (unchanged B/A) = "
              f"{statistics.median(ratios):.3f} [{' '.join(f'{r:.2f}' for r in ratios)}]")


if __name__ == "__main__":
    main()
