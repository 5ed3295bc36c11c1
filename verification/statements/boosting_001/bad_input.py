"""Locatello et al. (seed 001): inputs outside the paper's hypotheses are refused, never answered with a wrong number.

Assumption A2 asks for atom densities bounded below on the box; an atom of scale 0.02 on [-1, 1] has a density that
underflows to 0 in float64 far from its mean (e^-5000), so log q is -inf there in a direct computation.  The right
f and LMO scores are still finite (log q is about -5000 there, a careful implementation can work in log space), so
the implementation either refuses the instance or returns them; the oracle evaluates them with log q from scipy's
truncated-normal log density on the instance's quadrature rule.  The other probes sit on the boundary of a
hypothesis: delta = 0 and delta > 1 for the approximate LMO of Eq. (9), weights off the simplex, atom indices out of
range, L = 0 for Variant 0, a single draw for Algorithm 2's leave-one-out baseline, iteration counts of -1 (and 0,
which is allowed), a starting atom out of range, sigma_min > sigma_max, a box with hi = lo, a quadrature of order 0
(order 1, one panel, is allowed).  Every array argument is also probed one entry too long and one too short along
each axis the other arguments fix (:func:`_shape_probes`).

Statements: 001.claim-bad-input.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import boosting as ob
from refvi.verification.protocol.boosting import BoostingInstance, BoostingTarget
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.boosting_001._common import i1, replay_fw


def _underflow_instance():
    """Atoms TN(-1 | 0 | 1, 0.02^2; [-1, 1]), target N(0, 0.5^2); q = the atom at -1 (alpha = e_0)."""
    return BoostingInstance.make(
        -1.0, 1.0, [-1.0, 0.0, 1.0], 0.02, BoostingTarget.mixture([1.0], [0.0], [0.5])
    ), np.array([1.0, 0.0, 0.0])


def _log_space_oracle(inst, alpha):
    """(f, scores) with log q from scipy's log density (finite where q underflows) on the instance's rule."""
    quad = ob.QuadratureProblem(inst)
    k = int(np.argmax(alpha))
    lq = ob.tn_logpdf(quad.nodes, inst.means[k], inst.scales[k], inst.lo, inst.hi)
    g = lq - quad.logp
    f = scalar(np.sum(quad.w * np.exp(lq) * g))
    return f, quad.table @ (quad.w * g)


def _shape_probes(ctx, b):
    """Every array argument of a wrong length is refused: each axis whose length the other arguments fix (the atom
    count K of the weights, the dimension d of the box, the draws and their values), one longer and one shorter
    (:meth:`~refvi.verification.statement.Context.refuses_shapes`).  The weights end in a 0, so the longer and the
    shorter vector still sum to one: only the length is wrong."""
    lo, hi = np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    tgt = BoostingTarget.mixture([1.0], [[0.1, -0.2]], [0.6])
    inst = BoostingInstance.make(lo, hi, [[-0.5, 0.0], [0.5, 0.2], [0.0, -0.4]], 0.4, tgt, quadrature=(4, 2))
    alpha = np.array([0.3, 0.7, 0.0])
    Z = np.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]])
    w = {"alpha": alpha}
    for name, call in (
        ("objective", lambda alpha: b.objective(inst, alpha)),
        ("scores", lambda alpha: b.scores(inst, alpha)),
        ("gap", lambda alpha: b.gap(inst, alpha)),
        ("mixture_moments", lambda alpha: b.mixture_moments(inst, alpha)),
        ("mixture_norm_sq", lambda alpha: b.mixture_norm_sq(inst, alpha)),
        ("line_search", lambda alpha: b.line_search(inst, alpha, 2)),
        ("norm_corrective_weights", lambda alpha: b.norm_corrective_weights(inst, alpha, [0, 1], 10.0)),
        ("fully_corrective_weights", lambda alpha: b.fully_corrective_weights(inst, alpha, [0, 1])),
    ):
        ctx.refuses_shapes(call, w, {"alpha": (0,)}, label=name)
    ctx.refuses_shapes(
        lambda alpha, Z: b.mixture_logpdf(inst, alpha, Z),
        {**w, "Z": Z},
        {"alpha": (0,), "Z": (1,)},
        label="mixture_logpdf",
    )
    ctx.refuses_shapes(
        lambda alpha, mu, Z: b.stochastic_lmo_step(inst, alpha, mu, Z),
        {**w, "mu": np.array([0.1, 0.1]), "Z": Z},
        {"alpha": (0,), "mu": (0,), "Z": (1,)},
        label="stochastic_lmo_step",
    )
    ctx.refuses_shapes(
        lambda lo, hi, mu, Z, values: b.score_gradient(lo, hi, mu, 0.4, Z, values),
        {"lo": lo, "hi": hi, "mu": np.array([0.1, 0.1]), "Z": Z, "values": np.array([0.5, -1.0, 2.0])},
        {"lo": (0,), "hi": (0,), "mu": (0,), "Z": (0, 1), "values": (0,)},
        label="score_gradient",
    )
    box = {"lo": lo, "hi": hi}
    ctx.refuses_shapes(lambda lo, hi: b.grid_means(lo, hi, 0.5), box, {"lo": (0,), "hi": (0,)}, label="grid_means")
    ctx.refuses_shapes(
        lambda lo, hi: b.family_constants(lo, hi, 0.2, 0.5), box, {"lo": (0,), "hi": (0,)}, label="family_constants"
    )
    X, y = np.array([[1.0, 0.5], [-0.2, 1.0], [0.3, -1.0]]), np.array([1.0, -1.0, 1.0])
    ctx.refuses_shapes(
        lambda X, y, draws: b.mc_predictive(X, y, draws),
        {"X": X, "y": y, "draws": Z},
        {"X": (0, 1), "y": (0,), "draws": (1,)},
        label="mc_predictive",
    )


@statement("001.claim-bad-input")
def claim_bad_input(ctx):
    b = ctx.adapter("boosting")
    inst, alpha = _underflow_instance()
    _shape_probes(ctx, b)
    f, scores = _log_space_oracle(inst, alpha)
    ctx.true(np.min(scores) < -1e3, label="oracle: log q reaches ~ -5000 on the box (the density underflows)")
    for name, call, correct, atol in (
        ("objective", lambda: b.objective(inst, alpha), f, 1e-10),
        ("scores", lambda: b.scores(inst, alpha), scores, 1e-8),
    ):
        label = f"{name}: an atom whose density underflows to 0 on the box (A2)"
        ctx.refuses(call, correct=correct, rtol=1e-8, atol=atol, label=label)
    grid, _, _ = i1(0.5)
    K = grid.K
    uniform = np.full(K, 1.0 / K)
    for delta in (0.0, 1.5):
        ctx.refuses(
            lambda: b.frank_wolfe(grid, 3, "fixed", lmo="adversarial", delta=delta).f,
            label=f"frank_wolfe: approximate LMO with delta = {delta} (Eq. 9 needs 0 < delta <= 1)",
        )
    short = np.zeros(K)
    short[:2] = (0.5, 0.2)
    ctx.refuses(lambda: b.objective(grid, short), label="objective: weights summing to 0.7 (q not a density)")
    negative = np.zeros(K)
    negative[:2] = (1.5, -0.5)
    ctx.refuses(lambda: b.mixture_logpdf(grid, negative, np.zeros((2, 1))), label="mixture_logpdf: a weight < 0")
    ctx.refuses(lambda: b.line_search(grid, uniform, K), label="line_search: atom index K (out of range)")
    ctx.refuses(lambda: b.fixed_step_weights([0, -1], K), label="fixed_step_weights: atom index -1")
    ctx.refuses(lambda: b.fixed_step_weights([0, K], K), label="fixed_step_weights: atom index K")
    ctx.refuses(lambda: b.corrective(grid, 3, "norm", L=0.0).f, label="corrective Variant 0: L = 0")
    ctx.refuses(
        lambda: b.stochastic_lmo(grid, uniform, n_samples=1),
        label="stochastic_lmo: one draw (the leave-one-out baseline needs two)",
    )

    # iteration counts, starting atoms, quadrature, boxes and scale ranges on the boundary of their domains
    ctx.refuses(lambda: b.frank_wolfe(grid, -1).f, label="frank_wolfe: n_iter = -1")
    zero = b.frank_wolfe(grid, 0, init=0, keep_weights=True)
    replay_fw(
        ctx,
        ob.QuadratureProblem(grid),
        zero,
        "frank_wolfe: n_iter = 0 from atom 0 (allowed: q^0 alone)",
        step="fixed",
        init=0,
    )
    for k in (-1, K):
        ctx.refuses(lambda: b.frank_wolfe(grid, 2, init=k).f, label=f"frank_wolfe: starting atom index {k}")
    ctx.refuses(lambda: b.corrective(grid, -1, "full").f, label="corrective: n_iter = -1")
    ctx.refuses(lambda: b.stochastic_lmo(grid, uniform, n_steps=-1), label="stochastic_lmo: n_steps = -1")
    ctx.refuses(lambda: b.family_constants([-1.0], [1.0], 0.3, 0.2), label="family_constants: sigma_min > sigma_max")
    for stride in (0.0, -0.25):
        ctx.refuses(lambda: b.grid_means([-1.0], [1.0], stride), label=f"grid_means: stride {stride}")
    tgt = BoostingTarget.mixture([1.0], [0.0], [0.5])
    ctx.refuses(
        lambda: b.objective(BoostingInstance.make(0.5, 0.5, [0.5], 0.3, tgt), np.ones(1)),
        label="a box with hi = lo (A has no interior)",
    )
    for rule, what in (((0, 20), "order 0"), ((2.5, 20), "order 2.5"), ((20, 0), "0 panels")):
        ctx.refuses(
            lambda: b.objective(BoostingInstance.make(-1.0, 1.0, [0.0], 0.3, tgt, quadrature=rule), np.ones(1)),
            label=f"a quadrature rule of {what}",
        )
    one = BoostingInstance.make(-1.0, 1.0, [-0.5, 0.5], 0.3, tgt, quadrature=(1, 1))  # the midpoint rule: allowed
    ctx.close(
        scalar(b.objective(one, np.array([0.3, 0.7]))),
        ob.QuadratureProblem(one).f(np.array([0.3, 0.7])),
        rtol=1e-10,
        atol=1e-12,
        label="objective on the one-node rule (order 1, one panel) = the oracle's",
    )
