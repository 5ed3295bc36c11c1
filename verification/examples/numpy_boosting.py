"""Seed 001 sub-adapter of the plain-NumPy example implementation, written from Locatello et al. (boosting VI) only;
it imports nothing of refvi.  Conventions in ``refvi.verification.protocol.boosting``.

Every quantity is a finite sum over a composite Gauss-Legendre rule on the box (``inst.quadrature``): the atom
densities at the nodes form a (K, Q) table, f(q) = sum_n w_n q_n (log q_n - log p_n), scores = table @ (w (log q -
log p)).  Simplex-constrained quadratic programs (Variant 0, the Newton steps of Variant 1) are solved exactly by a
primal active-set method.
"""

from __future__ import annotations

import functools
import itertools
import math
import weakref
from types import SimpleNamespace

import numpy as np
from scipy.special import ndtr

from . import numpy_boosting_mc
from ._validate import need, simplex
from .numpy_targets import boosting_logp

_LOG_SQ2PI = 0.5 * math.log(2 * math.pi)


def _log_mass(mu, s, lo, hi):
    """log (Phi((hi - mu)/s) - Phi((lo - mu)/s)), evaluated on the side of the smaller tail."""
    a, b = (lo - mu) / s, (hi - mu) / s
    flip = a > 0
    a2, b2 = np.where(flip, -b, a), np.where(flip, -a, b)
    return np.log(ndtr(b2) - ndtr(a2))


def _tensor_rule(inst):
    """Nodes (Q, d) and weights (Q,) of the tensor composite Gauss-Legendre rule ``inst.quadrature`` on the box.

    All axes at once: the panel edges of every axis are the columns of one ``linspace`` between the corner vectors,
    the 1-D rules the columns of a (panels * order, d) table; the grid is their ``meshgrid`` (last axis fastest) and
    the weights the outer product of the 1-D weights.  (The oracle builds the same rule axis by axis with
    ``itertools.product``; this road is deliberately its own, the example must share no code with the oracles.)"""
    order, panels = inst.quadrature
    x, w = np.polynomial.legendre.leggauss(int(order))
    edges = np.linspace(np.asarray(inst.lo, float), np.asarray(inst.hi, float), int(panels) + 1)  # (panels + 1, d)
    half, mid = 0.5 * np.diff(edges, axis=0), 0.5 * (edges[1:] + edges[:-1])
    d = edges.shape[1]
    axes = (mid[:, None, :] + half[:, None, :] * x[None, :, None]).reshape(-1, d)
    wts = (half[:, None, :] * w[None, :, None]).reshape(-1, d)
    nodes = np.stack(np.meshgrid(*axes.T, indexing="ij"), axis=-1).reshape(-1, d)
    return nodes, functools.reduce(np.multiply.outer, wts.T).ravel()


class _Problem:
    """An instance on its quadrature rule: nodes, weights, atom table, log p, and the Gram matrix."""

    def __init__(self, inst):
        need(np.all(np.asarray(inst.hi) > np.asarray(inst.lo)), "the box needs hi > lo in every coordinate")
        need(all(int(v) == v and v >= 1 for v in inst.quadrature), f"quadrature {inst.quadrature}: positive integers")
        self.nodes, self.w = _tensor_rule(inst)
        m, s = inst.means, inst.scales[:, None]
        lz = _log_mass(m, s, inst.lo, inst.hi).sum(1)  # (K,)
        t = (self.nodes[None, :, :] - m[:, None, :]) / s[:, :, None]
        self.T = np.exp(-0.5 * (t * t).sum(2) - inst.d * (np.log(s) + _LOG_SQ2PI) - lz[:, None])
        need(np.all(self.T > 0), "an atom density underflows to 0 on the box (A2 needs q >= eps > 0)")
        self.logp = boosting_logp(inst.target, self.nodes)
        self.inst, self.lz = inst, lz
        far = np.where(m - inst.lo > inst.hi - m, inst.lo, inst.hi)
        z = (far - m) / s
        self.eps = float(np.exp(-0.5 * (z * z).sum(1) - inst.d * (np.log(s[:, 0]) + _LOG_SQ2PI) - lz).min())
        self._gram = None

    @property
    def gram(self):
        if self._gram is None:
            m, s2 = self.inst.means, self.inst.scales**2
            tot = s2[:, None] + s2[None, :]
            out = -(self.lz[:, None] + self.lz[None, :])
            for j in range(self.inst.d):
                mi, mj = m[:, j][:, None], m[:, j][None, :]
                c = (mi * s2[None, :] + mj * s2[:, None]) / tot
                v = np.sqrt(s2[:, None] * s2[None, :] / tot)
                out = out - 0.5 * (mi - mj) ** 2 / tot - 0.5 * np.log(tot) - _LOG_SQ2PI
                out = out + _log_mass(c, v, self.inst.lo[j], self.inst.hi[j])
            self._gram = np.exp(out)
        return self._gram

    def q(self, a):
        return a @ self.T

    def f(self, a):
        q = self.q(a)
        return float(np.sum(self.w * q * (np.log(q) - self.logp)))

    def scores(self, a):
        return self.T @ (self.w * (np.log(self.q(a)) - self.logp))

    def line_search(self, q, s):
        """argmin over [0, 1] of f(q + g (s - q)): phi is convex, phi'(g) = sum w (s - q) log(y / p); bisection."""
        d = s - q

        def dphi(g):
            return float(np.sum(self.w * d * (np.log(q + g * d) - self.logp)))

        if dphi(0.0) >= 0.0:
            return 0.0
        if dphi(1.0) <= 0.0:
            return 1.0
        lo, hi = 0.0, 1.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if dphi(mid) < 0.0 else (lo, mid)
        return 0.5 * (lo + hi)


def simplex_qp(H, b, a0, max_iter=1000):
    """argmin 1/2 a^T H a + b^T a over the simplex (H positive definite) by the primal active-set method from a0."""
    n = b.size
    a = np.asarray(a0, dtype=np.float64).copy()
    work = a <= 0.0  # active bounds a_i = 0
    for _ in range(max_iter):
        F = np.nonzero(~work)[0]
        g = H @ a + b
        k = F.size
        kkt = np.zeros((k + 1, k + 1))
        kkt[:k, :k], kkt[:k, k], kkt[k, :k] = H[np.ix_(F, F)], 1.0, 1.0
        sol = np.linalg.solve(kkt, np.concatenate([-g[F], [0.0]]))
        p, lam = sol[:k], sol[k]
        if np.max(np.abs(p)) <= 1e-12:  # weights are O(1): a null step up to rounding
            mu = g + lam  # multipliers of the active bounds
            mu[~work] = np.inf
            j = int(np.argmin(mu))
            if mu[j] >= -1e-14 * max(1.0, np.max(np.abs(g))):
                return a
            work[j] = False
            continue
        step, block = 1.0, -1
        for i, pi in zip(F, p, strict=True):
            if pi < 0 and -a[i] / pi < step:
                step, block = -a[i] / pi, int(i)
        a[F] += step * p
        if block >= 0:
            a[block], work[block] = 0.0, True
        a = np.maximum(a, 0.0)
    return a / a.sum() if n else a


_PROBLEMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _problem(inst) -> _Problem:
    """The instance's quadrature problem, built once while the instance lives (shared by every copy of the adapter)."""
    if inst not in _PROBLEMS:
        _PROBLEMS[inst] = _Problem(inst)
    return _PROBLEMS[inst]


class NumpyBoosting:
    """Frank-Wolfe (Algorithm 1), corrective Frank-Wolfe (Algorithm 3), Eq. (10) and the constants of Thm 2 / 8."""

    name = "numpy-adapter.boosting"

    def objective(self, inst, alpha):
        return _problem(inst).f(simplex(alpha, inst.K))

    def scores(self, inst, alpha):
        return _problem(inst).scores(simplex(alpha, inst.K))

    def gap(self, inst, alpha):  # <q, grad f> - min_k <s_k, grad f>
        a = simplex(alpha, inst.K)
        sc = _problem(inst).scores(a)
        return float(a @ sc - sc.min())

    def gram(self, inst):
        return _problem(inst).gram

    def line_search(self, inst, alpha, k):
        P = _problem(inst)
        need(0 <= k < inst.K, f"atom index {k} outside [0, {inst.K})")
        return P.line_search(P.q(simplex(alpha, inst.K)), P.T[int(k)])

    def norm_corrective_weights(self, inst, alpha, idx, L):
        P = _problem(inst)
        alpha, idx = np.asarray(alpha, dtype=np.float64), np.asarray(idx)
        G = P.gram[np.ix_(idx, idx)]
        return simplex_qp(L * G, P.scores(alpha)[idx] - L * G @ alpha[idx], self._start(alpha[idx]))

    def fully_corrective_weights(self, inst, alpha, idx):
        """Projected Newton on f over the simplex on idx (QP subproblem exact, exact line search)."""
        P = _problem(inst)
        T = P.T[np.asarray(idx)]
        alpha = simplex(alpha, P.T.shape[0])
        a = self._start(alpha[np.asarray(idx)])
        for _ in range(100):
            q = a @ T
            g = T @ (P.w * (np.log(q) - P.logp))
            H = (T * (P.w / q)) @ T.T
            b = simplex_qp(H, g - H @ a, a)
            if float(g @ (a - b)) <= 1e-16:
                break
            gam = P.line_search(q, b @ T)
            if gam <= 0.0:
                break
            a = np.maximum(a + gam * (b - a), 0.0)
            a /= a.sum()
        return a

    @staticmethod
    def _start(a):
        a = np.maximum(np.asarray(a, dtype=np.float64), 0.0)
        return a / a.sum() if a.sum() > 0 else np.full(a.size, 1.0 / a.size)

    def _init(self, P, init):
        k = int(np.argmin((P.T * (np.log(P.T) - P.logp)) @ P.w)) if init is None else int(init)
        need(0 <= k < P.T.shape[0], f"starting atom index {k} outside [0, {P.T.shape[0]})")
        a = np.zeros(P.T.shape[0])
        a[k] = 1.0
        return a

    @staticmethod
    def _lmo(sc, q_score, lmo, delta):
        lin = sc - q_score
        best = float(lin.min())
        if lmo == "exact" or not best < 0.0:
            return int(np.argmin(lin))
        ok = np.nonzero(lin <= delta * best)[0]
        return int(ok[np.argmax(lin[ok])])

    def frank_wolfe(
        self,
        inst,
        n_iter,
        step="fixed",
        *,
        lmo="exact",
        delta=None,
        curvature=None,
        L=None,
        init=None,
        keep_weights=False,
    ):
        P = _problem(inst)
        need(int(n_iter) == n_iter and n_iter >= 0, f"n_iter must be a non-negative integer, got {n_iter!r}")
        a = self._init(P, init)
        delta = 1.0 if delta is None else float(delta)
        need(0 < delta <= 1, f"Eq. (9) needs 0 < delta <= 1, got {delta}")
        L = 1.0 / P.eps if L is None else float(L)
        f, gap, gam, atom, hist = [], [], [], [], []
        for t in range(int(n_iter)):
            sc = np.asarray(self.scores(inst, a))
            qs = float(a @ sc)
            f.append(self.objective(inst, a))
            gap.append(qs - float(sc.min()))
            hist.append(a.copy())
            k = self._lmo(sc, qs, lmo, delta)
            lin = max(qs - float(sc[k]), 0.0)
            if step == "fixed":
                g = 2.0 / (t + 2.0)
            elif step == "fixed_delta":
                g = 2.0 / (delta * t + 2.0)
            elif step == "curvature":
                g = min(1.0, lin / curvature)
            elif step == "local":
                e = -a.copy()
                e[k] += 1.0
                n2 = float(e @ P.gram @ e)
                g = 0.0 if n2 <= 0 else min(1.0, lin / (L * n2))
            elif step == "line_search":
                g = self.line_search(inst, a, k)
            else:
                raise ValueError(f"unknown step rule {step!r}")
            a = (1.0 - g) * a
            a[k] += g
            gam.append(g)
            atom.append(k)
        return self._record(inst, a, f, gap, np.array(gam), atom, hist, keep_weights)

    def corrective(
        self, inst, n_iter, variant="full", *, lmo="exact", delta=None, L=None, init=None, keep_weights=False
    ):
        P = _problem(inst)
        need(int(n_iter) == n_iter and n_iter >= 0, f"n_iter must be a non-negative integer, got {n_iter!r}")
        need(lmo in ("exact", "adversarial"), f"lmo must be 'exact' or 'adversarial', got {lmo!r}")
        a = self._init(P, init)
        delta = 1.0 if delta is None else float(delta)
        need(0 < delta <= 1, f"Eq. (9) needs 0 < delta <= 1, got {delta}")
        L = 1.0 / P.eps if L is None else float(L)
        need(L > 0, f"L must be > 0, got {L}")
        f, gap, atom, hist = [], [], [], []
        for _ in range(int(n_iter)):
            sc = np.asarray(self.scores(inst, a))
            f.append(self.objective(inst, a))
            gap.append(float(a @ sc - sc.min()))
            hist.append(a.copy())
            k = self._lmo(sc, float(a @ sc), lmo, delta)
            idx = np.union1d(np.nonzero(a > 0)[0], [k])
            w = (
                self.norm_corrective_weights(inst, a, idx, L)
                if variant == "norm"
                else self.fully_corrective_weights(inst, a, idx)
            )
            a = np.zeros_like(a)
            a[idx] = w
            atom.append(k)
        return self._record(inst, a, f, gap, np.full(len(atom), np.nan), atom, hist, keep_weights)

    def _record(self, inst, a, f, gap, gam, atom, hist, keep):
        sc = np.asarray(self.scores(inst, a))
        f.append(self.objective(inst, a))
        gap.append(float(a @ sc - sc.min()))
        hist.append(a.copy())
        return SimpleNamespace(
            weights=a,
            f=np.array(f),
            gap=np.array(gap),
            gamma=gam,
            atom=np.array(atom, dtype=np.int64),
            weights_history=np.array(hist) if keep else None,
        )

    def score_gradient(self, lo, hi, mu, sigma, Z, values):
        """Eq. (10): mean of values * ((z - mu)/sigma^2 - d/dmu log Z(mu)), d/dmu log Z = (phi(a) - phi(b)) /
        (sigma (Phi(b) - Phi(a))) per coordinate."""
        lo, hi, mu = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (lo, hi, mu))
        Z, values = np.asarray(Z, dtype=np.float64), np.asarray(values, dtype=np.float64)
        d = lo.size
        need(
            hi.shape == mu.shape == (d,) and Z.ndim == 2 and Z.shape[1] == d and values.shape == (Z.shape[0],),
            f"score_gradient needs lo, hi, mu (d,), Z (S, d), values (S,): got {lo.shape}, {hi.shape}, {mu.shape}, "
            f"{Z.shape}, {values.shape}",
        )
        a, b = (lo - mu) / sigma, (hi - mu) / sigma
        dlogz = (np.exp(-0.5 * a * a) - np.exp(-0.5 * b * b)) / (
            sigma * math.sqrt(2 * math.pi) * np.exp(_log_mass(mu, sigma, lo, hi))
        )
        score = (np.asarray(Z, dtype=np.float64) - mu) / sigma**2 - dlogz
        return (np.asarray(values, dtype=np.float64)[:, None] * score).mean(0)

    def grid_means(self, lo, hi, stride):
        """The stride lattice of the box, by itertools.product over per-coordinate integer counts."""
        lo, hi = np.atleast_1d(np.asarray(lo, dtype=float)), np.atleast_1d(np.asarray(hi, dtype=float))
        if not stride > 0:
            raise ValueError(f"stride must be > 0, got {stride!r}")
        counts = [int(np.floor((b - a) / stride + 1e-9)) + 1 for a, b in zip(lo, hi, strict=True)]
        return np.array([lo + stride * np.array(k) for k in itertools.product(*map(range, counts))])

    def family_constants(self, lo, hi, sigma_min, sigma_max):
        """Corners are extreme for every coordinate (the mass P(N(mu, s^2) in [lo, hi]) is smallest with mu at an
        end, the density smallest at the opposite end); eps and M scan sigma on a fine geometric grid."""
        lo, hi = np.atleast_1d(np.asarray(lo, float)), np.atleast_1d(np.asarray(hi, float))
        need(lo.ndim == 1 and hi.shape == lo.shape, f"lo and hi must be (d,) alike: got {lo.shape}, {hi.shape}")
        need(0 < sigma_min <= sigma_max, f"need 0 < sigma_min <= sigma_max, got {sigma_min}, {sigma_max}")
        d, wdt = lo.size, hi - lo
        sig = np.unique(np.concatenate([np.geomspace(sigma_min, sigma_max, 257), [sigma_min, sigma_max]]))
        lz = np.array([_log_mass(lo, s, lo, hi).sum() for s in sig])
        log_eps = np.array([(-0.5 * (wdt / s) ** 2).sum() for s in sig]) - d * (np.log(sig) + _LOG_SQ2PI) - lz
        log_M = -d * (np.log(sig) + _LOG_SQ2PI) - lz
        K = float(np.exp(_log_mass(lo, sigma_max, lo, hi).sum()))
        P_a = float(np.exp(_log_mass(lo, sigma_min, lo, hi).sum()))
        D = float(np.linalg.norm(wdt))
        n_ab = math.exp(-0.5 * D * D / sigma_min**2 - d * (math.log(sigma_min) + _LOG_SQ2PI))
        e = math.exp(D * D / (2 * sigma_min**2))
        eps, M, leb = float(np.exp(log_eps.min())), float(np.exp(log_M.max())), float(np.prod(wdt))
        return SimpleNamespace(
            eps=eps,
            M=M,
            K=K,
            P_a=P_a,
            diam_box=D,
            cor3_diam_sq=(2 * M) ** 2 * leb,
            tight_diam_sq=2 * M,
            thm6_curvature=(2 * M) ** 2 * leb / eps,
            thm2_diam_sq=4.0 / (sigma_min**d * (2 * math.sqrt(math.pi)) ** d * K**2),
            thm8_ldiam=4 * 2 ** (-d / 2) * P_a * e / K**2,
            thm8_ldiam_printed=4 * P_a * e / (sigma_min ** (d / 2) * 2 ** (d / 2) * K**2),
            eps_corner_formula=n_ab / P_a,
        )

    def stochastic_lmo(self, inst, alpha, *, n_samples=64, n_steps=50, lr=0.05, seed=0):
        """Algorithm 2: SGD on mu with Eq. (10)'s gradient of E_{TN(mu)} log(q/p) (leave-one-out baseline), clipped to
        the box, started at the best of 8 uniform means; the answer is the atom nearest the final mu."""
        from scipy.stats import truncnorm

        need(n_samples >= 2, "the leave-one-out baseline needs n_samples >= 2")
        need(n_steps >= 0, f"n_steps must be >= 0, got {n_steps}")
        rng = np.random.default_rng(seed)
        lo, hi, sig = inst.lo, inst.hi, float(inst.scales[0])
        a = np.asarray(alpha, dtype=float)
        nearest = lambda mu: int(np.argmin(((inst.means - mu) ** 2).sum(1)))  # noqa: E731

        def draw(k):
            m = inst.means[k]
            return truncnorm.rvs(
                (lo - m) / sig, (hi - m) / sig, loc=m, scale=sig, size=(n_samples, inst.d), random_state=rng
            )

        def log_ratio(Z):  # log q(z) - log p(z), q the mixture of truncated Gaussians
            return self.mixture_logpdf(inst, a, Z) - boosting_logp(inst.target, Z)

        cands = rng.uniform(lo, hi, size=(8, inst.d))
        mu = cands[int(np.argmin([log_ratio(draw(nearest(c))).mean() for c in cands]))].copy()
        for _ in range(n_steps):
            mu = self.stochastic_lmo_step(inst, a, mu, draw(nearest(mu)), lr)
        return nearest(mu)

    def stochastic_lmo_step(self, inst, alpha, mu, Z, lr=0.05):
        """mu' = clip(mu - lr g): g Eq. (10) at the nearest atom's mean, leave-one-out baseline on log q - log p."""
        mu = np.atleast_1d(np.asarray(mu, dtype=float))
        need(mu.shape == (inst.d,), f"mu must be one point ({inst.d},) of the box, got shape {mu.shape}")
        k = int(np.argmin(((inst.means - mu) ** 2).sum(1)))
        v = self.mixture_logpdf(inst, alpha, Z) - boosting_logp(inst.target, Z)
        v = v - (v.sum() - v) / (v.size - 1)
        return np.clip(
            mu - lr * self.score_gradient(inst.lo, inst.hi, inst.means[k], float(inst.scales[k]), Z, v),
            inst.lo,
            inst.hi,
        )

    def fixed_step_weights(self, chosen, n_atoms):
        """Unroll Variant 0: q^{t+1} = (1 - 2/(t+2)) q^t + 2/(t+2) s_{chosen[t]}, from any q^0 (gamma_0 = 1)."""
        need(all(0 <= k < n_atoms for k in chosen), f"atom indices must lie in [0, {n_atoms})")
        w = np.zeros(n_atoms)
        for t, k in enumerate(chosen):
            g = 2.0 / (t + 2.0)
            w *= 1.0 - g
            w[k] += g
        return w

    def truncation_optimum(self, inst):
        """Eq. (5): f* = -log P(A) - log_shift, P(A) by Phi (mixture) or arctan (Cauchy); p_A's atom weights
        w_j P_j(A)/P(A) when every mixture component is an atom."""
        t, lo, hi = inst.target, np.asarray(inst.lo, float), np.asarray(inst.hi, float)
        if t.kind == "cauchy":
            loc, s = t.params["loc"], t.params["scale"]
            mass = (math.atan((hi[0] - loc) / s) - math.atan((lo[0] - loc) / s)) / math.pi
            return -math.log(mass) - t.log_shift, None
        p = t.params
        masses = np.array(
            [
                w * math.exp(float(_log_mass(m, s, lo, hi).sum()))
                for w, m, s in zip(p["weights"], p["means"], p["scales"], strict=True)
            ]
        )
        fstar = -math.log(masses.sum()) - t.log_shift
        weights = np.zeros(inst.K)
        for mass, m, s in zip(masses, p["means"], p["scales"], strict=True):
            hit = np.nonzero(np.all(np.abs(inst.means - m) <= 1e-9, axis=1) & (np.abs(inst.scales - s) <= 1e-9))[0]
            if hit.size == 0:
                return fstar, None
            weights[hit[0]] += mass
        return fstar, weights / masses.sum()

    def diameter_sq(self, inst):
        """max over atom pairs of G_ii + G_jj - 2 G_ij."""
        G = _problem(inst).gram
        return float(max(G[i, i] + G[j, j] - 2 * G[i, j] for i in range(len(G)) for j in range(len(G))))

    def curvature_lower_bound(self, inst):
        """max over atom pairs of chi^2(s_i || s_j) = int s_i^2 / s_j - 1 (the gamma -> 0 limit of Eq. 7)."""
        P = _problem(inst)
        return float(np.max((P.T * P.T * P.w) @ (1.0 / P.T).T - 1.0))

    # ---- the mixture q = sum_k alpha_k s_k as a distribution (Eq. 4, §4.2) ---------------------------------------
    def density_bounds(self, inst):
        """eps from the problem (each atom's density at its farthest corner); M at each atom's mean."""
        P = _problem(inst)
        s = inst.scales
        return P.eps, float(np.exp(-inst.d * (np.log(s) + _LOG_SQ2PI) - P.lz).max())

    def mixture_logpdf(self, inst, alpha, Z):
        """log of sum_k alpha_k TN_k(z), each TN_k = N(z; m_k, s_k^2 I) / P_k(box), by a max-shifted sum."""
        Z = np.asarray(Z, dtype=np.float64).reshape(-1, inst.d)
        a = simplex(alpha, inst.K)
        on = a > 0
        m, s = inst.means[on], inst.scales[on][:, None]
        t = (Z[None, :, :] - m[:, None, :]) / s[:, :, None]
        L = (
            -0.5 * (t * t).sum(2)
            - inst.d * (np.log(s) + _LOG_SQ2PI)
            - _log_mass(m, s, inst.lo, inst.hi).sum(1)[:, None]
        )
        top = L.max(0)
        out = top + np.log(a[on] @ np.exp(L - top))
        inside = np.all((Z >= inst.lo) & (Z <= inst.hi), axis=1)
        return np.where(inside, out, -np.inf)

    def mixture_moments(self, inst, alpha):
        """Per coordinate: E z = sum_k alpha_k m_k', Var z = sum_k alpha_k (v_k' + m_k'^2) - (E z)^2, with the
        truncated-normal moments m_k', v_k' of scipy.stats.truncnorm."""
        from scipy.stats import truncnorm

        a = np.asarray(alpha, dtype=np.float64)
        s = inst.scales[:, None]
        mk, vk = truncnorm.stats(
            (inst.lo - inst.means) / s, (inst.hi - inst.means) / s, loc=inst.means, scale=s, moments="mv"
        )
        mean = a @ mk
        return mean, a @ (vk + mk * mk) - mean * mean

    def mixture_norm_sq(self, inst, alpha):
        a = np.asarray(alpha, dtype=np.float64)
        return float(a @ _problem(inst).gram @ a)

    def mixture_sample(self, inst, alpha, n, seed=0):
        """A component per draw (``Generator.choice`` with probabilities alpha), then scipy's truncated normal."""
        from scipy.stats import truncnorm

        rng = np.random.default_rng(seed)
        a = np.asarray(alpha, dtype=np.float64)
        k = rng.choice(a.size, size=int(n), p=a / a.sum())
        m, s = inst.means[k], inst.scales[k][:, None]
        return truncnorm.rvs((inst.lo - m) / s, (inst.hi - m) / s, loc=m, scale=s, random_state=rng)

    def mc_mean_field(self, target, U):
        """§5: q^0 = argmin of the sample-average objective on the draws U (see numpy_boosting_mc)."""
        return numpy_boosting_mc.mean_field(target, U)

    def mc_predictive(self, X, y, draws):
        """Figure 3's metrics: mean sigmoid over draws; log of the mean of sigmoid(y x^T w) by a max-shifted sum."""
        T = np.asarray(X, dtype=float) @ np.asarray(draws, dtype=float).T
        prob = np.where(T >= 0, 1 / (1 + np.exp(-np.abs(T))), np.exp(-np.abs(T)) / (1 + np.exp(-np.abs(T))))
        L = -np.logaddexp(0.0, -T * np.asarray(y, dtype=float)[:, None])  # log sigmoid(y x^T w)
        top = L.max(axis=1, keepdims=True)
        return prob.mean(axis=1), float(np.mean(top[:, 0] + np.log(np.exp(L - top).mean(axis=1))))

    def mc_boost(self, target, n_iter, rule="corrective", *, init, n_samples=16, mean_box=1.0, seed=0):
        """§5, Figure 3: Frank-Wolfe with Monte Carlo expectations on fixed draws (see numpy_boosting_mc)."""
        return numpy_boosting_mc.boost(target, int(n_iter), rule, init, int(n_samples), float(mean_box), seed)
