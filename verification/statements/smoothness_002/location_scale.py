"""Domke, *Provable smoothness guarantees for black-box variational inference* (seed 002): the location-scale family
q = LocScale(m, C, s), z = C u + m with u ~ s (§3.1, Eq. 1), as a distribution: its log density, entropy, moments
and samples, through the implementation's ``locscale_*`` methods.

Oracles: the base log densities of ``scipy.stats`` (:func:`._bases.oracle_log_density`; for the Gaussian base also
``scipy.stats.multivariate_normal`` with covariance C C^T, which knows nothing of the change of variables), the
closed-form base entropies and moments of :mod:`._bases`, and the base's characteristic function
(:func:`._bases.oracle_charfun`) for the draws: mapped back to u = C^{-1}(z - m), the empirical characteristic
function at a few frequencies must match the oracle's, and for a Student-t base in d >= 2 so must the probability
that two coordinates are both large, which tells the elliptical law from the product one where the characteristic
function at moderate frequencies barely does (an elliptical Student-t sampled as a product one has the right
marginals).

Statement: 002.claim-location-scale.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, stats

from refvi.verification.protocol.bases import affine
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.smoothness_002._bases import (
    oracle_charfun,
    oracle_entropy,
    oracle_log_density,
    oracle_moments,
    random_law,
)
from refvi.verification.strategies import RNG

#: draws per instance: the characteristic-function tests detect an error of ~0.07 in E cos(k^T u) or E sin(k^T u)
#: with probability >= 80% at false-alarm rate 1e-6 (the power the certificate records)
DRAWS = 8000


def _instance(rng):
    """(base, m, C, Z, K, seed): a law of :func:`._bases.random_law`, half the time behind an affine map, in d = 1..3;
    a full invertible scale C (singular values in [0.3, 3]), points Z around m, six frequencies with |k| <= 2."""
    d = int(rng.integers(1, 4))
    base = random_law(rng)
    if rng.random() < 0.5:
        A = np.tril(rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(0.5, 2.0, d))
        base = affine(base, rng.standard_normal(d), A)
    Q1, _ = np.linalg.qr(rng.standard_normal((d, d)))
    Q2, _ = np.linalg.qr(rng.standard_normal((d, d)))
    C = (Q1 * np.exp(rng.uniform(np.log(0.3), np.log(3.0), d))) @ Q2
    m = rng.standard_normal(d)
    Z = m + rng.standard_normal((5, d)) * 1.5
    K = rng.standard_normal((6, d))
    norm = np.linalg.norm(K, axis=1, keepdims=True)
    K = np.where(norm > 1e-3, K / np.maximum(norm, 1e-3), 1.0 / np.sqrt(d)) * rng.uniform(0.3, 2.0, (6, 1))
    return base, m, C, Z, K, int(rng.integers(0, 2**31 - 1))


def _fixed():
    """Every law in d = 2 with one non-triangular C (and the two-point law behind an affine map)."""
    from refvi.verification.protocol.bases import BaseSpec

    C = np.array([[1.2, 0.7], [-0.4, 0.9]])
    m, Z = np.array([0.5, -1.0]), np.array([[0.0, 0.0], [0.5, -1.0], [2.0, 1.0], [-1.5, -2.5]])
    K = np.array([[0.5, 0.0], [0.0, 1.2], [0.8, -0.8], [-1.5, 0.4]])
    laws = [BaseSpec(k) for k in ("gaussian", "uniform", "laplace", "exponential", "rademacher")] + [
        affine(BaseSpec("two_point", p=0.2), [1.0, -0.5], [[1.5, 0.0], [-0.8, 0.5]]),
        BaseSpec("student_t", nu=5.0),
        BaseSpec("student_t", nu=3.5, product=True),
    ]
    return [(b, m, C, Z, K, 7 + i) for i, b in enumerate(laws)]


def _student_t_events(base, U):
    """For a Student-t base (possibly behind an affine map) in d >= 2: the events min(|u_1|, |u_2|) > t_q, t_q the
    threshold each coordinate exceeds in absolute value with probability q = 0.6, 0.4, 0.25 (the marginal, a scaled
    Student-t, is the same for both laws), with their oracle probabilities, which tell the elliptical law (one
    chi^2_nu draw W scales the whole vector: E_W[(2 Phi(-t sqrt(W / (nu - 2))))^2], by quadrature) from the product
    one (independent coordinates: q^2); None for other laws."""
    if base.kind == "affine":
        base, U = base.inner, np.linalg.solve(base.scale, (U - base.shift).T).T
    if base.kind != "student_t" or U.shape[1] < 2:
        return None
    nu, qs = base.nu, np.array([0.6, 0.4, 0.25])
    ts = stats.t(df=nu, scale=np.sqrt((nu - 2.0) / nu)).isf(qs / 2.0)
    if base.product:
        probs = qs**2
    else:
        probs = np.array(
            [
                integrate.quad(
                    lambda w, t=t: (2.0 * stats.norm.sf(t * np.sqrt(w / (nu - 2.0)))) ** 2 * stats.chi2(nu).pdf(w),
                    0.0,
                    np.inf,
                    epsabs=1e-13,
                    limit=200,
                )[0]
                for t in ts
            ]
        )
    low = np.min(np.abs(U[:, :2]), axis=1)
    return (low[:, None] > ts[None, :]).astype(float), probs


@statement("002.claim-location-scale")
def claim_location_scale(ctx):
    def check(inst):
        base, m, C, Z, K, seed = inst
        d = m.size
        what = f"{base!r}, d = {d}"
        logdet = scalar(np.linalg.slogdet(C)[1])
        mu, S = oracle_moments(base, d)
        got_m, got_S = (np.asarray(v, dtype=float) for v in ctx.impl.locscale_moments(base, m, C))
        ctx.close(got_m, C @ mu + m, rtol=1e-12, atol=1e-12, label=f"{what}: E z = C E u + m")
        ctx.close(got_S, C @ S @ C.T, rtol=1e-12, atol=1e-12, label=f"{what}: V z = C V[u] C^T")
        if not base.discrete:
            ctx.close(
                scalar(ctx.impl.locscale_entropy(base, C)),
                oracle_entropy(base, d) + logdet,
                rtol=1e-11,
                atol=1e-11,
                label=f"{what}: Entropy[q] = Entropy[s] + log|det C|",
            )
            got = np.asarray(ctx.impl.locscale_log_density(base, m, C, Z), dtype=float)
            ref = oracle_log_density(base, np.linalg.solve(C, (Z - m).T).T) - logdet
            inside = np.isfinite(ref)
            ctx.true(
                bool(np.array_equal(np.isfinite(got), inside)), label=f"{what}: log q = -inf exactly off the support"
            )
            # scipy log densities: ~1e-14 relative; a solve with cond(C) <= 100 loses ~1e-14 more
            ctx.close(
                got[inside],
                ref[inside],
                rtol=1e-10,
                atol=1e-10,
                label=f"{what}: log q(z) = log s(C^-1 (z - m)) - log|det C|",
            )
            if base.kind == "gaussian":
                ctx.close(
                    got,
                    stats.multivariate_normal(m, C @ C.T).logpdf(Z).reshape(-1),
                    rtol=1e-10,
                    atol=1e-10,
                    label=f"{what}: log q = log N(z; m, C C^T) (scipy)",
                )
        draws = np.asarray(ctx.impl.locscale_sample(base, m, C, DRAWS, seed), dtype=float)
        ctx.true(draws.shape == (DRAWS, d), label=f"{what}: n draws of dimension d")
        again = np.asarray(ctx.impl.locscale_sample(base, m, C, DRAWS, seed), dtype=float)
        ctx.true(bool(np.array_equal(draws, again)), label=f"{what}: same seed, same draws")
        U = np.linalg.solve(C, (draws - m).T).T
        phase = U @ K.T
        psi = oracle_charfun(base, K)
        # atol: u recovered by a solve carries ~1e-14 rounding, visible where a discrete law makes cos(k^T u) constant
        ctx.mean_close(
            np.hstack([np.cos(phase), np.sin(phase)]),
            np.concatenate([psi.real, psi.imag]),
            atol=1e-9,
            label=f"{what}: the draws' characteristic function E exp(i k^T C^-1 (z - m)) = the base's",
        )
        joint = _student_t_events(base, U)
        if joint is not None:
            ctx.mean_close(*joint, label=f"{what}: the draws' joint law (elliptical or product Student-t)")

    ctx.forall(RNG.map(_instance), check, fixed=_fixed(), max_examples=max(12, ctx.profile.max_examples // 4))
