"""Errata registry: places where a paper's printed statement is false or unproven.

Each erratum carries its smallest failing instance as executable code: ``demonstrate(ctx)`` records evidence that
the *printed* form fails (or, for an unproven step, the algebra that shows the gap).  A statement that names an
erratum passes only when its corrected form holds **and** the demonstration succeeds.
Erratum ids are ``E<seed>-<n>``; each is defined (with ``@erratum``) in the statement module it corrects.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

from refvi.verification.statement import Context


@dataclasses.dataclass(frozen=True)
class Erratum:
    id: str
    where: str          # paper location, e.g. "Thm 26 table and §2.2 after Def. 4"
    printed: str        # what the paper says
    corrected: str      # what is true (and is what refvi encodes)
    instance: str       # the smallest failing instance, in words
    demonstrate: Callable[[Context], None]


ERRATA: dict[str, Erratum] = {}


def erratum(id: str, *, where: str, printed: str, corrected: str, instance: str):
    """Register ``demonstrate(ctx)`` as the executable witness of erratum ``id``."""
    if not re.fullmatch(r"E\d{3}-\d+", id):
        raise ValueError(f"bad erratum id {id!r}: expected 'E<seed>-<n>' such as 'E000-3'")

    def deco(fn: Callable[[Context], None]) -> Callable[[Context], None]:
        if id in ERRATA:
            raise ValueError(f"erratum {id} registered twice")
        ERRATA[id] = Erratum(id, where, printed, corrected, instance, fn)
        return fn

    return deco
