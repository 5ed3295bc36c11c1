"""refvi's own seed 001 sub-adapter (``REFVI.boosting``): :mod:`refvi.boosting` behind the plain-record protocol of
:mod:`refvi.verification.protocol.boosting`."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from refvi.verification.protocol.boosting import BoostingRun, FamilyConstants


class RefviBoosting:
    """refvi.boosting behind the calls the seed-001 statements make; one BoostingProblem per instance (cached)."""

    name = "refvi.boosting"

    def __init__(self):
        self._problems: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def _problem(self, inst):
        prob = self._problems.get(inst)
        if prob is None:
            from refvi.boosting import AtomSet, BoostingProblem, Box, CauchyTarget, GaussianMixtureTarget

            t = inst.target
            target: GaussianMixtureTarget | CauchyTarget
            if t.kind == "mixture":
                target = GaussianMixtureTarget(t.params["weights"], t.params["means"], t.params["scales"])
            elif t.kind == "cauchy":
                target = CauchyTarget(t.params["loc"], t.params["scale"])
            else:
                raise ValueError(f"unknown boosting target kind {t.kind!r}")
            order, panels = inst.quadrature
            prob = BoostingProblem(
                AtomSet(Box(inst.lo, inst.hi), inst.means, inst.scales),
                target,
                order=order,
                panels=panels,
                logp_shift=t.log_shift,
            )
            self._problems[inst] = prob
        return prob

    @staticmethod
    def _run(r) -> BoostingRun:
        return BoostingRun(r.weights, r.f, r.gap, r.gamma, r.atom, r.weights_history)

    def objective(self, inst, alpha):
        return self._problem(inst).f(np.asarray(alpha, dtype=np.float64))

    def scores(self, inst, alpha):
        return self._problem(inst).scores(np.asarray(alpha, dtype=np.float64))[0]

    def gap(self, inst, alpha):
        return self._problem(inst).gap(np.asarray(alpha, dtype=np.float64))

    def gram(self, inst):
        return self._problem(inst).atoms.gram()

    def frank_wolfe(self, inst, n_iter, step="fixed", *, lmo="exact", delta=None, **options):
        """The protocol's keywords (``BoostingProtocol.frank_wolfe``): ``lmo`` names refvi's LMO object;
        ``curvature``, ``L``, ``init`` and ``keep_weights`` pass through unchanged to ``refvi.boosting.frank_wolfe``,
        which refuses any other name."""
        from refvi.boosting import frank_wolfe

        run = frank_wolfe(self._problem(inst), n_iter, step=step, lmo=_lmo(lmo, delta), delta=delta, **options)
        return self._run(run)

    def stochastic_lmo(self, inst, alpha, *, n_samples=64, n_steps=50, lr=0.05, seed=0):
        from refvi.boosting import StochasticLMO

        return StochasticLMO(n_samples, n_steps, lr, rng=seed)(self._problem(inst), np.asarray(alpha, dtype=float))

    def stochastic_lmo_step(self, inst, alpha, mu, Z, lr=0.05):
        from refvi.boosting import StochasticLMO

        return StochasticLMO(lr=lr).step(
            self._problem(inst),
            np.asarray(alpha, dtype=float),
            np.atleast_1d(np.asarray(mu, dtype=float)),
            np.asarray(Z, dtype=float),
        )

    def fixed_step_weights(self, chosen, n_atoms):
        from refvi.boosting import fixed_step_weights

        return fixed_step_weights(chosen, n_atoms)

    def corrective(
        self, inst, n_iter, variant="full", *, lmo="exact", delta=None, L=None, init=None, keep_weights=False
    ):
        from refvi.boosting import corrective_frank_wolfe

        lmo_obj = _lmo(lmo, delta)
        return self._run(
            corrective_frank_wolfe(
                self._problem(inst), n_iter, variant=variant, L=L, lmo=lmo_obj, init=init, keep_weights=keep_weights
            )
        )

    def line_search(self, inst, alpha, k):
        return self._problem(inst).line_search(np.asarray(alpha, dtype=np.float64), k)

    def norm_corrective_weights(self, inst, alpha, idx, L):
        from refvi.boosting import norm_corrective_weights

        prob = self._problem(inst)
        alpha = np.asarray(alpha, dtype=np.float64)
        return norm_corrective_weights(prob, alpha, np.asarray(idx), prob.scores(alpha)[0], L)

    def fully_corrective_weights(self, inst, alpha, idx):
        from refvi.boosting import fully_corrective_weights

        return fully_corrective_weights(self._problem(inst), np.asarray(alpha, dtype=np.float64), np.asarray(idx))

    def score_gradient(self, lo, hi, mu, sigma, Z, values):
        from refvi.boosting import AtomSet, Box
        from refvi.boosting.lmo import score_function_gradient

        mu = np.atleast_1d(np.asarray(mu, dtype=np.float64))
        atoms = AtomSet(Box(lo, hi), mu[None, :], sigma)
        return score_function_gradient(
            atoms, mu, sigma, np.asarray(Z, dtype=np.float64), np.asarray(values, dtype=np.float64)
        )

    def grid_means(self, lo, hi, stride):
        from refvi.boosting import Box

        return Box(lo, hi).grid(stride)

    def family_constants(self, lo, hi, sigma_min, sigma_max):
        from refvi.boosting import Box
        from refvi.boosting.constants import family_constants

        fc = family_constants(Box(lo, hi), sigma_min, sigma_max)
        return FamilyConstants(**{f: getattr(fc, f) for f in FamilyConstants.__dataclass_fields__})

    def diameter_sq(self, inst):
        return self._problem(inst).atoms.diameter_sq()

    def curvature_lower_bound(self, inst):
        from refvi.boosting.constants import curvature_lower_bound

        prob = self._problem(inst)
        return curvature_lower_bound(prob.T, prob.w)[0]

    def truncation_optimum(self, inst):
        from refvi.boosting.problem import truncation_lower_bound

        prob = self._problem(inst)
        fstar = truncation_lower_bound(prob.target, prob.box) - prob.logp_shift
        try:
            weights = prob.target.optimal_weights(prob.atoms)
        except (AttributeError, ValueError):  # a Cauchy target, or a component that is not an atom
            weights = None
        return fstar, weights

    def density_bounds(self, inst):
        return self._problem(inst).atoms.density_bounds()

    def _mixture(self, inst, alpha):
        from refvi.boosting import Mixture

        return Mixture(self._problem(inst).atoms, np.asarray(alpha, dtype=np.float64))

    def mixture_logpdf(self, inst, alpha, Z):
        return self._mixture(inst, alpha).logpdf(np.asarray(Z, dtype=np.float64))

    def mixture_moments(self, inst, alpha):
        q = self._mixture(inst, alpha)
        return q.mean(), q.var()

    def mixture_norm_sq(self, inst, alpha):
        return self._mixture(inst, alpha).norm_sq()

    def mixture_sample(self, inst, alpha, n, seed=0):
        return self._mixture(inst, alpha).sample(n, seed)

    def mc_mean_field(self, target, U):
        from refvi.boosting.mc import mean_field_gaussian
        from refvi.verification.protocol.refvi_core import as_refvi_target

        return mean_field_gaussian(as_refvi_target(target), base_samples=U)

    def mc_predictive(self, X, y, draws):
        from refvi.boosting.mc import log_likelihood, predictive_prob

        return predictive_prob(X, draws), log_likelihood(X, y, draws)

    def mc_boost(self, target, n_iter, rule="corrective", *, init, n_samples=16, mean_box=1.0, seed=0):
        from refvi.boosting.mc import boost_mc
        from refvi.verification.protocol.refvi_core import as_refvi_target

        return boost_mc(
            as_refvi_target(target), n_iter, rule=rule, init=init, n_samples=n_samples, mean_box=mean_box, seed=seed
        )


def _lmo(lmo, delta):
    """The protocol's LMO name as refvi's: None for the exact argmin, an adversarial ``ApproxLMO(delta)`` (Eq. 9)."""
    from refvi.boosting import ApproxLMO

    if lmo == "exact":
        return None
    if lmo != "adversarial":
        raise ValueError(f"lmo must be 'exact' or 'adversarial', got {lmo!r}")
    return ApproxLMO(delta, mode="adversarial")
