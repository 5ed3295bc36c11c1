"""Errata registry: places where a paper's printed statement is false or unproven.

Each erratum carries its smallest failing instance as executable code: ``demonstrate(ctx)`` records evidence that
the *printed* form fails (or, for an unproven step, the algebra that shows the gap).  A statement that names an
erratum passes only when its corrected form holds **and** the demonstration succeeds.
Erratum ids are ``E<seed>-<n>``; each is demonstrated (with ``@erratum("E<seed>-<n>")``) in the statement module it
corrects, and its text (where, printed, corrected, instance) is the row ``[erratum."E<seed>-<n>"]`` of that package's
``catalog.toml`` (:mod:`refvi.verification.catalog`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from refvi.verification import catalog
from refvi.verification.statement import Context


@dataclasses.dataclass(frozen=True)
class Erratum:
    id: str
    where: str  # paper location, e.g. "Thm 26 table and §2.2 after Def. 4"
    printed: str  # what the paper says
    corrected: str  # what is true (and is what refvi encodes)
    instance: str  # the smallest failing instance, in words
    demonstrate: Callable[[Context], None]


ERRATA: dict[str, Erratum] = {}


def erratum(
    id: str,
    *,
    where: str | None = None,
    printed: str | None = None,
    corrected: str | None = None,
    instance: str | None = None,
):
    """Register ``demonstrate(ctx)`` as the executable witness of erratum ``id``; its text is the catalogue row
    ``[erratum."id"]`` of the defining package, or given inline (all four keywords) outside the paper packages."""
    if not re.fullmatch(r"E\d{3}-\d+", id):
        raise ValueError(f"bad erratum id {id!r}: expected 'E<seed>-<n>' such as 'E000-3'")
    inline = (where, printed, corrected, instance)
    if any(v is not None for v in inline) and not all(v is not None for v in inline):
        raise TypeError(f"erratum {id}: give where=, printed=, corrected= and instance= inline, or none (catalog row)")

    def deco(fn: Callable[[Context], None]) -> Callable[[Context], None]:
        if id in ERRATA:
            raise ValueError(f"erratum {id} registered twice")
        if where is not None:
            assert printed is not None and corrected is not None and instance is not None  # checked above
            text = (where, printed, corrected, instance)
        else:
            row = catalog.row("erratum", id, fn.__module__)
            text = (row["where"], row["printed"], row["corrected"], row["instance"])
        ERRATA[id] = Erratum(id, *text, fn)
        return fn

    return deco
