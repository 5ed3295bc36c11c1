"""Domke, *Provable smoothness guarantees for black-box variational inference* (seed 002): moment conditions of the base
distribution (Lemmas 11-14).

Statements: 002.lemma11, 002.lemma12, 002.lemma13, 002.lemma14.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.oracles import charfun as cf
from refvi.verification.oracles import discrete as ds
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.smoothness_002._smoothness import (
    _INST,
    _cos_params,
    _impl_grad_atoms,
    _norm_w,
    _pair,
    _sym_moments,
)


# =================================================================================================================
@statement("002.lemma11")
def lemma11(ctx):
    """On discrete bases the inner product is a finite weighted sum: check symmetry, bilinearity, Cauchy-Schwarz,
    PSD Gram matrices, and <a, a> = 0 exactly when a vanishes on the support."""

    def case(inst):
        rng = np.random.default_rng(inst["seed"])
        d, k = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        p = (0.5, 0.25, 0.1)[inst["seed"] % 3]
        U, w = ds.two_point_atoms(d, p, shift=rng.uniform(-1, 1, d) if inst["near"] else None)
        n = U.shape[0]
        F = rng.normal(size=(5, n, k))  # five random vector fields, values at the atoms
        G = np.array([[ds.inner(F[i], F[j], w) for j in range(5)] for i in range(5)])
        ctx.close(G, G.T, rtol=1e-15, atol=1e-15, label="symmetry")
        ctx.geq(np.linalg.eigvalsh(G)[0], 0.0, atol=1e-12 * np.abs(G).max(), label="Gram matrix PSD")
        x, y = rng.normal(size=2)
        lhs = ds.inner(x * F[0] + y * F[1], F[2], w)
        ctx.close(lhs, x * G[0, 2] + y * G[1, 2], rtol=1e-12, atol=1e-13, label="bilinearity")
        ctx.bound(G[0, 1] ** 2, G[0, 0] * G[1, 1], rtol=1e-12, label="Cauchy-Schwarz")
        Z = np.zeros((n, k))
        ctx.close(ds.inner(Z, Z, w), 0.0, label="<0, 0> = 0")
        ctx.geq(ds.inner(F[3], F[3], w), 0.0, label="<a, a> >= 0")
        ctx.true(ds.inner(F[3], F[3], w) > 0, label="<a, a> > 0 for a non-zero on the support")

    ctx.forall(_INST, case)


@statement("002.lemma12")
def lemma12(ctx):
    """grad l from the implementation (exact atoms) equals the coordinates <a_i, grad f o t_w>_s computed from the
    discrete inner product and the hand-derived grad f of the cos + quadratic target; the identity follows."""

    def grad_f(params, Z):
        alpha, b, phi, beta, z0 = params
        return (-alpha * np.sin(Z @ b + phi))[:, None] * b[None, :] + beta * (Z - z0)

    def case(inst):
        rng = np.random.default_rng(inst["seed"])
        d = int(rng.integers(1, 5))
        p = 0.5 if inst["near"] else 0.25
        U, pw = ds.two_point_atoms(d, p)
        Urep = U if p == 0.5 else ds.replicate_rational(U, pw, 4**d)
        params = _cos_params(rng, d)
        target = specs.cosine(*params)
        w, v = _pair(rng, d, "full", bool(rng.integers(2)))
        A = ds.basis_functions(U)  # (atoms, d + d^2, d)
        coords, diffs = [], []
        for m, C in (w, v):
            g = _impl_grad_atoms(ctx, target, m, C, Urep)
            Gf = grad_f(params, U @ C.T + m)
            c = np.array([ds.inner(A[:, i, :], Gf, pw) for i in range(A.shape[1])])
            ctx.close(
                np.concatenate([g[0], g[1].ravel()]),
                c,
                rtol=1e-12,
                atol=1e-12,
                label="d l / d w_i == <a_i, grad f o t_w>_s",
            )
            coords.append(np.concatenate([g[0], g[1].ravel()]))
            diffs.append(Gf)
        lhs = scalar(np.sum((coords[0] - coords[1]) ** 2))
        D = diffs[0] - diffs[1]
        rhs = sum(ds.inner(A[:, i, :], D, pw) ** 2 for i in range(A.shape[1]))
        ctx.close(lhs, rhs, rtol=1e-11, atol=1e-13, label="Lemma 12 identity")

    ctx.forall(_INST, case)


@statement("002.lemma13")
def lemma13(ctx):
    import sympy as sp

    # Symbolic: with E u = mu and E u u^T = Sigma + mu mu^T, the Gram matrix is I_d (x) S_2.
    for d in (1, 2, 3):
        mu, Sig = _sym_moments(d)
        E2 = Sig + mu * mu.T
        n = d + d * d
        G = sp.zeros(n, n)

        def Ea(i, j):  # E[a_i(u)^T a_j(u)] from the moment table
            def parts(k):
                if k < d:
                    return k, None  # a_{m_k} = e_k
                r = k - d
                return r // d, r % d  # a_{C_rc} = e_r u_c

            (ri, ci), (rj, cj) = parts(i), parts(j)
            if ri != rj:
                return sp.Integer(0)
            if ci is None and cj is None:
                return sp.Integer(1)
            if ci is None:
                return mu[cj]
            if cj is None:
                return mu[ci]
            return E2[ci, cj]

        for i in range(n):
            for j in range(n):
                G[i, j] = Ea(i, j)
        S2 = sp.Matrix(sp.BlockMatrix([[sp.Matrix([[1]]), mu.T], [mu, E2]]))
        # reorder: group by output index r: (m_r, C_r1..C_rd)
        order = [r if c == -1 else d + r * d + c for r in range(d) for c in range(-1, d)]
        Gp = G.extract(order, order)
        kron = sp.kronecker_product(sp.eye(d), S2)
        ctx.true(sp.simplify(Gp - kron) == sp.zeros(n, n), label=f"d={d}: Gram = I_d (x) S_2 (symbolic)")
        subs = {s: 0 for s in mu}
        subs.update({Sig[i, j]: (1 if i == j else 0) for i in range(d) for j in range(d)})
        ctx.true(G.subs(subs) == sp.eye(n), label=f"d={d}: standardized => Gram = I (symbolic)")
        # "only if": a non-zero mean or non-identity covariance leaves a non-zero off-diagonal / diagonal defect.
        ctx.true(G.subs({**subs, mu[0]: sp.Rational(1, 3)}) != sp.eye(n), label=f"d={d}: mu != 0 breaks it")
        ctx.count()

    # Exact numeric: discrete bases (exact sums), standardized and not.
    rng = ctx.rng("num")
    for p in (0.5, 0.25, 0.1):
        for d in (1, 2, 3):
            shift = rng.uniform(-1, 1, d)
            for sh, sc in ((None, 1.0), (shift, 1.0), (None, 1.7)):
                U, w = ds.two_point_atoms(d, p, shift=sh, scale=sc)
                mu, Sig = ds.moments(U, w)
                G = ds.gram(U, w)
                order = [r if c == -1 else d + r * d + c for r in range(d) for c in range(-1, d)]
                kron = np.kron(np.eye(d), cf.second_moment_matrix(mu, Sig))
                ctx.close(G[np.ix_(order, order)], kron, rtol=1e-13, atol=1e-14, label="Gram = I (x) S_2 (sums)")
                if sh is None and sc == 1.0:
                    ctx.close(G, np.eye(d + d * d), atol=1e-14, label=f"p={p}: orthonormal")
                else:
                    ctx.geq(np.abs(G - np.eye(d + d * d)).max(), 0.1, label="non-standardized: not orthonormal")
                ctx.count()

    # Continuous standardized bases: their first two moments by scipy.stats (an independent description of each law).
    from scipy import stats

    laws = {
        "gaussian": stats.norm(),
        "uniform": stats.uniform(-math.sqrt(3), 2 * math.sqrt(3)),
        "laplace": stats.laplace(scale=1 / math.sqrt(2)),
        "exponential": stats.expon(loc=-1.0),
        "student_t(5)": stats.t(5, scale=math.sqrt(3 / 5)),
    }
    for name, law in laws.items():
        mean, var = (scalar(x) for x in law.stats(moments="mv"))
        d = 2
        S2 = cf.second_moment_matrix(np.full(d, mean), var * np.eye(d))  # iid coordinates
        ctx.close(np.kron(np.eye(d), S2), np.eye(d * (d + 1)), atol=1e-14, label=f"{name}: Gram = I")
        ctx.count()


@statement("002.lemma14")
def lemma14(ctx):
    import sympy as sp

    # Symbolic: E||dC u + dm||^2 = tr(dW S_2 dW^T), = ||dm||^2 + ||dC||_F^2 when mu = 0, Sigma = I.
    for d in (1, 2, 3):
        mu, Sig = _sym_moments(d)
        dm = sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"dm{i}"))
        dC = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"dC{i}{j}"))
        E2 = Sig + mu * mu.T
        # E (dC u + dm)^T (dC u + dm) = tr(dC E[u u^T] dC^T) + 2 dm^T dC mu + dm^T dm
        lhs = (dC * E2 * dC.T).trace() + 2 * (dm.T * dC * mu)[0] + (dm.T * dm)[0]
        S2 = sp.Matrix(sp.BlockMatrix([[sp.Matrix([[1]]), mu.T], [mu, E2]]))
        dW = dm.row_join(dC)
        ctx.true(sp.expand(lhs - (dW * S2 * dW.T).trace()) == 0, label=f"d={d}: = tr(dW S_2 dW^T)")
        subs = {s: 0 for s in mu}
        subs.update({Sig[i, j]: (1 if i == j else 0) for i in range(d) for j in range(d)})
        ctx.true(
            sp.expand(lhs.subs(subs) - (dm.T * dm)[0] - sum(x**2 for x in dC)) == 0,
            label=f"d={d}: standardized => ||w - v||^2",
        )
        ctx.count()

    # Exact numeric on discrete bases.
    def case(inst):
        rng = np.random.default_rng(inst["seed"])
        d = int(rng.integers(1, 5))
        p = (0.5, 0.25, 0.1)[inst["seed"] % 3]
        U, w = ds.two_point_atoms(d, p)
        a, b = _pair(rng, d, inst["structure"], inst["near"])
        lhs = ds.mean_sq_distance(U, w, *a, *b)
        ctx.close(lhs, _norm_w(a[0] - b[0], a[1] - b[1]) ** 2, rtol=1e-12, atol=1e-14, label="isometry (sums)")

    ctx.forall(_INST, case)
