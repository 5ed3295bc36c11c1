"""Targets as plain data: what the seed 000 / 002 statements hand to an implementation as ``target``.

A :class:`TargetSpec` is an immutable record: the model's ``kind``, its data and hyperparameters as read-only arrays
and floats (``params``), the log joint ``logp(z)`` and its gradient ``grad_logp(z)`` as plain NumPy callables, and the
log evidence where it has a closed form.  Nothing in it is refvi code, so an outside library can re-express the
target in its own framework from ``kind`` and ``params`` alone.  The densities, with every constant included:

==========================  ==================================================================  ===================
kind                        log p(z, x)                                                         params
==========================  ==================================================================  ===================
``gaussian``                log N(z; mean, precision^{-1})                                      mean, precision
``linear``                  sum_n log N(y_n; x_n^T z, s_n^2) + log N(z; 0, s^2 I)               X, y, noise_scale
                                                                                                (s_n), prior_scale
                                                                                                (s)
``logistic``                -sum_n log(1 + exp(-y_n x_n^T z)) + log N(z; 0, s^2 I), y_n = +-1   X, y, prior_scale
``hierarchical_logistic``   seed 000 Cor 25: z = (theta, z_1..z_G), theta ~ N(0, Sigma),        X, y, groups,
                            z_g ~ N(theta, Delta), y_n ~ logistic(x_n^T z_{g(n)})               n_groups, Sigma,
                                                                                                Delta
``cosine``                  -(alpha cos(b^T z + phi) + beta/2 ||z - z0||^2)  (unnormalised)     alpha, b, phi,
                                                                                                beta, z0
``callable``                ``logp`` as given; ``params`` carries the problem's declared        smoothness,
                            constants (the instance's hypotheses, not something to compute)     strong_convexity
==========================  ==================================================================  ===================

A ``callable`` record may also carry the same density *batched*, ``logp_batch(Z) -> (S,)`` and
``grad_batch(Z) -> (S, d)`` for the rows of Z (S, d): a user's model written once per batch of points (a
``numba.njit`` or vectorized NumPy function).  They compute the same values as ``logp`` / ``grad_logp`` row by row;
an implementation may call either form (refvi hands the batched form to its compiled loops), and one that ignores
them is still right.  The callables of a record may be ``numba.njit`` functions (statement ``000.claim-user-model``):
they are plain Python callables too.  A ``callable`` record may also carry ``pymc_model``, a function of no
arguments that builds the same density as a ``pymc.Model`` (its unconstrained coordinates in the order of ``z``): an
implementation with a PyMC front end may build its target from that (refvi's ``from_pymc``); the others use ``logp``.

``spec.model`` is the same content as the plain dict the oracles take (:mod:`refvi.verification.oracles`), and
:func:`from_model` builds the spec back from such a dict; :mod:`refvi.verification.protocol.datasets` gives the
scikit-learn data sets as specs.
A spec carries no model constants (M, mu): implementations compute their own, the statements take the oracle's.
A spec is hashable by identity: cache per-target compiled code on it (``functools.lru_cache`` or a dict keyed by
``id(spec)`` kept alive by the spec).
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from refvi.verification.oracles import hessian_bounds as _hb

LOG_2PI = float(np.log(2.0 * np.pi))
KINDS = ("gaussian", "linear", "logistic", "hierarchical_logistic", "cosine", "callable")


@dataclasses.dataclass(frozen=True, eq=False)
class TargetSpec:
    """One target log p(z, x) as plain data (see the module docstring for each kind's density and params)."""

    kind: str
    dim: int
    params: Mapping[str, Any]
    logp: Callable[[np.ndarray], float]
    grad_logp: Callable[[np.ndarray], np.ndarray]
    log_evidence: float | None = None
    name: str = ""
    logp_batch: Callable[[np.ndarray], np.ndarray] | None = None  # "callable" only: the same density on rows (S, d)
    grad_batch: Callable[[np.ndarray], np.ndarray] | None = None
    pymc_model: Callable[[], Any] | None = None  # "callable" only: builds the same density as a pymc.Model

    @property
    def model(self) -> dict:
        """The oracle-side model dict (``{"kind": ..., **params}``)."""
        return {"kind": self.kind, **self.params}

    def __getattr__(self, attr):  # spec.X, spec.prior_scale, ...: read-only views of params
        params = self.__dict__.get("params")
        if params is not None and attr in params:
            return params[attr]
        raise AttributeError(f"TargetSpec of kind {self.__dict__.get('kind')!r} has no attribute {attr!r}")

    def __repr__(self) -> str:
        return f"TargetSpec({self.name or self.kind}, dim={self.dim})"

    def __reduce__(self):
        """Pickled as its model (kind and params), rebuilt by :func:`from_model` (a failing instance's reproducer);
        a ``callable`` spec pickles its callables as they are (module-level functions only)."""
        if self.kind == "callable":
            return (
                _spec,
                (
                    self.kind,
                    self.dim,
                    dict(self.params),
                    self.logp,
                    self.grad_logp,
                    self.log_evidence,
                    self.name,
                    self.logp_batch,
                    self.grad_batch,
                    self.pymc_model,
                ),
            )
        return (from_model, (dict(self.model), self.name))


def _frozen(a) -> np.ndarray:
    out = np.array(a, dtype=np.float64)
    out.setflags(write=False)
    return out


def _spec(
    kind, dim, params, logp, grad, log_evidence=None, name="", logp_batch=None, grad_batch=None, pymc_model=None
) -> TargetSpec:
    params = types.MappingProxyType(dict(params))
    return TargetSpec(kind, int(dim), params, logp, grad, log_evidence, name, logp_batch, grad_batch, pymc_model)


def gaussian(mean, precision, name: str = "") -> TargetSpec:
    mean, P = _frozen(mean), _frozen(precision)
    d = mean.shape[0]
    logdet = float(np.linalg.slogdet(P)[1])

    def logp(z):
        r = np.asarray(z, dtype=np.float64) - mean
        return float(-0.5 * r @ P @ r + 0.5 * logdet - 0.5 * d * LOG_2PI)

    def grad_logp(z):
        return -(P @ (np.asarray(z, dtype=np.float64) - mean))

    return _spec("gaussian", d, {"mean": mean, "precision": P}, logp, grad_logp, 0.0, name)


def _model_callables(model) -> tuple[Callable[[np.ndarray], float], Callable[[np.ndarray], np.ndarray]]:
    return (lambda z: -_hb.neg_log_joint(model, z)), (lambda z: -_hb.grad_neg_log_joint(model, z))


def linear(X, y, noise_scale: float = 1.0, prior_scale: float = 1.0, name: str = "") -> TargetSpec:
    X, y = _frozen(X), _frozen(y)
    params = {"X": X, "y": y, "noise_scale": float(noise_scale), "prior_scale": float(prior_scale)}
    N, d = X.shape
    # log evidence: y ~ N(0, s_n^2 I + s^2 X X^T)
    K = noise_scale**2 * np.eye(N) + prior_scale**2 * X @ X.T
    log_ev = float(-0.5 * y @ np.linalg.solve(K, y) - 0.5 * np.linalg.slogdet(K)[1] - 0.5 * N * LOG_2PI)
    return _spec("linear", d, params, *_model_callables({"kind": "linear", **params}), log_ev, name)


def logistic(X, y, prior_scale: float = 1.0, name: str = "") -> TargetSpec:
    X, y = _frozen(X), _frozen(y)
    params = {"X": X, "y": y, "prior_scale": float(prior_scale)}
    return _spec("logistic", X.shape[1], params, *_model_callables({"kind": "logistic", **params}), None, name)


def hierarchical_logistic(X, y, groups, n_groups: int, Sigma, Delta, name: str = "") -> TargetSpec:
    X, y = _frozen(X), _frozen(y)
    g = np.array(groups, dtype=np.int64)
    g.setflags(write=False)
    params = {"X": X, "y": y, "groups": g, "n_groups": int(n_groups), "Sigma": _frozen(Sigma), "Delta": _frozen(Delta)}
    d = (int(n_groups) + 1) * X.shape[1]
    return _spec(
        "hierarchical_logistic", d, params, *_model_callables({"kind": "hierarchical_logistic", **params}), None, name
    )


def cosine(alpha: float, b, phi: float = 0.0, beta: float = 1.0, z0=None, name: str = "") -> TargetSpec:
    b = _frozen(b)
    z0 = _frozen(np.zeros_like(b) if z0 is None else z0)
    a, p, k = float(alpha), float(phi), float(beta)

    def logp(z):
        z = np.asarray(z, dtype=np.float64)
        r = z - z0
        return float(-(a * np.cos(b @ z + p) + 0.5 * k * r @ r))

    def grad_logp(z):
        z = np.asarray(z, dtype=np.float64)
        return a * np.sin(b @ z + p) * b - k * (z - z0)

    return _spec("cosine", b.shape[0], {"alpha": a, "b": b, "phi": p, "beta": k, "z0": z0}, logp, grad_logp, None, name)


def from_callables(
    logp,
    grad_logp,
    dim: int,
    *,
    smoothness: float | None = None,
    strong_convexity: float = 0.0,
    name: str = "",
    logp_batch=None,
    grad_batch=None,
    pymc_model=None,
) -> TargetSpec:
    """A target given only by its density: the constants are part of the instance (its hypotheses).  ``logp_batch``
    / ``grad_batch``: the same density on the rows of Z (S, d), optional; ``pymc_model``: a function building it as
    a ``pymc.Model``, optional (see the module docstring)."""
    if (logp_batch is None) != (grad_batch is None):
        raise ValueError("give both logp_batch and grad_batch, or neither")
    return _spec(
        "callable",
        dim,
        {"smoothness": smoothness, "strong_convexity": float(strong_convexity)},
        logp,
        grad_logp,
        None,
        name,
        logp_batch,
        grad_batch,
        pymc_model,
    )


def from_model(model: Mapping[str, Any], name: str = "") -> TargetSpec:
    """The spec for an oracle model dict (``{"kind": ..., **params}``, the inverse of :attr:`TargetSpec.model`);
    a "callable" model needs ``logp``, ``grad_logp`` and ``dim`` entries besides its declared constants."""
    p = dict(model)
    kind = p.pop("kind", None)
    if kind == "gaussian":
        return gaussian(p["mean"], p["precision"], name)
    if kind == "linear":
        return linear(p["X"], p["y"], p.get("noise_scale", 1.0), p.get("prior_scale", 1.0), name)
    if kind == "logistic":
        return logistic(p["X"], p["y"], p.get("prior_scale", 1.0), name)
    if kind == "hierarchical_logistic":
        return hierarchical_logistic(p["X"], p["y"], p["groups"], p["n_groups"], p["Sigma"], p["Delta"], name)
    if kind == "cosine":
        return cosine(p["alpha"], p["b"], p.get("phi", 0.0), p.get("beta", 1.0), p.get("z0"), name)
    if kind == "callable":
        return from_callables(
            p["logp"],
            p["grad_logp"],
            p["dim"],
            smoothness=p.get("smoothness"),
            strong_convexity=p.get("strong_convexity", 0.0),
            name=name,
        )
    raise ValueError(f"unknown target kind {kind!r}; expected one of {KINDS}")
