"""Wu & Gardner, *Understanding stochastic natural gradient variational inference* (seed 004): the Price and autodiff
estimators (§3.2, Algorithm 1).

Statements: 004.claim-autodiff-not-nd, 004.claim-price-nsd; errata: E004-4.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.errata import erratum
from refvi.verification.oracles import ngvi_expfam as OX
from refvi.verification.oracles import ngvi_glm as OG
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.ngvi_004._common import flat, rand_spd, sym_dir


def _gauss_lik_grad(Z):
    return -np.atleast_2d(Z)  # log p(y = 0 | z) = -|z|^2 / 2 + const, p(y | z) = N(z, I)


@statement("004.claim-autodiff-not-nd")
def _claim_ad(ctx):
    impl = ctx.adapter("ngvi")
    rng = ctx.rng("ad")
    # (a) the explicit backward pass equals finite differences of log p(xi + chol(Xi - xi xi^T) u)
    d = 3
    xi, S = rng.standard_normal(d), rand_spd(rng, d)
    Xi = S + np.outer(xi, xi)
    A = rng.standard_normal((d, d))
    Hq = -(A @ A.T) - np.eye(d)
    a = rng.standard_normal(d)
    logp = lambda z: 0.5 * (z - a) @ Hq @ (z - a) + np.sin(z).sum()  # noqa: E731
    grad = lambda Z: np.atleast_2d(np.atleast_2d(Z) - a) @ Hq + np.cos(np.atleast_2d(Z))  # noqa: E731
    for _ in range(3):
        u = rng.standard_normal(d)
        gx, GX = impl.autodiff(grad, xi, Xi, u[None, :])
        f = lambda x, X_: logp(x + np.linalg.cholesky(X_ - np.outer(x, x)) @ u)  # noqa: E731
        h = 1e-6
        dx, dX = rng.standard_normal(d), sym_dir(rng, d)
        fd = (f(xi + h * dx, Xi + h * dX) - f(xi - h * dx, Xi - h * dX)) / (2 * h)
        # central differences: O(h^2) truncation + O(eps/h) round-off ~ 1e-8 relative
        ctx.close(gx @ dx + np.sum(GX * dX), fd, rtol=1e-6, atol=1e-6, label="Alg. 1 == finite differences")
    # (b) at Sigma = I (paper's setting) the gradient is exactly -u u^T / 2: singular, never ND
    u = rng.standard_normal(2)
    _, G = impl.autodiff(_gauss_lik_grad, np.zeros(2), np.eye(2), u[None, :])
    ctx.close(G, -0.5 * np.outer(u, u), atol=1e-14, label="Sigma = I: grad_Xi == -u u^T / 2")
    # (c) robust witness and unbiasedness at Sigma = [[2, 1.5], [1.5, 2]]
    Sig = np.array([[2.0, 1.5], [1.5, 2.0]])
    # 2000 draws: the unbiasedness check resolves a bias of 22% of |E grad_Xi| at 80% power (400 draws: 49%)
    N = 2000 * ctx.profile.mc_scale
    U = rng.standard_normal((N, 2))
    draws, pos = [], 0
    for u in U:
        _, G = impl.autodiff(_gauss_lik_grad, np.zeros(2), Sig, u[None, :])
        draws.append(G.ravel())
        pos += np.linalg.eigvalsh(G)[-1] > 1e-6
    frac = pos / N
    # binomial: the observed fraction ~0.50; > 0.3 has false-alarm < 1e-15 at N >= 400
    ctx.geq(frac, 0.3, label="fraction of draws with lambda_max(grad_Xi) > 1e-6")
    ctx.mean_close(np.array(draws), -0.5 * np.eye(2).ravel(), alpha=1e-6, label="E[grad_Xi] == -I/2 (unbiased)")
    ctx.count(N)


@statement("004.claim-price-nsd")
def _claim_price(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        d, n = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        X = rng.standard_normal((n, d))
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        xi, S = rng.standard_normal(d), rand_spd(rng, d)
        U = rng.standard_normal((3, d))
        L = np.linalg.cholesky(S)
        gx, G = impl.price_logistic(X, y, xi, S + np.outer(xi, xi), U)
        _close_price(ctx, (gx, G), OG.price_logistic_reference(xi, L, X, y, U), f"logistic, all {n} rows")
        ctx.bound(
            np.linalg.eigvalsh(G)[-1],
            0.0,
            atol=1e-14 * max(1.0, scalar(np.max(np.abs(G)))),
            label="logistic: lambda_max(grad_Xi) <= 0",
        )
        # the mini-batch version (Eq. 15), replayed sample by sample: n/m times the sum over the batch's rows
        idx = rng.integers(0, n, size=int(rng.integers(1, n + 2)))
        gx, G = impl.price_logistic(X, y, xi, S + np.outer(xi, xi), U, idx)
        rx, RG = OG.price_logistic_reference(xi, np.linalg.cholesky(S), X, y, U, idx=idx, scale=n / idx.size)
        _close_price(ctx, (gx, G), (rx, RG), f"logistic, batch of {idx.size} rows of {n}: (n/m) sum over the batch")
        yc = rng.poisson(2.0, n).astype(float)
        gh = lambda Z: _poisson_gh(Z, X, yc)  # noqa: E731
        gx, G = impl.price(gh, xi, S + np.outer(xi, xi), U)
        _close_price(ctx, (gx, G), OG.price_poisson_reference(xi, L, X, yc, U), "Poisson")
        ctx.bound(
            np.linalg.eigvalsh(G)[-1],
            0.0,
            atol=1e-14 * max(1.0, scalar(np.max(np.abs(G)))),
            label="Poisson: lambda_max(grad_Xi) <= 0",
        )

    ctx.forall_drawn(check, seeds=[0])
    # unbiasedness against 1-D quadrature: E grad_Xi = 1/2 sum_i E[f_i''] x_i x_i^T, E grad_xi = E g - E[H] mu
    rng = ctx.rng("price-mean")
    X = rng.standard_normal((3, 2))
    y = np.array([1.0, -1.0, 1.0])
    xi, S = np.array([0.3, -0.5]), np.array([[1.0, 0.3], [0.3, 0.5]])
    Xi = S + np.outer(xi, xi)
    a, v = X @ xi, np.einsum("ni,ij,nj->n", X, S, X)
    parts = [OG.logistic_point_expectations(a[i], v[i], y[i]) for i in range(3)]
    Eg = sum(parts[i][1] * X[i] for i in range(3))
    EH = sum(parts[i][2] * np.outer(X[i], X[i]) for i in range(3))
    target = flat(Eg - EH @ xi, 0.5 * EH)
    N = 600 * ctx.profile.mc_scale
    draws = [
        flat(gx, G) for gx, G in (impl.price_logistic(X, y, xi, Xi, u[None, :]) for u in rng.standard_normal((N, 2)))
    ]
    ctx.mean_close(np.array(draws), target, alpha=1e-6, label="E[Price] == quadrature gradient")
    ctx.count(N)


def _close_price(ctx, got, ref, what):
    """A Price estimate (g_xi, G_Xi) against the oracle's sample-by-sample Eq. (11)."""
    rx, RG = ref
    tol = 1e-12 * (1.0 + scalar(np.abs(RG).max()) + scalar(np.abs(rx).max()))
    ctx.close(
        np.concatenate([np.ravel(got[0]), np.ravel(got[1])]),
        np.concatenate([np.ravel(rx), np.ravel(RG)]),
        atol=tol,
        label=f"{what}: Price (Eq. 11) == the oracle's, sample by sample",
    )


def _poisson_gh(Z, X, y):
    Z = np.atleast_2d(Z)
    e = np.exp(Z @ X.T)
    return (y - e) @ X, -np.einsum("sn,ni,nj->sij", e, X, X)


@erratum("E004-4")
def _e004_4(ctx):
    impl = ctx.adapter("ngvi")
    X, y = np.array([[1.0, 0.0]]), np.array([1.0])
    U = np.array([[0.3, -1.2]])
    gx, G = impl.price_logistic(X, y, np.zeros(2), np.eye(2), U)
    _close_price(ctx, (gx, G), OG.price_logistic_reference(np.zeros(2), np.eye(2), X, y, U), "E004-4's instance")
    ev = np.linalg.eigvalsh(G)
    ctx.leq(ev[0], -1e-3, label="one strictly negative eigenvalue")
    ctx.close(ev[-1], 0.0, atol=0.0, label="the other eigenvalue is exactly 0: not negative definite")


def _shape_probes(ctx, impl, X, y, xi, S, Xi, U):
    """Every array argument of a wrong length is refused: each axis whose length the other arguments fix (the
    dimension d, the n data rows shared by X and y, the horizon T), one longer and one shorter
    (:meth:`~refvi.verification.statement.Context.refuses_shapes`)."""
    vec, sq = (0,), (0, 1)
    d = xi.size
    Lam = -0.5 * np.linalg.inv(S)
    for name, a, b in (
        ("natural_from_moment", xi, S),
        ("expectation_from_natural", Lam @ xi, Lam),
        ("natural_from_expectation", xi, Xi),
        ("log_partition", Lam @ xi, Lam),
        ("conjugate", xi, Xi),
    ):
        ctx.refuses_shapes(
            lambda a, b, name=name: getattr(impl, name)(a, b), {"a": a, "b": b}, {"a": vec, "b": sq}, label=name
        )
    ctx.refuses_shapes(
        lambda mu1, S1, mu2, S2: impl.kl(mu1, S1, mu2, S2),
        {"mu1": xi, "S1": S, "mu2": np.zeros(d), "S2": np.eye(d)},
        {"mu1": vec, "S1": sq, "mu2": vec, "S2": sq},
        label="kl",
    )
    data = {"X": X, "y": y}
    data_axes = {"X": (0, 1), "y": vec}
    blr = {**data, "P": np.eye(d), "mp": np.zeros(d)}
    blr_axes = {**data_axes, "P": sq, "mp": vec}
    for name in ("blr_neg_elbo", "blr_grad"):
        ctx.refuses_shapes(
            lambda X, y, P, mp, xi, Xi, name=name: getattr(impl, name)(X, y, 1.0, P, mp, xi, Xi),
            {**blr, "xi": xi, "Xi": Xi},
            {**blr_axes, "xi": vec, "Xi": sq},
            label=name,
        )
    ctx.refuses_shapes(
        lambda X, y, P, mp: impl.blr_run(X, y, 1.0, P, mp, np.zeros((3, 1), dtype=np.int64)),
        blr,
        blr_axes,
        label="blr_run",
    )
    ctx.refuses_shapes(
        lambda X, y, xi, Xi, U: impl.price_logistic(X, y, xi, Xi, U),
        {**data, "xi": xi, "Xi": Xi, "U": U},
        {**data_axes, "xi": vec, "Xi": sq, "U": (1,)},
        label="price_logistic",
    )
    ctx.refuses_shapes(
        lambda X, y, Z: impl.glm_loglik("logistic", X, y, Z),
        {**data, "Z": U},
        {**data_axes, "Z": (1,)},
        label="glm_loglik",
    )
    for name in ("glm_neg_elbo", "glm_grad"):
        ctx.refuses_shapes(
            lambda X, y, xi, Xi, name=name: getattr(impl, name)("logistic", X, y, xi, Xi),
            {**data, "xi": xi, "Xi": Xi},
            {**data_axes, "xi": vec, "Xi": sq},
            label=name,
        )
    T = 3
    ctx.refuses_shapes(
        lambda X, y, gammas, U: impl.glm_ngd("logistic", X, y, gammas, U),
        {**data, "gammas": np.full(T, 0.1), "U": np.tile(U, (T, 1, 1))},
        {**data_axes, "gammas": vec, "U": (0, 2)},
        label="glm_ngd",
    )


@statement("004.claim-bad-input")
def _claim_bad_input(ctx):
    """Inputs outside the model's definition are refused (ValueError / TypeError), never answered: mini-batch row
    indices outside [0, n) (-1 and n, each at the boundary a wrong comparison lets through), fractional, or none, in
    the estimators and in every run (NGD, GLM NGD, the SGD baseline), a likelihood gradient or Hessian of the wrong
    shape, empty batches, a start of another dimension than the problem's, no base samples, a negative step, Poisson
    counts that are not non-negative integers, a covariance that is not positive definite or not symmetric (an update
    that would leave D is 004.remark2's); gamma = 0 is the identity step, returned exactly or refused."""
    impl = ctx.adapter("ngvi")
    rng = ctx.rng("bad-input")
    n, d = 5, 2
    X, y = rng.standard_normal((n, d)), np.where(rng.random(n) < 0.5, -1.0, 1.0)
    xi, S = rng.standard_normal(d), rand_spd(rng, d)
    Xi, U = S + np.outer(xi, xi), rng.standard_normal((2, d))
    _shape_probes(ctx, impl, X, y, xi, S, Xi, U)
    # rows outside [0, n); a fractional row (truncated to row 0 it is a silently wrong batch); no row at all
    for idx in (np.array([0, -1]), np.array([n, 1]), np.array([0.5, 1.0]), np.zeros(0, dtype=np.int64)):
        ctx.refuses(
            lambda: impl.price_logistic(X, y, xi, Xi, U, idx),
            label=f"price_logistic: batch rows {idx.tolist()} with n = {n}",
        )
        ctx.refuses(
            lambda: impl.blr_stochastic_grad(X, y, 1.0, np.eye(d), np.zeros(d), xi, Xi, idx),
            label=f"blr_stochastic_grad: batch rows {idx.tolist()} with n = {n}",
        )
    ctx.refuses(
        lambda: impl.price_logistic(X, y, xi, np.outer(xi, xi), U),
        label="price_logistic: Xi - xi xi^T = 0 (a degenerate q)",
    )
    # a likelihood's gradient (and Hessian) of the wrong shape: one column short broadcasts against d = 2
    wrong = {
        "one column short": lambda Z: Z[:, :-1],
        "one column long": lambda Z: np.hstack([Z, Z[:, :1]]),
        "one row long": lambda Z: np.vstack([Z, Z[:1]]),
        "one row short": lambda Z: Z[:-1],  # U has two rows
    }
    for what, g in wrong.items():
        ctx.refuses(lambda: impl.autodiff(g, xi, Xi, U), label=f"autodiff: grad(Z) {what}")
        ctx.refuses(lambda: impl.price(lambda Z: (g(Z), -np.eye(d)), xi, Xi, U), label=f"price: G {what}")
    for what, H in (("(d+1, d+1)", -np.eye(d + 1)), ("(S+1, d, d)", -np.ones((U.shape[0] + 1, d, d)))):
        ctx.refuses(lambda: impl.price(lambda Z: (Z, H), xi, Xi, U), label=f"price: H of shape {what}")
    # the runs' batches, base samples and steps, the data and the covariances on the boundary of their domains
    P, mp, T = np.eye(d), np.zeros(d), 3
    for batches in ([[0], [1], [-1]], [[0], [n], [1]], [[0.0], [1.5], [1.0]]):
        ctx.refuses(lambda: impl.blr_run(X, y, 1.0, P, mp, np.array(batches)), label=f"blr_run: batch rows {batches}")
        ctx.refuses(
            lambda: impl.glm_ngd(
                "logistic", X, y, np.full(T, 0.1), rng.standard_normal((T, 2, d)), batches=np.array(batches)
            ),
            label=f"glm_ngd: batch rows {batches}",
        )
        ctx.refuses(
            lambda: impl.blr_sgd(X, y, 1.0, P, mp, np.array(batches), np.full(T, 0.01)),
            label=f"blr_sgd: batch rows {batches}",
        )
    ctx.refuses(
        lambda: impl.blr_run(X, y, 1.0, P, mp, np.zeros((T, 0), dtype=np.int64)), label="blr_run: empty batches (m = 0)"
    )
    flat_batches = np.zeros(T, dtype=np.int64)  # (T,), not (T, m)
    ctx.refuses(lambda: impl.blr_run(X, y, 1.0, P, mp, flat_batches), label="blr_run: batches of shape (T,)")
    ctx.refuses(
        lambda: impl.glm_ngd("logistic", X, y, np.full(T, 0.1), rng.standard_normal((T, 2, d)), batches=flat_batches),
        label="glm_ngd: batches of shape (T,)",
    )
    for k in (d - 1, d + 1):  # a start of another dimension than the problem's (a larger one ran as a larger problem)
        start = (np.zeros(k), -0.5 * np.eye(k))
        ctx.refuses(
            lambda: impl.blr_run(X, y, 1.0, P, mp, np.zeros((T, 1), dtype=np.int64), init=start),
            label=f"blr_run: init of dimension {k} for d = {d}",
        )
        ctx.refuses(
            lambda: impl.glm_ngd("logistic", X, y, np.full(T, 0.1), rng.standard_normal((T, 2, d)), init=start),
            label=f"glm_ngd: init of dimension {k} for d = {d}",
        )
        ctx.refuses(
            lambda: impl.glm_ngd_exact("logistic", X, y, T, 0.1, start),
            label=f"glm_ngd_exact: init of dimension {k} for d = {d}",
        )
    ctx.refuses(
        lambda: impl.glm_ngd("logistic", X, y, np.full(T, 0.1), np.zeros((T, 0, d))),
        label="glm_ngd: no base samples per step",
    )
    ctx.refuses(
        lambda: impl.blr_sgd(X, y, 1.0, P, mp, np.zeros((T, 1), dtype=np.int64), np.array([0.01, -0.01, 0.01])),
        label="blr_sgd: a step < 0",
    )
    eta = impl.natural_from_moment(xi, S)
    at = f"mu = {np.round(xi, 4).tolist()}, Sigma = {np.round(S, 4).tolist()}"
    for k, name in enumerate(("lam", "Lam")):  # the start of the gamma = 0 probe, against the oracle's map
        want = OX.natural_from_moments(xi, S)[k]
        ctx.close(eta[k], want, rtol=1e-10, atol=1e-12, label=f"natural_from_moment({at}): {name}")
    ctx.refuses(lambda: impl.ngd_step(eta, (np.ones(d), np.eye(d)), -0.1), label="ngd_step: gamma < 0")
    flat = np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in eta])
    ctx.refuses(
        lambda: np.concatenate([np.ravel(x) for x in impl.ngd_step(eta, (np.ones(d), np.eye(d)), 0.0)]),
        correct=flat,
        rtol=0.0,
        atol=0.0,
        label="ngd_step: gamma = 0 (the identity)",
    )
    for yy, what in (([1.0, 2.0, -1.0, 0.0, 3.0], "a count of -1"), ([1.0, 2.0, 1.5, 0.0, 3.0], "a count of 1.5")):
        ctx.refuses(
            lambda: impl.glm_loglik("poisson", X, np.array(yy), np.zeros((1, d))), label=f"glm_loglik Poisson: {what}"
        )
    asym = S.copy()
    asym[0, 1] += 1e-6 * scalar(np.abs(S).max())
    ctx.refuses(lambda: impl.kl(xi, asym, np.zeros(d), np.eye(d)), label="kl: a covariance asymmetric by 1e-6")
