"""The plain-NumPy example's own target models: log p(z, x), its gradient and its Hessian, built from a target's
``kind`` and ``params`` alone (the densities of ``docs/protocol-core.md``; seed 000 §7, Cors 22, 23, 25), on
batches of points.  It imports nothing of refvi and never calls the callables a target record carries, except
for kind ``"callable"``, whose record has nothing else (its density *is* the callable).

:func:`model_of` gives the model of a seed 000 / 002 target (cached per target object while it lives);
:func:`boosting_logp` evaluates a seed 001 boosting target (a Gaussian mixture or a Cauchy law, plus its
``log_shift``)."""

from __future__ import annotations

import math
import weakref

import numpy as np
from scipy.special import expit

from ._validate import need

LOG_2PI = math.log(2.0 * math.pi)


def _batch(Z, d):
    Z = np.asarray(Z, dtype=np.float64)
    Z = Z.reshape(1, -1) if Z.ndim <= 1 else Z
    if Z.ndim != 2 or Z.shape[1] != d:  # (not need(): its message would be formatted on every call of an optimizer)
        raise ValueError(f"points must have {d} coordinates, got shape {np.shape(Z)}")
    return Z


class _Model:
    """log p on a batch Z (n, d) -> (n,), its gradient (n, d), and its Hessian at one point (d, d)."""

    dim: int

    def logp(self, Z):
        raise NotImplementedError

    def grad(self, Z):
        raise NotImplementedError

    def hess(self, z):
        raise NotImplementedError


class Gaussian(_Model):
    """log N(z; mean, precision^{-1})."""

    def __init__(self, p):
        self.mean, self.P = np.asarray(p["mean"], float), np.asarray(p["precision"], float)
        self.dim = self.mean.shape[0]
        need(
            self.P.shape == (self.dim, self.dim) and np.linalg.eigvalsh(self.P)[0] > 0,
            "the precision must be positive definite",
        )
        self.const = 0.5 * np.linalg.slogdet(self.P)[1] - 0.5 * self.dim * LOG_2PI

    def logp(self, Z):
        R = _batch(Z, self.dim) - self.mean
        return -0.5 * np.einsum("ni,ij,nj->n", R, self.P, R) + self.const

    def grad(self, Z):
        return -(_batch(Z, self.dim) - self.mean) @ self.P.T

    def hess(self, z):
        return -0.5 * (self.P + self.P.T)


class _Regression(_Model):
    """A Gaussian prior N(0, s^2 I) on z plus a likelihood of the scores a_n = x_n^T z."""

    def __init__(self, p):
        self.X, self.y = np.asarray(p["X"], float), np.asarray(p["y"], float)
        self.s2 = float(p["prior_scale"]) ** 2
        need(
            self.X.ndim == 2 and self.y.shape == (self.X.shape[0],) and self.s2 > 0,
            "a regression target needs X (N, d), y (N,) and prior_scale > 0",
        )
        self.dim = self.X.shape[1]
        self.prior_const = -0.5 * self.dim * (LOG_2PI + math.log(self.s2))

    # the likelihood of the scores, defined by each model: rows of A (B, N) -> (B,), (B, N); a (N,) -> (N,)
    def _loglik(self, A):
        raise NotImplementedError

    def _dloglik(self, A):
        raise NotImplementedError

    def _d2loglik(self, a):
        raise NotImplementedError

    def logp(self, Z):
        Z = _batch(Z, self.dim)
        return self._loglik(Z @ self.X.T) - 0.5 * np.sum(Z * Z, axis=1) / self.s2 + self.prior_const

    def grad(self, Z):
        Z = _batch(Z, self.dim)
        return self._dloglik(Z @ self.X.T) @ self.X - Z / self.s2

    def hess(self, z):
        a = _batch(z, self.dim)[0] @ self.X.T
        return (self.X.T * self._d2loglik(a)) @ self.X - np.eye(self.dim) / self.s2


class Linear(_Regression):
    """sum_n log N(y_n; x_n^T z, sigma^2) + log N(z; 0, s^2 I) (seed 000 Cor 22)."""

    def __init__(self, p):
        super().__init__(p)
        self.n2 = float(p["noise_scale"]) ** 2
        need(self.n2 > 0, "noise_scale must be > 0")
        self.lik_const = -0.5 * len(self.y) * (LOG_2PI + math.log(self.n2))

    def _loglik(self, A):
        R = self.y - A
        return -0.5 * np.sum(R * R, axis=1) / self.n2 + self.lik_const

    def _dloglik(self, A):
        return (self.y - A) / self.n2

    def _d2loglik(self, a):
        return np.full(a.shape, -1.0 / self.n2)


class Logistic(_Regression):
    """-sum_n log(1 + exp(-y_n x_n^T z)) + log N(z; 0, s^2 I), y_n = +-1 (seed 000 Cor 23)."""

    def _loglik(self, A):
        return -np.sum(np.logaddexp(0.0, -self.y * A), axis=1)

    def _dloglik(self, A):
        return self.y * expit(-self.y * A)

    def _d2loglik(self, a):
        s = expit(self.y * a)
        return -self.y * self.y * s * (1.0 - s)


class HierarchicalLogistic(_Model):
    """Seed 000 Cor 25: z = (theta, z_1..z_G), theta ~ N(0, Sigma), z_g ~ N(theta, Delta), y_n ~ logistic(x_n^T
    z_{g(n)}), every normalising constant included."""

    def __init__(self, p):
        self.X, self.y = np.asarray(p["X"], float), np.asarray(p["y"], float)
        self.groups, self.G = np.asarray(p["groups"]), int(p["n_groups"])
        need(
            self.groups.size == 0 or (self.groups.min() >= 0 and self.groups.max() < self.G),
            "group labels outside 0..G-1",
        )
        self.D = self.X.shape[1]
        self.dim = (self.G + 1) * self.D
        Sigma, Delta = np.asarray(p["Sigma"], float), np.asarray(p["Delta"], float)
        self.Si, self.Di = np.linalg.inv(Sigma), np.linalg.inv(Delta)
        self.onehot = np.eye(self.G)[self.groups]  # (N, G)
        self.const = -(
            0.5 * (self.G + 1) * self.D * LOG_2PI
            + 0.5 * np.linalg.slogdet(Sigma)[1]
            + 0.5 * self.G * np.linalg.slogdet(Delta)[1]
        )

    def _split(self, Z):
        Z = _batch(Z, self.dim)
        theta, Zg = Z[:, : self.D], Z[:, self.D :].reshape(len(Z), self.G, self.D)
        return theta, Zg, np.einsum("bnd,nd->bn", Zg[:, self.groups], self.X)  # scores (b, N)

    def logp(self, Z):
        theta, Zg, A = self._split(Z)
        R = Zg - theta[:, None, :]
        return (
            -0.5 * np.einsum("bi,ij,bj->b", theta, self.Si, theta)
            - 0.5 * np.einsum("bgi,ij,bgj->b", R, self.Di, R)
            - np.sum(np.logaddexp(0.0, -self.y * A), axis=1)
            + self.const
        )

    def grad(self, Z):
        theta, Zg, A = self._split(Z)
        R = (Zg - theta[:, None, :]) @ self.Di.T  # Delta^-1 (z_g - theta)
        lik = np.einsum("bn,nd,ng->bgd", self.y * expit(-self.y * A), self.X, self.onehot)
        g_theta = -theta @ self.Si.T + R.sum(axis=1)
        return np.concatenate([g_theta, (lik - R).reshape(len(theta), -1)], axis=1)

    def hess(self, z):
        _, _, A = self._split(z)
        D, G = self.D, self.G
        H = -np.kron(np.eye(G + 1), self.Di)
        H[:D, :D] = -(self.Si + G * self.Di)
        H[:D, D:] = np.tile(self.Di, (1, G))
        H[D:, :D] = np.tile(self.Di, (G, 1))
        s = expit(self.y * A[0])
        w = self.y * self.y * s * (1.0 - s)
        for g in range(G):
            rows = self.groups == g
            Xg = self.X[rows]
            H[(g + 1) * D : (g + 2) * D, (g + 1) * D : (g + 2) * D] -= (Xg.T * w[rows]) @ Xg
        return 0.5 * (H + H.T)


class Cosine(_Model):
    """-(alpha cos(b^T z + phi) + beta/2 ||z - z0||^2), unnormalised (seed 002's non-convex example)."""

    def __init__(self, p):
        self.a, self.b, self.phi = float(p["alpha"]), np.asarray(p["b"], float), float(p["phi"])
        self.beta, self.z0 = float(p["beta"]), np.asarray(p["z0"], float)
        self.dim = self.b.shape[0]

    def logp(self, Z):
        Z = _batch(Z, self.dim)
        R = Z - self.z0
        return -(self.a * np.cos(Z @ self.b + self.phi) + 0.5 * self.beta * np.sum(R * R, axis=1))

    def grad(self, Z):
        Z = _batch(Z, self.dim)
        return (self.a * np.sin(Z @ self.b + self.phi))[:, None] * self.b - self.beta * (Z - self.z0)

    def hess(self, z):
        c = float(self.a * np.cos(_batch(z, self.dim)[0] @ self.b + self.phi))
        return c * np.outer(self.b, self.b) - self.beta * np.eye(self.dim)


class GivenDensity(_Model):
    """Kind "callable": the record's own log p and gradient (there is no model to build), the Hessian by central
    differences of the gradient (step 1e-5: error ~1e-10 relative for O(1)-scaled third derivatives)."""

    def __init__(self, target):
        self.target, self.dim = target, int(target.dim)

    def logp(self, Z):
        return np.array([float(self.target.logp(z)) for z in _batch(Z, self.dim)])

    def grad(self, Z):
        return np.array([np.asarray(self.target.grad_logp(z), dtype=float) for z in _batch(Z, self.dim)])

    def hess(self, z):
        z, h = _batch(z, self.dim)[0], 1e-5
        E = h * np.eye(self.dim)
        H = (self.grad(z + E) - self.grad(z - E)).T / (2 * h)
        return 0.5 * (H + H.T)


_BUILDERS = {
    "gaussian": Gaussian,
    "linear": Linear,
    "logistic": Logistic,
    "hierarchical_logistic": HierarchicalLogistic,
    "cosine": Cosine,
}
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def build(target) -> _Model:
    """A fresh model of ``target`` from its kind and params (``callable``: its own density)."""
    if target.kind == "callable":
        return GivenDensity(target)
    if target.kind not in _BUILDERS:
        raise ValueError(f"unknown target kind {target.kind!r}; expected one of {sorted(_BUILDERS)} or 'callable'")
    model = _BUILDERS[target.kind](target.params)
    need(model.dim == target.dim, f"a {target.kind} target of dim {target.dim} has params of dimension {model.dim}")
    return model


def model_of(target) -> _Model:
    """The model of ``target``, built once per target object (targets are immutable records)."""
    try:
        return _CACHE[target]
    except (KeyError, TypeError):
        pass
    model = build(target)
    try:
        _CACHE[target] = model
    except TypeError:  # not weak-referenceable: build per call
        pass
    return model


def boosting_logp(target, Z) -> np.ndarray:
    """log p(z) + log_shift of a seed 001 boosting target on a batch Z (n, d): ``"mixture"``, sum_j w_j N(z;
    means_j, scales_j^2 I), or ``"cauchy"`` (d = 1), 1 / (pi s (1 + ((z - loc)/s)^2))."""
    p = target.params
    if target.kind == "cauchy":
        t = (np.asarray(Z, float).reshape(-1) - p["loc"]) / p["scale"]
        return -np.log(math.pi * p["scale"]) - np.log1p(t * t) + target.log_shift
    need(target.kind == "mixture", f"unknown boosting target kind {target.kind!r}")
    w, mu, sc = np.asarray(p["weights"], float), np.asarray(p["means"], float), np.asarray(p["scales"], float)
    mu = mu[:, None] if mu.ndim == 1 else mu
    d = mu.shape[1]
    Z = np.asarray(Z, float).reshape(-1, d)
    T = (Z[None, :, :] - mu[:, None, :]) / sc[:, None, None]
    with np.errstate(divide="ignore"):
        lk = -0.5 * np.sum(T * T, axis=2) - d * np.log(sc)[:, None] - 0.5 * d * LOG_2PI + np.log(w)[:, None]
    top = lk.max(axis=0)
    return top + np.log(np.sum(np.exp(lk - top), axis=0)) + target.log_shift
