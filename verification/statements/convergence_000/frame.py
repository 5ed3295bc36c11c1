"""Seed 000 in an affine frame z = z0 + L x: the VI problem maps exactly (the basis of ``refvi.fit(frame=...)``).

For p_x(x) = p(z0 + L x) |det L| (the density of x = L^{-1}(z - z0)) and q_x = N(m', C' C'^T):

* objective: f(z0 + L m', L C') = f_x(m', C') (KL is invariant under the bijection; seed 000's f = l + h with the
  entropy constant dropped, so the two log|det L| terms cancel);
* optimum: the VI optimum of p_x maps to that of p, (m*, C*) = (z0 + L m'*, L C'*), within the triangular family when
  L is lower triangular with positive diagonal (Cholesky factors are unique);
* constants: -Hess log p_x = L^T H L, so M' = lambda_max(L^T H L), mu' = lambda_min(L^T H L); in the Laplace frame
  L = chol(H^{-1}) of a quadratic target, M' = mu' = 1;
* estimators: with the same base samples, g_energy of p_x at (m', C') is (L^T gm, L^T gC) for g_energy = (gm, gC)
  of p at (z0 + L m', L C') (full C: the chain rule through T(m, C) = C u + m, seed 000 Eq. 6, Lemma 33).

Oracles: :mod:`..oracles.vi_objective` (exact f, its gradient and the optimum) and :mod:`..oracles.hessian_bounds`
(-log p and its Hessian by finite differences).  Targets reach the implementation as TargetSpecs (gaussian kind:
the framed target of a quadratic model is a Gaussian).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from refvi.verification.oracles import hessian_bounds as hb
from refvi.verification.oracles import vi_objective as vo
from refvi.verification.protocol import targets as tspec
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000._targets import hessian_of_gradient, target_instance
from refvi.verification.strategies import RNG, rng_of


def _quadratic(rng, d, N, kind, cond=None):
    """An oracle model (gaussian or linear) with -log p = 1/2 z^T A z - b^T z + c; ``cond`` sets A's condition."""
    if kind == "linear":
        X = rng.standard_normal((N, d)) * np.exp(rng.uniform(-2, 2, d))
        return {
            "kind": "linear",
            "X": X,
            "y": rng.standard_normal(N),
            "noise_scale": scalar(rng.uniform(0.2, 2)),
            "prior_scale": scalar(rng.uniform(0.5, 3)),
        }
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.exp(rng.uniform(-2, 2, d)) if cond is None else np.geomspace(1.0, cond, d)
    P = (Q * lam) @ Q.T
    return {"kind": "gaussian", "mean": rng.standard_normal(d) * 3, "precision": 0.5 * (P + P.T)}


def _frame(rng, d):
    """A random z0 and lower-triangular L with positive diagonal (entries over two orders of magnitude)."""
    L = np.tril(rng.standard_normal((d, d)))
    L[np.diag_indices(d)] = np.exp(rng.uniform(-2.5, 2.5, d))
    return rng.standard_normal(d) * 2, L


def _framed_gaussian(model, z0, L):
    """The oracle Gaussian of x = L^{-1}(z - z0) for the posterior of a quadratic model: precision L^T A L, mean
    L^{-1}(A^{-1} b - z0)."""
    A, b, _ = vo.quadratic_form(model)
    P = L.T @ A @ L
    return {"kind": "gaussian", "mean": np.linalg.solve(L, np.linalg.solve(A, b) - z0), "precision": 0.5 * (P + P.T)}


def _posterior(model):
    A, b, _ = vo.quadratic_form(model)
    return {"kind": "gaussian", "mean": np.linalg.solve(A, b), "precision": A}


def _forall_framed(ctx, check, fixed, *, kind=None, N=None, log_cond=None):
    """Run ``check(d, n, rng, model, z0, L)`` on instances (d, n, seed): a quadratic model (``kind``, else linear for
    odd seeds and Gaussian for even ones; N = n data points unless ``N`` is given; A's condition 10^U(``log_cond``)
    if given) and a random frame (z0, L), both drawn from ``default_rng(seed)``."""

    def run(inst):
        d, n, seed = inst
        rng = np.random.default_rng(seed)
        cond = None if log_cond is None else 10.0 ** rng.uniform(*log_cond)
        model = _quadratic(rng, d, n if N is None else N, kind or ("linear" if seed % 2 else "gaussian"), cond=cond)
        z0, L = _frame(rng, d)
        check(d, n, rng, model, z0, L)

    ctx.forall(st.tuples(st.integers(1, 4), st.integers(1, 8), st.integers(0, 2**32 - 1)), run, fixed=fixed)


def _tol(x):
    return 1e-9 * (1.0 + np.max(np.abs(x)))


@statement("000.claim-affine-frame-map")
def claim_affine_frame(ctx):
    def check(d, N, rng, model, z0, L):
        post = _posterior(model)
        fx = _framed_gaussian(model, z0, L)
        # objective: exact for the normalized Gaussian (linear: up to the constant log p(x), removed by pairs)
        for _ in range(3):
            m1, C1 = rng.standard_normal(d), np.tril(rng.standard_normal((d, d))) + 2 * np.eye(d)
            lhs, rhs = vo.objective(post, z0 + L @ m1, L @ C1), vo.objective(fx, m1, C1)
            # closed forms, each a sum of O(d^2) terms of size up to |A| |m|^2: rounding 1e-9 relative
            ctx.close(lhs, rhs, rtol=1e-9, atol=1e-9, label="f(z0 + L m', L C') = f_x(m', C')")
            m2, C2 = rng.standard_normal(d), np.tril(rng.standard_normal((d, d))) + 2 * np.eye(d)
            dz = vo.objective(model, z0 + L @ m1, L @ C1) - vo.objective(model, z0 + L @ m2, L @ C2)
            dx = vo.objective(fx, m1, C1) - vo.objective(fx, m2, C2)
            ctx.close(dz, dx, rtol=1e-8, atol=1e-8, label="differences of f agree in both frames (model's own f)")
        # optimum: (z0 + L m'*, L C'*) is the optimum of the original problem (tril: unique Cholesky factor)
        ms, Cs, fs = vo.solve(post, "tril")
        mx, Cx, fxs = vo.solve(fx, "tril")
        ctx.close(z0 + L @ mx, ms, rtol=1e-8, atol=_tol(ms), label="m* = z0 + L m'*")
        ctx.close(L @ Cx, Cs, rtol=1e-8, atol=_tol(Cs), label="C* = L C'* (lower triangular)")
        ctx.close(fs, fxs, rtol=1e-9, atol=1e-9, label="f* = f_x*")
        # constants: finite-difference Hessian of -log p (oracle) transformed vs the framed precision
        H = hb.hessian_fd(model, rng.standard_normal(d)) if model["kind"] == "linear" else model["precision"]
        ev = np.linalg.eigvalsh(0.5 * (L.T @ H @ L + (L.T @ H @ L).T))
        evx = np.linalg.eigvalsh(fx["precision"])
        # hessian_fd of a quadratic: exact up to rounding ~1e-10 relative (see hessian_bounds)
        ctx.close(ev, evx, rtol=1e-6, atol=1e-6 * evx[-1], label="spectrum of L^T H L = that of the framed Hessian")
        # the Laplace frame L = chol(A^{-1}) makes the framed target perfectly conditioned: M' = mu' = 1
        A = post["precision"]
        Ll = np.linalg.cholesky(np.linalg.inv(A))
        evl = np.linalg.eigvalsh(Ll.T @ A @ Ll)
        ctx.close(evl, np.ones(d), rtol=0, atol=1e-8 * np.linalg.cond(A), label="Laplace frame: M' = mu' = 1")

    _forall_framed(ctx, check, [(3, 5, 1), (4, 8, 2), (1, 1, 3)])


@statement("000.claim-affine-frame-energy")
def claim_affine_frame_energy(ctx):
    def check(d, S, rng, model, z0, L):
        fx = _framed_gaussian(model, z0, L)
        tz = tspec.gaussian(model["mean"], model["precision"], name="original")
        tx = tspec.gaussian(fx["mean"], fx["precision"], name="framed")
        m1, C1 = rng.standard_normal(d), np.tril(rng.standard_normal((d, d))) + 2 * np.eye(d)
        U = rng.standard_normal((S, d))
        gm, gC = ctx.impl.energy(tz, z0 + L @ m1, L @ C1, U, "full")
        gmx, gCx = ctx.impl.energy(tx, m1, C1, U, "full")
        gm, gC, gmx, gCx = (np.asarray(a, dtype=np.float64) for a in (gm, gC, gmx, gCx))
        scale = (1 + np.abs(L).max()) * (1 + np.abs(gm).max() + np.abs(gC).max())
        # two float evaluations of the same quantity through matrices with condition up to ~1e6: 1e-7 relative
        ctx.close(gmx, L.T @ gm, rtol=1e-7, atol=1e-7 * scale, label="g_m in the frame = L^T g_m")
        ctx.close(gCx, L.T @ gC, rtol=1e-7, atol=1e-7 * scale, label="g_C in the frame = L^T g_C")
        # oracle side: the exact gradients (the estimators' means) transform the same way
        _, om, oC = vo.free_energy(model, z0 + L @ m1, L @ C1)
        _, oxm, oxC = vo.free_energy(fx, m1, C1)
        ctx.close(oxm, L.T @ om, rtol=1e-8, atol=1e-8 * scale, label="grad_m l_x = L^T grad_m l (oracle)")
        ctx.close(oxC, L.T @ oC, rtol=1e-8, atol=1e-8 * scale, label="grad_C l_x = L^T grad_C l (oracle)")

    _forall_framed(ctx, check, [(3, 1, 11), (4, 5, 12), (2, 16, 13)], kind="gaussian", N=8, log_cond=(0, 4))


@statement("000.claim-affine-frame-constants")
def claim_affine_frame_constants(ctx):
    def check(d, N, rng, model, z0, L):
        for label, (zz, LL) in (
            ("random frame", (z0, L)),
            (
                "Laplace frame",
                (
                    vo.solve(_posterior(model), "tril")[0],
                    np.linalg.cholesky(np.linalg.inv(vo.quadratic_form(model)[0])),
                ),
            ),
        ):
            fx = _framed_gaussian(model, zz, LL)
            ev = np.linalg.eigvalsh(fx["precision"])
            tx = tspec.gaussian(fx["mean"], fx["precision"], name=label)
            M, mu = scalar(ctx.impl.smoothness(tx)), scalar(ctx.impl.strong_convexity(tx))
            # eigenvalues of a symmetric matrix: backward stable, 1e-10 relative to lambda_max
            ctx.close(M, ev[-1], rtol=1e-9, atol=1e-10 * ev[-1], label=f"{label}: M' = lambda_max(L^T H L)")
            ctx.close(mu, ev[0], rtol=1e-9, atol=1e-10 * ev[-1], label=f"{label}: mu' = lambda_min(L^T H L)")
            if label == "Laplace frame":
                ctx.close(
                    [M, mu],
                    [1.0, 1.0],
                    atol=1e-9 * np.linalg.cond(vo.quadratic_form(model)[0]),
                    label="Laplace frame: M' = mu' = 1",
                )

    _forall_framed(ctx, check, [(3, 6, 21), (4, 8, 22), (2, 3, 23)], log_cond=(0, 5))


# ---- the implementation's own frame (refvi's preconditioning) -------------------------------------------------------
_FRAME_KINDS = ("gaussian", "linear", "logistic", "hierarchical_logistic", "callable")  # log-concave; "callable" has
# no Hessian: the implementation differentiates its gradient


@statement("000.claim-implementation-frame")
def claim_implementation_frame(ctx):
    def check(source):
        rng = rng_of(source)
        target = target_instance(rng, _FRAME_KINDS[int(rng.integers(0, len(_FRAME_KINDS)))])
        kind = ("laplace", "diagonal")[int(rng.integers(0, 2))]
        z0, L, M, mu = ctx.impl.frame(target, kind)
        z0, L = np.asarray(z0, dtype=np.float64), np.asarray(L, dtype=np.float64)
        H = -hessian_of_gradient(target, z0)
        what = f"{target.kind}, d = {target.dim}, {kind}"
        g = np.asarray(target.grad_logp(z0), dtype=np.float64)
        ctx.leq(scalar(np.linalg.norm(g)), 1e-6 * (1.0 + scalar(np.abs(H).max())), label=f"{what}: grad log p(z0) = 0")
        if kind == "laplace":
            ctx.true(bool(np.all(np.triu(L, 1) == 0) and np.all(np.diag(L) > 0)), label=f"{what}: L lower triangular")
            ctx.close(L.T @ H @ L, np.eye(target.dim), atol=1e-5, label=f"{what}: L^T H L = I")
        else:
            ctx.close(L, np.diag(1.0 / np.sqrt(np.diag(H))), rtol=1e-5, label=f"{what}: L = diag(H_ii^-1/2)")
        ev = np.linalg.eigvalsh(0.5 * (L.T @ H @ L + (L.T @ H @ L).T))
        ctx.geq(scalar(M), ev[-1], rtol=1e-5, label=f"{what}: M' >= lambda_max(L^T H L) at the mode")
        ctx.leq(scalar(mu), ev[0], rtol=1e-5, label=f"{what}: mu' <= lambda_min(L^T H L) at the mode")
        if target.kind == "gaussian" and kind == "laplace":
            ctx.close(np.array([M, mu], dtype=np.float64), np.ones(2), rtol=1e-5, label=f"{what}: M' = mu' = 1")

    ctx.forall(RNG, check, fixed=list(range(8)), max_examples=max(12, ctx.profile.max_examples // 3))


@statement("000.claim-implementation-framed-energy")
def claim_implementation_framed_energy(ctx):
    def check(source):
        rng = rng_of(source)
        target = target_instance(rng)
        d = target.dim
        z0, L = _frame(rng, d)
        m, C = rng.standard_normal(d), np.tril(rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(0.5, 2.0, d))
        U = rng.standard_normal((int(rng.integers(1, 6)), d))
        structure = ("full", "tril")[int(rng.integers(0, 2))]
        G = np.array([-L.T @ np.asarray(target.grad_logp(z0 + L @ (C @ u + m)), dtype=np.float64) for u in U])
        gm, gC = G.mean(axis=0), G.T @ U / len(U)
        gC = gC if structure == "full" else np.tril(gC)
        got_m, got_C = (
            np.asarray(a, dtype=np.float64) for a in ctx.impl.framed_energy(target, z0, L, m, C, U, structure)
        )
        scale = 1.0 + scalar(np.abs(G).max()) * (1.0 + scalar(np.abs(U).max()))
        what = f"{target.kind}, d = {d}, S = {len(U)}, {structure}"
        ctx.close(got_m, gm, rtol=1e-10, atol=1e-10 * scale, label=f"{what}: framed g_m")
        ctx.close(got_C, gC, rtol=1e-10, atol=1e-10 * scale, label=f"{what}: framed g_C")

    ctx.forall(RNG, check, fixed=list(range(8)), max_examples=max(20, ctx.profile.max_examples // 2))
