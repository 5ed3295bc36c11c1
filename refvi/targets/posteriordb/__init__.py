"""Ten posteriors of the Stan developers' posterior database (posteriordb, BSD 3-Clause: ``LICENCE.md`` here) as
refvi targets on the unconstrained scale, with gold-standard reference moments.

``load("sblrc-blr")`` (or ``refvi.targets.target_for("posteriordb:sblrc-blr")``) returns a :class:`PosteriorTarget`:
log density and gradient as Numba kernels (all constants and log-Jacobians included), ``param_names`` of the
unconstrained vector, ``draw_names`` and ``constrain(Z)`` mapping unconstrained rows to the constrained parameters of
the reference draws, and ``reference``: mean, sd and Monte Carlo standard error of each constrained parameter over
the 10,000 reference draws (long HMC runs, R-hat ~ 1), computed by ``_build.py`` from the database files.

Conventions (the database's README): a positive parameter s is fitted as log s with log s added to the log density;
parameters without a stated prior have a flat prior.  M and mu are unknown (``smoothness is None``): ``refvi.fit``
fits these in an estimated affine frame by default (:mod:`refvi.optim.frame`).
"""

from __future__ import annotations

from refvi.targets.posteriordb.models import POSTERIORS, PosteriorTarget, load, pushforward_moments, reference

__all__ = ["POSTERIORS", "PosteriorTarget", "load", "reference", "pushforward_moments"]
