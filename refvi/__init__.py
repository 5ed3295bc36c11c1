"""refvi: a verified, fast reference implementation of black-box variational inference theory.

Subpackages: :mod:`refvi.targets`, :mod:`refvi.families`, :mod:`refvi.estimators`, :mod:`refvi.prox`,
:mod:`refvi.kernels` (Numba), :mod:`refvi.verification` (oracles, statements, errata, runner).
"""

__version__ = "0.1.0"

from refvi.optim.fit import fit  # noqa: E402,F401
