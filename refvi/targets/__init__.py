"""Targets log p(z, x) with their smoothness M and strong-convexity mu (seed 000 Thm 21 - Cor 25, errata fixed)."""

from refvi.targets.base import Target
from refvi.targets.cosine import CosineQuadratic
from refvi.targets.custom import CallableTarget
from refvi.targets.datasets import DATASETS, load_dataset, target_for
from refvi.targets.gaussian import Gaussian
from refvi.targets.hierarchical import HierarchicalLogisticRegression
from refvi.targets.pymc import from_pymc
from refvi.targets.regression import LinearRegression, LogisticRegression

__all__ = [
    "Target",
    "Gaussian",
    "LinearRegression",
    "LogisticRegression",
    "HierarchicalLogisticRegression",
    "CosineQuadratic",
    "CallableTarget",
    "from_pymc",
    "load_dataset",
    "target_for",
    "DATASETS",
]
