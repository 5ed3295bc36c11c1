"""Real data sets bundled with scikit-learn (no download): breast cancer, diabetes, digits, wine.

Features are standardized (zero mean, unit variance per column; constant columns are dropped) and an intercept
column of ones is appended last.  Classification labels are mapped to {-1, +1}.
"""

from __future__ import annotations

import dataclasses

import numpy as np

DATASETS = ("breast_cancer", "diabetes", "digits", "wine")


@dataclasses.dataclass(frozen=True)
class Dataset:
    name: str
    X: np.ndarray
    y: np.ndarray
    task: str  # "classification" (y in {-1, +1}) or "regression"
    description: str


def load_dataset(
    name: str,
    *,
    standardize: bool = True,
    intercept: bool = True,
    digits_classes: tuple[int, int] = (1, 7),
    wine_positive: int = 0,
) -> Dataset:
    """Load ``name`` from scikit-learn's bundled files.

    * breast_cancer: 569 x 30, malignant = -1, benign = +1;
    * diabetes: 442 x 10 regression, target standardized;
    * digits: the two classes ``digits_classes`` (default 1 vs 7; first is +1), 64 pixel features;
    * wine: class ``wine_positive`` (+1) against the rest (-1), 13 features.
    """
    try:
        from sklearn import datasets as skd
    except ImportError as exc:  # pragma: no cover
        raise ImportError("refvi's data loader needs scikit-learn (pip install scikit-learn)") from exc
    if name == "breast_cancer":
        raw = skd.load_breast_cancer()
        X, y, task = raw.data, np.where(raw.target == 1, 1.0, -1.0), "classification"
        desc = "Wisconsin breast cancer, benign (+1) vs malignant (-1)"
    elif name == "diabetes":
        raw = skd.load_diabetes()
        X, y, task = raw.data, raw.target.astype(float), "regression"
        y = (y - y.mean()) / y.std() if standardize else y
        desc = "diabetes progression (standardized target)"
    elif name == "digits":
        raw = skd.load_digits()
        a, b = digits_classes
        keep = np.isin(raw.target, (a, b))
        X, y, task = raw.data[keep], np.where(raw.target[keep] == a, 1.0, -1.0), "classification"
        desc = f"handwritten digits {a} (+1) vs {b} (-1)"
    elif name == "wine":
        raw = skd.load_wine()
        X, y, task = raw.data, np.where(raw.target == wine_positive, 1.0, -1.0), "classification"
        desc = f"wine cultivar {wine_positive} (+1) vs the rest (-1)"
    else:
        raise ValueError(f"unknown data set {name!r}; choose one of {DATASETS}")
    X = np.asarray(X, dtype=np.float64)
    if standardize:
        sd = X.std(axis=0)
        X = X[:, sd > 0]
        X = (X - X.mean(axis=0)) / sd[sd > 0]
    if intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    return Dataset(name, np.ascontiguousarray(X), np.ascontiguousarray(y, dtype=np.float64), task, desc)


def target_for(name: str, **kwargs):
    """The default Bayesian model for a data set: logistic regression for classification, linear otherwise.
    ``"posteriordb:<posterior>"`` loads a posteriordb posterior (:mod:`refvi.targets.posteriordb`)."""
    from refvi.targets.regression import LinearRegression, LogisticRegression

    if isinstance(name, str) and name.startswith("posteriordb:"):
        from refvi.targets import posteriordb

        return posteriordb.load(name, **kwargs)

    ds = load_dataset(name)
    if ds.task == "classification":
        return LogisticRegression(ds.X, ds.y, **kwargs)
    return LinearRegression(ds.X, ds.y, **kwargs)
