"""refvi.verification: independent oracles, executable statements of the papers' results, errata, and the runner.

``python -m refvi.verification`` runs every statement against refvi (or ``--impl`` another library) and writes a
JSON certificate; see README.md (certificate schema) and :mod:`refvi.verification.statement`.
"""

from refvi.verification.statement import PROFILES, Context, Statement, statement  # noqa: F401
