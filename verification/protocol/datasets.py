"""scikit-learn's bundled data sets (no download) as plain arrays and :class:`~.targets.TargetSpec` records.

The preprocessing is exactly refvi's (``refvi.targets.load_dataset``, so numbers do not change): features
standardized per column (population standard deviation; constant columns dropped), an intercept column of ones
appended last, classification labels mapped to {-1, +1}, the diabetes target standardized.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.protocol import targets as _targets

#: data set -> (scikit-learn's loader, the classes kept (None: all), the class labelled +1 (None: a regression))
_SOURCES = {
    "breast_cancer": ("load_breast_cancer", None, 1),
    "diabetes": ("load_diabetes", None, None),
    "digits": ("load_digits", (1, 7), 1),
    "wine": ("load_wine", None, 0),
}
DATASETS = tuple(_SOURCES)


def load(name: str) -> tuple[np.ndarray, np.ndarray, str]:
    """(X, y, task) for ``name``; task is "classification" (y in {-1, +1}) or "regression".

    breast_cancer: 569 x 30, benign +1; diabetes: 442 x 10; digits: 1 (+1) vs 7 (-1); wine: cultivar 0 (+1) vs rest.
    """
    if name not in _SOURCES:
        raise ValueError(f"unknown data set {name!r}; choose one of {DATASETS}")
    try:
        from sklearn import datasets as skd
    except ImportError as exc:  # pragma: no cover
        raise ImportError("the real-data instances need scikit-learn (pip install scikit-learn)") from exc
    loader, classes, positive = _SOURCES[name]
    raw = getattr(skd, loader)()
    X, target = raw.data, raw.target
    if classes is not None:
        keep = np.isin(target, classes)
        X, target = X[keep], target[keep]
    if positive is None:
        y = target.astype(float)
        y, task = (y - y.mean()) / y.std(), "regression"
    else:
        y, task = np.where(target == positive, 1.0, -1.0), "classification"
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    X = X[:, sd > 0]
    X = (X - X.mean(axis=0)) / sd[sd > 0]
    X = np.hstack([X, np.ones((X.shape[0], 1))])
    return np.ascontiguousarray(X), np.ascontiguousarray(y, dtype=np.float64), task


def model_for(name: str) -> dict:
    """The default Bayesian model as an oracle dict: logistic regression (prior scale 1) for classification, linear
    regression (noise and prior scales 1) otherwise."""
    X, y, task = load(name)
    if task == "classification":
        return {"kind": "logistic", "X": X, "y": y, "prior_scale": 1.0}
    return {"kind": "linear", "X": X, "y": y, "noise_scale": 1.0, "prior_scale": 1.0}


def spec_for(name: str) -> _targets.TargetSpec:
    """:func:`model_for` as a :class:`~.targets.TargetSpec` (named after the data set)."""
    return _targets.from_model(model_for(name), name=name)
