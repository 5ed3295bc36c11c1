"""Domke, Garrigos & Gower, *Provable convergence guarantees for black-box variational inference* (seed 000): Prox-SGD
and Proj-SGD replayed exactly (Defs 5, 8).

Statements: 000.def5, 000.def8.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from refvi.verification.oracles import sgd_reference
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000._rates import (
    Instance,
    _few,
    gaussian,
    linear,
    logistic,
    run,
    start_point,
)


# ------------------------------------------------------------------------------------------- Defs. 5 and 8
def _replay(ctx, method, args):
    """T steps of the implementation's optimizer on fixed base samples against the plain-NumPy reference loop
    (oracles.sgd_reference, written from Defs. 5 / 8 with numpy only), iterate and average.  Data sizes straddle the
    blocking of fused kernels (N = 5 < 16, N = 16, N = 37 = 2 blocks + a remainder) and the noise and prior scales
    are not 1, so 1/s and 1/s^2 differ; an optional 8th flag hands the same density over as plain callables, which
    an implementation runs on its generic loop rather than a fused kernel.  For Proj-SGD one seed in three runs the STL
    estimator (seed 000 §5, an estimator of grad f like the entropy one) through the same loops; for Prox-SGD one in
    four the score estimator (Eq. 4, an estimator of grad l; refvi runs it on its generic, step-by-step path).  The
    average's weights reach the implementation unnormalised."""
    kind, d, S, seed, clip_active, N, (sn, sp) = args[:7]
    as_callable = len(args) > 7 and args[7]
    rng = np.random.default_rng(seed)
    model = {
        "gaussian": lambda: gaussian(rng, d, kappa=3.0),
        "linear": lambda: linear(rng, N, d),
        "logistic": lambda: logistic(rng, N, d),
    }[kind]()
    if kind == "linear":
        model["noise_scale"], model["prior_scale"] = sn, sp
    elif kind == "logistic":
        model["prior_scale"] = sp
    structure = "tril" if method == "prox" else "sym"
    inst = Instance(model, structure)
    if as_callable:  # the same density as plain callables: an implementation's generic (non-fused) loop
        inst.target = specs.from_callables(
            inst.target.logp, inst.target.grad_logp, inst.d, smoothness=inst.M, strong_convexity=inst.mu
        )
    T = 3
    m0, C0 = start_point(inst, rng, structure)
    if clip_active:  # start below the floor 1/sqrt(M): the first projection (or prox) must act
        C0 = np.eye(d) * (0.2 / math.sqrt(inst.M)) if structure == "sym" else np.diag(rng.uniform(0.01, 0.05, d))
    gammas = rng.uniform(0.2, 1.0, T) / (2 * inst.M)
    U = rng.standard_normal((T, S, d))
    weights = rng.dirichlet(np.ones(T + 1))
    if method == "prox":  # one seed in four: the score estimator (Eq. 4), which no fused kernel has
        estimator = "score" if seed % 4 == 1 else "energy"
    else:
        estimator = "stl" if seed % 3 == 0 else "entropy"
    # the implementation gets the weights unnormalised (summing to 1 + seed mod 7): it normalises them itself
    got = run(ctx, method, inst, m0, C0, gammas, U, weights * (1.0 + seed % 7), estimator)
    ref = sgd_reference.sgd(
        method, kind, sgd_reference.model_params(model), m0, C0, U, gammas, estimator, structure, inst.M, weights
    )
    scale = 1.0 + max(scalar(np.max(np.abs(x))) for x in ref)
    # two float64 evaluations of the same three updates (BLAS vs loops, eigh vs eigh): rounding only
    for name, a, b in zip(("m_T", "C_T", "m_avg", "C_avg"), got, ref, strict=True):
        ctx.close(
            a,
            b,
            atol=1e-10 * scale,
            label=f"{method}-SGD {kind}{' (callable)' if as_callable else ''} "
            f"d={d} S={S} {estimator}: {name} == reference",
        )
    if method == "proj":
        ctx.geq(
            np.linalg.eigvalsh(got[1])[0],
            1.0 / math.sqrt(inst.M),
            rtol=1e-10,
            label="Proj-SGD iterate lies in W_M (lambda_min >= 1/sqrt(M))",
        )
        # in V = S^d up to the rounding of Q diag(lambda) Q^T (a few ulp of the largest entry)
        ctx.close(got[1], got[1].T, atol=1e-14 * scale, label="Proj-SGD iterate is symmetric")
    else:
        ctx.close(got[1], np.tril(got[1]), atol=0.0, label="Prox-SGD iterate is lower triangular")
        ctx.geq(np.min(np.diag(got[1])), 0.0, label="Prox-SGD iterate has a positive diagonal")


_SCALES = st.sampled_from(((1.0, 1.0), (0.5, 2.0), (2.5, 0.7)))


_REPLAY = st.tuples(
    st.sampled_from(("gaussian", "linear", "logistic")),
    st.integers(1, 4),
    st.sampled_from((1, 4)),
    st.integers(0, 2**31 - 1),
    st.booleans(),
    st.sampled_from((5, 16, 37)),
    _SCALES,
)


#: the fixed instances of both replays, a row each: the method, then the arguments _REPLAY draws (an 8th True hands
#: the density over as plain callables); each method runs its rows in the order they stand
_FIXED = [
    ("prox", "logistic", 2, 1, 0, True, 37, (1.0, 2.0)),
    ("proj", "logistic", 2, 1, 0, True, 37, (1.0, 2.0)),
    ("prox", "logistic", 3, 1, 3, False, 16, (1.0, 0.7)),
    ("proj", "gaussian", 3, 4, 1, True, 5, (1.0, 1.0)),
    ("prox", "linear", 3, 4, 1, False, 5, (0.5, 2.0)),
    ("proj", "linear", 2, 1, 2, False, 16, (0.5, 2.0)),
    ("prox", "linear", 2, 1, 2, True, 37, (2.5, 0.7)),
    ("proj", "linear", 3, 1, 5, True, 37, (2.5, 0.7)),
    ("prox", "gaussian", 4, 4, 4, False, 5, (1.0, 1.0)),
    ("proj", "logistic", 2, 4, 6, True, 5, (1.0, 2.0), True),
    ("prox", "logistic", 2, 4, 6, True, 5, (1.0, 2.0), True),
    ("proj", "gaussian", 3, 1, 7, False, 5, (1.0, 1.0), True),
    ("prox", "linear", 3, 1, 7, False, 16, (2.5, 0.7), True),
]


def _replays(ctx, method):
    """Prox-SGD (``method="prox"``) or Proj-SGD (``"proj"``) replayed on the fixed instances, then on drawn ones."""
    ctx.forall(
        _REPLAY,
        lambda args: _replay(ctx, method, args),
        fixed=[row[1:] for row in _FIXED if row[0] == method],
        max_examples=_few(ctx, 6),
    )


@statement("000.def5")
def def5(ctx):
    _replays(ctx, "prox")


@statement("000.def8")
def def8(ctx):
    _replays(ctx, "proj")
