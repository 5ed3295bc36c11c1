"""Domke, Garrigos & Gower (seed 000) and Domke (seed 002): inputs outside the papers' domains are refused, never
answered with a wrong number.

Each probe sits exactly on the boundary of a hypothesis (M = 0, gamma < 0, a zero on the diagonal of C, one entry
above the diagonal of a "tril" C, a NaN in the base samples, a tail fraction of 0 or just above 1, a first step that
overflows, a target with zero curvature, a horizon T = 0, zero samples per step, average weights summing to 0, ...),
where a check written with the wrong comparison lets the input through.  The protocol's convention is a
``ValueError`` or ``TypeError``; where the input still has a right answer (the prox with gamma = 0 is the identity;
the projection of an asymmetric C onto the symmetric W_M is the clip of its symmetric part; an estimator at a C
outside V or W is the projected mean at that C) returning that answer also passes
(:meth:`~refvi.verification.statement.Context.refuses`).  Every array argument is also probed one entry too long and
one too short along each axis the other arguments fix (:func:`_shape_probes`).

Statements: 000.claim-bad-input.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles.matrices import proj_V as proj
from refvi.verification.protocol import bases
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000 import _user_models as UM


def _instance():
    rng = np.random.default_rng(20261125)
    d = 3
    A = rng.standard_normal((d, d))
    target = specs.gaussian(rng.standard_normal(d), A @ A.T + np.eye(d))
    m = rng.standard_normal(d)
    C = np.tril(rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(1.0, 2.0, d))
    U = rng.standard_normal((4, d))
    return target, m, C, U


def _frame(m, S):
    """The frame (z0, L) the probes run in: z0 = m / 2, L lower triangular with L L^T = S^-1 (S positive definite)."""
    return 0.5 * m, np.linalg.cholesky(np.linalg.inv(S))


def _energy_at(target, m, C, U, structure):
    """The energy estimate at any C, from the target record: (mean -grad log p(z), proj_V mean -grad log p(z) u^T)."""
    G = -np.array([target.grad_logp(C @ u + m) for u in U])
    return G.mean(0), proj(G.T @ U / len(U), structure)


def _shape_probes(ctx, target, m, C, U):
    """Every array argument of a wrong length is refused: each axis whose length the other arguments fix (d, the
    horizon T, T + 1 average weights) one longer and one shorter (:meth:`~refvi.verification.statement.Context.
    refuses_shapes`); a length a check compares with the wrong operator, or one of several checks joined by the
    wrong boolean, lets one of them through."""
    impl = ctx.impl
    d = m.size
    sq, vec, rows = (0, 1), (0,), (1,)
    S = C @ C.T + np.eye(d)
    for name in ("energy", "entropy", "stl", "score"):
        ctx.refuses_shapes(
            lambda m, C, U, name=name: getattr(impl, name)(target, m, C, U, "tril"),
            {"m": m, "C": C, "U": U},
            {"m": vec, "C": sq, "U": rows},
            label=name,
        )
    ctx.refuses_shapes(
        lambda m, C, Z: impl.gaussian_log_density(m, C, Z, "tril"),
        {"m": m, "C": C, "Z": U},
        {"m": vec, "C": sq, "Z": rows},
        label="gaussian_log_density",
    )
    for name, call in (
        ("gaussian_entropy", lambda C: impl.gaussian_entropy(C, "tril")),
        ("grad_neg_entropy", lambda C: impl.grad_neg_entropy(C, "tril")),
        ("entropy_prox", lambda C: impl.entropy_prox(C, 0.1)),
        ("project_singular", lambda C: impl.project_singular(C, 0.7)),
    ):
        ctx.refuses_shapes(call, {"C": C}, {"C": sq}, label=name)
    ctx.refuses_shapes(lambda C: impl.project_wm(C, 0.7, "sym"), {"C": S}, {"C": sq}, label="project_wm")
    ctx.refuses_shapes(lambda Z: impl.log_joint(target, Z), {"Z": U}, {"Z": rows}, label="log_joint")
    ctx.refuses_shapes(lambda Z: impl.grad_log_joint(target, Z), {"Z": U}, {"Z": rows}, label="grad_log_joint")
    ctx.refuses_shapes(lambda z: impl.hess_log_joint(target, z), {"z": m}, {"z": vec}, label="hess_log_joint")
    ctx.refuses_shapes(
        lambda m, C: impl.exact_energy(target, m, C), {"m": m, "C": C}, {"m": vec, "C": sq}, label="exact_energy"
    )
    # seed 002's location-scale family q = LocScale(m, C, s) on a base law s (Eq. 1), d = 3
    base = bases.BaseSpec("laplace")
    ctx.refuses_shapes(
        lambda m, C, Z: impl.locscale_log_density(base, m, C, Z),
        {"m": m, "C": C, "Z": U},
        {"m": vec, "C": sq, "Z": rows},
        label="locscale_log_density",
    )
    for name, of_m_C in (
        ("locscale_moments", lambda m, C: impl.locscale_moments(base, m, C)),
        ("to_base_params", lambda m, C: impl.to_base_params(m, C, base)),
    ):
        ctx.refuses_shapes(of_m_C, {"m": m, "C": C}, {"m": vec, "C": sq}, label=name)
    ctx.refuses_shapes(lambda C: impl.locscale_entropy(base, C), {"C": C}, {"C": sq}, label="locscale_entropy")
    # the runs: T = 2 steps, base samples (T, S, d), T + 1 average weights
    T = 2
    gammas, U3, w = np.array([0.1, 0.05]), np.random.default_rng(4).standard_normal((T, 2, d)), np.full(T + 1, 1 / 3)
    run_axes = {"m0": vec, "C0": sq, "gammas": vec, "U": (0, 2), "weights": vec}
    ctx.refuses_shapes(
        lambda m0, C0, gammas, U, weights: impl.prox_sgd(target, m0, C0, gammas, U, weights=weights),
        {"m0": m, "C0": C, "gammas": gammas, "U": U3, "weights": w},
        run_axes,
        label="prox_sgd",
    )
    ctx.refuses_shapes(
        lambda m0, C0, gammas, U, weights: impl.proj_sgd(target, m0, C0, gammas, U, 1.0, weights=weights),
        {"m0": m, "C0": S, "gammas": gammas, "U": U3, "weights": w},
        run_axes,
        label="proj_sgd",
    )
    # a frame z = z0 + L x: z0 (d,), L (d, d) lower triangular
    z0, L = _frame(m, S)
    ctx.refuses_shapes(
        lambda z0, L, m, C, U: impl.framed_energy(target, z0, L, m, C, U, "tril"),
        {"z0": z0, "L": L, "m": m, "C": C, "U": U},
        {"z0": vec, "L": sq, "m": vec, "C": sq, "U": rows},
        label="framed_energy",
    )
    ctx.refuses_shapes(
        lambda z0, L, m0, C0, gammas, U, weights: impl.framed_prox_sgd(target, z0, L, m0, C0, gammas, U, weights),
        {"z0": z0, "L": L, "m0": m, "C0": C, "gammas": gammas, "U": U3, "weights": w},
        {"z0": vec, "L": sq, **run_axes},
        label="framed_prox_sgd",
    )


@statement("000.claim-bad-input")
def claim_bad_input(ctx):
    impl = ctx.impl
    target, m, C, U = _instance()
    d = m.size
    upper = C.copy()
    upper[0, 1] = 0.3  # the first superdiagonal only: triu(C, 2) misses it
    singular = C.copy()
    singular[1, 1] = 0.0
    nan_U = U.copy()
    nan_U[2, 1] = np.nan
    S = C @ C.T + np.eye(d)  # symmetric positive definite
    asym = S.copy()
    asym[0, 2] += 0.5
    lam, Q = np.linalg.eigh(0.5 * (asym + asym.T))
    M = 0.7  # 1/sqrt(M) > 1: the clip binds on some eigenvalues
    asym_proj = (Q * np.maximum(lam, 1.0 / np.sqrt(M))) @ Q.T
    U3 = np.random.default_rng(1).standard_normal((2, 1, d))
    _shape_probes(ctx, target, m, C, U)

    # a user's numba model whose gradient has the wrong length, through the estimator, the framed estimator and loop
    # (refvi's compiled paths for user models) and the driver
    z0, L = _frame(m, S)
    gammas, w = np.full(2, 0.01), np.full(3, 1.0 / 3.0)
    for what in ("long", "short", "batch-long"):
        bad_model = UM.malformed(what)
        ctx.refuses(lambda: impl.energy(bad_model, m, C, U, "tril"), label=f"energy: user gradient {what}")
        ctx.refuses(
            lambda: impl.framed_energy(bad_model, z0, L, m, C, U, "tril"), label=f"framed_energy: user gradient {what}"
        )
        ctx.refuses(
            lambda: impl.framed_prox_sgd(bad_model, z0, L, m, C, gammas, U3, w),
            label=f"framed_prox_sgd: user gradient {what}",
        )
        ctx.refuses(lambda: impl.fit_as_user(bad_model, steps=4), label=f"fit_as_user: user gradient {what}")

    # a model whose data are outside its definition (seed 000 §7): group labels must lie in 0..G-1
    rng = np.random.default_rng(3)
    Xh = rng.standard_normal((4, 2))
    for groups in ([0, -1, 1, 0], [0, 2, 1, 0]):
        bad_h = specs.hierarchical_logistic(Xh, np.array([1.0, -1.0, 1.0, 1.0]), groups, 2, np.eye(2), np.eye(2))
        ctx.refuses(
            lambda: impl.log_joint(bad_h, np.zeros((1, bad_h.dim))),
            label=f"log_joint: hierarchical model with group labels {groups} for G = 2",
        )

    # the affine frame's constants M', mu' (the M of Def. 8's W_M and of the default steps): a target with no
    # curvature anywhere (log p constant, improper) has no mode and no M > 0, so no frame can be built
    flat = specs.from_callables(lambda z: 0.0, lambda z: np.zeros(np.shape(z)), d)
    for kind in ("laplace", "diagonal"):
        ctx.refuses(lambda: impl.frame(flat, kind), label=f"frame {kind}: log p constant (zero curvature everywhere)")

    # a group prior that is not positive definite (Cor 25 needs Sigma, Delta > 0)
    singular_prior = specs.hierarchical_logistic(
        Xh, np.array([1.0, -1.0, 1.0, 1.0]), [0, 1, 1, 0], 2, np.diag([1.0, 0.0]), np.eye(2)
    )
    ctx.refuses(
        lambda: impl.log_joint(singular_prior, np.zeros((1, singular_prior.dim))),
        label="log_joint: hierarchical model with a singular prior covariance Sigma",
    )

    # prox and projections (Lemmas 31-33, seed 002 Thm 7)
    ctx.refuses(lambda: impl.entropy_prox(upper, 0.1), label="entropy_prox: C with an entry above the diagonal")
    ctx.refuses(lambda: impl.entropy_prox(C, -0.1), label="entropy_prox: gamma < 0")
    ctx.refuses(lambda: impl.entropy_prox(C, 0.0), correct=C, atol=0.0, label="entropy_prox: gamma = 0 (identity)")
    nan_C = C.copy()
    nan_C[2, 0] = np.nan
    ctx.refuses(lambda: impl.entropy_prox(nan_C, 0.1), label="entropy_prox: NaN below the diagonal")
    for bad in (0.0, -1.0):
        ctx.refuses(lambda: impl.project_wm(S, bad, "sym"), label=f"project_wm: M = {bad}")
        ctx.refuses(lambda: impl.project_singular(C, bad), label=f"project_singular: M = {bad}")
    ctx.refuses(
        lambda: impl.project_wm(asym, M, "sym"),
        correct=asym_proj,
        rtol=1e-10,
        atol=1e-12,
        label="project_wm: asymmetric C (its projection is the clip of the symmetric part)",
    )

    # estimators and the Gaussian family (Def 4, Eqs. 6-8, Lemma 14, Lemma 16); wrong shapes: _shape_probes
    ctx.refuses(lambda: impl.energy(target, m, C, nan_U, "tril"), label="energy: NaN in U")
    for name in ("entropy", "stl", "score"):
        ctx.refuses(
            lambda: getattr(impl, name)(target, m, singular, U, "tril"),
            label=f"{name}: C with a zero on the diagonal (q degenerate, C^-1 undefined)",
        )
    # outside V (an entry above the diagonal) or outside W (a diagonal entry <= 0), g_energy still has its value, the
    # mean of -grad log p(C u + m) (u^T) projected: an implementation may return it instead of refusing; refvi
    # documents a refusal (its estimators take C in V and W only), and is held to it
    negative = C.copy()
    negative[2, 2] = -0.5
    for what, bad in (
        ("C outside V (tril)", upper),
        ("C with a zero on its diagonal (outside W)", singular),
        ("C with a negative entry on its diagonal (outside W)", negative),
    ):
        gm, gC = _energy_at(target, m, bad, U, "tril")
        ctx.refuses(
            lambda: np.concatenate([np.ravel(x) for x in impl.energy(target, m, bad, U, "tril")]),
            correct=None if ctx.strict_methods else np.concatenate([gm, gC.ravel()]),
            rtol=1e-10,
            atol=1e-12,
            label=f"energy: {what}",
        )
    ctx.refuses(lambda: impl.gaussian_entropy(singular, "tril"), label="gaussian_entropy: singular C")
    ctx.refuses(lambda: impl.gaussian_log_density(m, singular, U, "tril"), label="gaussian_log_density: singular C")
    ctx.refuses(lambda: impl.grad_neg_entropy(singular, "tril"), label="grad_neg_entropy: singular C")

    # step rules, averages, constants and the optimizers' hypotheses (Thms 6-10, 26)
    ctx.refuses(lambda: impl.step_sizes("thm6", 5, M=1.0, mu=0.0, a=1.0), label="step_sizes thm6: mu = 0")
    ctx.refuses(lambda: impl.step_sizes("constant", 5, gamma=-0.1), label="step_sizes: constant gamma < 0")
    ctx.refuses(lambda: impl.step_sizes("no-such-rule", 5, gamma=0.1), label="step_sizes: an unknown rule")
    for frac in (0.0, 1.0 + 1e-9):
        ctx.refuses(
            lambda: impl.average_weights("tail", 5, tail_fraction=frac),
            label=f"average_weights tail: tail_fraction = {frac!r}",
        )
    ctx.refuses(lambda: impl.noise_constants("energy", 0, 1.0, 1.0), label="noise_constants: d = 0")
    ctx.refuses(
        lambda: impl.noise_constants("no-such-estimator", 2, 1.0, 1.0), label="noise_constants: an unknown estimator"
    )
    ctx.refuses(lambda: impl.prox_sgd(target, m, C, np.array([0.1, -0.1]), U3), label="prox_sgd: a step < 0")
    for est in ("entropy", "stl"):  # estimators of grad f = grad l + grad h: the prox would count h twice (Def 5)
        ctx.refuses(
            lambda: impl.prox_sgd(target, m, C, np.array([0.1, 0.1]), U3, est),
            label=f"prox_sgd: the {est} estimator (of grad f, not grad l)",
        )
    ctx.refuses(lambda: impl.prox_sgd(target, m, C, np.array([0.1, 0.0]), U3), label="prox_sgd: a step = 0")
    ctx.refuses(lambda: impl.proj_sgd(target, m, S, np.array([0.1, 0.1]), U3, 0.0), label="proj_sgd: M = 0")
    # seed 002's gradient descent with a caller's gradient and no M: W_M (projected) and Thm 6's default step
    # (step=None) are undefined without it
    grad_l = lambda m_, C_: (m_ - target.params["mean"], C_)  # noqa: E731
    for step, method in ((0.1, "projected"), (None, "prox"), (None, "naive")):
        ctx.refuses(
            lambda: impl.gradient_descent(grad_l, m, C, step, 3, method, None),
            label=f"gradient_descent {method}, step = {step}: no smoothness constant M",
        )
    # a run that diverges says so: a step so large that the very first update overflows (w^1 not finite); the same on
    # a non-Gaussian target (refvi runs it in its loop for any energy kernel, refvi.kernels.fused)
    for on, tgt in (("", target), (", cosine target", specs.cosine(0.5, np.ones(d)))):
        ctx.refuses(
            lambda: impl.prox_sgd(tgt, 1e300 * m, C, np.array([1e300, 0.1]), U3),
            label=f"prox_sgd{on}: the first update overflows (divergence at step 0)",
        )
        ctx.refuses(
            lambda: impl.proj_sgd(tgt, 1e300 * m, S, np.array([1e300, 0.1]), U3, 1.0),
            label=f"proj_sgd{on}: the first update overflows (divergence at step 0)",
        )
    # in a frame, the mean alone overflows: on a flat Gaussian (precision 1e-300 I) whose mean lies 1e300 below
    # m = -1.5e308 the gradient is 1, so gamma g_m = 5e307, m g_m and m / gamma are all floats and the samples 1e-10
    # keep the scale's update at 5e297, but m - gamma g_m = -2e308 is not
    flat = specs.gaussian(np.full(2, -1.5e308 - 1e300), np.eye(2) * 1e-300)
    ctx.refuses(
        lambda: impl.framed_prox_sgd(
            flat, np.zeros(2), np.eye(2), np.full(2, -1.5e308), np.eye(2), np.array([5e307]), np.full((1, 1, 2), 1e-10)
        ),
        label="framed_prox_sgd: the mean update overflows at step 0 (the scale's does not)",
    )

    # horizons, sample counts, weights and seeds on the boundary of their domains; targets outside their definition
    ctx.refuses(lambda: impl.step_sizes("constant", 0, gamma=0.1), label="step_sizes: T = 0")
    ctx.refuses(lambda: impl.step_sizes("A log T / T", 1, A=2.0), label="step_sizes A log T / T: T = 1 (a zero step)")
    ctx.instance(
        lambda _: ctx.equal(
            impl.step_range_ok("000.thm10", np.zeros(3)),
            False,
            label="step_range_ok: Thm 10's constant step gamma = 0 is no step (outside its range)",
        )
    )
    U0 = np.zeros((2, 0, d))
    ctx.refuses(lambda: impl.prox_sgd(target, m, C, np.array([0.1, 0.1]), U0), label="prox_sgd: S = 0 samples per step")
    ctx.refuses(
        lambda: impl.prox_sgd(target, m, C, np.array([0.1, 0.1]), U3, weights=np.zeros(3)),
        label="prox_sgd: average weights summing to 0",
    )
    ctx.refuses(lambda: impl.fit(target, "prox-sgd", steps=4, seed=-1), label="fit: seed = -1")
    Csing = np.diag([1.0, 0.0, 1.0])
    ctx.refuses(
        lambda: impl.fit(target, "prox-sgd", steps=4, init=(np.zeros(d), Csing)),
        label="fit: a start C0 with a zero on its diagonal (outside the domain)",
    )
    ctx.refuses(
        lambda: impl.fit(target, "prox-sgd", steps=4, frame="laplace", init=(np.zeros(d), Csing)),
        label="fit in a frame: a singular start C0",
    )
    iso = specs.from_callables(
        lambda z: -0.5 * scalar(z @ z), lambda z: -np.asarray(z), d, smoothness=1.0, strong_convexity=2.0
    )
    ctx.refuses(lambda: impl.fit(iso, "proj-sgd", steps=4), label="fit: a target declaring mu = 2 > M = 1")
    # the driver as a user calls it (optional): options outside their domains, each alone, the rest its defaults
    for options, why in (
        ({"steps": 0}, "no step"),
        ({"steps": 4, "samples": 0}, "no sample per step"),
        ({"steps": 4, "step_size": -0.1}, "a negative step"),
        ({"steps": 4, "average": "median"}, "an unknown average"),
        ({"steps": 4, "method": "adam"}, "an unknown method"),
        ({"steps": 4, "frame": "no-such-frame"}, "an unknown frame"),
        ({"steps": 4, "frame": None, "M": -1.0}, "a negative smoothness constant"),
        ({"steps": 4, "method": "gd-prox", "step_size": "thm6"}, "gradient descent with a rule name for its step"),
        ({"steps": 4, "method": "gd-prox", "step_size": np.full(4, 0.1)}, "gradient descent with an array of steps"),
        ({"steps": 4.5}, "a fractional number of steps"),
        ({"steps": 4, "samples": 2.5}, "a fractional number of samples"),
        ({"steps": 4, "seed": 1.5}, "a fractional seed"),
    ):
        ctx.refuses(lambda: impl.fit_as_user(target, **options), label=f"fit_as_user: {why} ({options})")
    # a start of the wrong shape, given to the driver directly and as a user gives it
    ctx.refuses_shapes(
        lambda m0, C0: impl.fit(target, "prox-sgd", steps=4, init=(m0, C0)),
        {"m0": m, "C0": C},
        {"m0": (0,), "C0": (0, 1)},
        label="fit: init",
    )
    ctx.refuses_shapes(
        lambda m0, C0: impl.fit_as_user(target, steps=4, init=(m0, C0)),
        {"m0": m, "C0": C},
        {"m0": (0,), "C0": (0, 1)},
        label="fit_as_user: init",
    )
    ctx.refuses(
        lambda: impl.log_joint(specs.gaussian(np.zeros(d), np.diag([1.0, 0.0, 1.0])), np.zeros((1, d))),
        label="log_joint: a Gaussian target with a singular precision",
    )
