"""Seed 003 sub-adapter of the plain-NumPy example implementation, written from Chérief-Abdellatif, Alquier & Khan
(online VI) only; it imports nothing of refvi.  One Python loop per stream; conventions in
``refvi.verification.protocol.online``."""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import Any

import numpy as np
from scipy.special import logsumexp, ndtr

from ._validate import need

_SQ2PI = math.sqrt(2 * math.pi)


def _expected(loss, x, y, m, sigma, H):
    """bar L = E ell(theta), theta ~ N(m, diag sigma^2), and its gradients (gm, gs): <theta, x> ~ N(a, b^2)."""
    if loss == "quadratic":
        r = m - x
        return 0.5 * H * (r @ r + sigma @ sigma), H * r, H * sigma
    a, sx2 = m @ x, sigma * x * x
    b = math.sqrt(sigma @ sx2)
    if loss == "squared":
        r = y - a
        return r * r + b * b, -2 * r * x, 2 * sx2
    if loss == "hinge":
        c = 1 - y * a
        if b == 0:
            return max(c, 0.0), -y * x * (c > 0), np.zeros_like(x)
        z = c / b
        P, p = ndtr(z), math.exp(-0.5 * z * z) / _SQ2PI
        return c * P + b * p, -y * P * x, p * sx2 / b
    if loss == "absolute":
        r = y - a
        if b == 0:
            return abs(r), -np.sign(r) * x, np.zeros_like(x)
        z = r / b
        P2, p = 2 * ndtr(z) - 1, math.exp(-0.5 * z * z) / _SQ2PI
        return 2 * b * p + r * P2, -P2 * x, 2 * p * sx2 / b
    raise ValueError(f"unknown loss {loss!r}")


def _point(loss, x, y, th, H):
    if loss == "quadratic":
        return 0.5 * H * float((th - x) @ (th - x))
    a = th @ x
    return {"hinge": max(0.0, 1 - y * a), "squared": (y - a) ** 2, "absolute": abs(y - a)}[loss]


def _subgradient(loss, x, y, th, H):
    a = th @ x
    if loss == "hinge":
        return -y * x if 1 - y * a > 0 else np.zeros_like(x)
    if loss == "squared":
        return -2 * (y - a) * x
    if loss == "absolute":
        return -np.sign(y - a) * x
    return H * (th - x)


def _h(sig, u):
    """sig h(u / sig), h(x) = sqrt(1 + x^2) - x: the positive root of the sigma stationarity equation."""
    r = np.hypot(sig, u)
    return np.where(u > 0, sig * sig / np.where(r + u > 0, r + u, 1.0), r - u)


def to_ball(v, radius):
    """The Euclidean projection onto the ball ||v|| <= radius: v scaled back to the sphere when outside."""
    n = float(np.linalg.norm(v))
    return v if n <= radius else v * (radius / n)


def to_sigma_ball(sig, radius):
    """The Euclidean projection onto {sigma >= 0, ||sigma|| <= radius}: the nonnegative part, then the ball (the
    projection onto the intersection of the orthant and a centred ball is this composition)."""
    return to_ball(np.maximum(sig, 0.0), radius)


def _n_params(h: int, p: int) -> int:
    """Entries of theta = (W (h, p) row-major, b (h), v (h), c) for width h on p inputs."""
    return h * p + 2 * h + 1


def _stream(X, y) -> None:
    """The rounds of a stream: X (T, d) and y (T,) for the same T."""
    need(
        X.ndim == 2 and X.shape[1] >= 1 and y.shape == (X.shape[0],),
        f"the stream needs X (T, d >= 1) and y (T,): got {X.shape}, {y.shape}",
    )


class _Learner:
    """State (m, sigma) and one update per round (``update(x, y)``): the loss at the mean, then the method's step
    along the gradients of the round's loss.  ``prior`` is the prior mean m0 (zero by default): the start of m, the
    centre of SVA's FTRL and of NGVI's pull.  The closed-form expected losses of seed 003 §4 give the gradients here;
    a subclass can take them from elsewhere (:class:`_NetLearner`)."""

    def __init__(
        self,
        method,
        d,
        loss,
        eta=None,
        s=1.0,
        mbox=np.inf,
        sbox=np.inf,
        H=1.0,
        schedule="convex",
        K=None,
        D=None,
        L=None,
        H_sc=None,
        sigma0=None,
        alpha=None,
        beta=None,
        projection="greedy",
        prior=None,
        mball=None,
        sball=None,
    ):
        need(eta is None or eta > 0, f"eta must be > 0, got {eta}")
        self.ball = mball is not None or sball is not None
        if self.ball:  # Thm 3's ball parameter sets (SVB only), instead of the boxes
            need(method == "svb", f"the ball parameter sets (mball, sball) are for SVB only, not {method!r}")
            need(mbox == np.inf and sbox == np.inf, "give boxes (mbox, sbox) or balls (mball, sball), not both")
            need(
                mball is not None and sball is not None and mball > 0 and sball > 0,
                f"need mball > 0 and sball > 0, got {mball}, {sball}",
            )
            start = np.full(d, float(s)) if sigma0 is None else np.asarray(sigma0, dtype=float)
            need(
                bool(np.all(start >= 0)) and float(np.linalg.norm(start)) <= sball,
                f"the initial sigma must lie in the ball ||sigma|| <= sball = {sball}",
            )
        self.mball, self.sball = mball, sball
        need(
            s > 0 and mbox > 0 and sbox > 0 and s <= sbox,
            f"need s, mbox, sbox > 0 and s <= sbox, got {s}, {mbox}, {sbox}",
        )
        need(beta is None or 0 < beta <= 1, f"beta must lie in (0, 1], got {beta}")
        need(
            sigma0 is None or bool(np.all((np.asarray(sigma0) >= 0) & (np.asarray(sigma0) <= sbox))),
            "sigma0 must lie in [0, sbox]",
        )
        self.method, self.loss, self.H, self.eta, self.s = method, loss, H, eta, s
        self.mbox, self.sbox, self.schedule, self.H_sc, self.projection = mbox, sbox, schedule, H_sc, projection
        self.K = K if K is not None or D is None else D * math.sqrt(2) / L
        need(self.K is None or self.K > 0, f"K = D sqrt(2) / L must be > 0, got {self.K}")
        self.beta = beta if alpha is None else alpha / (alpha + eta)  # corrected weight (erratum E003-1)
        self.prior = np.zeros(d) if prior is None else np.array(prior, dtype=float)
        self.m = self.prior.copy()
        self.sigma: Any = (  # None for OGA, which has no sigma
            None if method == "oga" else (np.full(d, float(s)) if sigma0 is None else np.array(sigma0, dtype=float))
        )
        self.Gm, self.Gs, self.t = np.zeros(d), np.zeros(d), 0

    def point_loss(self, x, y):
        return _point(self.loss, x, y, self.m, self.H)

    def subgradient(self, x, y):
        """OGA's gradient of the loss at the mean."""
        return _subgradient(self.loss, x, y, self.m, self.H)

    def expected_gradients(self, x, y):
        """(gm, gs): the gradients of bar L = E ell(theta), theta ~ N(m, diag sigma^2)."""
        return _expected(self.loss, x, y, self.m, self.sigma, self.H)[1:]

    def update(self, x, y):
        lt = self.point_loss(x, y)
        self.t += 1
        M, S = self.mbox, self.sbox
        if self.method == "oga":
            self.m = np.clip(self.m - self.eta * self.subgradient(x, y), -M, M)
            return lt
        gm, gs = self.expected_gradients(x, y)
        if self.method == "sva":  # FTRL form of eq. (9)
            self.Gm, self.Gs = self.Gm + gm, self.Gs + gs
            e = self.eta * self.s**2
            self.m = np.clip(self.prior - e * self.Gm, -M, M)
            self.sigma = np.clip(_h(self.s, 0.5 * e * self.Gs), 0, S)
        elif self.method == "svb":  # eq. (10), a = eta_t sigma_t^2
            a = {
                "constant": lambda: self.eta * self.sigma**2,
                "convex": lambda: self.K / math.sqrt(self.t),
                "strong": lambda: 2.0 / (self.H_sc * self.t),
            }[self.schedule]()
            if self.ball:
                self.m = to_ball(self.m - a * gm, self.mball)
                self.sigma = to_sigma_ball(_h(self.sigma, 0.5 * a * gs), self.sball)
            else:
                self.m = np.clip(self.m - a * gm, -M, M)
                self.sigma = np.clip(_h(self.sigma, 0.5 * a * gs), 0, S)
        elif self.method == "ngvi":  # eq. (15)
            b = self.beta
            prec = (1 - b) / self.sigma**2 + b / self.s**2 + self.eta * b * gs / self.sigma
            prec = np.maximum(prec, 0.0 if S == np.inf else 1 / S**2)
            v = 1 / prec
            self.m = np.clip(self.m - b * v * (self.eta * gm + (self.m - self.prior) / self.s**2), -M, M)
            self.sigma = np.sqrt(v)
        elif self.method == "ogael":
            if self.projection == "lazy":
                self.Gm, self.Gs = self.Gm + gm, self.Gs + gs
                self.m = np.clip(self.prior - self.eta * self.Gm, -M, M)
                self.sigma = np.clip(self.s - self.eta * self.Gs, 0, S)
            else:
                self.m = np.clip(self.m - self.eta * gm, -M, M)
                self.sigma = np.clip(self.sigma - self.eta * gs, 0, S)
        else:
            raise ValueError(f"unknown method {self.method!r}")
        return lt

    def record(self, X, ys):
        """Run over the rows of X: losses, M and S (row t the state before round t) and the final state."""
        T, d = len(X), len(self.m)
        M, S = np.empty((T + 1, d)), None if self.sigma is None else np.empty((T + 1, d))
        losses = np.empty(T)
        for t in range(T):
            M[t] = self.m
            if S is not None:
                S[t] = self.sigma
            losses[t] = self.update(X[t], ys[t])
        M[T] = self.m
        if S is not None:
            S[T] = self.sigma
        return SimpleNamespace(losses=losses, M=M, S=S, m=self.m, sigma=self.sigma)


def _relu_net_loss_grad(theta, x, y, h):
    """Squared loss of f(x) = v . relu(W x + b) + c, theta = (W row-major, b, v, c), and its gradient."""
    p = x.size
    W, b, v, c = theta[: h * p].reshape(h, p), theta[h * p : h * p + h], theta[h * p + h : h * p + 2 * h], theta[-1]
    z = W @ x + b
    act = np.maximum(z, 0.0)
    r = y - act @ v - c
    dz = -2.0 * r * v * (z > 0)
    return r * r, np.concatenate([np.outer(dz, x).ravel(), dz, -2.0 * r * act, [-2.0 * r]])


class _NetLearner(_Learner):
    """The same learners on the ReLU network's squared loss (parameters theta of :func:`_relu_net_loss_grad`): loss
    and gradient at the mean, and Monte Carlo gradients of the expected loss on the round's base samples U[t].  (The
    oracle replays these updates in a loop of its own; the example reaches them through its one learner, so the two
    share no code and differ in rounding, ~1e-15.)"""

    def __init__(self, method, h, U, **hyper):
        need(int(h) == h and h >= 1 and U.ndim == 3 and U.shape[1] >= 1, "need h >= 1 and U of shape (T, S >= 1, d)")
        super().__init__(method, U.shape[-1], "squared", **hyper)
        self.h, self.U = h, U

    def point_loss(self, x, y):
        return _relu_net_loss_grad(self.m, x, y, self.h)[0]

    def subgradient(self, x, y):
        return _relu_net_loss_grad(self.m, x, y, self.h)[1]

    def expected_gradients(self, x, y):
        U = self.U[self.t - 1]  # this round's samples (t counts it)
        grads = [_relu_net_loss_grad(self.m + self.sigma * u, x, y, self.h)[1] for u in U]
        return np.mean(grads, axis=0), np.mean([gk * u for gk, u in zip(grads, U, strict=True)], axis=0)


@functools.lru_cache(maxsize=64)
def _gauss_legendre(k):
    """The k-point Gauss-Legendre rule on [-1, 1], computed once per k (an O(k^3) eigenproblem: k reaches 2000)."""
    z, w = np.polynomial.legendre.leggauss(k)
    z.setflags(write=False)
    w.setflags(write=False)
    return z, w


def _logsumexp(a):
    top = a.max()
    return top + math.log(np.exp(a - top).sum())


def _log_prior_at(log_prior, nodes):
    """log_prior at the quadrature nodes (0 for a uniform prior): one finite value per node, else refused."""
    if log_prior is None:
        return np.zeros(len(nodes))
    lp = np.asarray(log_prior(nodes), float)
    need(lp.shape == (len(nodes),) and np.all(np.isfinite(lp)), "log_prior must return one finite value per node")
    return lp


def _ewa_on_nodes(loss, data, eta, nodes, logw):
    """EWA p_{t+1} ∝ p_t exp(-eta ell_t) on quadrature nodes (rows of ``nodes``, log weights ``logw`` summing to one):
    the posterior means, the losses at the means, the mix losses and log normalisers (seed 003 §2)."""
    T = len(data)
    cum = np.zeros(len(nodes))
    means, losses, mix, log_norm = np.empty((T,) + nodes.shape[1:]), np.empty(T), np.empty(T), np.zeros(T + 1)
    lpost = logw
    norm = _logsumexp(lpost)  # log Z_t of the unnormalised log posterior logw - eta cum
    for t in range(T):
        post = np.exp(lpost - norm)
        means[t] = post @ nodes
        lt = np.asarray(loss(nodes, data[t]), dtype=float)
        losses[t] = float(np.asarray(loss(np.asarray(means[t])[None, ...], data[t]), dtype=float)[0])
        cum = cum + lt
        lpost = logw - eta * cum
        log_norm[t + 1] = _logsumexp(lpost)
        mix[t] = -(log_norm[t + 1] - norm) / eta  # -log E_{p_t} exp(-eta ell_t) / eta = -(log Z_{t+1} - log Z_t)
        norm = log_norm[t + 1]
    return SimpleNamespace(
        means=means, losses=losses, log_norm=log_norm, mix_loss=mix, nodes=nodes, log_post=lpost - logsumexp(lpost)
    )


class NumpyOnline:
    """SVA, SVB, online NGVI, OGA, OGA-EL (mean field), closed-form expected losses, KLs and 1-D EWA."""

    name = "numpy-adapter.online"

    def run(self, method, X, y, loss="hinge", **hyper):
        X = np.asarray(X, dtype=float)
        ys = np.zeros(len(X)) if y is None else np.asarray(y, dtype=float)
        _stream(X, ys)
        return _Learner(method, X.shape[1], loss, **hyper).record(X, ys)

    def run_full(self, X, y, loss="hinge", *, eta, s=1.0):
        """SVA over N(m, C C^T): the FTRL argmin separates into m, the strictly lower entries of C (linear in the
        gradient sums) and each diagonal entry (the positive root of c / s^2 - 1 / c + eta G_ii = 0)."""
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        _stream(X, y)
        T, d = X.shape
        m, C = np.zeros(d), s * np.eye(d)
        Gm, GC = np.zeros(d), np.zeros((d, d))
        M, Cs, losses = [m.copy()], [C.copy()], []
        low = np.tril(np.ones((d, d)), -1).astype(bool)
        for t in range(T):
            x = X[t]
            losses.append(float(_expected(loss, x, y[t], m, np.zeros(d), 1.0)[0]))
            v = C.T @ x
            b = math.sqrt(v @ v)
            _, ga, gb = _expected(loss, np.array([1.0]), y[t], np.array([m @ x]), np.array([b]), 1.0)
            Gm += ga[0] * x
            GC += np.tril(np.outer(x, v)) * (gb[0] / b if b > 0 else 0.0)
            m = -eta * s * s * Gm
            C = np.where(low, -eta * s * s * GC, 0.0)
            g = eta * s * s * np.diag(GC)
            np.fill_diagonal(C, (-g + np.sqrt(g * g + 4 * s * s)) / 2)
            M.append(m.copy())
            Cs.append(C.copy())
        return SimpleNamespace(losses=np.array(losses), M=np.array(M), Cs=np.array(Cs), m=m, C=C)

    def nn_predict(self, theta, X, h):
        """f(x) = v . relu(W x + b) + c for every row of X."""
        X, theta = np.asarray(X, float), np.asarray(theta, float)
        p = X.shape[1]
        need(theta.shape == (_n_params(h, p),), f"theta must have h p + 2 h + 1 = {_n_params(h, p)} entries")
        W, b, v = theta[: h * p].reshape(h, p), theta[h * p : h * p + h], theta[h * p + h : h * p + 2 * h]
        return np.maximum(X @ W.T + b, 0.0) @ v + theta[-1]

    def run_nn(self, method, X, y, h, U, *, eta=1.0, K=1.0, beta=0.01, s=1.0, mbox=20.0, sbox=1.0, m0=None):
        """ReLU-network regression: the learners of :meth:`run` from the prior mean m0 (clipped to the box), with
        Monte Carlo gradients on the given base samples; projected updates."""
        X, y, U = np.asarray(X, float), np.asarray(y, float), np.asarray(U, float)
        T = X.shape[0] if X.ndim == 2 else -1
        need(
            T >= 0 and y.shape == (T,) and U.ndim == 3 and U.shape[0] == T and U.shape[2] == _n_params(h, X.shape[-1]),
            f"run_nn needs X (T, p), y (T,) and base samples U (T, S, h p + 2 h + 1): got X {X.shape}, y {y.shape}, "
            f"U {U.shape}",
        )
        prior = None if m0 is None else np.clip(np.asarray(m0, float), -mbox, mbox)
        lr = _NetLearner(method, h, U, eta=eta, K=K, beta=beta, s=s, mbox=mbox, sbox=sbox, prior=prior)
        return lr.record(X, y)

    def run_adversarial(self, method, X, loss="hinge", **hyper):
        X = np.asarray(X, dtype=float)
        lr = _Learner(method, X.shape[1], loss, **hyper)
        y = np.empty(X.shape[0])
        for t in range(X.shape[0]):
            y[t] = -1.0 if float(lr.m @ X[t]) > 0 else 1.0
            lr.update(X[t], y[t])
        return y

    def expected_loss(self, loss, X, y, m, sigma, H=1.0):
        X = np.atleast_2d(np.asarray(X, dtype=float))
        ys = np.zeros(len(X)) if y is None else np.asarray(y, dtype=float)
        need(np.all(np.asarray(sigma) >= 0), "sigma must be >= 0")
        out = [
            _expected(loss, x, yt, np.asarray(m, float), np.asarray(sigma, float), H)
            for x, yt in zip(X, ys, strict=True)
        ]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out]), np.array([o[2] for o in out])

    def expected_loss_full(self, loss, x, y, m, C):
        x, m, C = np.asarray(x, float), np.asarray(m, float), np.asarray(C, float)
        need(m.ndim == 1 and x.shape == m.shape and C.shape == (m.size, m.size), "x, m must be (d,) and C (d, d)")
        b = float(np.linalg.norm(C.T @ x))  # <theta, x> ~ N(<m, x>, |C^T x|^2)
        return float(_expected(loss, np.array([1.0]), y, np.array([float(m @ x)]), np.array([b]), 1.0)[0])

    def kl_prior(self, m, sigma, s):
        m, sigma = np.asarray(m, float), np.asarray(sigma, float)
        need(m.ndim == 1 and sigma.shape == m.shape, f"m and sigma must be (d,) alike: got {m.shape}, {sigma.shape}")
        return float(0.5 * ((m @ m + sigma @ sigma) / s**2 + np.sum(np.log(s**2 / sigma**2)) - len(m)))

    def kl_gaussian(self, m, C, mbar, Cbar):
        m, C, mbar, Cbar = (np.asarray(a, float) for a in (m, C, mbar, Cbar))
        d = m.shape[0] if m.ndim == 1 else -1
        need(
            d >= 1 and mbar.shape == (d,) and C.shape == Cbar.shape == (d, d),
            f"m, mbar must be (d,) and C, Cbar (d, d): got {m.shape}, {C.shape}, {mbar.shape}, {Cbar.shape}",
        )
        S, Sb = C @ C.T, Cbar @ Cbar.T
        r = m - mbar
        return float(
            0.5
            * (
                r @ np.linalg.solve(Sb, r)
                + np.trace(np.linalg.solve(Sb, S))
                + np.linalg.slogdet(Sb)[1]
                - np.linalg.slogdet(S)[1]
                - len(r)
            )
        )

    def ewa_2d(self, loss, data, eta, lo, hi, log_prior=None, n_nodes=64):
        """p_{t+1} ∝ p_t exp(-eta ell_t) on a tensor Gauss-Legendre grid of the box."""
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        need(np.all(hi > lo) and n_nodes >= 2, "need lo < hi and n_nodes >= 2")
        z, w = _gauss_legendre(int(n_nodes))
        gx = [lo[j] + 0.5 * (hi[j] - lo[j]) * (z + 1) for j in range(2)]
        gw = [0.5 * (hi[j] - lo[j]) * w for j in range(2)]
        nodes = np.array([[a, b] for a in gx[0] for b in gx[1]])
        logw = np.log(np.array([a * b for a in gw[0] for b in gw[1]])) + _log_prior_at(log_prior, nodes)
        logw = logw - logsumexp(logw)
        return _ewa_on_nodes(loss, data, eta, nodes, logw)

    def ewa_1d(self, loss, data, eta, lo, hi, log_prior=None, n_nodes=2000, breaks=()):
        """p_{t+1} ∝ p_t exp(-eta ell_t) on composite Gauss-Legendre nodes split at the loss kinks."""
        need(lo < hi, f"need lo < hi, got [{lo}, {hi}]")
        cuts = np.unique(np.concatenate([[lo, hi], [b for b in np.ravel(breaks) if lo < b < hi]]))
        k = max(16, int(n_nodes) // (len(cuts) - 1))
        z, w = _gauss_legendre(k)
        nodes = np.concatenate([a + 0.5 * (b - a) * (z + 1) for a, b in zip(cuts[:-1], cuts[1:], strict=True)])
        wts = np.concatenate([0.5 * (b - a) * w for a, b in zip(cuts[:-1], cuts[1:], strict=True)])
        logw = np.log(wts) + _log_prior_at(log_prior, nodes)
        logw = logw - logsumexp(logw)
        return _ewa_on_nodes(loss, np.asarray(data, dtype=float), eta, nodes, logw)
