"""Oracles for boosting VI (seed 001): numpy / scipy / sympy / mpmath only, never refvi or refvi.kernels.

Each one reaches the kernel's number by another road:

* ``tn_logpdf``: truncated Gaussian log-density via ``scipy.stats.truncnorm`` (product over coordinates);
* ``tn_inner_quad`` / ``tn_inner_mpmath``: the L2 inner product <TN_i, TN_j> on a box by adaptive quadrature
  (``scipy.integrate.quad``, per coordinate) and by 30-digit mpmath quadrature with erf normalizers (1-D);
* ``normal_square_integral_sympy``: int N(z; mu, s^2)^2 dz = 1/(2 sqrt(pi) s) symbolically (Thm 2 proof);
* ``kl_quad_1d``: KL(q || p) = int_A q log(q/p) by ``scipy.integrate.quad`` with break points (1-D);
* ``kl_grid_2d``: the same on a 2-D box by ``scipy.integrate.dblquad``-free tensor Gauss-Legendre from numpy;
* ``line_search_1d``: argmin_gamma KL((1-gamma) q + gamma s || p) by ``scipy.optimize.minimize_scalar`` on quad values;
* ``simplex_qp_enumerate``: the exact minimizer of 1/2 a^T H a + b^T a on the simplex by enumerating supports and
  solving each KKT system (small n only);
* ``box_probability``: P(N(mu, diag s^2) in box) via ``scipy.stats.norm.cdf`` / ``sf`` differences.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from scipy import integrate, optimize, stats


def box_probability(mu, sigma, lo, hi) -> float:
    mu, sigma, lo, hi = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (mu, sigma, lo, hi))
    p = 1.0
    for m, s, a, b in zip(mu, np.broadcast_to(sigma, mu.shape), lo, hi, strict=True):
        p *= stats.norm.cdf(b, m, s) - stats.norm.cdf(a, m, s)
    return float(p)


def tn_logpdf(z, mu, sigma, lo, hi) -> np.ndarray:
    """log TN(z; mu, diag sigma^2; [lo, hi]) for rows z (S, d) by scipy.stats.truncnorm."""
    z = np.atleast_2d(np.asarray(z, dtype=float))
    mu, sigma, lo, hi = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (mu, sigma, lo, hi))
    sigma = np.broadcast_to(sigma, mu.shape)
    out = np.zeros(z.shape[0])
    for j in range(mu.shape[0]):
        a, b = (lo[j] - mu[j]) / sigma[j], (hi[j] - mu[j]) / sigma[j]
        out += stats.truncnorm.logpdf(z[:, j], a, b, loc=mu[j], scale=sigma[j])
    return out


def tn_inner_quad(mu_i, s_i, mu_j, s_j, lo, hi) -> float:
    """<TN_i, TN_j>_{L2(box)} by adaptive quadrature per coordinate (product structure of diagonal atoms)."""
    mu_i, s_i, mu_j, s_j, lo, hi = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (mu_i, s_i, mu_j, s_j, lo, hi))
    s_i = np.broadcast_to(s_i, mu_i.shape)
    s_j = np.broadcast_to(s_j, mu_i.shape)
    out = 1.0
    for k in range(mu_i.shape[0]):
        a = (lo[k] - mu_i[k]) / s_i[k], (hi[k] - mu_i[k]) / s_i[k]
        b = (lo[k] - mu_j[k]) / s_j[k], (hi[k] - mu_j[k]) / s_j[k]
        fi = stats.truncnorm(a[0], a[1], loc=mu_i[k], scale=s_i[k])
        fj = stats.truncnorm(b[0], b[1], loc=mu_j[k], scale=s_j[k])
        val, _ = integrate.quad(
            lambda z: fi.pdf(z) * fj.pdf(z),
            lo[k],
            hi[k],
            points=[mu_i[k], mu_j[k]],
            epsabs=1e-14,
            epsrel=1e-12,
            limit=200,
        )
        out *= val
    return float(out)


def tn_inner_mpmath(mu_i, s_i, mu_j, s_j, lo, hi, digits: int = 30) -> float:
    """<TN_i, TN_j> in 1-D at ``digits`` digits: mpmath tanh-sinh quadrature of the product of the two Gaussian
    densities over [lo, hi] (split at the means), divided by the two normalizers written with mpmath.erf."""
    import mpmath as mp

    with mp.workdps(digits):
        mi, si, mj, sj, a, b = (mp.mpf(repr(float(x))) for x in (mu_i, s_i, mu_j, s_j, lo, hi))

        def npdf(z, m, s):
            return mp.exp(-((z - m) ** 2) / (2 * s**2)) / (s * mp.sqrt(2 * mp.pi))

        def Z(m, s):
            return (mp.erf((b - m) / (s * mp.sqrt(2))) - mp.erf((a - m) / (s * mp.sqrt(2)))) / 2

        pts = [a] + sorted(p for p in (mi, mj) if a < p < b) + [b]
        val = mp.quad(lambda z: npdf(z, mi, si) * npdf(z, mj, sj), pts)
        return float(val / (Z(mi, si) * Z(mj, sj)))


def normal_square_integral_sympy():
    """(expression, simplified difference) for int_R N(z; mu, s^2)^2 dz - 1/(2 sqrt(pi) s); the difference is 0."""
    import sympy as sp

    z, mu = sp.symbols("z mu", real=True)
    s = sp.Symbol("s", positive=True)
    npdf = sp.exp(-((z - mu) ** 2) / (2 * s**2)) / (s * sp.sqrt(2 * sp.pi))
    val = sp.integrate(npdf**2, (z, -sp.oo, sp.oo))
    return val, sp.simplify(val - 1 / (2 * sp.sqrt(sp.pi) * s))


@functools.lru_cache(maxsize=4096)
def truncnorm_log_mass(m: float, s: float, lo: float, hi: float) -> float:
    """log P(lo <= X <= hi) for X ~ N(m, s^2), from SciPy's truncated normal (its tail-stable normaliser): its log
    density at a point x0 of [lo, hi] is log N(x0; m, s^2) - log mass."""
    x0 = min(max(m, lo), hi)
    log_normal = -0.5 * ((x0 - m) / s) ** 2 - math.log(s * math.sqrt(2 * math.pi))
    return log_normal - float(stats.truncnorm.logpdf(x0, (lo - m) / s, (hi - m) / s, loc=m, scale=s))


def mixture_pdf_1d(z, weights, mus, sigmas, lo, hi) -> np.ndarray:
    """sum_k w_k TN(z; m_k, s_k^2, [lo, hi]) (SciPy's truncnorm density; each component's normaliser computed once and
    cached, since the QUADPACK oracles call this at one point at a time)."""
    z = np.atleast_1d(np.asarray(z, dtype=float))
    out = np.zeros_like(z)
    inside = (z >= lo) & (z <= hi)
    x = z[inside]
    for w, m, s in zip(weights, mus, sigmas, strict=True):
        if w > 0:
            m, s = float(m), float(s)
            log_pdf = -0.5 * ((x - m) / s) ** 2 - math.log(s * math.sqrt(2 * math.pi))
            out[inside] += w * np.exp(log_pdf - truncnorm_log_mass(m, s, float(lo), float(hi)))
    return out


def kl_quad_1d(q_pdf, logp, lo: float, hi: float, points=()) -> float:
    """int_lo^hi q(z) (log q(z) - log p(z)) dz by QUADPACK (``q_pdf`` and ``logp`` scalar-callable)."""

    def f(z):
        qz = float(q_pdf(z))
        return qz * (math.log(qz) - float(logp(z))) if qz > 0 else 0.0

    pts = sorted({float(p) for p in points if lo < p < hi})
    val, _ = integrate.quad(f, lo, hi, points=pts or None, epsabs=1e-13, epsrel=1e-12, limit=400)
    return float(val)


def kl_grid_2d(q_pdf, logp, lo, hi, n: int = 200) -> float:
    """int over a 2-D box of q (log q - log p) with an n x n Gauss-Legendre tensor rule (single panel)."""
    x, w = np.polynomial.legendre.leggauss(n)
    ax = [0.5 * (hi[k] - lo[k]) * x + 0.5 * (hi[k] + lo[k]) for k in range(2)]
    wx = [0.5 * (hi[k] - lo[k]) * w for k in range(2)]
    Z = np.array(list(itertools.product(ax[0], ax[1])))
    W = np.outer(wx[0], wx[1]).ravel()
    qz = q_pdf(Z)
    return float(np.sum(W * qz * (np.log(qz) - logp(Z))))


def line_search_1d(q_pdf, s_pdf, logp, lo: float, hi: float, points=()) -> float:
    """argmin_{gamma in [0,1]} int (q + gamma (s - q)) log((q + gamma (s - q))/p) by bounded Brent on quad values."""

    def phi(g):
        return kl_quad_1d(lambda z: (1 - g) * q_pdf(z) + g * s_pdf(z), logp, lo, hi, points)

    res = optimize.minimize_scalar(phi, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-10})
    cands = [0.0, 1.0, float(res.x)]
    return min(cands, key=phi)


def simplex_qp_enumerate(H, b) -> np.ndarray:
    """Exact argmin of 1/2 a^T H a + b^T a over the simplex (H PSD, n <= 10) by enumerating supports: for each
    support S solve the KKT equalities; keep feasible points satisfying the sign conditions; return the best."""
    H = np.asarray(H, dtype=float)
    b = np.asarray(b, dtype=float)
    n = H.shape[0]
    best, best_val = None, np.inf
    for r in range(1, n + 1):
        for support in itertools.combinations(range(n), r):
            idx = list(support)
            A = np.zeros((r + 1, r + 1))
            A[:r, :r] = H[np.ix_(idx, idx)]
            A[:r, r] = 1.0
            A[r, :r] = 1.0
            rhs = np.concatenate([-b[idx], [1.0]])
            sol = np.linalg.lstsq(A, rhs, rcond=None)[0]
            if not np.allclose(A @ sol, rhs, atol=1e-10):
                continue
            a = np.zeros(n)
            a[idx] = sol[:r]
            if np.any(a < -1e-12):
                continue
            a = np.maximum(a, 0)
            a /= a.sum()
            val = 0.5 * a @ H @ a + b @ a
            if val < best_val - 1e-15:
                best, best_val = a, val
    if best is None:
        raise ValueError("no support gives a feasible KKT point: H is not PSD or the input is not finite")
    return best


def simplex_qp(H, b, support=None, tol: float = 1e-12) -> np.ndarray:
    """Exact argmin of 1/2 a^T H a + b^T a over the simplex (H positive definite on the simplex's span) by the
    active-set method: solve the KKT equalities on a support, drop the most negative weight or add the atom whose
    multiplier is most violated, repeat; ``support`` (indices) is a starting guess only: the answer is certified by
    the KKT conditions (a >= 0 on the support; H a + b >= lambda off it), whatever the guess.  Small problems
    (n <= 10) without a guess are enumerated (:func:`simplex_qp_enumerate`)."""
    H = np.asarray(H, dtype=float)
    b = np.asarray(b, dtype=float)
    n = H.shape[0]
    if support is None and n <= 10:
        return simplex_qp_enumerate(H, b)
    active = sorted({int(i) for i in (support if support is not None and len(support) else [int(np.argmin(b))])})
    for _ in range(10 * n + 10):
        r = len(active)
        A = np.zeros((r + 1, r + 1))
        A[:r, :r] = H[np.ix_(active, active)]
        A[:r, r] = 1.0
        A[r, :r] = 1.0
        sol = np.linalg.solve(A, np.concatenate([-b[active], [1.0]]))
        a_s, lam = sol[:r], -sol[r]
        if np.any(a_s < -tol):
            active.pop(int(np.argmin(a_s)))
            continue
        a = np.zeros(n)
        a[active] = np.maximum(a_s, 0.0)
        slack = H @ a + b - lam  # >= 0 off the support at the optimum
        slack[active] = np.inf
        j = int(np.argmin(slack))
        if slack[j] >= -tol * max(1.0, abs(lam)):
            return a / a.sum()
        active = sorted(active + [j])
    raise ValueError("simplex_qp: the active-set method did not converge (H not positive definite?)")


# ------------------------------------------------------------------------------------------------------------------
# instance-level oracles for the plain-record protocol (verification.protocol.boosting): everything the statements
# need about an instance, computed here and never asked of the implementation under test
# ------------------------------------------------------------------------------------------------------------------


def _log_mass(mu, s, lo, hi):
    """log P(N(mu, s^2) in [lo, hi]) per coordinate (scipy.stats.norm log-cdf / log-sf differences)."""
    a, b = (lo - mu) / s, (hi - mu) / s
    upper = np.where(a > 0, stats.norm.logsf(a), stats.norm.logcdf(b))
    lower = np.where(a > 0, stats.norm.logsf(b), stats.norm.logcdf(a))
    return upper + np.log1p(-np.exp(lower - upper))


def tn_gram(means, scales, lo, hi) -> np.ndarray:
    """<TN_i, TN_j>_{L2(box)} for all pairs in closed form: per coordinate N(z; m_i, s_i^2) N(z; m_j, s_j^2) =
    N(m_i - m_j; 0, s_i^2 + s_j^2) N(z; c, v) with v = s_i^2 s_j^2 / (s_i^2 + s_j^2), c = (m_i s_j^2 + m_j s_i^2) /
    (s_i^2 + s_j^2), integrated over the box and divided by the two truncation masses (scipy.stats.norm)."""
    m = np.asarray(means, dtype=float)
    K, d = m.shape
    s = np.broadcast_to(np.asarray(scales, dtype=float), (K,))
    lo, hi = np.broadcast_to(np.asarray(lo, float), (d,)), np.broadcast_to(np.asarray(hi, float), (d,))
    si2, sj2 = (s**2)[:, None], (s**2)[None, :]
    tot = si2 + sj2
    out = np.zeros((K, K))
    for j in range(d):
        mi, mj = m[:, j][:, None], m[:, j][None, :]
        c = (mi * sj2 + mj * si2) / tot
        v = np.sqrt(si2 * sj2 / tot)
        out += stats.norm.logpdf(mi - mj, 0.0, np.sqrt(tot)) + _log_mass(c, v, lo[j], hi[j])
        lz = _log_mass(m[:, j], s, lo[j], hi[j])
        out -= lz[:, None] + lz[None, :]
    return np.exp(out)


def tn_density_bounds(means, scales, lo, hi) -> tuple[float, float]:
    """(eps, M) = (min, max) over the atoms and the box of the atom densities, in closed form: a product of 1-D
    truncated Gaussians is largest at the mean clipped into the box and smallest at the box corner farthest from
    the mean (coordinate-wise)."""
    m = np.asarray(means, dtype=float)
    K, d = m.shape
    s = np.broadcast_to(np.asarray(scales, dtype=float), (K,))
    lo, hi = np.broadcast_to(np.asarray(lo, float), (d,)), np.broadcast_to(np.asarray(hi, float), (d,))
    far = np.where(m - lo > hi - m, lo, hi)
    near = np.clip(m, lo, hi)
    lz = sum(_log_mass(m[:, j], s, lo[j], hi[j]) for j in range(d))
    lmin = sum(stats.norm.logpdf(far[:, j], m[:, j], s) for j in range(d)) - lz
    lmax = sum(stats.norm.logpdf(near[:, j], m[:, j], s) for j in range(d)) - lz
    return float(np.exp(lmin.min())), float(np.exp(lmax.max()))


class QuadratureProblem:
    """The boosting objective of a :class:`~refvi.verification.protocol.boosting.BoostingInstance` on the composite
    Gauss-Legendre rule of ``inst.quadrature`` (numpy nodes, scipy truncated-normal densities): f, the LMO scores and
    the FW gap of any weight vector, the Gram matrix, eps and M.  Accuracy ~1e-12 on the statements' instances."""

    def __init__(self, inst):
        order, panels = inst.quadrature
        x, w = np.polynomial.legendre.leggauss(int(order))
        axes, wts = [], []
        for a, b in zip(inst.lo, inst.hi, strict=True):
            edges = np.linspace(a, b, int(panels) + 1)
            h, mid = 0.5 * np.diff(edges), 0.5 * (edges[1:] + edges[:-1])
            axes.append((mid[:, None] + h[:, None] * x[None, :]).ravel())
            wts.append((h[:, None] * w[None, :]).ravel())
        self.nodes = np.array(list(itertools.product(*axes)))
        self.w = np.prod(np.array(list(itertools.product(*wts))), axis=1)
        self.inst = inst
        self.K = inst.K
        self.table = np.exp(
            np.array([tn_logpdf(self.nodes, inst.means[k], inst.scales[k], inst.lo, inst.hi) for k in range(inst.K)])
        )
        self.logp = np.asarray(inst.target.logp(self.nodes), dtype=float)
        self.volume = float(np.prod(inst.hi - inst.lo))
        self.eps, self.M = tn_density_bounds(inst.means, inst.scales, inst.lo, inst.hi)
        self._gram = None

    def q(self, alpha) -> np.ndarray:
        return np.asarray(alpha, dtype=float) @ self.table

    def f(self, alpha) -> float:
        q = self.q(alpha)
        return float(np.sum(self.w * q * (np.log(q) - self.logp)))

    def scores(self, alpha) -> np.ndarray:
        q = self.q(alpha)
        return self.table @ (self.w * (np.log(q) - self.logp))

    def gap(self, alpha) -> float:
        sc = self.scores(alpha)
        return float(np.asarray(alpha, dtype=float) @ sc - sc.min())

    @property
    def gram(self) -> np.ndarray:
        if self._gram is None:
            self._gram = tn_gram(self.inst.means, self.inst.scales, self.inst.lo, self.inst.hi)
        return self._gram

    def diameter_sq(self) -> float:
        g = np.diag(self.gram)
        return float(np.max(g[:, None] + g[None, :] - 2 * self.gram))

    def max_norm_sq(self) -> float:
        return float(np.max(np.diag(self.gram)))

    def sq_dist(self, alpha, k: int) -> float:
        """||s_k - q||^2 from the closed-form Gram."""
        e = -np.asarray(alpha, dtype=float)
        e[int(k)] += 1.0
        return float(e @ self.gram @ e)

    def pdf(self, alpha):
        """q(z) as a scalar/array callable (scipy.stats.truncnorm; 1-D instances) for the QUADPACK oracles."""
        act = np.nonzero(np.asarray(alpha) > 0)[0]
        lo, hi = float(self.inst.lo[0]), float(self.inst.hi[0])
        mus, sig = self.inst.means[act, 0], self.inst.scales[act]

        def pdf(z):
            out = mixture_pdf_1d(z, np.asarray(alpha)[act], mus, sig, lo, hi)
            return float(out[0]) if np.ndim(z) == 0 else out

        return pdf


def family_constants_closed_form(lo, hi, sigma_min: float, sigma_max: float) -> dict:
    """Thm 2 / Thm 8 constants of the continuous family in closed form (box [lo, hi], isotropic scales):
    K = P(N(a, sigma_max^2 I) in box) at a corner a (the mass is smallest there), P_a the same with sigma_min,
    D = ||hi - lo||, and, when sigma_min = sigma_max, eps = N(b; a, sigma^2 I) / P_a (mean at a corner, density at
    the opposite corner: both the tail and the normaliser are worst there)."""
    lo, hi = np.atleast_1d(np.asarray(lo, float)), np.atleast_1d(np.asarray(hi, float))
    d = lo.size
    K = float(np.exp(np.sum(_log_mass(lo, sigma_max, lo, hi))))
    P_a = float(np.exp(np.sum(_log_mass(lo, sigma_min, lo, hi))))
    D = float(np.linalg.norm(hi - lo))
    n_ab = float(np.exp(np.sum(stats.norm.logpdf(hi, lo, sigma_min))))
    out = dict(
        K=K,
        P_a=P_a,
        diam_box=D,
        eps_corner_formula=n_ab / P_a,
        thm2_diam_sq=4.0 / (sigma_min**d * (2 * math.sqrt(math.pi)) ** d * K**2),
        thm8_ldiam=4 * 2 ** (-d / 2) * P_a * math.exp(D * D / (2 * sigma_min**2)) / K**2,
        thm8_ldiam_printed=4
        * P_a
        * math.exp(D * D / (2 * sigma_min**2))
        / (sigma_min ** (d / 2) * 2 ** (d / 2) * K**2),
    )
    if sigma_min == sigma_max:
        # M: the density at its own mean, the mean at a corner (the smallest normaliser, P_a)
        eps, M, leb = (
            n_ab / P_a,
            float(np.prod(stats.norm.pdf(0.0, 0.0, np.full(d, sigma_min)))) / P_a,
            float(np.prod(hi - lo)),
        )
        out.update(
            eps=eps, M=M, cor3_diam_sq=4.0 * M * M * leb, tight_diam_sq=2.0 * M, thm6_curvature=4.0 * M * M * leb / eps
        )
    return out
