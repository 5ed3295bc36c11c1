"""The plain-NumPy example's seed 002 methods: base laws of location-scale families (§3.1) and the exact energy of
the quadratic and logistic targets (§6), written from the paper, importing nothing of refvi.  Mixed into
:class:`~refvi.verification.examples.numpy_adapter.NumpyImplementation`."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import digamma, gammaln, kv

from ._validate import need

LOG_2PI = math.log(2.0 * math.pi)
_R3 = math.sqrt(3.0)

# composite Gauss-Legendre over s in [a - 12 beta, a + 12 beta]: 96 panels of 10 points, split at s = k/2 too
_X, _W = np.polynomial.legendre.leggauss(10)
_PANELS = 96


def _ridge(a, beta):
    """(E softplus(-s), E sigmoid(-s), E sigmoid(s) sigmoid(-s)) for s ~ N(a, beta^2), one ridge at a time."""
    if beta <= 1e-12 * max(1.0, abs(a)):  # a point mass up to O(beta^2)
        sg = 1.0 / (1.0 + math.exp(a)) if a > -700 else 1.0
        return float(np.logaddexp(0.0, -a)), sg, sg * (1.0 - sg)
    lo, hi = a - 12.0 * beta, a + 12.0 * beta  # the Gaussian's scale, and unit panels where sigmoid bends
    bend = np.arange(-40.0, 40.5, 0.5)
    edges = np.unique(np.concatenate([np.linspace(lo, hi, _PANELS + 1), bend[(bend > lo) & (bend < hi)]]))
    half = 0.5 * np.diff(edges)
    s = (0.5 * (edges[1:] + edges[:-1]))[:, None] + half[:, None] * _X[None, :]
    w = half[:, None] * _W[None, :] * np.exp(-0.5 * ((s - a) / beta) ** 2) / (beta * math.sqrt(2.0 * math.pi))
    sig_m = 0.5 * (1.0 - np.tanh(0.5 * s))  # sigmoid(-s)
    return float(np.sum(w * np.logaddexp(0.0, -s))), float(np.sum(w * sig_m)), float(np.sum(w * sig_m * (1 - sig_m)))


def _psi1(kind, k, p=None, nu=None):
    """E exp(i k u) for one standardized coordinate."""
    if kind == "gaussian":
        return np.exp(-k * k / 2) + 0j
    if kind == "uniform":
        return np.sinc(_R3 * k / math.pi) + 0j
    if kind == "laplace":
        return 1 / (1 + k * k / 2) + 0j
    if kind == "exponential":
        return np.exp(-1j * k) / (1 - 1j * k)
    if kind == "rademacher":
        return np.cos(k) + 0j
    if kind == "two_point":
        hi, lo = math.sqrt((1 - p) / p), -math.sqrt(p / (1 - p))
        return p * np.exp(1j * hi * k) + (1 - p) * np.exp(1j * lo * k)
    if kind == "student_t":
        return _t_block(np.abs(k), nu) + 0j
    raise ValueError(kind)


def _t_block(kappa, nu):
    """E exp(i kappa e^T u) of the standardized multivariate t: K_{nu/2}(r) r^{nu/2} / (Gamma(nu/2) 2^{nu/2-1})."""
    r = math.sqrt(nu - 2) * np.asarray(kappa, float)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        v = np.exp(np.log(kv(nu / 2, r)) + nu / 2 * np.log(r) - gammaln(nu / 2) - (nu / 2 - 1) * math.log(2))
    return np.where((r == 0) | ~np.isfinite(v), 1.0, v)  # K_v overflows only as r -> 0, where Psi -> 1


def _entropy1(kind):
    return {
        "gaussian": 0.5 * math.log(2 * math.pi * math.e),
        "uniform": math.log(2 * _R3),
        "laplace": 1 + 0.5 * math.log(2),
        "exponential": 1.0,
    }[kind]


def _t_entropy(nu, k):
    a, b = (nu + k) / 2, nu / 2
    return (
        -gammaln(a)
        + gammaln(b)
        + k / 2 * math.log(nu * math.pi)
        + a * (digamma(a) - digamma(b))
        + k / 2 * math.log((nu - 2) / nu)
    )


class NumpyFamilies:
    """exact_energy, base_charfun, base_entropy, base_moments, base_atoms, to_base_params."""

    def exact_energy(self, target, m, C):
        p, m, C = target.params, np.asarray(m, float), np.asarray(C, float)
        d = target.dim
        need(m.shape == (d,) and C.shape == (d, d), f"m must be ({d},) and C ({d}, {d}): got {m.shape} and {C.shape}")
        if target.kind in ("gaussian", "linear"):
            if target.kind == "gaussian":
                A, mu = np.asarray(p["precision"]), np.asarray(p["mean"])
                b = A @ mu
                c = 0.5 * mu @ A @ mu - 0.5 * np.linalg.slogdet(A)[1] + 0.5 * d * LOG_2PI
            else:
                X, y, sn, s = np.asarray(p["X"]), np.asarray(p["y"]), p["noise_scale"], p["prior_scale"]
                A = X.T @ X / sn**2 + np.eye(d) / s**2
                b = X.T @ y / sn**2
                c = (
                    y @ y / (2 * sn**2)
                    + 0.5 * len(y) * (LOG_2PI + 2 * math.log(sn))
                    + 0.5 * d * (LOG_2PI + 2 * math.log(s))
                )
            return float(0.5 * m @ A @ m + 0.5 * np.sum(C * (A @ C)) - b @ m + c), A @ m - b, A @ C
        if target.kind == "logistic":  # §6 ridge reduction, gradients by Stein's lemma
            X, y, s = np.asarray(p["X"]), np.asarray(p["y"]), p["prior_scale"]
            l = 0.5 * d * (LOG_2PI + 2 * math.log(s)) + 0.5 * (m @ m + np.sum(C * C)) / s**2
            gm, gC = m / s**2, C / s**2
            for x, yn in zip(X, y, strict=True):
                v = C.T @ x
                sp, sg, ds = _ridge(float(yn * x @ m), float(math.sqrt(v @ v)))
                l += sp
                gm = gm - yn * sg * x
                gC = gC + ds * np.outer(x, v)
            return float(l), gm, gC
        raise NotImplementedError(f"no exact energy for {target.kind!r}")

    def exact_optimum(self, target, structure="tril"):
        """The stationarity conditions of Gaussian VI iterated to a fixed point: Sigma^{-1} = E_q Hess(-log p) and
        m <- m - Sigma E_q grad(-log p) (one step for quadratic targets); C* the Cholesky factor of Sigma ("tril"),
        or its symmetric root ("sym")."""
        d = target.dim
        m, S = np.zeros(d), np.eye(d)
        relax, last = 1.0, np.inf  # halved whenever an update is no smaller than the one before (a cycle)
        for _ in range(5000):
            L = np.linalg.cholesky(S)
            _, gm, gC = self.exact_energy(target, m, L)
            # E_q Hess(-log p) = gC L^{-1} (Stein: grad_C l = E[Hess] C), symmetrized
            Hq = gC @ np.linalg.inv(L)
            Hq = 0.5 * (Hq + Hq.T)
            dm, dS = -np.linalg.solve(Hq, gm), np.linalg.inv(Hq) - S
            size = np.max(np.abs(dm)) + np.max(np.abs(dS))
            if size < 1e-14 * (1 + np.abs(S).max()):
                break
            if size >= last:
                relax *= 0.5
            last = size
            m, S = m + relax * dm, S + relax * 0.5 * (dS + dS.T)
        else:
            raise RuntimeError("exact_optimum: the fixed point did not converge in 5000 iterations")
        if structure == "sym":
            lam, Q = np.linalg.eigh(S)
            L = (Q * np.sqrt(lam)) @ Q.T
            L = 0.5 * (L + L.T)
        else:
            L = np.linalg.cholesky(S)
        return m, L, self.exact_energy(target, m, L)[0] - np.linalg.slogdet(L)[1]

    def base_charfun(self, base, K):
        K = np.atleast_2d(np.asarray(K, float))
        if base.kind == "affine":
            return np.exp(1j * (K @ base.shift)) * self.base_charfun(base.inner, K @ base.scale)
        if base.kind == "student_t" and not base.product:
            return _t_block(np.linalg.norm(K, axis=1), base.nu) + 0j
        return np.prod(_psi1(base.kind, K, base.p, base.nu), axis=1)

    def base_entropy(self, base, d):
        if base.discrete:
            raise ValueError("a discrete base has no differential entropy")
        if base.kind == "affine":
            return self.base_entropy(base.inner, d) + float(np.linalg.slogdet(base.scale)[1])
        if base.kind == "student_t":
            return float(d * _t_entropy(base.nu, 1) if base.product else _t_entropy(base.nu, d))
        return d * _entropy1(base.kind)

    def base_moments(self, base, d):
        if base.kind == "affine":
            mu, S = self.base_moments(base.inner, d)
            return base.scale @ mu + base.shift, base.scale @ S @ base.scale.T
        return np.zeros(d), np.eye(d)

    def base_atoms(self, base, d):
        if base.kind == "affine":
            U0, w = self.base_atoms(base.inner, d)
            return U0 @ base.scale.T + base.shift, w
        if not base.discrete:
            raise ValueError(f"a {base.kind} base has no atoms")
        p = 0.5 if base.p is None else base.p
        vals, probs = np.array([math.sqrt((1 - p) / p), -math.sqrt(p / (1 - p))]), np.array([p, 1 - p])
        U, w = np.zeros((1, 0)), np.ones(1)
        for _ in range(d):  # the product law, one coordinate at a time
            U = np.vstack([np.column_stack([U, np.full(len(U), v)]) for v in vals])
            w = np.concatenate([w * q for q in probs])
        return U, w

    # ---- the location-scale family z = C u + m (§3.1, Eq. 1) -------------------------------------------------------
    def _base_logpdf(self, base, U):
        if base.kind == "affine":
            U0 = np.linalg.solve(base.scale, (U - base.shift).T).T
            return self._base_logpdf(base.inner, U0) - np.linalg.slogdet(base.scale)[1]
        if base.kind == "student_t":
            nu, a = base.nu, (base.nu - 2.0)
            blocks = [U[:, j : j + 1] for j in range(U.shape[1])] if base.product else [U]
            out = 0.0
            for B in blocks:
                k = B.shape[1]
                out = out + (
                    gammaln((nu + k) / 2)
                    - gammaln(nu / 2)
                    - k / 2 * math.log(a * math.pi)
                    - (nu + k) / 2 * np.log1p(np.sum(B * B, axis=1) / a)
                )
            return out
        one = {
            "gaussian": lambda u: -0.5 * u * u - 0.5 * LOG_2PI,
            "uniform": lambda u: np.where(np.abs(u) <= _R3, -math.log(2 * _R3), -np.inf),
            "laplace": lambda u: -math.sqrt(2.0) * np.abs(u) - 0.5 * math.log(2.0),
            "exponential": lambda u: np.where(u >= -1.0, -(u + 1.0), -np.inf),
        }[base.kind]
        return np.sum(one(U), axis=1)

    def _base_sample(self, base, rng, n, d):
        if base.kind == "affine":
            return self._base_sample(base.inner, rng, n, d) @ base.scale.T + base.shift
        if base.kind == "student_t":
            W = rng.chisquare(base.nu, size=(n, d) if base.product else (n, 1))
            return rng.standard_normal((n, d)) * np.sqrt((base.nu - 2.0) / W)
        if base.kind in ("rademacher", "two_point"):
            p = 0.5 if base.p is None else base.p
            return np.where(rng.random((n, d)) < p, math.sqrt((1 - p) / p), -math.sqrt(p / (1 - p)))
        return {
            "gaussian": lambda: rng.standard_normal((n, d)),
            "uniform": lambda: rng.uniform(-_R3, _R3, (n, d)),
            "laplace": lambda: rng.laplace(0.0, 1.0 / math.sqrt(2.0), (n, d)),
            "exponential": lambda: rng.exponential(1.0, (n, d)) - 1.0,
        }[base.kind]()

    def locscale_log_density(self, base, m, C, Z):
        Z, m, C = np.atleast_2d(np.asarray(Z, float)), np.asarray(m, float), np.asarray(C, float)
        return self._base_logpdf(base, np.linalg.solve(C, (Z - m).T).T) - np.linalg.slogdet(C)[1]

    def locscale_entropy(self, base, C):
        C = np.asarray(C, float)
        return self.base_entropy(base, C.shape[0]) + np.linalg.slogdet(C)[1]

    def locscale_moments(self, base, m, C):
        C = np.asarray(C, float)
        mu, S = self.base_moments(base, C.shape[0])
        return C @ mu + np.asarray(m, float), C @ S @ C.T

    def locscale_sample(self, base, m, C, n, seed=0):
        C = np.asarray(C, float)
        return self._base_sample(base, np.random.default_rng(seed), int(n), C.shape[0]) @ C.T + np.asarray(m, float)

    def standardize(self, base, d):
        """R (u0 - mu), R = V^{-1/2} by eigh; an affine base's map composed with R (the record built with the
        class of the one handed in: nothing of refvi imported)."""
        mu, S = self.base_moments(base, d)
        lam, Q = np.linalg.eigh(S)
        R = (Q / np.sqrt(lam)) @ Q.T
        if base.kind == "affine":
            return type(base)("affine", inner=base.inner, shift=R @ (base.shift - mu), scale=R @ base.scale)
        return type(base)("affine", inner=base, shift=-R @ mu, scale=R)

    def to_base_params(self, m, C, base):
        m, C = np.asarray(m, float), np.asarray(C, float)
        mu, S = self.base_moments(base, m.shape[0])
        lam, Q = np.linalg.eigh(S)
        R = (Q / np.sqrt(lam)) @ Q.T
        return m - C @ R @ mu, C @ R
