"""Validated energy-gradient calls for the built-in targets: the checks of :mod:`refvi.estimators`, compiled and
fused with the kernel, so that a public call costs one dispatch (the Python-level validation used to cost more than the
kernel at small sizes).

``<target>_energy_checked(m, C, U, d, code, ...)`` returns ``(status, gm, gC)`` with ``gC`` projected onto V
(``code``: TRIL or DIAG; other structures take the Python path, whose checks need LAPACK).  ``status`` is
``OK``, or the first check that failed: a wrong shape, a non-finite entry of m, C or U, an entry of C outside V, a
diagonal entry <= 0 (outside the domain W of seed 000 §2), a non-finite gradient.  On any failure the caller re-runs
its full Python validation, which raises the error naming the problem: the checks are the same, only compiled.
"""

from __future__ import annotations

from refvi.kernels import energy as ke
from refvi.kernels._jit import jit
from refvi.kernels.structure import DIAG, project_V

OK, BAD_SHAPE, BAD_M, BAD_C, OUTSIDE_V, NOT_IN_DOMAIN, BAD_U, NONFINITE_GRADIENT = range(8)


@jit
def nonfinite(a):
    """Number of NaN / inf entries (x - x is 0 exactly for finite x); branch-free, so it vectorizes."""
    n = 0
    for v in a.ravel():
        n += (v - v) != 0.0
    return n


@jit
def inputs_status(m, C, U, d, code):
    """The checks of ``as_vector(m)``, ``check_scale(C, d, "tril" | "diag")`` and ``as_samples(U)`` on C-contiguous
    float64 arrays, in one pass over C: entries in V must be finite, entries outside V exactly 0 (a NaN or inf there
    also fails), the diagonal > 0."""
    if m.shape[0] != d or C.shape[0] != d or C.shape[1] != d or U.shape[1] != d or U.shape[0] < 1:
        return BAD_SHAPE
    if nonfinite(m):
        return BAD_M
    bad = 0
    outside = 0
    for i in range(d):
        row = C[i]
        lo = i if code == DIAG else 0
        for j in range(lo):
            outside += row[j] != 0.0
        for j in range(lo, i + 1):
            bad += (row[j] - row[j]) != 0.0
        for j in range(i + 1, d):
            outside += row[j] != 0.0
    if bad:
        return BAD_C
    if outside:
        return OUTSIDE_V
    for i in range(d):
        if not C[i, i] > 0.0:
            return NOT_IN_DOMAIN
    if nonfinite(U):
        return BAD_U
    return OK


@jit
def _finish(gm, gC, code):
    """Project gC onto V; a non-finite entry of gm or of the projected gC is reported (entries outside V are 0)."""
    out = project_V(gC, code)
    bad = nonfinite(gm)
    d = out.shape[0]
    for i in range(d):
        row = out[i]
        for j in range(i + 1):
            bad += (row[j] - row[j]) != 0.0
    if bad:
        return NONFINITE_GRADIENT, gm, out
    return OK, gm, out


@jit
def gaussian_energy_checked(m, C, U, d, code, mean, precision):
    st = inputs_status(m, C, U, d, code)
    if st != OK:
        return st, m, C
    gm, gC = ke.gaussian_energy(m, C, U, mean, precision)
    return _finish(gm, gC, code)


@jit
def linear_energy_checked(m, C, U, d, code, X, y, inv_noise_var, inv_prior_var):
    st = inputs_status(m, C, U, d, code)
    if st != OK:
        return st, m, C
    gm, gC = ke.linear_energy(m, C, U, X, y, inv_noise_var, inv_prior_var)
    return _finish(gm, gC, code)


@jit
def logistic_energy_checked(m, C, U, d, code, X, y, inv_prior_var):
    st = inputs_status(m, C, U, d, code)
    if st != OK:
        return st, m, C
    gm, gC = ke.logistic_energy(m, C, U, X, y, inv_prior_var)
    return _finish(gm, gC, code)


@jit
def hierarchical_energy_checked(m, C, U, d, code, X, y, groups, prior_precision):
    st = inputs_status(m, C, U, d, code)
    if st != OK:
        return st, m, C
    gm, gC = ke.hierarchical_energy(m, C, U, X, y, groups, prior_precision)
    return _finish(gm, gC, code)


@jit
def cosine_energy_checked(m, C, U, d, code, alpha, b, phi, beta, z0):
    st = inputs_status(m, C, U, d, code)
    if st != OK:
        return st, m, C
    gm, gC = ke.cosine_energy(m, C, U, alpha, b, phi, beta, z0)
    return _finish(gm, gC, code)
