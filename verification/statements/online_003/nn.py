"""Chérief-Abdellatif, Alquier & Khan, *A generalization bound for online variational inference* (seed 003): the ReLU-
network experiment.

Statements: 003.claim-nn-replay, 003.claim-nn-predict.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import online_nn_oracle as onn
from refvi.verification.statement import scalar, statement

# ------------------------------------------------------------------------------------------------------------------
# the ReLU-network experiment (non-convex: no bound applies; the iterations are replayed exactly)
# ------------------------------------------------------------------------------------------------------------------

NN_HYPER = {
    "sva": dict(eta=0.05),
    "svb": dict(K=0.05),
    "ngvi": dict(eta=0.5, beta=0.3),
    "oga": dict(eta=0.05),
    "ogael": dict(eta=0.05),
}


@statement("003.claim-nn-replay")
def claim_nn_replay(ctx):
    on = ctx.adapter("online")

    def check(rng):
        T, p, h, n = int(rng.integers(2, 9)), int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 4))
        d = h * (p + 2) + 1
        X, y = rng.standard_normal((T, p)), rng.standard_normal(T)
        U = rng.standard_normal((T, n, d))
        m0 = 0.3 * rng.standard_normal(d)
        s = scalar(rng.uniform(0.3, 1.0))
        # boxes that bind: |m| <= 0.4 (m0 starts partly outside and is clipped), sigma <= 1.2 s, or sigma <= s (the
        # prior scale on the box's edge, which the hypotheses allow) for an even number of rounds
        box = dict(s=s, mbox=0.4, sbox=(1.0 if T % 2 == 0 else 1.2) * s, m0=m0)
        for method, hyper in NN_HYPER.items():
            res = on.run_nn(method, X, y, h, U, **hyper, **box)
            losses, M, S = onn.reference_run(method, X, y, h, U, **hyper, **box)
            # the same arithmetic in another order: rounding ~1e-15 relative, amplified over <= 8 rounds
            ctx.close(np.asarray(res.losses), losses, rtol=1e-9, atol=1e-12, label=f"{method}: losses at the mean")
            ctx.close(np.asarray(res.M), M, rtol=1e-9, atol=1e-12, label=f"{method}: means m_t")
            if S is not None:
                ctx.close(np.asarray(res.S), S, rtol=1e-9, atol=1e-12, label=f"{method}: scales sigma_t")

    ctx.forall_drawn(check, seeds=[0, 1], max_examples=(6 if ctx.profile.name == "ci" else 80))


@statement("003.claim-nn-predict")
def claim_nn_predict(ctx):
    on = ctx.adapter("online")

    def check(rng):
        n, p, h = int(rng.integers(1, 9)), int(rng.integers(1, 4)), int(rng.integers(1, 5))
        theta, X = rng.standard_normal(h * (p + 2) + 1), rng.standard_normal((n, p))
        W, b, v, c = onn.unpack(theta, p, h)
        ctx.close(
            np.asarray(on.nn_predict(theta, X, h), dtype=float),
            np.maximum(X @ W.T + b, 0.0) @ v + c,
            rtol=1e-12,
            atol=1e-12,
            label=f"n = {n}, p = {p}, h = {h}: f_theta(x)",
        )

    ctx.forall_drawn(check, seeds=[0, 1], max_examples=max(10, ctx.profile.max_examples // 3))
