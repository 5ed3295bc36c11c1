"""Wu & Gardner (seed 004): the Price estimator of Eq. (11) is exact on a Gaussian likelihood sampled antithetically,
through the implementation's ``price``.

For log p(y | z) = -1/2 (z - c)^T A (z - c) + const, grad = -A (z - c) and Hess = -A, so over antithetic base samples
(rows u and -u) the Price estimate (mean g - E[H] xi, E[H] / 2) equals the exact omega-gradient of E_q log p,
(A c, -A / 2), whatever q = N(xi, Xi - xi xi^T).  The Hessian is handed over per row (S, d, d) or averaged (d, d), with
a skew part added (the estimator symmetrizes it), so a missing symmetrization, a dropped 1/2 or a wrong E[H] xi term
shows exactly (the statistical check of 004.claim-price-nsd only sees the logistic path).

Statements: 004.claim-price-exact.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.statement import scalar, statement
from refvi.verification.statements.ngvi_004._common import rand_spd


@statement("004.claim-price-exact")
def claim_price_exact(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        d = int(rng.integers(1, 5))
        A, c = rand_spd(rng, d), rng.standard_normal(d)
        K = rng.standard_normal((d, d))
        K = K - K.T  # a skew part: E[H] is the symmetric part of H
        xi, S = rng.standard_normal(d), rand_spd(rng, d)
        u = rng.standard_normal((int(rng.integers(1, 4)), d))
        U = np.vstack([u, -u])
        per_row = bool(rng.random() < 0.5)

        def grad_hess(Z):
            G = -(Z - c) @ A.T
            H = -(A + K)
            return G, (np.broadcast_to(H, (Z.shape[0], d, d)).copy() if per_row else H)

        gx, GX = impl.price(grad_hess, xi, S + np.outer(xi, xi), U)
        scale = 1.0 + scalar(np.abs(A).max()) * (1.0 + scalar(np.abs(c).max()) + scalar(np.abs(xi).max()))
        what = f"d = {d}, {len(U)} antithetic samples, {'per-row' if per_row else 'averaged'} Hessian"
        ctx.close(np.asarray(gx, dtype=np.float64), A @ c, atol=1e-12 * scale, label=f"{what}: xi-block = A c")
        ctx.close(np.asarray(GX, dtype=np.float64), -0.5 * A, atol=1e-13 * scale, label=f"{what}: Xi-block = -A/2")

    ctx.forall_drawn(check, seeds=[0, 1, 2], max_examples=max(30, ctx.profile.max_examples))
