"""refvi: a verified, fast reference implementation of black-box variational inference theory.

Subpackages: :mod:`refvi.targets`, :mod:`refvi.families`, :mod:`refvi.estimators`, :mod:`refvi.prox`,
:mod:`refvi.kernels` (Numba), :mod:`refvi.verification` (oracles, statements, errata, runner).
"""

import os as _os

__version__ = "0.1.0"


def _serve_checkout_layout() -> None:
    """In a source checkout, ``kernels/`` and ``verification/`` sit beside ``refvi/`` and
    setuptools maps them into this namespace only when installing.  When Python imports refvi from the checkout
    itself (``python -m ...`` run in the repository root puts it first on sys.path), let the same names resolve."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    root = _os.path.dirname(here)
    if (not _os.path.isdir(_os.path.join(here, "kernels"))
            and _os.path.isfile(_os.path.join(root, "pyproject.toml"))
            and _os.path.isfile(_os.path.join(root, "kernels", "__init__.py"))):
        __path__.append(root)  # noqa: F821 - __path__ is defined for packages


_serve_checkout_layout()
from refvi.optim.fit import fit  # noqa: E402,F401
