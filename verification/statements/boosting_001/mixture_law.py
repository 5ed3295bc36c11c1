"""Locatello, Khanna, Ghosh & Ratsch, *Boosting VI: an optimization perspective* (seed 001): the iterate
q = sum_k alpha_k s_k (Eq. 4) as a distribution a user evaluates and samples (§4.2's ancestral sampling).

Statement: 001.claim-mixture.  The oracle side is scipy.stats.truncnorm and QUADPACK, one coordinate at a time (the
atoms are products of 1-D truncated normals): the log density is the log of the weighted sum of truncnorm
densities; the mean and variance of each marginal are adaptive quadratures of its density; ||q||^2 is alpha^T G
alpha with the closed-form Gram matrix of :func:`..oracles.boosting.tn_gram`; the draws are tested against the
oracle's CDF at fixed thresholds, marginal and joint, in four consecutive blocks (so an unshuffled or
component-sorted output fails too).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from scipy import integrate, stats

from refvi.verification.oracles import boosting as ob
from refvi.verification.protocol.boosting import BoostingInstance, BoostingTarget
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.boosting_001._common import n_examples

#: draws per block, blocks: the indicator tests detect a CDF error of ~0.05 with probability >= 80% at false-alarm
#: rate 1e-6 (the power the certificate records)
BLOCK, BLOCKS = 4000, 4


@st.composite
def mixture_instances(draw):
    """A box in d = 1 or 2, K <= 4 atoms TN(m_k, s_k^2 I; box) with means inside it and scales from narrow (0.1)
    to wider than the box (truncation matters), and weights on the simplex with some exact zeros."""
    d = draw(st.integers(1, 2))
    K = draw(st.integers(1, 4))
    unit = st.floats(0.0, 1.0)
    lo = np.array([draw(st.floats(-2.0, 0.0)) for _ in range(d)])
    hi = lo + np.array([draw(st.floats(0.5, 3.0)) for _ in range(d)])
    means = lo + (hi - lo) * np.array([[draw(unit) for _ in range(d)] for _ in range(K)])
    scales = np.array([draw(st.floats(0.1, 2.0)) for _ in range(K)])
    w = np.array([draw(st.sampled_from([0.0, 0.2, 1.0, 3.0])) for _ in range(K)])
    w[draw(st.integers(0, K - 1))] += 1.0
    return (
        BoostingInstance.make(lo, hi, means, scales, BoostingTarget.mixture([1.0], [lo], [1.0])),
        w / w.sum(),
        draw(st.integers(0, 2**31 - 1)),
    )


def _marginal(inst, alpha, j):
    """The oracle's coordinate-j marginal of q: its scipy truncnorm components and their weights."""
    s = inst.scales
    comps = [
        stats.truncnorm((inst.lo[j] - m) / sk, (inst.hi[j] - m) / sk, loc=m, scale=sk)
        for m, sk in zip(inst.means[:, j], s, strict=True)
    ]
    return [(a, c) for a, c in zip(alpha, comps, strict=True) if a > 0]


def _oracle_moments(inst, alpha):
    """Per coordinate: mean and variance of the marginal density by adaptive quadrature over its interval."""
    means, variances = [], []
    for j in range(inst.d):
        parts = _marginal(inst, alpha, j)
        pdf = lambda z, parts=parts: sum(a * c.pdf(z) for a, c in parts)  # noqa: E731
        pts = sorted({scalar(m) for m in inst.means[:, j] if inst.lo[j] < m < inst.hi[j]})
        quad = lambda f, j=j, pts=pts: integrate.quad(
            f,
            inst.lo[j],
            inst.hi[j],
            points=pts or None,
            epsabs=1e-13,
            epsrel=1e-12,
            limit=200,
        )[0]
        mu = quad(lambda z: z * pdf(z))
        means.append(mu)
        variances.append(quad(lambda z: (z - mu) ** 2 * pdf(z)))
    return np.array(means), np.array(variances)


def _oracle_logpdf(inst, alpha, Z):
    dens = sum(
        a * np.exp(ob.tn_logpdf(Z, inst.means[k], inst.scales[k], inst.lo, inst.hi))
        for k, a in enumerate(alpha)
        if a > 0
    )
    with np.errstate(divide="ignore"):
        return np.log(dens)


def _events(inst, alpha):
    """Indicator events of a draw with their oracle probabilities: z_j <= t for 7 interior thresholds t of each
    coordinate, and in d = 2 the joint quadrant events z_1 <= t_1, z_2 <= t_2 on a 3 x 3 grid (a sampler that
    picks the component per coordinate has the right marginals and fails these); events of probability within 0.02
    of 0 or 1 are left out."""
    grids = [inst.lo[j] + (inst.hi[j] - inst.lo[j]) * np.linspace(0.125, 0.875, 7) for j in range(inst.d)]
    cdf = [[lambda t, c=c: c.cdf(t) for _, c in _marginal(inst, alpha, j)] for j in range(inst.d)]
    weights = alpha[alpha > 0]
    events, prob_list = [], []
    for j in range(inst.d):
        for t in grids[j]:
            events.append(lambda Z, j=j, t=t: Z[:, j] <= t)
            prob_list.append(scalar(sum(a * F(t) for a, F in zip(weights, cdf[j], strict=True))))
    if inst.d == 2:
        for t1 in grids[0][1::3]:
            for t2 in grids[1][1::3]:
                events.append(lambda Z, t1=t1, t2=t2: (Z[:, 0] <= t1) & (Z[:, 1] <= t2))
                prob_list.append(
                    scalar(sum(a * F1(t1) * F2(t2) for a, F1, F2 in zip(weights, cdf[0], cdf[1], strict=True)))
                )
    probs = np.array(prob_list)
    keep = np.minimum(probs, 1.0 - probs) >= 0.02  # >= 80 expected hits a block: the z-test's CLT holds
    return [e for e, k in zip(events, keep, strict=True) if k], probs[keep]


@statement("001.claim-mixture")
def claim_mixture(ctx):
    b = ctx.adapter("boosting")

    def check(case):
        inst, alpha, seed = case
        rng = np.random.default_rng(seed)
        # log density: inside the box (random points and the atoms' means) and outside it (-inf)
        Z = np.vstack(
            [
                inst.lo + (inst.hi - inst.lo) * rng.random((6, inst.d)),
                inst.means,
                inst.hi + 0.5 + rng.random((1, inst.d)),
                inst.lo - 0.5 - rng.random((1, inst.d)),
            ]
        )
        got = np.asarray(b.mixture_logpdf(inst, alpha, Z), dtype=float)
        want = _oracle_logpdf(inst, alpha, Z)
        ctx.true(bool(np.all(np.isneginf(got[-2:]))), label="log q = -inf outside the box")
        # truncnorm log densities: ~1e-13 relative; 1e-9 absolute on values of order 1-10
        ctx.close(got[:-2], want[:-2], rtol=1e-10, atol=1e-9, label="log q(z) = log sum_k alpha_k s_k(z) (Eq. 4)")
        mean, var = (np.asarray(x, dtype=float) for x in b.mixture_moments(inst, alpha))
        om, ov = _oracle_moments(inst, alpha)
        # QUADPACK to 1e-12 relative on smooth integrands
        ctx.close(mean, om, rtol=1e-8, atol=1e-10, label="mean of q per coordinate")
        ctx.close(var, ov, rtol=1e-8, atol=1e-10, label="variance of q per coordinate (law of total variance)")
        # A2: the atoms' density bounds, and eps <= q <= M on the box
        eps, M = (scalar(v) for v in b.density_bounds(inst))
        ctx.close(
            [eps, M],
            ob.tn_density_bounds(inst.means, inst.scales, inst.lo, inst.hi),
            rtol=1e-10,
            label="(eps, M) = min and max of the atom densities over A (A2)",
        )
        ctx.true(
            bool(np.all((want[:-2] >= np.log(eps) - 1e-9) & (want[:-2] <= np.log(M) + 1e-9))),
            label="eps <= q(z) <= M on A",
        )
        G = ob.tn_gram(inst.means, inst.scales, inst.lo, inst.hi)
        ctx.close(
            scalar(b.mixture_norm_sq(inst, alpha)),
            scalar(alpha @ G @ alpha),
            rtol=1e-10,
            label="||q||^2 = alpha^T G alpha",
        )
        # ancestral samples: in the box, reproducible, and distributed as q in every block of the output
        draws = np.asarray(b.mixture_sample(inst, alpha, BLOCK * BLOCKS, seed), dtype=float)
        ctx.true(draws.shape == (BLOCK * BLOCKS, inst.d), label="n draws of dimension d")
        ctx.true(bool(np.all((draws >= inst.lo) & (draws <= inst.hi))), label="every draw in the box")
        again = np.asarray(b.mixture_sample(inst, alpha, BLOCK * BLOCKS, seed), dtype=float)
        ctx.true(bool(np.array_equal(draws, again)), label="same seed, same draws")
        other = np.asarray(b.mixture_sample(inst, alpha, BLOCK, seed + 1), dtype=float)
        ctx.true(
            np.intersect1d(draws[:, 0], other[:, 0]).size == 0,
            label="another seed: no draw repeated (a continuous law; a fixed inner seed repeats them)",
        )
        events, probs = _events(inst, alpha)
        for i in range(BLOCKS if events else 0):
            block = draws[i * BLOCK : (i + 1) * BLOCK]
            hits = np.column_stack([e(block) for e in events]).astype(float)
            ctx.mean_close(
                hits,
                probs,
                alpha=1e-6 / BLOCKS,
                label=f"draws {i * BLOCK}..{(i + 1) * BLOCK - 1}: P(event) = the oracle's CDF",
            )

    fixed = [
        (
            BoostingInstance.make(
                [-1.0, -1.0],
                [1.0, 1.0],
                [[-0.5, -0.5], [0.6, 0.4], [0.0, 0.9]],
                [0.3, 0.5, 1.5],
                BoostingTarget.mixture([1.0], [[0.0, 0.0]], [1.0]),
            ),
            np.array([0.5, 0.3, 0.2]),
            1,
        ),
        (
            BoostingInstance.make(
                -1.0, 1.0, [-0.8, 0.1, 0.7], [0.2, 2.0, 0.4], BoostingTarget.mixture([1.0], [0.0], [1.0])
            ),
            np.array([0.25, 0.0, 0.75]),
            2,
        ),
    ]
    ctx.forall(mixture_instances(), check, fixed=fixed, max_examples=n_examples(ctx, 6))
