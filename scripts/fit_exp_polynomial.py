#!/usr/bin/env python3
"""Fits kExpP of codegen/llvm/float_math.cc: exp(r) = 1 + r + r^2 P(r) for |r| <= ln(2) / 2.

Least squares of the relative error on Chebyshev nodes, a coefficient at a time from the lowest:
each is rounded to float32, then the higher ones are fitted again around it. Needs python3-mpmath
(Debian), which is not a build dependency. Prints the coefficients and the fit's relative error.
"""
import struct
import sys

import mpmath as mp

mp.mp.dps = 40
DEGREE = int(sys.argv[1]) if len(sys.argv) > 1 else 4  # of P
NODES = 400


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


half = mp.log(2) / 2
rs = [half * mp.cos(mp.pi * (i + 0.5) / NODES) for i in range(NODES)]


def fit(fixed):
    """P's coefficients (fixed ones kept) minimizing sum ((1 + r + r^2 P(r)) / e^r - 1)^2."""
    free = [j for j in range(DEGREE + 1) if j not in fixed]
    a, b = mp.matrix(NODES, len(free)), mp.matrix(NODES, 1)
    for i, r in enumerate(rs):
        w = 1 / mp.exp(r)
        for k, j in enumerate(free):
            a[i, k] = w * r ** (j + 2)
        b[i] = w * (mp.expm1(r) - r - sum(c * r ** (j + 2) for j, c in fixed.items()))
    x = mp.lu_solve(a.T * a, a.T * b)
    coeffs = dict(fixed)
    coeffs.update({j: x[k] for k, j in enumerate(free)})
    return coeffs


fixed = {}
for j in range(DEGREE + 1):
    fixed[j] = mp.mpf(f32(fit(fixed)[j]))
error = max(abs((1 + r + sum(c * r ** (j + 2) for j, c in fixed.items())) / mp.exp(r) - 1) for r in rs)
print("kExpP =", ", ".join(repr(float(fixed[j])) for j in range(DEGREE + 1)))
print("max relative error before rounding:", mp.nstr(error, 3))
