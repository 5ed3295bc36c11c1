"""A vectorizable exp for non-positive arguments and the stable logistic sigmoid built on it.

LLVM cannot vectorize calls to libm ``exp``, and Numba here has no SVML, so a loop of ``math.exp`` runs ~5x slower
than NumPy's SIMD ``exp``.  ``exp_nonpos`` is straight-line arithmetic (Cody-Waite reduction x = k ln 2 + r,
|r| <= ln(2)/2, a degree-13 Taylor polynomial for e^r, and 2^k built from its IEEE-754 bits), so loops over it
vectorize.  Relative error is a few ulp on [-708, 0]; below -708 it returns 0 (the true value is < 3.3e-308).
"""

from __future__ import annotations

import numba
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10
_UNDERFLOW = -708.0


@intrinsic
def _bits_to_float(typingctx, bits):
    """Reinterpret the 64 bits of an int64 as a float64 (an LLVM bitcast, no memory round trip)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@numba.njit(cache=True, inline="always", error_model="numpy")
def exp_nonpos(x):
    """e^x for x <= 0 (finite or -inf); 0 for x < -708.  Positive x is outside the contract."""
    xc = max(x, _UNDERFLOW - 1.0)
    k = float(int(xc * _LOG2E - 0.5))  # round(x log2 e) for x <= 0 (truncation toward 0 of a negative)
    r = (xc - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    # numba's @intrinsic supplies the typing context itself: the jitted call takes the bits only (so mypy sees a
    # missing argument and an untyped result; with other numba versions' annotations it sees neither, hence
    # unused-ignore)
    scale = _bits_to_float((int(k) + 1023) << 52)  # type: ignore[call-arg, var-annotated, unused-ignore]
    return p * scale if x >= _UNDERFLOW else 0.0


@numba.njit(cache=True, inline="always", error_model="numpy")
def sigmoid_neg(a):
    """sigmoid(-a) = 1 / (1 + e^a), evaluated as e^{-|a|} / (1 + e^{-|a|}) or 1 / (1 + e^{-|a|}); never overflows."""
    e = exp_nonpos(-abs(a))
    num = e if a >= 0.0 else 1.0
    return num / (1.0 + e)


@numba.njit(cache=True, inline="always", error_model="numpy")
def log1p_unit(e):
    """log(1 + e) for 0 <= e <= 1 in straight-line arithmetic (vectorizable, unlike libm log1p): with
    s = e / (2 + e) in [0, 1/3], log(1 + e) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...); 17 terms leave a truncation
    below 3^-35 / 35 < 1e-18 relative, so the error is a few ulp (rounding of the division and the Horner sum)."""
    s = e / (2.0 + e)
    z = s * s
    p = 1.0 / 35.0
    p = p * z + 1.0 / 33.0
    p = p * z + 1.0 / 31.0
    p = p * z + 1.0 / 29.0
    p = p * z + 1.0 / 27.0
    p = p * z + 1.0 / 25.0
    p = p * z + 1.0 / 23.0
    p = p * z + 1.0 / 21.0
    p = p * z + 1.0 / 19.0
    p = p * z + 1.0 / 17.0
    p = p * z + 1.0 / 15.0
    p = p * z + 1.0 / 13.0
    p = p * z + 1.0 / 11.0
    p = p * z + 1.0 / 9.0
    p = p * z + 1.0 / 7.0
    p = p * z + 1.0 / 5.0
    p = p * z + 1.0 / 3.0
    return 2.0 * s * (1.0 + z * p)


@numba.njit(cache=True, inline="always", error_model="numpy")
def log1pexp(a):
    """log(1 + e^a) = max(a, 0) + log1p(e^{-|a|}) (numpy.logaddexp(0, a)), vectorizable."""
    return max(a, 0.0) + log1p_unit(exp_nonpos(-abs(a)))
