"""Seed 003 sub-adapter of the plain-NumPy example implementation (written from the paper; imports nothing of refvi).

PROVISIONAL: no methods yet, so the seed 003 statements report ``skip`` naming the missing method.
"""

from __future__ import annotations


class NumpyOnline:
    name = "numpy-adapter.online"
