"""Pyramidal width of a finite atom set (seed 001 Thm 9 / Thm' 9; Lacoste-Julien & Jaggi 2015, Eq. 9): numpy only.

For linearly independent atoms a_1..a_n (given by their Gram matrix G, so conv(A) is a simplex, every subset of atoms
spans a face and every point has exactly one active set, its support), LJ&J's definition

    PWidth = min over faces K, points q in K, directions r in cone(K - q) \\ {0} of PdirW(K, r, q),
    PdirW(W, r, q) = min over active sets S of q of max_{s, v in S u {s(W, r)}} <r / ||r||, s - v>,

reduces, with r = sum_{k in K} lam_k a_k, to: min over faces K (|K| >= 2) and supports S (nonempty subset of K; q in
the relative interior of conv(S)) of

    min over lam != 0 with sum(lam) = 0, lam_k >= 0 for k in K \\ S, of N(lam) / ||r||,
    N(lam) = max_{k in K} <r, a_k> - min_{v in S} <r, a_v>,    <r, a_j> = (G lam)_j,  ||r||^2 = lam^T G lam.

N > 0 on the cone minus 0 (if N <= 0 then ||r||^2 = sum_{k not in S} lam_k (<r, a_k> - min_S) <= 0), and the ratio is
homogeneous of degree 0, so the minimum is 1 / max{||r|| : lam in the cone, N(lam) <= 1}.  That set is a bounded
polytope (the linear constraints <r, a_k - a_v> <= 1 for k in K, v in S; lam_k >= 0 off S; sum(lam) = 0) and ||r||^2
is convex, so the maximum sits at a vertex: :func:`pyramidal_width` enumerates every choice of |K| - 1 active
constraints, solves, keeps the feasible points.  Exact up to rounding.  :func:`pyramidal_width_sampled` is the slow
independent estimate (random directions in every cone): each sample is a feasible ratio, so it can only be >= the
exact value.
"""

from __future__ import annotations

import itertools

import numpy as np


def _check_gram(G) -> np.ndarray:
    G = np.asarray(G, dtype=float)
    if G.ndim != 2 or G.shape[0] != G.shape[1] or G.shape[0] < 2:
        raise ValueError(f"the Gram matrix must be square with at least 2 atoms, got shape {G.shape}")
    if G.shape[0] > 6:  # 6 atoms: ~5 s
        raise ValueError(f"exact pyramidal width enumerates every face and vertex: at most 6 atoms, got {G.shape[0]}")
    if not np.allclose(G, G.T, rtol=1e-12, atol=1e-14):
        raise ValueError("the Gram matrix must be symmetric")
    ev = np.linalg.eigvalsh(0.5 * (G + G.T))
    if ev[0] <= 1e-12 * ev[-1]:
        raise ValueError(f"the atoms must be linearly independent (Gram eigenvalues {ev[0]:.3g} .. {ev[-1]:.3g})")
    return 0.5 * (G + G.T)


def _constraints(G, K, S):
    """Rows c with c @ lam <= b (lam indexed by K): <r, a_k - a_v> <= 1 (k in K, v in S, k != v), -lam_k <= 0 off S."""
    GK = G[np.ix_(K, K)]
    pos = {k: i for i, k in enumerate(K)}
    rows, rhs = [], []
    for k in K:
        for v in S:
            if k != v:
                rows.append(GK[pos[k]] - GK[pos[v]])
                rhs.append(1.0)
    for k in K:
        if k not in S:
            e = np.zeros(len(K))
            e[pos[k]] = -1.0
            rows.append(e)
            rhs.append(0.0)
    return np.array(rows), np.array(rhs), GK


def _max_norm_on_polytope(G, K, S) -> float:
    """max lam^T G_K lam over {sum lam = 0, c @ lam <= b}, by vertex enumeration (all active sets in one batch)."""
    C, b, GK = _constraints(G, K, S)
    m = len(K)
    act = np.array(list(itertools.combinations(range(C.shape[0]), m - 1)), dtype=np.intp)
    A = np.concatenate([C[act], np.ones((act.shape[0], 1, m))], axis=1)
    rhs = np.concatenate([b[act], np.zeros((act.shape[0], 1))], axis=1)
    det = np.linalg.det(A)
    keep = np.abs(det) > 1e-12 * np.maximum(1.0, np.abs(A).max(axis=(1, 2))) ** m
    lam = np.linalg.solve(A[keep], rhs[keep][..., None])[..., 0]
    feasible = np.all(lam @ C.T <= b + 1e-9 * (1.0 + np.abs(b)), axis=1)
    lam = lam[feasible]
    return float(np.max(np.einsum("ij,jk,ik->i", lam, GK, lam), initial=0.0))


def faces_and_supports(n: int):
    """Every (face K, support S) pair of an n-vertex simplex: K with |K| >= 2, S a nonempty subset of K."""
    for size in range(2, n + 1):
        for K in itertools.combinations(range(n), size):
            for s in range(1, size + 1):
                for S in itertools.combinations(K, s):
                    yield K, S


def pyramidal_width(G) -> float:
    """Exact PWidth of the atoms with Gram matrix ``G`` (n <= 6, linearly independent), LJ&J Eq. (9)."""
    G = _check_gram(G)
    worst = max(_max_norm_on_polytope(G, K, S) for K, S in faces_and_supports(G.shape[0]))
    return float(1.0 / np.sqrt(worst))


def direction_ratio(G, K, S, lam) -> float:
    """N(lam) / ||r|| of the direction r = sum_{k in K} lam_k a_k at a point with support S (lam indexed by K)."""
    GK = G[np.ix_(K, K)]
    proj = GK @ lam
    pos = [K.index(v) for v in S]
    return float((proj.max() - proj[pos].min()) / np.sqrt(lam @ GK @ lam))


def pyramidal_width_sampled(G, n_per_cone: int = 2000, seed: int = 0) -> float:
    """Upper estimate of PWidth: min of the ratio over random directions lam in every cone (lam_k >= 0 off S, free on
    S, then shifted on S to sum zero); every sample is feasible, so the result is >= the exact PWidth."""
    G = _check_gram(G)
    rng = np.random.default_rng(seed)
    best = np.inf
    for K, S in faces_and_supports(G.shape[0]):
        on = np.array([k in S for k in K])
        lam = rng.standard_normal((n_per_cone, len(K)))
        lam[:, ~on] = np.abs(lam[:, ~on]) * (rng.random((n_per_cone, int((~on).sum()))) < 0.7)
        lam[:, on] -= lam.sum(1, keepdims=True) / on.sum()
        GK = G[np.ix_(K, K)]
        proj = lam @ GK
        nrm = np.sqrt(np.einsum("ij,jk,ik->i", lam, GK, lam))
        ok = nrm > 1e-12
        num = proj.max(1) - proj[:, on].min(1)
        best = min(best, float(np.min(num[ok] / nrm[ok])))
    return best


def simplex_pyramidal_width(n: int) -> float:
    """LJ&J Lemma 4: the probability simplex with n vertices e_1..e_n has PWidth 2/sqrt(n) (n even), 2/sqrt(n - 1/n)
    (n odd)."""
    return 2.0 / np.sqrt(n) if n % 2 == 0 else 2.0 / np.sqrt(n - 1.0 / n)
