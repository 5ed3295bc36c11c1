"""Seed 001 sub-adapter of the plain-NumPy example implementation (written from the paper; imports nothing of refvi).

PROVISIONAL: no methods yet, so the seed 001 statements report ``skip`` naming the missing method.
"""

from __future__ import annotations


class NumpyBoosting:
    name = "numpy-adapter.boosting"
