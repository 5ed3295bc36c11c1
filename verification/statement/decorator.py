"""The statement decorator: :func:`.statement` registers ``claim(ctx)`` under its id (``<seed>.<kind><number>``) in
``REGISTRY``, with what it states (title, source, kind, erratum, profiles, the protocol methods it uses) read
from its package's ``catalog.toml`` row (:mod:`refvi.verification.catalog`) or given inline."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, Literal

from refvi.verification.statement.context import Context

Kind = Literal["exact", "symbolic", "statistical"]
KINDS = ("exact", "symbolic", "statistical")
ID_KINDS = ("def", "thm", "lemma", "cor", "prop", "example", "eq", "remark", "assumption", "claim")


@dataclasses.dataclass(frozen=True)
class Statement:
    """One numbered result made executable."""

    id: str
    title: str
    source: str
    kind: Kind
    claim: Callable[[Context], None]
    erratum: str | None = None
    profiles: tuple[str, ...] = ("ci", "deep")
    uses: tuple[str, ...] | None = None
    """The protocol methods (dotted: ``energy``, ``online.run``) the statement calls; ``()`` declares an
    *oracle-only* check (true of the paper, exercising no implementation); None: not declared."""
    loose: tuple[tuple[str, str], ...] = ()
    """(check name, why) for each bound that no instance brings within 10x (its catalogue row's ``loose``: the reason,
    with the measured ratio, is shown in the certificate table and the fidelity page)."""

    @property
    def printed(self) -> str:
        return "erratum" if self.erratum else "holds"

    @property
    def oracle_only(self) -> bool:
        return self.uses == ()


REGISTRY: dict[str, Statement] = {}


def statement(
    id: str,
    *,
    title: str | None = None,
    source: str | None = None,
    kind: Kind | None = None,
    erratum: str | None = None,
    profiles: tuple[str, ...] | None = None,
    uses: Iterable[str] | None = None,
):
    """Register ``claim(ctx)`` as the statement ``id`` (``<seed>.<kind><number>``, e.g. ``000.thm3``).

    With the id alone (the paper packages), what the statement states -- title, source, kind, erratum, profiles and
    ``uses``, the protocol methods the claim calls (``()``: an oracle-only check) -- is the row ``[statement."id"]``
    of its package's ``catalog.toml`` (:mod:`refvi.verification.catalog`).  Statements defined elsewhere (tests,
    extensions) give ``title``, ``source`` and ``kind`` (and optionally the rest) inline instead."""
    _check_id(id)
    inline = dict(title=title, source=source, kind=kind, erratum=erratum, profiles=profiles, uses=uses)
    given = {k for k, v in inline.items() if v is not None}
    if given and not {"title", "source", "kind"} <= given:
        raise TypeError(f"statement {id}: give title=, source= and kind= inline, or nothing (its catalog row)")

    def deco(fn: Callable[[Context], None]) -> Callable[[Context], None]:
        if id in REGISTRY:
            raise ValueError(f"statement {id} registered twice")
        meta: dict[str, Any] = inline if given else _catalog_meta(id, fn)
        if meta["kind"] not in KINDS:
            raise ValueError(f"statement {id}: kind must be one of {KINDS}, got {meta['kind']!r}")
        used = None if meta["uses"] is None else tuple(sorted(set(meta["uses"])))
        REGISTRY[id] = Statement(
            id,
            meta["title"],
            meta["source"],
            meta["kind"],
            fn,
            meta["erratum"],
            tuple(meta["profiles"] or ("ci", "deep")),
            used,
            tuple(sorted((meta.get("loose") or {}).items())),
        )
        return fn

    return deco


def _catalog_meta(sid: str, fn) -> dict:
    from refvi.verification import catalog

    row = catalog.row("statement", sid, fn.__module__)
    return dict(
        title=row["title"],
        source=f"{row['citation']}, {row['source']}",
        kind=row["kind"],
        erratum=row.get("erratum"),
        profiles=row.get("profiles"),
        uses=row["uses"],
        loose=row.get("loose"),
    )


def _check_id(sid: str) -> None:
    seed, _, rest = sid.partition(".")
    ok = len(seed) == 3 and seed.isdigit() and rest == rest.lower() and rest != ""
    if ok:
        ok = any(
            rest.startswith(k) and (rest[len(k) :].isdigit() or (k == "claim" and rest[len(k) :].startswith("-")))
            for k in ID_KINDS
        )
    if not ok:
        raise ValueError(
            f"bad statement id {sid!r}: expected '<seed>.<kind><number>' or '<seed>.claim-<name>' "
            f"with kind in {ID_KINDS}"
        )
