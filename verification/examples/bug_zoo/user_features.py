"""Planted bugs in refvi's own features under statements (issue 38 item 4): a user's model in an affine frame with a
negative diagonal, Proj-SGD whose projection receives an indefinite Y, the driver called with its own defaults
(``fit_as_user``) and its diagnostics (``fit_diagnostics``), which the plain-NumPy example does not offer: those bugs
are planted around refvi's adapter."""

from __future__ import annotations

import numpy as np

from refvi.verification.examples.bug_zoo import mutant


@mutant(
    "framed-energy-abs-diagonal",
    "000",
    "framed_energy",
    "the frame's L taken with |L_ii| on the diagonal (written for Cholesky factors, whose diagonal is positive)",
    try_first=("000.claim-user-model",),
)
def _(orig, owner):
    def framed_energy(target, z0, L, m, C, U, structure="full"):
        L = np.array(L, dtype=float)
        np.fill_diagonal(L, np.abs(np.diag(L)))
        return orig(target, z0, L, m, C, U, structure)

    return framed_energy


@mutant(
    "framed-prox-sgd-first-sample-only",
    "000",
    "framed_prox_sgd",
    "Prox-SGD in a frame steps on the first base sample of each step only (a framed loop written for S = 1: the same "
    "as the plain average while every step has one sample)",
    try_first=("000.claim-user-model",),
)
def _(orig, owner):
    def framed_prox_sgd(target, z0, L, m0, C0, gammas, U, weights=None):
        return orig(target, z0, L, m0, C0, gammas, np.asarray(U)[:, :1], weights)

    return framed_prox_sgd


@mutant(
    "proj-sgd-singular-value-clip-on-sym",
    "000",
    "proj_sgd",
    "Proj-SGD's loop projects a symmetric Y with the singular-value clip (the same as the eigenvalue clip while Y is "
    "positive definite; |lambda| instead of lambda once Y is indefinite)",
    try_first=("000.claim-user-model",),
)
def _(orig, owner):
    def proj_sgd(target, m0, C0, gammas, U, M, estimator="entropy", structure="sym", weights=None):
        M = float(M)
        if structure != "sym":
            return orig(target, m0, C0, gammas, U, M, estimator, structure, weights)

        def clip(Y, g):
            Us, s, Vt = np.linalg.svd(0.5 * (Y + Y.T))
            return (Us * np.maximum(s, 1.0 / np.sqrt(M))) @ Vt

        return owner._sgd(clip, target, m0, C0, gammas, U, estimator, structure, weights)

    return proj_sgd


@mutant(
    "fit-as-user-frame-auto-ignored",
    "000",
    "fit_as_user",
    "the driver's default frame is none (frame='auto' never chooses the Laplace frame)",
    on="refvi",
)
def _(orig, owner):
    def fit_as_user(target, **options):
        options.setdefault("frame", None)
        return orig(target, **options)

    return fit_as_user


@mutant(
    "fit-as-user-logistic-start-at-the-mode",
    "000",
    "fit_as_user",
    "a default logistic run starts at the Laplace mode (the frame's z0), not at the ridge start that minimizes the "
    "exact objective with C at the frame's L",
    on="refvi",
    try_first=("000.claim-fit-defaults",),
)
def _(orig, owner):
    def fit_as_user(target, **options):
        if target.kind == "logistic" and not {"init", "step_size", "frame"} & set(options):
            z0, L = owner.frame(target, "laplace")[:2]
            options["init"] = (z0, L)
        return orig(target, **options)

    return fit_as_user


@mutant(
    "fit-as-user-guard-off",
    "000",
    "fit_as_user",
    "without a frame, the default step 1/M (Proj-SGD: 1/(2M)) is passed on as a given step, so the divergence guard "
    "never runs",
    on="refvi",
)
def _(orig, owner):
    def fit_as_user(target, **options):
        if "frame" in options and options["frame"] is None and options.get("step_size") is None:
            M = owner.smoothness(target)
            options["step_size"] = 1.0 / M if options.get("method", "prox-sgd") == "prox-sgd" else 0.5 / M
        return orig(target, **options)

    return fit_as_user


@mutant(
    "fit-as-user-default-average-last",
    "000",
    "fit_as_user",
    "the driver's default average is the last iterate, not the documented tail average",
    on="refvi",
)
def _(orig, owner):
    def fit_as_user(target, **options):
        options.setdefault("average", "last")
        return orig(target, **options)

    return fit_as_user


@mutant(
    "fit-diagnostics-fixed-threshold",
    "000",
    "fit_diagnostics",
    "the Pareto k-hat judged against the fixed 0.7 of the first PSIS paper, not min(1 - 1/log10(S), 0.7) for S draws",
    on="refvi",
    try_first=("000.claim-fit-diagnostics",),
)
def _(orig, owner):
    def fit_diagnostics(target, m, C, U, quarters):
        import dataclasses

        run = orig(target, m, C, U, quarters)
        return dataclasses.replace(run, k_threshold=0.7, pareto_ok=bool(run.pareto_k <= 0.7))

    return fit_diagnostics


@mutant(
    "fit-as-user-diagnostics-quarters-swapped",
    "000",
    "fit_as_user",
    "the driver's own diagnostics take the last two quarters in the wrong order (moves in the third quarter's sd, "
    "KL(q_4 || q_3)): the same numbers whenever the run has settled",
    on="refvi",
    try_first=("000.claim-fit-diagnostics",),
)
def _(orig, owner):
    def fit_as_user(target, **options):
        import dataclasses

        run = orig(target, **options)
        if run.diagnostics is None:
            return run
        steps = np.asarray(run.steps)
        T = steps[-1]
        q3, q4 = (2 * steps > T) & (4 * steps <= 3 * T), 4 * steps > 3 * T
        ms, Cs = np.asarray(run.ms), np.asarray(run.Cs)
        swapped = ((ms[q4].mean(axis=0), Cs[q4].mean(axis=0)), (ms[q3].mean(axis=0), Cs[q3].mean(axis=0)))
        U = np.random.default_rng(0).standard_normal((20, np.size(run.m)))
        moves = owner.fit_diagnostics(target, run.m, run.C, U, swapped)
        fields = ("mean_move", "sd_move", "quarter_kl", "stationary")
        diagnostics = dataclasses.replace(run.diagnostics, **{k: getattr(moves, k) for k in fields})
        return dataclasses.replace(run, diagnostics=diagnostics)

    return fit_as_user
