#!/usr/bin/env python3
"""Fits the polynomials of codegen/llvm/float_math.cc.

  fit_float_polynomial.py exp   kExpP: exp(r) = 1 + r + r^2 P(r) for |r| <= ln(2) / 2
  fit_float_polynomial.py log   kLogP: log(1 + f) = f - f^2 / 2 + f^3 P(f) for sqrt(1/2) - 1 <= f
                                < sqrt(2) - 1

Least squares of the relative error on Chebyshev nodes, a coefficient at a time from the lowest:
each is rounded to float32, then the higher ones are fitted again around it. Needs python3-mpmath
(Debian), which is not a build dependency. Prints the coefficients and the fit's relative error.
"""
import struct
import sys

import mpmath as mp

mp.mp.dps = 40
NODES = 400

# function: (interval, degree of P, power of the variable that multiplies P, the terms before it)
FITS = {
    "exp": ((-mp.log(2) / 2, mp.log(2) / 2), 4, 2, lambda r: 1 + r, mp.exp),
    "log": ((mp.sqrt(0.5) - 1, mp.sqrt(2) - 1), 7, 3, lambda f: f - f * f / 2, mp.log1p),
}


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def main(name):
    (lo, hi), degree, power, head, target = FITS[name]
    xs = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (i + 0.5) / NODES) for i in range(NODES)]

    def approx(x, coeffs):
        return head(x) + sum(c * x ** (j + power) for j, c in coeffs.items())

    def fit(fixed):
        """P's coefficients (fixed ones kept) minimizing the sum of squared relative errors."""
        free = [j for j in range(degree + 1) if j not in fixed]
        a, b = mp.matrix(NODES, len(free)), mp.matrix(NODES, 1)
        for i, x in enumerate(xs):
            w = 1 / abs(target(x))
            for k, j in enumerate(free):
                a[i, k] = w * x ** (j + power)
            b[i] = w * (target(x) - approx(x, fixed))
        solution = mp.lu_solve(a.T * a, a.T * b)
        coeffs = dict(fixed)
        coeffs.update({j: solution[k] for k, j in enumerate(free)})
        return coeffs

    fixed = {}
    for j in range(degree + 1):
        fixed[j] = mp.mpf(f32(fit(fixed)[j]))
    error = max(abs(approx(x, fixed) / target(x) - 1) for x in xs)
    print(f"k{name.capitalize()}P =", ", ".join(repr(float(fixed[j])) for j in range(degree + 1)))
    print("max relative error before rounding:", mp.nstr(error, 3))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "exp")
