"""A user's own model, written as ``numba.njit`` functions: what a refvi user hands to ``CallableTarget``.

One density, a correlated and off-centre Gaussian in d = 3, -log p(z) = 1/2 (z - MEAN)^T PREC (z - MEAN) + const with
PREC's eigenvalues 1, 40 and 1e4 (condition number 1e4) and MEAN 200 units out along the flattest direction, written
twice: per point (``logp(z)``, ``grad_logp(z)``) and batched (``logp_batch(Z)``, ``grad_batch(Z)`` on the rows of Z),
the per-point gradient once more returned as a strided view (``grad_logp_strided``), and as a PyMC model
(:func:`pymc_model`, for refvi's ``from_pymc``, when PyMC is installed).  Each function is compiled on first use and
cached on disk (``cache=True``, as a user would), and every statement reuses it: instances vary the frame (z0, L), the
start, the base samples and the step sizes, never the compiled model (an implementation's
per-function compilation, refvi's fused loop and frame kernels, is paid once per process and model).

The compiled functions name NumPy ``numpy``: the statements' ``np`` is the provenance ledger's marking wrapper
(:func:`refvi.verification.statement.provenance.instrument`), which Numba cannot type.  The oracle side never
calls these functions: it evaluates the same density from :data:`MODEL`, a plain oracle model dict
(:mod:`refvi.verification.oracles`).
"""

from __future__ import annotations

import functools
import math

import numba
import numpy
import numpy as np

from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar

D = 3
_Q = np.linalg.qr(np.array([[1.0, 0.4, -0.3], [0.2, 1.0, 0.5], [-0.6, 0.1, 1.0]]))[0]
_EIGS = np.array([1.0, 40.0, 1e4])
PREC = np.ascontiguousarray(0.5 * ((_Q * _EIGS) @ _Q.T + ((_Q * _EIGS) @ _Q.T).T))
MEAN = np.ascontiguousarray(200.0 * _Q[:, 0] + np.array([0.5, -1.0, 0.25]))
_CONST = 0.5 * scalar(np.linalg.slogdet(PREC)[1]) - 0.5 * D * math.log(2.0 * math.pi)
M_TRUE, MU_TRUE = scalar(_EIGS[-1]), scalar(_EIGS[0])

#: the oracle's view of the same density
MODEL = {"kind": "gaussian", "mean": MEAN, "precision": PREC}


@numba.njit(cache=True)
def logp(z):
    r = z - MEAN
    return -0.5 * (r @ (PREC @ r)) + _CONST


@numba.njit(cache=True)
def grad_logp(z):
    return -(PREC @ (z - MEAN))


@numba.njit(cache=True)
def grad_logp_strided(z):
    """The same gradient returned as a strided view (every other entry of a buffer), as a user's slice would be: not
    the C-contiguous vector a compiled loop takes, so an implementation has to convert it (refvi: its per-process
    adapter of :mod:`refvi.kernels.userfn`)."""
    buf = numpy.empty(2 * z.shape[0])
    buf[::2] = -(PREC @ (z - MEAN))
    return buf[::2]


@numba.njit(cache=True)
def logp_batch(Z):
    out = numpy.empty(Z.shape[0])
    for s in range(Z.shape[0]):
        r = Z[s] - MEAN
        out[s] = -0.5 * (r @ (PREC @ r)) + _CONST
    return out


@numba.njit(cache=True)
def grad_batch(Z):
    G = numpy.empty_like(Z)
    for s in range(Z.shape[0]):
        G[s] = -(PREC @ (Z[s] - MEAN))
    return G


@functools.cache
def target(batched: bool) -> specs.TargetSpec:
    """The user's model as a ``callable`` target record (its declared constants M, mu are the instance's
    hypotheses); ``batched``: the record also carries the batched functions (refvi then calls those)."""
    extra = {"logp_batch": logp_batch, "grad_batch": grad_batch} if batched else {}
    return specs.from_callables(
        logp,
        grad_logp,
        D,
        smoothness=M_TRUE,
        strong_convexity=MU_TRUE,
        name=f"numba user model ({'batched' if batched else 'per point'})",
        **extra,
    )


def have_pymc() -> bool:
    """Whether PyMC can be imported (the ``pymc`` form of the model needs it)."""
    import importlib.util

    return importlib.util.find_spec("pymc") is not None


def pymc_model():
    """The same density as a PyMC model with two free variables, so the unconstrained vector is assembled from
    several value variables: ``a`` = z[0] ~ N(MEAN[0], Sigma_00) and ``b`` = z[1:] | a, the Gaussian conditional
    (mean MEAN[1:] - P_bb^{-1} P_ba (a - MEAN[0]), precision P_bb), where P = PREC and Sigma = PREC^{-1}: p(a) p(b | a)
    is p(z), normalising constant included."""
    import pymc as pm

    Sigma = np.linalg.inv(PREC)
    P_bb, P_ba = PREC[1:, 1:], PREC[1:, 0]
    with pm.Model() as model:
        a = pm.Normal("a", mu=MEAN[0], sigma=math.sqrt(Sigma[0, 0]))
        pm.MvNormal("b", mu=MEAN[1:] - np.linalg.solve(P_bb, P_ba) * (a - MEAN[0]), tau=P_bb)
    return model


FORMS = ("per-point", "batched", "strided", "pymc")


def target_of(form: str) -> specs.TargetSpec:
    """The model in one of :data:`FORMS`: numba functions per point or batched, per point with the gradient returned
    as a strided view (:func:`grad_logp_strided`), or the PyMC model (whose record still carries the per-point
    functions, for implementations without a PyMC front end)."""
    if form == "pymc":
        return _pymc_target()
    if form == "strided":
        return _strided_target()
    return target(form == "batched")


@functools.cache
def _strided_target() -> specs.TargetSpec:
    return specs.from_callables(
        logp,
        grad_logp_strided,
        D,
        smoothness=M_TRUE,
        strong_convexity=MU_TRUE,
        name="numba user model (per point, strided gradient)",
    )


@functools.cache
def _pymc_target() -> specs.TargetSpec:
    return specs.from_callables(
        logp, grad_logp, D, smoothness=M_TRUE, strong_convexity=MU_TRUE, name="PyMC user model", pymc_model=pymc_model
    )


@numba.njit(cache=True)
def grad_logp_long(z):
    """A user's gradient one entry too long (a bug in the user's model: the implementation must refuse it)."""
    out = numpy.zeros(z.shape[0] + 1)
    out[: z.shape[0]] = -(PREC @ (z - MEAN))
    return out


@numba.njit(cache=True)
def grad_logp_short(z):
    """A user's gradient one entry too short."""
    return -(PREC @ (z - MEAN))[:-1]


@numba.njit(cache=True)
def grad_batch_long(Z):
    """A user's batched gradient with one column too many."""
    G = numpy.zeros((Z.shape[0], Z.shape[1] + 1))
    for s in range(Z.shape[0]):
        G[s, : Z.shape[1]] = -(PREC @ (Z[s] - MEAN))
    return G


@functools.cache
def malformed(what: str) -> specs.TargetSpec:
    """The model with a gradient of the wrong length, per point ("long", "short") or batched ("batch-long")."""
    if what == "batch-long":
        extra = {"logp_batch": logp_batch, "grad_batch": grad_batch_long}
        return specs.from_callables(logp, grad_logp_long, D, smoothness=M_TRUE, name=f"user gradient {what}", **extra)
    grad = {"long": grad_logp_long, "short": grad_logp_short}[what]
    return specs.from_callables(logp, grad, D, smoothness=M_TRUE, name=f"user gradient {what}")
