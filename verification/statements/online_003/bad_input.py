"""Chérief-Abdellatif, Alquier & Khan (seed 003): inputs outside the paper's hypotheses are refused, never answered
with a wrong number.

Each probe sits on the boundary of a hypothesis, where a check written with the wrong comparison lets the input
through: a learning rate eta = 0, a prior scale s above the sigma box, an initial sigma outside [0, sbox], NGVI's
weight beta above 1, a negative sigma in the expected loss, an EWA interval with lo = hi, a log prior that is not one
finite value per node, a one-node 2-D rule, a network of width 0 or with no Monte Carlo draw, a stream with no
feature, and every array argument one entry too long and one too short along each axis the other arguments fix
(:func:`_shape_probes`).  The protocol's convention is a ``ValueError`` or ``TypeError``
(:meth:`~refvi.verification.statement.Context.refuses`).

Statements: 003.claim-bad-input.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.statement import statement


def _shape_probes(ctx, on, X, y):
    """Every array argument of a wrong length is refused: each axis whose length the other arguments fix (the
    rounds T shared by X and y, the dimension d, the network's parameter count), one longer and one shorter
    (:meth:`~refvi.verification.statement.Context.refuses_shapes`)."""
    T, d = X.shape
    rows, both = {"X": (0,), "y": (0,)}, {"X": X, "y": y}
    for method, hyper in (
        ("sva", {"eta": 0.1, "s": 1.0}),
        ("svb", {"schedule": "constant", "eta": 0.1, "s": 1.0, "sbox": 1.0}),
        ("ngvi", {"eta": 0.5, "beta": 0.5, "s": 1.0}),
        ("oga", {"eta": 0.1, "mbox": 2.0}),
    ):
        ctx.refuses_shapes(
            lambda X, y, method=method, hyper=hyper: on.run(method, X, y, **hyper).m, both, rows, label=f"run {method}"
        )
    ctx.refuses_shapes(lambda X, y: on.run_full(X, y, eta=0.1, s=1.0).m, both, rows, label="run_full")
    m, sigma = np.linspace(-0.5, 0.5, d), np.full(d, 0.7)
    ctx.refuses_shapes(
        lambda X, y, m, sigma: on.expected_loss("hinge", X, y, m, sigma),
        {"X": X, "y": y, "m": m, "sigma": sigma},
        {"X": (0, 1), "y": (0,), "m": (0,), "sigma": (0,)},
        label="expected_loss",
    )
    C = np.tril(np.full((d, d), 0.2)) + 0.5 * np.eye(d)
    ctx.refuses_shapes(
        lambda x, m, C: on.expected_loss_full("hinge", x, 1.0, m, C),
        {"x": X[0], "m": m, "C": C},
        {"x": (0,), "m": (0,), "C": (0, 1)},
        label="expected_loss_full",
    )
    ctx.refuses_shapes(
        lambda m, sigma: on.kl_prior(m, sigma, 1.0),
        {"m": m, "sigma": sigma},
        {"m": (0,), "sigma": (0,)},
        label="kl_prior",
    )
    ctx.refuses_shapes(
        lambda m, C, mbar, Cbar: on.kl_gaussian(m, C, mbar, Cbar),
        {"m": m, "C": C, "mbar": 0 * m, "Cbar": np.eye(d)},
        {"m": (0,), "C": (0, 1), "mbar": (0,), "Cbar": (0, 1)},
        label="kl_gaussian",
    )
    # a network of width h = 2 on p = 1 input: theta = (W (2, 1), b (2), v (2), c) has 7 entries
    Xn, yn = X[:, :1], y
    Un = np.random.default_rng(5).standard_normal((T, 2, 7))
    ctx.refuses_shapes(
        lambda X, y, U: on.run_nn("sva", X, y, 2, U, eta=0.05).m,
        {"X": Xn, "y": yn, "U": Un},
        {"X": (0,), "y": (0,), "U": (0, 2)},
        label="run_nn",
    )
    ctx.refuses_shapes(
        lambda theta, X: on.nn_predict(theta, X, 2),
        {"theta": Un[0, 0], "X": Xn},
        {"theta": (0,), "X": (1,)},
        label="nn_predict",
    )


@statement("003.claim-bad-input")
def claim_bad_input(ctx):
    on = ctx.adapter("online")
    rng = np.random.default_rng(20261125)
    T, d = 4, 2
    X, y = rng.standard_normal((T, d)), np.array([1.0, -1.0, 1.0, -1.0])
    _shape_probes(ctx, on, X, y)
    for eta in (0.0, -0.5):
        ctx.refuses(lambda: on.run("sva", X, y, eta=eta, s=1.0).m, label=f"sva: eta = {eta}")
    ctx.refuses(
        lambda: on.run("svb", X, y, schedule="constant", eta=0.1, s=1.5, sbox=1.0).m,
        label="svb: prior scale s = 1.5 above the sigma box sbox = 1",
    )
    for sig0 in ([-0.1, 0.5], [0.5, 1.1]):
        ctx.refuses(
            lambda: on.run("svb", X, y, schedule="constant", eta=0.1, s=1.0, sbox=1.0, sigma0=sig0).m,
            label=f"svb: initial sigma {sig0} outside [0, sbox = 1]",
        )
    ctx.refuses(
        lambda: on.run("svb", X, y, schedule="convex", D=0.0, L=1.0, s=1.0).m, label="svb: Thm 3's diameter D = 0"
    )
    ctx.refuses(lambda: on.run("ngvi", X, y, eta=0.5, beta=1.0 + 1e-9, s=1.0).m, label="ngvi: beta = 1 + 1e-9 > 1")
    ctx.refuses(lambda: on.run("oga", X, y, eta=0.1, mbox=0.0).m, label="oga: a box of half-width 0")
    no_features = X[:, :0]  # d = 0: no parameter to learn
    ctx.refuses(lambda: on.run("sva", no_features, y, eta=0.1, s=1.0).m, label="sva: a stream of d = 0 features")
    ctx.refuses(lambda: on.run_full(no_features, y, eta=0.1, s=1.0).m, label="run_full: a stream of d = 0 features")
    ctx.refuses(
        lambda: on.expected_loss("hinge", X, y, np.zeros(d), np.array([0.5, -1e-12])),
        label="expected_loss: sigma with an entry -1e-12 < 0",
    )
    data = rng.standard_normal(T)
    sq = lambda nodes, z: 0.5 * (nodes - z) ** 2  # noqa: E731
    ctx.refuses(lambda: on.ewa_1d(sq, data, 1.0, 1.0, 1.0).means, label="ewa_1d: an interval with lo = hi")
    sq2 = lambda nodes, z: 0.5 * np.sum((nodes - z) ** 2, axis=1)  # noqa: E731
    ctx.refuses(
        lambda: on.ewa_2d(sq2, rng.standard_normal((T, 2)), 1.0, [-1.0, 1.0], [1.0, 1.0]).means,
        label="ewa_2d: a box with lo = hi in one coordinate",
    )
    ctx.refuses(
        lambda: on.ewa_2d(sq2, rng.standard_normal((T, 2)), 1.0, [-1.0, -1.0], [1.0, 1.0], n_nodes=1).means,
        label="ewa_2d: a one-node rule",
    )
    # a log prior that is not one finite value per node: a column (n, 1), as keepdims=True returns, broadcasts
    # against the node weights into an (n, n) table unless refused (or read as the same uniform prior); NaN has no
    # right answer.  [-2, 2] and [-1, 1]^2 both have measure 4: the uniform log density is -log 4 on either
    uniform_column = lambda nodes: np.full((np.shape(nodes)[0], 1), -np.log(4.0))  # noqa: E731
    uniform_1d = on.ewa_1d(sq, data, 1.0, -2.0, 2.0, n_nodes=64).means
    ctx.refuses(
        lambda: on.ewa_1d(sq, data, 1.0, -2.0, 2.0, log_prior=uniform_column, n_nodes=64).means,
        label="ewa_1d: a log prior returned as an (n, 1) column",
        correct=uniform_1d,
        rtol=1e-9,
        atol=1e-12,
    )
    ctx.refuses(
        lambda: on.ewa_1d(sq, data, 1.0, -2.0, 2.0, log_prior=lambda nodes: nodes * np.nan, n_nodes=64).means,
        label="ewa_1d: a log prior that is NaN at the nodes",
    )
    data_2d = rng.standard_normal((T, 2))
    uniform_2d = on.ewa_2d(sq2, data_2d, 1.0, [-1.0, -1.0], [1.0, 1.0], n_nodes=8).means
    ctx.refuses(
        lambda: on.ewa_2d(sq2, data_2d, 1.0, [-1.0, -1.0], [1.0, 1.0], log_prior=uniform_column, n_nodes=8).means,
        label="ewa_2d: a log prior returned as a (K, 1) column",
        correct=uniform_2d,
        rtol=1e-9,
        atol=1e-12,
    )
    ctx.refuses(
        lambda: (
            on.ewa_2d(
                sq2, data_2d, 1.0, [-1.0, -1.0], [1.0, 1.0], log_prior=lambda Z: Z[:, 0] * np.nan, n_nodes=8
            ).means
        ),
        label="ewa_2d: a log prior that is NaN at the nodes",
    )
    Xn, yn = rng.standard_normal((T, 1)), rng.standard_normal(T)
    ctx.refuses(
        lambda: on.run_nn("sva", Xn, yn, 0, rng.standard_normal((T, 2, 1)), eta=0.05).m,
        label="run_nn: hidden width h = 0",
    )
    ctx.refuses(
        lambda: on.run_nn("sva", Xn, yn, 2, np.zeros((T, 0, 7)), eta=0.05).m,
        label="run_nn: no Monte Carlo draw per round",
    )
    ctx.refuses(
        lambda: on.run_nn("ngvi", Xn, yn, 2, rng.standard_normal((T, 2, 7)), eta=0.5, beta=1.5).m,
        label="run_nn: NGVI weight beta = 1.5 > 1",
    )
