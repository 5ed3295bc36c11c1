"""An outside implementation written only from the papers, in plain NumPy, wrapped for ``--impl``.

It imports nothing from refvi: it reads only the plain target records it is handed (``kind`` and ``params``; see
``docs/protocol-core.md``), evaluates every target with its own model of log p (``numpy_targets.py``: the record's
``logp`` / ``grad_logp`` callables are used only for kind ``"callable"``, which has nothing else), and computes the
model constants M, mu itself from the papers' formulas, so running the verification suite against it shows how to
verify your own code::

    python -m refvi.verification --impl refvi.verification.examples.numpy_adapter:IMPL

Copy this file, replace each method body with a call into your library, and keep the signatures.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._validate import need
from .numpy_boosting import NumpyBoosting
from .numpy_families import NumpyFamilies
from .numpy_ngvi import NumpyNGVI
from .numpy_online import NumpyOnline
from .numpy_targets import model_of


@functools.cache
def _lower(d):
    """The (d, d) mask of the lower triangle, diagonal included (read-only, built once per d)."""
    mask = np.tri(d, dtype=bool)
    mask.setflags(write=False)
    return mask


def proj_V(X, structure):
    """The projection onto the subspace V of the structure (full, tril, sym, diag) (seed 000 §2)."""
    if structure == "full":
        return X
    if structure == "tril":
        return np.where(_lower(X.shape[0]), X, 0.0)
    if structure == "sym":
        return (X + X.T) / 2
    if structure == "diag":
        return np.diag(np.diag(X))
    raise ValueError(f"unknown structure {structure!r}")


def _inverse(C):
    """C^{-1}, refusing a C that is not finite or not invertible (1-norm condition number >= 1e15)."""
    C = np.asarray(C, dtype=float)
    need(np.isfinite(C).all(), "C must be finite and invertible")
    try:
        Ci = np.linalg.inv(C)
    except np.linalg.LinAlgError:
        Ci = np.full_like(C, np.inf)
    need(
        np.isfinite(Ci).all() and np.abs(C).sum(0).max() * np.abs(Ci).sum(0).max() < 1e15,
        "C must be finite and invertible",
    )
    return Ci


def _invertible(C):
    _inverse(C)
    return C


def _samples(m, C, U):
    U = np.atleast_2d(U)
    need(len(m) == len(C) == U.shape[1], f"m, C and U must agree in d, got {len(m)}, {len(C)}, {U.shape[1]}")
    need(np.isfinite(U).all(), "U must be finite")
    return U


def _positive(x, name):
    need(x is not None and math.isfinite(x) and x > 0, f"{name} must be > 0, got {x!r}")
    return float(x)


def _eig(H):
    lam = np.linalg.eigvalsh(0.5 * (H + H.T))
    return float(lam[0]), float(lam[-1])


def _constants(target):
    """(mu, M) with mu I <= -Hess log p <= M I, from ``target.kind`` and ``target.params`` (seed 000 Thm 21 - Cor 25
    with errata E000-1, E000-2, E000-5 corrected; seed 002 §6 for logistic c, E002-2)."""
    p = target.params
    if target.kind == "gaussian":  # constant Hessian: the precision
        return _eig(np.asarray(p["precision"]))
    if target.kind == "linear":  # Cor 22 (E000-2): Sigma^-1 + X^T X / sigma^2
        X = np.asarray(p["X"])
        return _eig(np.eye(X.shape[1]) / p["prior_scale"] ** 2 + X.T @ X / p["noise_scale"] ** 2)
    if target.kind == "logistic":  # Cor 23 (E000-1): 0 < phi'' <= 1/4
        X, s2 = np.asarray(p["X"]), p["prior_scale"] ** 2
        return 1.0 / s2, _eig(np.eye(X.shape[1]) / s2 + 0.25 * X.T @ X)[1]
    if target.kind == "hierarchical_logistic":  # Cor 25 (E000-5): P + blockdiag(0, X_g^T X_g / 4)
        X, grp, G = np.asarray(p["X"]), np.asarray(p["groups"]), int(p["n_groups"])
        d = X.shape[1]
        Si, Di = np.linalg.inv(p["Sigma"]), np.linalg.inv(p["Delta"])
        P = np.kron(np.eye(G + 1), Di)
        P[:d, :d] = Si + G * Di
        P[:d, d:] = np.tile(-Di, (1, G))
        P[d:, :d] = np.tile(-Di, (G, 1))
        B = np.zeros_like(P)
        for g in range(G):
            Xg = X[grp == g]
            B[(g + 1) * d : (g + 2) * d, (g + 1) * d : (g + 2) * d] = 0.25 * Xg.T @ Xg
        return _eig(P)[0], _eig(P + B)[1]
    if target.kind == "cosine":  # Hessian eigenvalues beta - alpha ||b||^2 cos(.) and beta
        curv = abs(p["alpha"]) * float(np.dot(p["b"], p["b"]))
        return max(0.0, p["beta"] - curv), p["beta"] + curv
    if target.kind == "callable":  # declared with the instance (its hypotheses)
        if p.get("smoothness") is None:
            raise ValueError("this 'callable' target declares no smoothness constant")
        mu, M = float(p.get("strong_convexity", 0.0)), float(p["smoothness"])
        need(0.0 <= mu <= M, f"declared constants need 0 <= mu <= M, got mu = {mu}, M = {M}")
        return mu, M
    raise ValueError(f"unknown target kind {target.kind!r}")


class NumpyImplementation(NumpyFamilies):
    """Seed 000 Eqs. 4, 6, 8, Lemmas 16, 31, 32 and seed 002 Thm 7, all samples of a call at once (seed 002 §3.1
    bases and §6 exact energies in numpy_families.py, the target models in numpy_targets.py)."""

    name = "numpy-adapter"
    boosting = NumpyBoosting()  # seed 001 sub-adapter (numpy_boosting.py)
    online = NumpyOnline()  # seed 003 sub-adapter (numpy_online.py)
    ngvi = NumpyNGVI()  # seed 004 sub-adapter (numpy_ngvi.py)

    def log_joint(self, target, Z):  # this adapter's own model of the target (numpy_targets)
        return model_of(target).logp(Z)

    def grad_log_joint(self, target, Z):
        return model_of(target).grad(Z)

    def hess_log_joint(self, target, z):  # closed form ("callable": differences of its gradient)
        model, z = model_of(target), np.asarray(z, dtype=float)
        need(z.shape == (model.dim,), f"z must be one point ({model.dim},), got shape {z.shape}")
        return model.hess(z)

    def mode(self, target):
        """Closed forms for the Gaussian and the linear model; Newton on the logistic log joint (seed 000 §7)."""
        p = target.params
        if target.kind == "gaussian":
            return np.array(p["mean"], dtype=float)
        X = np.asarray(p["X"], dtype=float)
        if target.kind == "linear":
            s2 = p["noise_scale"] ** 2
            return np.linalg.solve(X.T @ X / s2 + np.eye(X.shape[1]) / p["prior_scale"] ** 2, X.T @ p["y"] / s2)
        need(target.kind == "logistic", f"no mode for a {target.kind!r} target")
        model = model_of(target)
        z = np.zeros(X.shape[1])
        g = model.grad(z)[0]
        for _ in range(200):  # log p strictly concave; a full Newton step can overshoot: halved until |grad| falls
            step, t = np.linalg.solve(-model.hess(z), g), 1.0
            while np.linalg.norm(model.grad(z + t * step)[0]) >= np.linalg.norm(g) and t > 1e-12:
                t *= 0.5
            z = z + t * step
            g = model.grad(z)[0]
            if np.linalg.norm(t * step) <= 1e-15 * (1 + np.linalg.norm(z)):
                break
        return z

    def log_evidence(self, target):
        """log N(y; 0, sigma^2 I + s^2 X X^T) of the linear model."""
        need(target.kind == "linear", f"no closed-form evidence for a {target.kind!r} target")
        p = target.params
        X, y = np.asarray(p["X"], dtype=float), np.asarray(p["y"], dtype=float)
        K = p["noise_scale"] ** 2 * np.eye(len(y)) + p["prior_scale"] ** 2 * X @ X.T
        quad = y @ np.linalg.solve(K, y)
        return float(-0.5 * quad - 0.5 * np.linalg.slogdet(K)[1] - 0.5 * len(y) * np.log(2 * np.pi))

    def frame(self, target, kind="laplace"):
        """Mode by BFGS polished with Newton steps on the Hessian; constants of L^T H L at the mode."""
        from scipy import optimize

        model = model_of(target)
        z = optimize.minimize(
            lambda z: -model.logp(z)[0],
            np.zeros(target.dim),
            jac=lambda z: -model.grad(z)[0],
            method="BFGS",
            options={"gtol": 1e-10},
        ).x
        for _ in range(5):
            z = z + np.linalg.solve(-model.hess(z), model.grad(z)[0])
        H = -model.hess(z)
        L = np.linalg.cholesky(np.linalg.inv(H)) if kind == "laplace" else np.diag(1.0 / np.sqrt(np.diag(H)))
        ev = np.linalg.eigvalsh(L.T @ H @ L)
        return z, L, float(ev[-1]), float(ev[0])

    def framed_energy(self, target, z0, L, m, C, U, structure="full"):
        U, L = np.atleast_2d(U), np.asarray(L, dtype=float)
        G = -model_of(target).grad(z0 + (U @ np.asarray(C).T + m) @ L.T) @ L  # rows L^T (-grad log p(z))
        return G.mean(axis=0), proj_V(G.T @ U / len(U), structure)

    def gaussian_entropy(self, C, structure="tril"):  # (d/2)(1 + log 2 pi) + log|det C|
        _invertible(C)
        return 0.5 * len(C) * (1 + np.log(2 * np.pi)) + np.linalg.slogdet(C)[1]

    def gaussian_log_density(self, m, C, Z, structure="tril"):  # -|u|^2/2 - log|det C| - (d/2) log 2 pi
        U = np.linalg.solve(_invertible(C), (np.atleast_2d(Z) - m).T).T
        return -0.5 * np.sum(U * U, axis=1) - np.linalg.slogdet(C)[1] - 0.5 * len(C) * np.log(2 * np.pi)

    def _neg_grads(self, target, m, C, U):  # rows -grad log p(C u + m), one per sample u
        return -model_of(target).grad(U @ np.asarray(C, dtype=float).T + m)

    def energy(self, target, m, C, U, structure="tril"):
        return self._energy(target, m, C, _samples(m, C, U), structure)

    def entropy(self, target, m, C, U, structure="sym"):
        gm, gC = self.energy(target, m, C, U, structure)
        return gm, gC + self.grad_neg_entropy(C, structure)

    # the estimators' arithmetic on checked inputs (the public methods above check; the optimizers check once)
    def _energy(self, target, m, C, U, structure):
        G = self._neg_grads(target, m, C, U)  # g_energy(u) = T*(-grad log p(Cu + m))
        return G.sum(axis=0) / len(U), proj_V(G.T @ U / len(U), structure)

    def _entropy(self, target, m, C, U, structure):
        gm, gC = self._energy(target, m, C, U, structure)
        return gm, gC - proj_V(np.linalg.inv(C).T, structure)

    def stl(self, target, m, C, U, structure="tril"):
        U = _samples(m, _invertible(C), U)
        V = self._neg_grads(target, m, C, U) - np.linalg.solve(C.T, U.T).T  # -grad log p(z) + grad_z log q(z)
        return V.mean(axis=0), proj_V(V.T @ U / len(U), structure)

    def score(self, target, m, C, U, structure="tril"):
        U = _samples(m, C, U)
        Cit = _inverse(C).T
        f = -model_of(target).logp(U @ np.asarray(C, dtype=float).T + m)  # -log p(C u + m)
        S = len(U)
        gm = Cit @ (U.T @ f) / S  # mean of f C^-T u
        gC = Cit @ ((U.T * f) @ U - f.sum() * np.eye(U.shape[1])) / S  # mean of f C^-T (u u^T - I)
        return gm, proj_V(gC, structure)

    def grad_neg_entropy(self, C, structure="tril"):
        return -proj_V(_inverse(C).T, structure)

    def entropy_prox(self, C, gamma):
        out = np.array(C, dtype=float)
        need(out.ndim == 2 and out.shape[0] == out.shape[1], f"C must be square, got shape {out.shape}")
        need(np.isfinite(out).all() and not out[~_lower(len(out))].any(), "C must be finite and lower triangular")
        return self._entropy_prox(out, _positive(gamma, "gamma"))

    def _entropy_prox(self, C, gamma):  # on a checked lower-triangular C and gamma > 0
        out = np.array(C, dtype=float)
        c = out.diagonal().copy()
        r = np.hypot(c, 2 * np.sqrt(gamma))  # sqrt(c^2 + 4 gamma) without overflow
        # (c + r)/2 as printed for c >= 0; the same root gamma/((r - c)/2) for c < 0 (no cancellation); halves first,
        # so that neither sum overflows at the ends of float64
        with np.errstate(divide="ignore"):
            neg = gamma / (r / 2 - np.minimum(c, 0) / 2)
        out.flat[:: len(out) + 1] = np.where(c >= 0, c / 2 + r / 2, neg)
        return out

    def project_wm(self, C, M, structure="sym"):
        return self._project_wm(np.asarray(C, dtype=float), _positive(M, "M"), structure)

    def _project_wm(self, C, M, structure):  # on a checked M > 0
        if structure == "full":
            return self.project_singular(C, M)
        lam, Q = np.linalg.eigh(0.5 * (C + C.T))  # W_M lies in the symmetric matrices: project the part there
        return (Q * np.maximum(lam, 1 / math.sqrt(M))) @ Q.T

    def project_singular(self, C, M):
        U, s, Vt = np.linalg.svd(C)
        return U @ np.diag(np.maximum(s, 1 / np.sqrt(_positive(M, "M")))) @ Vt

    def smoothness(self, target):
        return _constants(target)[1]

    def strong_convexity(self, target):
        return _constants(target)[0]

    # ---- step-size rules and averages: seed 000 Thms 6, 7, 9, 10, 27, Cor 30 ----------------------------------
    def step_sizes(self, rule, T, gamma=None, M=None, mu=None, a=None, L=None, A=None):
        need(int(T) == T and T >= 1, f"the horizon T must be a positive integer, got {T!r}")
        t = np.arange(T, dtype=float)
        decay = (2 * t + 1) / (t + 1) ** 2
        if rule == "constant":
            return np.full(T, _positive(gamma, "gamma"))
        if rule.startswith("thm"):
            mu = _positive(mu, "mu")
        if rule == "1/(M sqrt T)":
            return np.full(T, 1 / (M * np.sqrt(T)))
        if rule == "1/sqrt T":
            return np.full(T, 1 / np.sqrt(T))
        if rule == "thm6":
            return np.minimum(mu / (2 * a), decay / mu)
        if rule == "thm9":
            return np.minimum(mu / (2 * a), 2 * decay / mu)
        if rule == "thm27":
            return np.where(t < 4 * np.floor(L / mu), 1 / (2 * L), decay / mu)
        if rule == "thm6-switch":  # Thm 27 with L = a/mu: 1/(2L) = mu/(2a) until t* = 4 floor(a/mu^2)
            return np.where(t < 4 * np.floor(a / mu**2), mu / (2 * a), decay / mu)
        if rule == "thm9-switch":  # ... and mu/2 for mu: t* = 4 floor(2a/mu^2), then (2/mu)(2t+1)/(t+1)^2
            return np.where(t < 4 * np.floor(2 * a / mu**2), mu / (2 * a), 2 * decay / mu)
        if rule == "A log T / T":
            need(T >= 2, "A log T / T needs T >= 2 (log 1 = 0 is a zero step)")
            return np.full(T, A * np.log(T) / T)
        raise ValueError(f"unknown rule {rule!r}")

    def step_range_ok(self, theorem, gammas, M=None, mu=None, a=None, A=None):
        """The step hypotheses of seed 000 Thms 6, 7, 9, 10, Cor 30 and seed 002 Thm 6."""
        g = np.asarray(gammas, dtype=float)
        if not np.all(g > 0):  # a step must be positive under every theorem
            return False
        same = bool(np.all(g == g[0]))
        if theorem == "000.cor30":
            T = g.size
            return A >= 1.0 / mu and T / np.log(T) >= 2.0 * a * A / mu
        top = {
            "000.thm6": lambda: min(mu / (2.0 * a), 1.0 / mu),
            "000.thm7": lambda: 1.0 / M,
            "000.thm9": lambda: min(mu / (2.0 * a), 2.0 / mu),
            "000.thm10": lambda: np.inf,
            "002.thm6": lambda: 1.0 / M,
        }[theorem]()
        return bool((same or theorem == "002.thm6") and np.max(g) <= top)

    def noise_constants(self, estimator, d, M, dist_sq, L=None):
        """Thm 26's table with the corrected entropy row (2 d L)."""
        need(estimator in ("energy", "entropy") and d >= 1, f"no Thm 26 row for {estimator!r} in d = {d}")
        k = {"energy": 2.0, "entropy": 4.0}[estimator] * (d + 3) * M * M
        return k, k * dist_sq + (2.0 * d * (M if L is None else L) if estimator == "entropy" else 0.0)

    def average_weights(self, kind, T, a=None, gamma=None, tail_fraction=0.5):
        w = np.zeros(T + 1)
        if kind == "last":
            w[T] = 1.0
        elif kind == "tail":  # the last max(1, ceil(f T)) iterates; f T near an integer is that integer
            need(0 < tail_fraction <= 1, f"tail_fraction must lie in (0, 1], got {tail_fraction!r}")
            x = tail_fraction * T
            k = max(1, int(round(x)) if abs(x - round(x)) <= 1e-9 * max(1.0, x) else int(np.ceil(x)))
            w[T - k + 1 :] = 1.0
        elif kind == "uniform":
            w[1:] = 1.0
        elif kind == "theta7":  # theta^{t+1} on w^t, t = 1..T
            w[1:] = (1 / (1 + 2 * a * gamma**2)) ** np.arange(2, T + 2)
        elif kind == "theta10":  # theta^{t+1} on w^t, t = 0..T-1
            w[:T] = (1 / (1 + a * gamma**2)) ** np.arange(1, T + 1)
        else:
            raise ValueError(f"unknown average {kind!r}")
        return w / w.sum()

    # ---- optimizers: seed 000 Defs. 5 and 8, seed 002 §5.3 --------------------------------------------------
    def _sgd(self, update, target, m0, C0, gammas, U, estimator, structure, weights):
        """The loop of Defs. 5 and 8.  Its inputs are checked here, once; the steps then run the estimator's and the
        update's arithmetic unchecked (``_energy``, ``_entropy_prox``, ...), each iterate checked for finiteness."""
        m, C = np.array(m0, dtype=float), np.array(C0, dtype=float)
        T = len(gammas)
        need(np.all(np.asarray(gammas) > 0), "step sizes must be > 0")
        need(
            np.ndim(U) == 3 and np.shape(U)[:2] == (T, np.shape(U)[1]) and np.shape(U)[1] >= 1,
            "U must have shape (T, S, d) with S >= 1 samples per step",
        )
        U = np.asarray(U, dtype=float)
        _samples(m, _inverse(C), U[0])  # m, C, U agree in d; C is finite and invertible
        need(np.isfinite(U).all(), "U must be finite")
        need(structure in ("full", "tril", "sym", "diag"), f"unknown structure {structure!r}")
        estimate = (
            estimator
            if callable(estimator)
            else {"energy": self._energy, "entropy": self._entropy}.get(estimator) or getattr(self, estimator)
        )
        if weights is not None:
            need(
                len(weights) == T + 1 and np.all(np.asarray(weights) >= 0) and np.sum(weights) > 0,
                "the average weights must be T + 1 non-negative numbers with a positive sum",
            )
        w = np.zeros(T + 1) if weights is not None else None
        if w is not None:
            w[:] = np.asarray(weights, dtype=float) / np.sum(weights)
            m_avg, C_avg = w[0] * m, w[0] * C
        for t in range(T):
            gm, gC = estimate(target, m, C, U[t], structure)
            m, C = m - gammas[t] * gm, update(C - gammas[t] * gC, gammas[t])
            if not (np.isfinite(m).all() and np.isfinite(C).all()):
                raise ValueError(f"non-finite iterate at step {t}")
            if w is not None:
                m_avg, C_avg = m_avg + w[t + 1] * m, C_avg + w[t + 1] * C
        return (m, C, m, C) if w is None else (m, C, m_avg, C_avg)

    def prox_sgd(self, target, m0, C0, gammas, U, estimator="energy", structure="tril", weights=None):
        """w <- prox_{gamma h}(w - gamma g), the prox acting on the diagonal of C (Lemma 31); g estimates grad l."""
        need(estimator in ("energy", "score"), f"Prox-SGD needs an estimator of grad l, not {estimator!r}")
        self.entropy_prox(C0, 1.0)  # C0 square, finite and lower triangular: every later C is, by construction
        return self._sgd(self._entropy_prox, target, m0, C0, gammas, U, estimator, structure, weights)

    def framed_prox_sgd(self, target, z0, L, m0, C0, gammas, U, weights=None):
        """prox_sgd on p(z0 + L x): the same loop with the framed energy (L^T of the gradient at z0 + L(C u + m))."""
        self.entropy_prox(C0, 1.0)

        def energy(tg, m, C, u, structure):
            return self.framed_energy(tg, z0, L, m, C, u, structure)

        return self._sgd(self._entropy_prox, target, m0, C0, gammas, U, energy, "tril", weights)

    def proj_sgd(self, target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None):
        """w <- proj_{W_M}(w - gamma g) (Lemma 32 for symmetric C, singular-value clip for full C)."""
        need(estimator in ("energy", "entropy", "stl", "score"), f"unknown estimator {estimator!r}")
        M = _positive(M, "M")
        return self._sgd(
            lambda Y, g: self._project_wm(Y, M, structure), target, m0, C0, gammas, U, estimator, structure, weights
        )

    def fit(self, target, method="prox-sgd", steps=200, step_size=None, average="tail", seed=0, frame=None, init=None):
        """Def. 5 / Def. 8 from ``init`` (default (0, I)) with one fresh sample per step; the average over the kept
        iterates.  In a frame ("laplace" or a pair (z0, L)): the same run on the framed target (its energy by
        ``framed_energy``) from the start mapped into the frame, mapped back."""
        from types import SimpleNamespace

        need(method in ("prox-sgd", "proj-sgd", "gd-prox", "gd-projected"), f"unknown method {method!r}")
        d = target.dim
        m0, C0 = (np.zeros(d), np.eye(d)) if init is None else (np.asarray(x, dtype=float) for x in init)
        need(
            m0.shape == (d,) and C0.shape == (d, d) and np.all(np.isfinite(C0)) and abs(np.linalg.det(C0)) > 0,
            "init must be (m0 (d,), an invertible C0 (d, d))",
        )
        if frame is not None:
            return self._fit_framed(target, method, steps, step_size, average, seed, frame, init)
        mu, M = _constants(target)
        if method.startswith("gd-"):  # seed 002 §5.3: exact gradient descent, the last iterate
            ms, Cs = (
                np.asarray(x) for x in self.gradient_descent_exact(target, m0, C0, step_size, steps, method[3:], M)
            )
            step = (1 / M if method == "gd-prox" else 1 / (2 * M)) if step_size is None else step_size
            return SimpleNamespace(
                m=ms[-1], C=Cs[-1], m_last=ms[-1], C_last=Cs[-1], step_sizes=np.full(steps, step), ms=ms, Cs=Cs
            )
        a = self.noise_constants("energy" if method == "prox-sgd" else "entropy", target.dim, M, 0.0)[0]
        if isinstance(step_size, str):  # Cor 30's A: its smallest value 1/mu
            gammas = self.step_sizes(step_size, steps, M=M, mu=mu, a=a, A=1.0 / mu)
        else:
            gammas = np.full(
                steps,
                (1 / M if method == "prox-sgd" else 1 / (2 * M)) if step_size is None else _positive(step_size, "step"),
            )
        U = np.random.default_rng(seed).standard_normal((steps, target.dim))
        m_list, C_list = [m0], [C0]
        for gamma, u in zip(gammas, U, strict=True):
            if method == "prox-sgd":
                gm, gC = self.energy(target, m_list[-1], C_list[-1], u, "tril")
                C = self.entropy_prox(C_list[-1] - gamma * gC, gamma)
            else:
                gm, gC = self.entropy(target, m_list[-1], C_list[-1], u, "sym")
                C = self.project_wm(C_list[-1] - gamma * gC, M, "sym")
            m_list.append(m_list[-1] - gamma * gm)
            C_list.append(C)
        if average == "theta":
            need(np.all(gammas == gammas[0]), "the theta average needs a constant step")
            w = self.average_weights("theta7" if method == "prox-sgd" else "theta10", steps, a=a, gamma=gammas[0])
        else:
            w = self.average_weights(average, steps)  # "tail": the last half, tail_fraction 0.5
        ms, Cs = np.array(m_list), np.array(C_list)
        return SimpleNamespace(
            m=w @ ms, C=np.tensordot(w, Cs, 1), m_last=ms[-1], C_last=Cs[-1], step_sizes=gammas, ms=ms, Cs=Cs
        )

    def framed_constants(self, target, frame):
        """(z0, L, M', mu') of ``frame``: a kind of :meth:`frame`, or a given pair (z0, L) with the constants of
        L^T H L at z0."""
        if not isinstance(frame, tuple):
            return self.frame(target, frame)
        z0, L = (np.asarray(x, dtype=float) for x in frame)
        ev = np.linalg.eigvalsh(L.T @ -self.hess_log_joint(target, z0) @ L)
        return z0, L, float(ev[-1]), float(ev[0])

    def _fit_framed(self, target, method, steps, step_size, average, seed, kind, init):
        from types import SimpleNamespace

        z0, L, M, mu = self.framed_constants(target, kind)
        a = self.noise_constants("energy" if method == "prox-sgd" else "entropy", target.dim, M, 0.0)[0]
        if step_size is None:  # the protocol's default in a frame: Eq. 11 / Eq. 13 when mu' >= M'/10, else Cor 11
            rule = ("thm6" if method == "prox-sgd" else "thm9") if mu >= 0.1 * M else "1/(M sqrt T)"
            gammas = self.step_sizes(rule, steps, M=M, mu=mu, a=a)
        else:
            gammas = np.full(steps, _positive(step_size, "step"))
        structure = "tril" if method == "prox-sgd" else "sym"
        U = np.random.default_rng(seed).standard_normal((steps, target.dim))
        ms, Cs = [np.zeros(target.dim)], [np.eye(target.dim)]
        if init is not None:  # x0 = L^-1 (m0 - z0); C0x the factor in V of L^-1 C0 C0^T L^-T
            Li = np.linalg.inv(L)
            ms[0] = Li @ (np.asarray(init[0], dtype=float) - z0)
            Cs[0] = factor_in_V(Li @ init[1] @ np.asarray(init[1]).T @ Li.T, structure)
        for u, gamma in zip(U, gammas, strict=True):
            gm, gC = self.framed_energy(target, z0, L, ms[-1], Cs[-1], u[None, :], structure)
            if method == "prox-sgd":
                C = self.entropy_prox(Cs[-1] - gamma * gC, gamma)
            else:
                C = self.project_wm(Cs[-1] - gamma * (gC + self.grad_neg_entropy(Cs[-1], "sym")), M, "sym")
            ms.append(ms[-1] - gamma * gm)
            Cs.append(C)

        def back(m, C):  # z = z0 + L x; C the factor in V of L C C^T L^T
            if structure == "tril" and not np.any(np.triu(L, 1)):  # L lower triangular: L C is already in V
                return z0 + L @ m, L @ C
            return z0 + L @ m, factor_in_V(L @ C @ C.T @ L.T, structure)

        w = self.average_weights(average, steps)
        pairs = [back(m, C) for m, C in zip(ms, Cs, strict=True)]
        avg = back(w @ np.array(ms), np.tensordot(w, np.array(Cs), 1))
        return SimpleNamespace(
            m=avg[0],
            C=avg[1],
            m_last=pairs[-1][0],
            C_last=pairs[-1][1],
            step_sizes=gammas,
            ms=np.array([p[0] for p in pairs]),
            Cs=np.array([p[1] for p in pairs]),
        )

    def gradient_descent(self, grad_l, m0, C0, step, steps, method, M=None):
        """Seed 002 §5.3: naive, proximal (triangular C) and projected (full C) gradient descent."""
        m, C = np.array(m0, dtype=float), np.array(C0, dtype=float)
        if step is None:  # Thm 6's largest step
            step = 1.0 / (2.0 * M) if method == "projected" else 1.0 / M
        if method == "projected":
            C = self.project_singular(C, M)
        ms, Cs = [m], [C]
        for _ in range(steps):
            gm, gC = grad_l(m, C)
            if method == "prox":
                m, C = m - step * gm, self.entropy_prox(np.tril(C - step * np.tril(gC)), step)
            else:
                m, C = m - step * gm, C - step * (gC - np.linalg.inv(C).T)
                if method == "projected":
                    C = self.project_singular(C, M)
            ms.append(m)
            Cs.append(C)
        return np.array(ms), np.array(Cs)

    def gradient_descent_exact(self, target, m0, C0, step, steps, method, M=None):
        """Seed 002 §5.3 on ``target`` with this adapter's closed-form exact energy gradient."""
        return self.gradient_descent(lambda m, C: self.exact_energy(target, m, C)[1:], m0, C0, step, steps, method, M)


IMPL = NumpyImplementation()


def factor_in_V(S, structure):
    """The factor C in V with C C^T = S: the Cholesky factor ("tril") or the symmetric square root ("sym")."""
    S = 0.5 * (S + S.T)
    if structure == "tril":
        return np.linalg.cholesky(S)
    lam, Q = np.linalg.eigh(S)
    R = (Q * np.sqrt(np.maximum(lam, 0.0))) @ Q.T
    return 0.5 * (R + R.T)
