"""Online-VI kernels (seed 003): closed-form Gaussian expected losses and the update loops of SVA, SVB, NGVI, OGA
and OGA-EL over a whole stream.  Inputs are validated by :mod:`refvi.online`; every loop writes the loss suffered at
the mean before each update into ``losses`` and, when ``record`` is true, the iterates into ``M_hist`` / ``S_hist``
(row t = state used at round t, row T = state after the stream).

Loss ids (``LOSS_*``): hinge (1 - y <theta, x>)_+, squared (y - <theta, x>)^2, absolute ``|y - <theta, x>|``, and the
strongly convex quadratic (H/2) ||theta - x||^2 (y unused).  For a mean-field Gaussian q = N(m, diag sigma^2) the
linear predictor <theta, x> ~ N(a, b^2) with a = <m, x>, b = ||sigma * x||.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.kernels._jit import jit

LOSS_HINGE = 0
LOSS_SQUARED = 1
LOSS_ABSOLUTE = 2
LOSS_QUADRATIC = 3

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@jit
def norm_cdf(z):
    """Standard normal cdf via erfc (accurate in the lower tail)."""
    return 0.5 * math.erfc(-z * _INV_SQRT2)


@jit
def norm_pdf(z):
    return _INV_SQRT_2PI * math.exp(-0.5 * z * z)


@jit
def shrink(sig, u):
    """sig * h(u / sig) with h(x) = sqrt(1 + x^2) - x, written as sqrt(sig^2 + u^2) - u (exact also at sig = 0).

    For u > 0 the cancellation-free form sig^2 / (sqrt(sig^2 + u^2) + u) is used.  This is the positive root of the
    per-coordinate stationarity equations of SVA (9) and SVB (10)."""
    r = math.hypot(sig, u)
    if u > 0.0:
        return sig * sig / (r + u) if r + u > 0.0 else 0.0
    return r - u


@jit
def point_loss(loss_id, x, y, theta, H):
    """ell(theta) for one data point (x, y)."""
    if loss_id == LOSS_QUADRATIC:
        acc = 0.0
        for j in range(x.shape[0]):
            r = theta[j] - x[j]
            acc += r * r
        return 0.5 * H * acc
    a = 0.0
    for j in range(x.shape[0]):
        a += theta[j] * x[j]
    if loss_id == LOSS_HINGE:
        c = 1.0 - y * a
        return c if c > 0.0 else 0.0
    if loss_id == LOSS_SQUARED:
        return (y - a) * (y - a)
    return abs(y - a)


@jit
def point_grad(loss_id, x, y, theta, H, g):
    """A (sub)gradient of ell at theta into g (hinge: -y x on c > 0, else 0; absolute: -sign(y - a) x)."""
    d = x.shape[0]
    if loss_id == LOSS_QUADRATIC:
        for j in range(d):
            g[j] = H * (theta[j] - x[j])
        return
    a = 0.0
    for j in range(d):
        a += theta[j] * x[j]
    if loss_id == LOSS_HINGE:
        coef = -y if 1.0 - y * a > 0.0 else 0.0
    elif loss_id == LOSS_SQUARED:
        coef = -2.0 * (y - a)
    else:
        r = y - a
        coef = -1.0 if r > 0.0 else (1.0 if r < 0.0 else 0.0)
    for j in range(d):
        g[j] = coef * x[j]


@jit
def expected_loss_grad(loss_id, x, y, m, sigma, H, gm, gs):
    """Closed-form bar L = E_{N(m, diag sigma^2)} ell and its gradients (d/dm into gm, d/dsigma into gs)::

        hinge (c = 1 - y a):  bar L = c Phi(c/b) + b phi(c/b), gm = -y x Phi(c/b), gs = phi(c/b) sigma x^2 / b;
        squared:              bar L = (y - a)^2 + b^2,       gm = -2 (y - a) x,   gs = 2 sigma x^2;
        absolute (r = y - a): bar L = 2 b phi(r/b) + r (2 Phi(r/b) - 1), gm = -(2 Phi(r/b) - 1) x,
                              gs = 2 phi(r/b) sigma x^2 / b;
        quadratic:            bar L = H/2 (||m - x||^2 + ||sigma||^2), gm = H (m - x), gs = H sigma.

    At b = 0 the limits are taken explicitly (the point loss and a subgradient, gs = 0)."""
    d = x.shape[0]
    if loss_id == LOSS_QUADRATIC:
        acc = 0.0
        for j in range(d):
            r = m[j] - x[j]
            acc += r * r + sigma[j] * sigma[j]
            gm[j] = H * r
            gs[j] = H * sigma[j]
        return 0.5 * H * acc
    a = 0.0
    b2 = 0.0
    for j in range(d):
        a += m[j] * x[j]
        sx = sigma[j] * x[j]
        b2 += sx * sx
    b = math.sqrt(b2)
    if loss_id == LOSS_SQUARED:
        r = y - a
        for j in range(d):
            gm[j] = -2.0 * r * x[j]
            gs[j] = 2.0 * sigma[j] * x[j] * x[j]
        return r * r + b2
    if loss_id == LOSS_HINGE:
        c = 1.0 - y * a
        if b > 0.0:
            z = c / b
            P = norm_cdf(z)
            p = norm_pdf(z)
            val = c * P + b * p
            for j in range(d):
                gm[j] = -y * x[j] * P
                gs[j] = p * sigma[j] * x[j] * x[j] / b
            return val
        on = 1.0 if c > 0.0 else 0.0
        for j in range(d):
            gm[j] = -y * x[j] * on
            gs[j] = 0.0
        return c if c > 0.0 else 0.0
    # absolute
    r = y - a
    if b > 0.0:
        z = r / b
        P2 = 2.0 * norm_cdf(z) - 1.0
        p = norm_pdf(z)
        val = 2.0 * b * p + r * P2
        for j in range(d):
            gm[j] = -P2 * x[j]
            gs[j] = 2.0 * p * sigma[j] * x[j] * x[j] / b
        return val
    sg = 1.0 if r > 0.0 else (-1.0 if r < 0.0 else 0.0)
    for j in range(d):
        gm[j] = -sg * x[j]
        gs[j] = 0.0
    return abs(r)


@jit
def expected_losses(loss_id, X, y, m, sigma, H, out_val, out_gm, out_gs):
    """expected_loss_grad for every row of X (batch form used by tests and the comparators)."""
    for t in range(X.shape[0]):
        out_val[t] = expected_loss_grad(loss_id, X[t], y[t], m, sigma, H, out_gm[t], out_gs[t])


@jit
def _clip(v, lo, hi):
    return lo if v < lo else (hi if v > hi else v)


@jit
def _copy(dst, src):
    """dst[...] = src for two arrays of the same shape, element by element: a slice assignment makes Numba compile
    its shape-mismatch error message (string formatting, about 3 s per process on a cold cache)."""
    for i in range(src.size):
        dst.flat[i] = src.flat[i]


@jit
def _record(record, M_hist, S_hist, t, m, sigma):
    if record:
        _copy(M_hist[t], m)
        _copy(S_hist[t], sigma)


STATUS_OK = 0
STATUS_NONFINITE = 1  # the round's loss, gradient or new state is NaN / inf (overflow): state before it kept
STATUS_PRECISION = 2  # NGVI: the precision update would be <= 0 (non-convex loss): state before it kept


@jit
def _all_finite(v):
    for j in range(v.shape[0]):
        if not math.isfinite(v[j]):
            return False
    return True


@jit
def _round_buffers(d):
    """The scratch vectors of a round of the mean-field learners: the gradient (gm, gs) of bar L_t, the running
    sums (nGm, nGs) and the state (nm, ns) it would commit."""
    return np.empty(d), np.empty(d), np.empty(d), np.empty(d), np.empty(d), np.empty(d)


@jit
def _begin_round(loss_id, H, x, yt, t, m, sigma, gm, gs, record, M_hist, S_hist):
    """Record the state used in round t, fill (gm, gs) with the gradient of bar L_t there, return ell_t(m)."""
    _record(record, M_hist, S_hist, t, m, sigma)
    expected_loss_grad(loss_id, x, yt, m, sigma, H, gm, gs)
    return point_loss(loss_id, x, yt, m, H)


@jit
def _commit(t, lt, nm, ns, m, sigma, losses):
    """Commit round t (ell_t, the new mean and sigma) if all of it is finite; False leaves the state untouched."""
    if not (math.isfinite(lt) and _all_finite(nm) and _all_finite(ns)):
        return False
    losses[t] = lt
    _copy(m, nm)
    _copy(sigma, ns)
    return True


@jit
def sva_run(loss_id, H, X, y, eta, s, mbox, sbox, m, sigma, Gm, Gs, losses, record, M_hist, S_hist):
    """SVA, eq. (9), with lazy projection on the box [-mbox, mbox]^d x [0, sbox]^d.

    Gm, Gs are the running sums of the expected-loss gradients (the FTRL state); the constrained argmin of (6) is the
    coordinatewise clip of m = -eta s^2 Gm and sigma = s h(eta s Gs / 2).  Updates m, sigma, Gm, Gs in place.

    Returns (rounds completed, status): it stops before committing a round whose loss, gradient or new state is not
    finite (STATUS_NONFINITE), leaving m, sigma, Gm, Gs as they were before that round."""
    T, d = X.shape
    gm, gs, nGm, nGs, nm, ns = _round_buffers(d)
    s2 = s * s
    for t in range(T):
        lt = _begin_round(loss_id, H, X[t], y[t], t, m, sigma, gm, gs, record, M_hist, S_hist)
        for j in range(d):
            nGm[j] = Gm[j] + gm[j]
            nGs[j] = Gs[j] + gs[j]
            nm[j] = _clip(-eta * s2 * nGm[j], -mbox, mbox)
            ns[j] = _clip(shrink(s, 0.5 * eta * s2 * nGs[j]), 0.0, sbox)
        if not (_all_finite(nGm) and _all_finite(nGs) and _commit(t, lt, nm, ns, m, sigma, losses)):
            return t, STATUS_NONFINITE
        _copy(Gm, nGm)
        _copy(Gs, nGs)
    _record(record, M_hist, S_hist, T, m, sigma)
    return T, STATUS_OK


@jit
def sva_full_run(loss_id, X, y, eta, s, m, C, Gm, GC, losses, record, M_hist, C_hist):
    """SVA (eq. 6) over full-covariance Gaussians q = N(m, C C^T), C lower triangular with a positive diagonal
    (theta = m + C u), prior N(0, s^2 I), no box.

    The expected loss of a linear predictor depends on (a, b) = (<m, x>, ||C^T x||) only: with the 1-D kernel's
    dL/da and dL/db, grad_m = dL/da x and grad_C = dL/db tril(x v^T) / b, v = C^T x.  The argmin of the FTRL
    objective <mu, G> + KL(q_mu || pi) / eta separates: m = -eta s^2 G_m, C_ik = -eta s^2 G_ik below the diagonal,
    C_ii = s h(eta s G_ii / 2) on it (the mean-field root).  Updates m, C, Gm, GC in place; returns (rounds
    completed, status) and stops before committing a non-finite round (STATUS_NONFINITE)."""
    T, d = X.shape
    one = np.ones(1)
    a1 = np.empty(1)
    b1 = np.empty(1)
    ga = np.empty(1)
    gb = np.empty(1)
    v = np.empty(d)
    nGm = np.empty(d)
    nGC = np.empty((d, d))
    nm = np.empty(d)
    nC = np.zeros((d, d))
    s2 = s * s
    for t in range(T):
        if record:
            _copy(M_hist[t], m)
            _copy(C_hist[t], C)
        x = X[t]
        lt = point_loss(loss_id, x, y[t], m, 1.0)
        a = 0.0
        b2 = 0.0
        for k in range(d):
            a += m[k] * x[k]
            acc = 0.0
            for i in range(k, d):
                acc += C[i, k] * x[i]
            v[k] = acc
            b2 += acc * acc
        b = math.sqrt(b2)
        a1[0] = a
        b1[0] = b
        expected_loss_grad(loss_id, one, y[t], a1, b1, 1.0, ga, gb)
        coef = gb[0] / b if b > 0.0 else 0.0
        for i in range(d):
            nGm[i] = Gm[i] + ga[0] * x[i]
            nm[i] = -eta * s2 * nGm[i]
            for k in range(i + 1):
                nGC[i, k] = GC[i, k] + coef * x[i] * v[k]
                if k < i:
                    nC[i, k] = -eta * s2 * nGC[i, k]
                else:
                    nC[i, i] = shrink(s, 0.5 * eta * s2 * nGC[i, i])
        ok = math.isfinite(lt) and _all_finite(nm) and _all_finite(nGm)
        for i in range(d):
            for k in range(i + 1):
                ok = ok and math.isfinite(nC[i, k]) and math.isfinite(nGC[i, k])
        if not ok:
            return t, STATUS_NONFINITE
        losses[t] = lt
        for i in range(d):
            Gm[i] = nGm[i]
            m[i] = nm[i]
            for k in range(i + 1):
                GC[i, k] = nGC[i, k]
                C[i, k] = nC[i, k]
    if record:
        _copy(M_hist[T], m)
        _copy(C_hist[T], C)
    return T, STATUS_OK


@jit
def svb_run(loss_id, H, X, y, mode, step, Hsc, t0, mbox, sbox, m, sigma, losses, record, M_hist, S_hist):
    """Projected SVB, eq. (10), per coordinate: a_{t,j} = eta_{t,j} sigma_{t,j}^2 is
    mode 0: step * sigma_{t,j}^2 (constant eta = step);  mode 1: step / sqrt(t) (Thm 3 convex, step = K);
    mode 2: 2 / (Hsc t) (Thm 3 strongly convex).  t = t0 + 1, t0 + 2, ... is the global round.

    m <- clip(m - a gm), sigma <- clip(sigma h(a gs / (2 sigma))) = clip(sqrt(sigma^2 + (a gs/2)^2) - a gs/2).
    Returns (rounds completed, status), stopping before a non-finite round (see :func:`sva_run`)."""
    T, d = X.shape
    gm, gs, _, _, nm, ns = _round_buffers(d)  # no running sums
    for t in range(T):
        lt = _begin_round(loss_id, H, X[t], y[t], t, m, sigma, gm, gs, record, M_hist, S_hist)
        tt = float(t0 + t + 1)
        for j in range(d):
            if mode == 0:
                a = step * sigma[j] * sigma[j]
            elif mode == 1:
                a = step / math.sqrt(tt)
            else:
                a = 2.0 / (Hsc * tt)
            nm[j] = _clip(m[j] - a * gm[j], -mbox, mbox)
            ns[j] = _clip(shrink(sigma[j], 0.5 * a * gs[j]), 0.0, sbox)
        if not (_all_finite(gm) and _all_finite(gs) and _commit(t, lt, nm, ns, m, sigma, losses)):
            return t, STATUS_NONFINITE
    _record(record, M_hist, S_hist, T, m, sigma)
    return T, STATUS_OK


@jit
def ngvi_run(loss_id, H, X, y, eta, rho, s, mbox, sbox, m, sigma, losses, record, M_hist, S_hist):
    """Online NGVI, eq. (15) with the corrected rho = beta = alpha / (alpha + eta) (erratum E003-1), mean field:
    1/sigma'^2 = (1 - rho)/sigma^2 + rho/s^2 + 2 eta rho g_v,  m' = m - rho sigma'^2 (eta gm + m / s^2),
    g_v = gs / (2 sigma) = d bar L / d sigma^2.  The box is applied after the step (precision floored at 1/sbox^2).

    Returns (rounds completed, status): it stops before a round whose precision would be <= 0 (STATUS_PRECISION,
    only possible for a non-convex loss) or whose loss, gradient or new state is not finite (STATUS_NONFINITE), so
    the caller can raise with the state before that round kept."""
    T, d = X.shape
    gm = np.empty(d)
    gs = np.empty(d)
    inv_s2 = 1.0 / (s * s)
    floor = 0.0 if sbox == np.inf else 1.0 / (sbox * sbox)
    newprec = np.empty(d)
    nm = np.empty(d)
    ns = np.empty(d)
    for t in range(T):
        _record(record, M_hist, S_hist, t, m, sigma)
        expected_loss_grad(loss_id, X[t], y[t], m, sigma, H, gm, gs)
        if not (_all_finite(gm) and _all_finite(gs)):
            return t, STATUS_NONFINITE
        ok = True
        for j in range(d):
            gv = 0.5 * gs[j] / sigma[j]
            p = (1.0 - rho) / (sigma[j] * sigma[j]) + rho * inv_s2 + 2.0 * eta * rho * gv
            if p < floor:
                p = floor
            if math.isnan(p):
                return t, STATUS_NONFINITE
            if not p > 0.0:
                ok = False
            newprec[j] = p
        if not ok:
            return t, STATUS_PRECISION
        lt = point_loss(loss_id, X[t], y[t], m, H)
        for j in range(d):
            v = 1.0 / newprec[j]
            nm[j] = _clip(m[j] - rho * v * (eta * gm[j] + m[j] * inv_s2), -mbox, mbox)
            ns[j] = math.sqrt(v)
        if not _commit(t, lt, nm, ns, m, sigma, losses):
            return t, STATUS_NONFINITE
    _record(record, M_hist, S_hist, T, m, sigma)
    return T, STATUS_OK


@jit
def oga_run(loss_id, H, X, y, eta, mbox, theta, losses, record, M_hist):
    """OGA: theta <- clip(theta - eta * subgradient of ell_t at theta).
    Returns (rounds completed, status), stopping before a non-finite round (see :func:`sva_run`)."""
    T, d = X.shape
    g = np.empty(d)
    nt = np.empty(d)
    for t in range(T):
        if record:
            _copy(M_hist[t], theta)
        lt = point_loss(loss_id, X[t], y[t], theta, H)
        point_grad(loss_id, X[t], y[t], theta, H, g)
        for j in range(d):
            nt[j] = _clip(theta[j] - eta * g[j], -mbox, mbox)
        if not (math.isfinite(lt) and _all_finite(g) and _all_finite(nt)):
            return t, STATUS_NONFINITE
        losses[t] = lt
        _copy(theta, nt)
    if record:
        _copy(M_hist[T], theta)
    return T, STATUS_OK


@jit
def ogael_run(loss_id, H, X, y, eta, lazy, m1, s1, mbox, sbox, m, sigma, Gm, Gs, losses, record, M_hist, S_hist):
    """OGA-EL (Algorithm 3): mu <- Pi(mu - eta grad bar L_t(mu)) (greedy), or, with ``lazy``,
    mu <- Pi(mu_1 - eta sum_i grad bar L_i(mu_i)) (FTRL with ||mu - mu_1||^2 / (2 eta), erratum E003-9).
    Pi is the clip onto [-mbox, mbox]^d x [0, sbox]^d.
    Returns (rounds completed, status), stopping before a non-finite round (see :func:`sva_run`)."""
    T, d = X.shape
    gm, gs, nGm, nGs, nm, ns = _round_buffers(d)
    for t in range(T):
        lt = _begin_round(loss_id, H, X[t], y[t], t, m, sigma, gm, gs, record, M_hist, S_hist)
        for j in range(d):
            nGm[j] = Gm[j] + gm[j]
            nGs[j] = Gs[j] + gs[j]
            if lazy:
                nm[j] = _clip(m1[j] - eta * nGm[j], -mbox, mbox)
                ns[j] = _clip(s1[j] - eta * nGs[j], 0.0, sbox)
            else:
                nm[j] = _clip(m[j] - eta * gm[j], -mbox, mbox)
                ns[j] = _clip(sigma[j] - eta * gs[j], 0.0, sbox)
        if not (
            _all_finite(gm)
            and _all_finite(gs)
            and _all_finite(nGm)
            and _all_finite(nGs)
            and _commit(t, lt, nm, ns, m, sigma, losses)
        ):
            return t, STATUS_NONFINITE
        _copy(Gm, nGm)
        _copy(Gs, nGs)
    _record(record, M_hist, S_hist, T, m, sigma)
    return T, STATUS_OK
