"""Fits whose diagnostics may fail by design (short runs that test plumbing, determinism or errors): the helper records
refvi's ConvergenceWarning instead of letting the suite's filter (pyproject.toml: an unexpected ConvergenceWarning is an
error) fail the test, and asserts the contract itself: the run warned exactly when it did not pass its diagnostics or
ended worse than it started."""

import warnings

import refvi
from refvi.optim.fit import ConvergenceWarning


def fit_expecting(*args, **kwargs):
    """``refvi.fit(*args, **kwargs)``; asserts that it warned iff ``res.diagnostics`` failed or ``res.ended_worse``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        res = refvi.fit(*args, **kwargs)
    warned = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    failed = res.ended_worse or (res.diagnostics is not None and not res.diagnostics.converged)
    assert bool(warned) == failed, (failed, [str(w.message) for w in warned], res.notes)
    for w in caught:                                     # anything else goes on to the suite's filters
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return res
