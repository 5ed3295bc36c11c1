"""Variational families: the Gaussian (m, C) with structure full / tril / sym / diag, and location-scale families."""

from refvi.families import gaussian  # noqa: F401
