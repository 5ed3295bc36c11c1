"""One round of each online learner of seed 003, from the update rules the protocol states
(``refvi.verification.protocol.online``), written here from the paper (numpy / scipy only, never refvi): the replay
that checks a run record state by state.

* :func:`step`: the state after round t from the state before it (and, for the FTRL forms, the gradient sums of the
  earlier rounds), with the oracle's own expected-loss gradients (the hinge's closed form of
  :func:`.online_comparators.hinge_value`, the quadratic loss's H (m - z), H sigma), and the loss of round t at the
  mean;
* :func:`sums_from_state`: the gradient sums an FTRL-form state (SVA's (9), OGA-EL lazy) was computed from, recovered
  from the state itself when no box face is active (so a replay needs only the previous state, not the whole
  history), or None.
"""

from __future__ import annotations

import math

import numpy as np

from .online_comparators import hinge_value


def sigma_step(sig, a, gs):
    """SVB's sigma step sigma h(a gs / (2 sigma)), h(x) = sqrt(1 + x^2) - x, written as sigma^2 / (sqrt(sigma^2 +
    (a gs / 2)^2) + a gs / 2) (exact; no cancellation for gs >= 0, and 0 at sigma = 0)."""
    sig, a, gs = (np.asarray(v, dtype=np.float64) for v in (sig, a, gs))
    u = a * gs / 2.0
    root = np.sqrt(sig**2 + u**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u >= 0, np.where(root + u > 0, sig**2 / (root + u), 0.0), root - u)


def point_loss(loss, x, y, m, H=1.0):
    """ell(m) for one data point: hinge, squared, absolute, quadratic H/2 ||m - x||^2 (y unused)."""
    x, m = np.asarray(x, dtype=np.float64), np.asarray(m, dtype=np.float64)
    if loss == "quadratic":
        return 0.5 * H * float((m - x) @ (m - x))
    a = float(m @ x)
    return {"hinge": max(0.0, 1.0 - y * a), "squared": (y - a) ** 2, "absolute": abs(y - a)}[loss]


def _grads(loss, x, y, m, sigma, H):
    if loss == "quadratic":
        return H * (m - x), H * sigma
    if loss != "hinge":
        raise ValueError(f"the replay knows the hinge and quadratic losses, not {loss!r}")
    _, gm, gs = hinge_value(x[None, :], np.array([y]), m, sigma)
    return gm, gs


def _K(hyper):
    if hyper.get("K") is not None:
        return hyper["K"]
    return hyper["D"] * math.sqrt(2.0) / hyper["L"]


def _to_ball(v, radius):
    n = float(np.linalg.norm(v))
    return v if n <= radius else v * (radius / n)


def _point_subgradient(loss, x, y, theta, H):
    """A subgradient of ell(theta) (OGA's step direction): H (theta - x) for the quadratic loss, -y x where the hinge
    is active (0 at and past its kink), -2 (y - <theta, x>) x for the squared loss, -sign(y - <theta, x>) x for the
    absolute loss (0 at r = 0)."""
    if loss == "quadratic":
        return H * (theta - x)
    a = float(theta @ x)
    if loss == "hinge":
        return -y * x if 1.0 - y * a > 0 else np.zeros_like(x)
    if loss == "squared":
        return -2.0 * (y - a) * x
    if loss == "absolute":
        return -np.sign(y - a) * x
    raise ValueError(f"unknown loss {loss!r}")


def step(method, hyper, x, y, m, sigma, sums, t, loss="hinge", H=1.0):
    """(m', sigma', sums', loss_t): round t (0-based) of learner ``method`` with hyperparameters ``hyper`` from the
    state (m, sigma) before it (sigma None for OGA) and ``sums`` = (G_m, G_s), the gradient sums of the rounds before t
    (used by the FTRL forms only); ``loss_t`` = ell_t(m).  At a kink of the hinge OGA steps with the zero subgradient
    (the other side is the caller's)."""
    x, m = np.asarray(x, dtype=np.float64), np.asarray(m, dtype=np.float64)
    y = 0.0 if y is None else float(np.ravel(y)[0])
    d = m.size
    lt = point_loss(loss, x, y, m, H)
    eta, s = hyper.get("eta"), hyper.get("s", 1.0)
    mbox, sbox = hyper.get("mbox", np.inf), hyper.get("sbox", np.inf)
    if method == "oga":
        return np.clip(m - eta * _point_subgradient(loss, x, y, m, H), -mbox, mbox), None, sums, lt
    sigma = np.asarray(sigma, dtype=np.float64)
    gm, gs = _grads(loss, x, y, m, sigma, H)
    Gm, Gs = (np.zeros(d), np.zeros(d)) if sums is None else (np.asarray(v, dtype=np.float64) for v in sums)
    Gm, Gs = Gm + gm, Gs + gs
    if method == "sva":
        m2 = np.clip(-eta * s * s * Gm, -mbox, mbox)
        s2 = np.minimum(sigma_step(np.full(d, float(s)), eta * s * s, Gs), sbox)
    elif method == "svb":
        sched = hyper.get("schedule", "convex")
        if sched == "constant":
            a = eta * sigma**2
        elif sched == "convex":
            a = np.full(d, _K(hyper) / math.sqrt(t + 1))
        else:
            a = np.full(d, 2.0 / (hyper["H_sc"] * (t + 1)))
        if hyper.get("mball") is not None:
            m2 = _to_ball(m - a * gm, hyper["mball"])
            s2 = _to_ball(np.maximum(sigma_step(sigma, a, gs), 0.0), hyper["sball"])
        else:
            m2 = np.clip(m - a * gm, -mbox, mbox)
            s2 = np.clip(sigma_step(sigma, a, gs), 0.0, sbox)
    elif method == "ngvi":
        beta = hyper["alpha"] / (hyper["alpha"] + eta) if hyper.get("alpha") is not None else hyper["beta"]
        prec = (1 - beta) / sigma**2 + beta / s**2 + eta * beta * gs / sigma
        v = 1.0 / np.maximum(prec, 0.0 if not np.isfinite(sbox) else 1.0 / sbox**2)
        m2, s2 = np.clip(m - beta * v * (eta * gm + m / s**2), -mbox, mbox), np.sqrt(v)
    elif method == "ogael" and hyper.get("projection", "greedy") == "lazy":
        m2, s2 = np.clip(-eta * Gm, -mbox, mbox), np.clip(s - eta * Gs, 0.0, sbox)
    elif method == "ogael":
        m2, s2 = np.clip(m - eta * gm, -mbox, mbox), np.clip(sigma - eta * gs, 0.0, sbox)
    else:
        raise ValueError(f"unknown learner {method!r}")
    return m2, s2, (Gm, Gs), lt


def sums_from_state(method, hyper, m, sigma):
    """The gradient sums (G_m, G_s) an FTRL-form state was computed from, when no box face is active: SVA's
    m = -eta s^2 G_m and sigma = s h(eta s G_s / 2) give G_m = -m / (eta s^2), G_s = (s^2 - sigma^2) / (eta s^2
    sigma); OGA-EL lazy's m = -eta G_m, sigma = s - eta G_s.  None for the other learners, or when a coordinate lies
    on a face of its box (the sum is then not determined by the state)."""
    lazy = method == "ogael" and hyper.get("projection", "greedy") == "lazy"
    if method != "sva" and not lazy:
        return None
    m, sigma = np.asarray(m, dtype=np.float64), np.asarray(sigma, dtype=np.float64)
    eta, s = hyper["eta"], hyper.get("s", 1.0)
    mbox, sbox = hyper.get("mbox", np.inf), hyper.get("sbox", np.inf)
    if np.any(np.abs(m) >= mbox) or np.any(sigma >= sbox) or np.any(sigma <= 0):
        return None
    if method == "sva":
        return -m / (eta * s * s), (s * s - sigma * sigma) / (eta * s * s * sigma)
    return -m / eta, (s - sigma) / eta


def run_sva_batch(Xs, ys, eta, s=1.0, mbox=np.inf, sbox=np.inf):
    """R independent SVA runs (eq. 9, FTRL form, lazy box projection) from the prior, all at once: ``Xs`` (R, T, d),
    ``ys`` (R, T) -> (M (R, T+1, d), S (R, T+1, d), losses (R, T)), the hinge gradients in closed form (the same
    expressions as :func:`.online_comparators.hinge_value`, vectorized over the runs).  A from-scratch replay of
    every run (inputs only): the hinge's expected loss is smooth in (m, sigma) for sigma > 0, so rounding differences
    do not grow (agreement with a run of the same rule to ~1e-13)."""
    from scipy.special import ndtr

    Xs, ys = np.asarray(Xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
    R, T, d = Xs.shape
    M, S, losses = np.zeros((R, T + 1, d)), np.empty((R, T + 1, d)), np.empty((R, T))
    m, sig = np.zeros((R, d)), np.full((R, d), float(s))
    Gm, Gs = np.zeros((R, d)), np.zeros((R, d))
    S[:, 0] = sig
    for t in range(T):
        x, y = Xs[:, t], ys[:, t]
        a = np.einsum("rd,rd->r", m, x)
        losses[:, t] = np.maximum(0.0, 1.0 - y * a)
        b = np.sqrt(np.einsum("rd,rd->r", x * x, sig * sig))
        c = 1.0 - y * a
        bs = np.where(b > 0, b, 1.0)
        z = c / bs
        P = np.where(b > 0, ndtr(z), (c > 0).astype(float))
        p = np.where(b > 0, np.exp(-0.5 * np.minimum(z * z, 1500.0)) / math.sqrt(2 * math.pi), 0.0) / bs
        Gm += -(y * P)[:, None] * x
        Gs += sig * (p[:, None] * x * x)
        m = np.clip(-eta * s * s * Gm, -mbox, mbox)
        sig = np.minimum(sigma_step(np.full((R, d), float(s)), eta * s * s, Gs), sbox)
        M[:, t + 1], S[:, t + 1] = m, sig
    return M, S, losses
