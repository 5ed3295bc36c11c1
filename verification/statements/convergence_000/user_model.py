"""refvi's user-model path: a density the user writes as ``numba.njit`` functions, per point or batched
(:mod:`._user_models`: a correlated, off-centre Gaussian with condition number 1e4), or as a PyMC model (refvi's
``from_pymc``), run through the implementation's estimators, its affine frames and its whole optimizer loops, against
the same density evaluated by the oracles.

* log p and its gradient at points far from the mean (the record's functions called by the implementation);
* g_energy (seed 000 Eq. 6) with S = 1..5 base samples, "full" and "tril", at correlated scales away from the mean,
  against the oracle's per-sample closed form (:func:`..oracles.gradient_moments.energy_samples`);
* the framed estimator (the energy of p(z0 + L x), :meth:`framed_energy`) for frames (z0, L) with a *negative*
  diagonal (lower-triangular, symmetric or full L), S = 1..5: (L^T gm, L^T gC) of the oracle's estimate at
  (z0 + L m, L C);
* Prox-SGD in a frame (:meth:`framed_prox_sgd`, optional; what ``fit`` runs in one): lower-triangular L with a
  positive or a negative diagonal entry, steps up to 1/M' of the framed target (at least 1/S at some step), S = 1..5,
  replayed by the plain-NumPy loop on the framed Gaussian;
* Prox-SGD (Def. 5) and Proj-SGD (Def. 8, entropy estimator) on pre-drawn base samples U (T, S, d), S = 1..5,
  replayed by the plain-NumPy loop (:mod:`..oracles.sgd_reference`) with the oracle's gradient: the final iterate and
  the weighted average.  The Proj-SGD runs start far from the mean, where the energy part of the step dwarfs C, so
  the matrix Y = C - gamma g_C the projection receives is *indefinite* (asserted on the replay): the projection onto
  W_M must clip negative eigenvalues to 1/sqrt(M), not take their absolute value or the singular values.

Every instance runs for the per-point and the batched functions (refvi hands them to its compiled loops: the fused
energy loop and the frame kernels, :mod:`refvi.kernels.fused`, :mod:`refvi.kernels.composed`), and for S = 1 and 4
with a gradient that returns a strided view (an implementation must convert it); when PyMC is installed,
some run for the PyMC form too (a record whose ``pymc_model`` builds the density with two free variables: refvi
builds its target with ``from_pymc``, an implementation without a PyMC front end uses the per-point functions).
The functions are compiled once per process and shared by every instance and by 000.claim-fit-defaults.

Statements: 000.claim-user-model.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import multivariate_normal

from refvi.verification.oracles import gradient_moments as gmo
from refvi.verification.oracles import sgd_reference
from refvi.verification.oracles.matrices import proj_V
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000 import _user_models as um

#: two float64 evaluations of the same sums of at most 5 terms of size |P (z - mean)| |u| (1e6 here): 1e-10 relative
#: to the largest per-sample term; a dropped sample (1/S = 20% at least), a wrong row or a missing L^T is O(1)
RTOL = 1e-10


def _scale_matrix(rng, structure):
    """A correlated scale in V: lower triangular with a positive diagonal ("tril"), or a full matrix."""
    B = 0.3 * rng.standard_normal((um.D, um.D))
    C = np.tril(B, -1) + np.diag(rng.uniform(0.3, 1.5, um.D))
    return C if structure == "tril" else C + np.triu(B, 1)


def _frame(rng, kind):
    """(z0, L) with some negative diagonal entries: lower triangular, symmetric or full."""
    signs = np.where(np.arange(um.D) % 2 == 0, -1.0, 1.0)  # the first and last diagonal entries negative
    B = rng.standard_normal((um.D, um.D))
    if kind == "tril":
        L = np.tril(B, -1) + np.diag(signs * rng.uniform(0.2, 3.0, um.D))
    elif kind == "sym":
        L = 0.5 * (B + B.T)
        np.fill_diagonal(L, signs * rng.uniform(2.0, 4.0, um.D))
    else:
        L = B + np.diag(signs * rng.uniform(2.0, 4.0, um.D))
    return um.MEAN + 5.0 * rng.standard_normal(um.D), L


def _what(form, S):
    return f"{form} numba model, S = {S}" if form != "pymc" else f"PyMC model, S = {S}"


def _estimates(ctx, form, S, seed):
    rng = np.random.default_rng(seed)
    target = um.target_of(form)
    what = _what(form, S)
    # log p and its gradient at points up to 300 from the mean (values ~ -1e8)
    Z = um.MEAN + rng.standard_normal((S, um.D)) * np.array([300.0, 3.0, 0.1])
    lp = np.asarray(ctx.impl.log_joint(target, Z), dtype=np.float64)
    want = multivariate_normal(um.MEAN, np.linalg.inv(um.PREC)).logpdf(Z).reshape(-1)  # SciPy: a separate road
    # log p ~ -1e8 here: 1e-10 relative (SciPy's Cholesky of the covariance against the precision's quadratic form)
    ctx.close(lp, want, rtol=1e-9, atol=1e-9, label=f"{what}: log p at the rows of Z")
    G = np.asarray(ctx.impl.grad_log_joint(target, Z), dtype=np.float64)
    ctx.close(G, -gmo.grad_phi(um.MODEL, Z), rtol=RTOL, atol=RTOL * (1 + np.abs(G).max()), label=f"{what}: grad")
    # g_energy at a correlated scale, off the mean
    for structure in ("full", "tril"):
        m = um.MEAN + rng.standard_normal(um.D) * np.array([50.0, 1.0, 0.01])
        C = _scale_matrix(rng, structure)
        U = rng.standard_normal((S, um.D))
        gm, gC = (np.asarray(x, dtype=np.float64) for x in ctx.impl.energy(target, m, C, U, structure))
        Gs, GCs = gmo.energy_samples(um.MODEL, m, C, U, structure)
        big = 1.0 + scalar(np.abs(GCs).max()) + scalar(np.abs(Gs).max())
        ctx.close(gm, Gs.mean(axis=0), rtol=RTOL, atol=RTOL * big, label=f"{what}, {structure}: g_m (Eq. 6)")
        ctx.close(gC, GCs.mean(axis=0), rtol=RTOL, atol=RTOL * big, label=f"{what}, {structure}: g_C (Eq. 6)")
    # the framed estimator, frames with negative diagonal entries
    for kind in ("tril", "sym", "full"):
        z0, L = _frame(rng, kind)
        m, C = rng.standard_normal(um.D), _scale_matrix(rng, "tril")
        U = rng.standard_normal((S, um.D))
        structure = "tril" if kind == "tril" else "full"
        got = ctx.impl.framed_energy(target, z0, L, m, C, U, structure)
        gm, gC = (np.asarray(x, dtype=np.float64) for x in got)
        Gs, GCs = gmo.energy_samples(um.MODEL, z0 + L @ m, L @ C, U, "full")
        want_m, want_C = L.T @ Gs.mean(axis=0), proj_V(L.T @ GCs.mean(axis=0), structure)
        big = (1.0 + scalar(np.abs(L).max())) * (1.0 + scalar(np.abs(GCs).max()) + scalar(np.abs(Gs).max()))
        label = f"{what}, frame with a negative diagonal ({kind} L), {structure}"
        ctx.close(gm, want_m, rtol=RTOL, atol=RTOL * big, label=f"{label}: framed g_m = L^T g_m")
        ctx.close(gC, want_C, rtol=RTOL, atol=RTOL * big, label=f"{label}: framed g_C = proj_V(L^T g_C)")


def _indefinite_witness(m, C, U, gammas):
    """The smallest eigenvalue of Y = C - gamma g_ent at each step of the oracle's Proj-SGD replay (the matrix the
    projection receives)."""
    params = sgd_reference.model_params(um.MODEL)
    out = []
    for t, g in enumerate(gammas):
        gm, gC = sgd_reference.estimate("gaussian", params, "entropy", "sym", m, C, U[t])
        m, Y = m - g * gm, C - g * gC
        out.append(scalar(np.linalg.eigvalsh(0.5 * (Y + Y.T))[0]))
        C = sgd_reference.project(Y, um.M_TRUE, "sym")
    return np.array(out)


def _loops(ctx, form, S, seed):
    rng = np.random.default_rng(seed)
    target = um.target_of(form)
    T = 12
    U = rng.standard_normal((T, S, um.D))
    weights = rng.dirichlet(np.ones(T + 1))
    params = sgd_reference.model_params(um.MODEL)
    what = f"{_what(form, S)}, T = {T}"
    for method in ("prox", "proj"):
        m0 = um.MEAN + rng.standard_normal(um.D) * np.array([80.0, 1.0, 0.01])
        if method == "prox":
            C0, structure, est = _scale_matrix(rng, "tril"), "tril", "energy"
            gammas = rng.uniform(0.2, 1.0, T) / um.M_TRUE
            got = ctx.impl.prox_sgd(target, m0, C0, gammas, U, est, structure, weights)
        else:
            C0, structure, est = 0.05 * np.eye(um.D), "sym", "entropy"
            gammas = rng.uniform(0.2, 0.5, T) / um.M_TRUE
            got = ctx.impl.proj_sgd(target, m0, C0, gammas, U, um.M_TRUE, est, structure, weights)
            lam = _indefinite_witness(m0, C0, U, gammas)
            # the instance is unkind by construction: the projection receives an indefinite Y (oracle replay)
            ctx.true(bool(np.any(lam < 0)), label=f"{what}: Proj-SGD's Y = C - gamma g is indefinite at some step")
        ref = sgd_reference.sgd(method, "gaussian", params, m0, C0, U, gammas, est, structure, um.M_TRUE, weights)
        _same_run(ctx, got, ref, f"{what}: {method}-SGD")


def _framed_loop(ctx, form, S, seed):
    """Prox-SGD in a frame (what fit runs; an optional method): a lower-triangular L with a positive diagonal
    (refvi's framed loop) or with a negative entry on it, steps from 1/(2M') to 1/M' of the framed target (so at
    least 1/S at some step for S >= 2), replayed on the framed Gaussian N(L^-1(mean - z0), (L^T P L)^-1)."""
    rng = np.random.default_rng(seed)
    target = um.target_of(form)
    T = 12
    U = rng.standard_normal((T, S, um.D))
    weights = rng.dirichlet(np.ones(T + 1))
    what = f"{_what(form, S)}, T = {T}"
    for sign in (1.0, -1.0):
        Sigma_L = np.linalg.cholesky(np.linalg.inv(um.PREC))
        L = Sigma_L @ (np.eye(um.D) + 0.3 * np.tril(rng.standard_normal((um.D, um.D)), -1))
        L = L * np.where(np.arange(um.D) == 0, sign, 1.0)  # sign -1: the first column (and diagonal entry) negated
        z0 = um.MEAN + rng.standard_normal(um.D) * np.sqrt(np.diag(np.linalg.inv(um.PREC)))
        P_x = L.T @ um.PREC @ L
        M_x = scalar(np.linalg.eigvalsh(0.5 * (P_x + P_x.T))[-1])
        gammas = np.linspace(0.5, 1.0, T)[rng.permutation(T)] / M_x
        m0, C0 = rng.standard_normal(um.D) * 3.0, _scale_matrix(rng, "tril")
        got = ctx.impl.framed_prox_sgd(target, z0, L, m0, C0, gammas, U, weights)
        params_x = (np.linalg.solve(L, um.MEAN - z0), 0.5 * (P_x + P_x.T))
        ref = sgd_reference.sgd("prox", "gaussian", params_x, m0, C0, U, gammas, "energy", "tril", None, weights)
        diag = "a positive" if sign > 0 else "a negative entry on its"
        _same_run(ctx, got, ref, f"{what}: Prox-SGD in a frame (lower-triangular L with {diag} diagonal)")


def _same_run(ctx, got, ref, what):
    """The implementation's (m^T, C^T, m_avg, C_avg) against the replay's: the same T updates in float64 (loops vs
    BLAS, two eigh), so rounding relative to the run's largest entry."""
    got = tuple(np.asarray(x, dtype=np.float64) for x in got)
    scale = 1.0 + max(scalar(np.max(np.abs(x))) for x in ref)
    for name, a, b in zip(("m_T", "C_T", "m_avg", "C_avg"), got, ref, strict=True):
        ctx.close(a, b, atol=1e-9 * scale, label=f"{what}: {name} == the replay (Defs 5, 8)")


@statement("000.claim-user-model")
def claim_user_model(ctx):
    cases = [(form, S) for S in range(1, 6) for form in ("per-point", "batched")] + [("strided", 1), ("strided", 4)]
    if um.have_pymc():
        cases += [("pymc", 1), ("pymc", 4)]
    for i, (form, S) in enumerate(cases):
        ctx.instance(lambda c: _estimates(ctx, *c), (form, S, 100 + i))
        ctx.instance(lambda c: _loops(ctx, *c), (form, S, 200 + i))
        ctx.instance(lambda c: _framed_loop(ctx, *c), (form, S, 300 + i))
