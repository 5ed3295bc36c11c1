"""Base distributions as plain data: what the seed 002 statements hand to an implementation as ``base``.

Seed 002 §3.1: a location-scale family draws z = C u + m with u from a base s.  A :class:`BaseSpec` names s by its
law (no refvi object inside); every law except ``affine`` is *standardized* (E u = 0, V u = I):

==================  ======================================================================  ====================
kind                law of one coordinate (iid coordinates unless stated)                   fields
==================  ======================================================================  ====================
``gaussian``        N(0, 1)
``uniform``         Uniform[-sqrt 3, sqrt 3]
``laplace``         Laplace(0, 1/sqrt 2): density ``exp(-sqrt2 |u|) / sqrt2``
``exponential``     Exp(1) - 1 (skewed)
``rademacher``      +-1 with probability 1/2 (discrete: no density, no entropy)
``two_point``       sqrt((1-p)/p) with probability p, else -sqrt(p/(1-p)) (discrete)        p
``student_t``       u = g sqrt((nu - 2) / W), g ~ N(0, I), W ~ chi2_nu: ONE W for the       nu (> 2), product
                    whole vector (elliptical, the default) or one per coordinate
                    (``product=True``)
``affine``          u = scale @ u0 + shift with u0 from ``inner`` (fixed dimension          inner, shift, scale
                    len(shift); not standardized in general)
==================  ======================================================================  ====================

The standardized version of a base with mean mu and covariance Sigma is u = R (u0 - mu) with R = Sigma^{-1/2} the
*symmetric* inverse square root (seed 002 §3.1); ``to_base_params`` maps parameters of the standardized family to
the base's own.
"""

from __future__ import annotations

import dataclasses

import numpy as np

KINDS = ("gaussian", "uniform", "laplace", "exponential", "rademacher", "two_point", "student_t", "affine")
DISCRETE = ("rademacher", "two_point")


@dataclasses.dataclass(frozen=True, eq=False)
class BaseSpec:
    """A base law s by name and parameters (see the module table)."""

    kind: str
    nu: float | None = None  # student_t
    p: float | None = None  # two_point
    product: bool = False  # student_t: iid coordinates instead of one elliptical block
    inner: BaseSpec | None = None  # affine: the law of u0
    shift: np.ndarray | None = None  # affine: (d,)
    scale: np.ndarray | None = None  # affine: (d, d), invertible

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown base kind {self.kind!r}; expected one of {KINDS}")
        if self.kind == "affine":
            if self.inner is None or self.shift is None or self.scale is None:
                raise ValueError("an affine base needs inner, shift and scale")
            for name in ("shift", "scale"):
                a = np.array(getattr(self, name), dtype=np.float64)
                a.setflags(write=False)
                object.__setattr__(self, name, a)

    @property
    def discrete(self) -> bool:
        if self.kind == "affine" and self.inner is not None:  # __post_init__ gives every affine base an inner law
            return self.inner.discrete
        return self.kind in DISCRETE

    @property
    def dim(self) -> int | None:
        """The fixed dimension of an affine base (None: any d)."""
        return None if self.shift is None else int(self.shift.shape[0])

    def __repr__(self) -> str:
        if self.kind == "affine" and self.shift is not None and self.scale is not None:  # always, after __post_init__
            return f"affine({self.inner!r}, shift={self.shift.tolist()}, scale={self.scale.tolist()})"
        extra = {"student_t": f"nu={self.nu}, product={self.product}", "two_point": f"p={self.p}"}.get(self.kind, "")
        return f"{self.kind}({extra})"


def affine(inner: BaseSpec, shift, scale) -> BaseSpec:
    return BaseSpec("affine", inner=inner, shift=np.asarray(shift, float), scale=np.asarray(scale, float))
