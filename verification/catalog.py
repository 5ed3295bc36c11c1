"""The catalogues: what each statement and erratum *states*, kept as data beside the code that checks it.

Every paper package under ``statements/`` has a ``catalog.toml`` with one row per result, keyed by its stable id::

    citation = "Wu & Gardner (seed 004)"

    [statement."004.lemma8"]          # checked by @statement("004.lemma8") in variance.py
    module = "variance"
    title = "E||grad-hat_Xi - grad_Xi||_F^2 = n^2 s2 / (4 m sigma^4)"
    source = "Lemma 8, Eq. (19)"      # the statement's source is "<citation>, <source>"
    kind = "exact"
    uses = ["ngvi.blr_grad", "ngvi.blr_stochastic_grad"]

    [erratum."E004-4"]                # demonstrated by @erratum("E004-4") in estimators.py
    module = "estimators"
    where = "..."; printed = "..."; corrected = "..."; instance = "..."

The decorators :func:`~refvi.verification.statement.statement` and :func:`~refvi.verification.errata.erratum` read
their row from the catalogue of the package that defines the decorated function; a row names that module, so a
moved check or a stale row is an error at import.  Other implementations can read the rows without running Python.
"""

from __future__ import annotations

import functools
import re
import tomllib
from importlib import resources

FILENAME = "catalog.toml"

#: the keys a row must have and the ones it may have, per section
_KEYS = {
    "statement": ({"module", "title", "source", "kind", "strength", "uses"}, {"erratum", "profiles", "loose"}),
    "erratum": ({"module", "where", "printed", "corrected", "status", "instance"}, set()),
}

#: a statement's ``strength``: what it checks against what the paper states.  ``as printed``; ``corrected (E...)``
#: (the corrected form of the erratum the row names); ``weaker: <what and why>``; or ``corrected (E...); weaker: ...``
STRENGTHS = ("as printed", "corrected", "weaker")
_STRENGTH = re.compile(r"^(as printed|corrected \((E\d{3}-\d+)\)(; weaker: \S.*)?|weaker: \S.*)$", re.S)

#: an erratum's ``status``: the printed form was ``refuted`` (its ``instance`` is a counterexample) or is only
#: ``not proven`` (its ``instance`` shows the failing proof step; no counterexample to the printed claim is known)
STATUSES = ("refuted", "not proven")


def strength_kind(strength: str) -> str:
    """The kind of a row's ``strength``: ``weaker`` if any part of the claim is checked weaker than printed, else
    ``corrected`` or ``as printed``."""
    m = _STRENGTH.match(strength)
    if m is None:
        raise ValueError(
            f"strength {strength!r}: expected 'as printed', 'corrected (E...)' "
            "(optionally '; weaker: <what and why>') or 'weaker: <what and why>'"
        )
    return "weaker" if "weaker: " in strength else ("corrected" if strength.startswith("corrected") else "as printed")


def _check_fields(where: str, section: str, row: dict) -> None:
    if section == "statement":
        try:
            strength_kind(row["strength"])
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        match = _STRENGTH.match(row["strength"])
        assert match is not None  # strength_kind accepted it above
        named = match.group(2)
        if "erratum" in row and named != row["erratum"]:
            raise ValueError(
                f"{where}: the row corrects {row['erratum']}, so its strength must start with "
                f"'corrected ({row['erratum']})', not {row['strength']!r}"
            )
        if named and "erratum" not in row:
            raise ValueError(f"{where}: strength names {named} but the row has no erratum = {named!r}")
        loose = row.get("loose", {})
        if not isinstance(loose, dict) or not all(isinstance(v, str) and v.strip() for v in loose.values()):
            raise ValueError(f"{where}: loose must map check names to the reason each cannot come within 10x")
    elif row["status"] not in STATUSES:
        raise ValueError(f"{where}: status must be one of {STATUSES}, not {row['status']!r}")


@functools.cache
def catalog(package: str) -> dict:
    """The parsed ``catalog.toml`` of a statements package (``refvi.verification.statements.ngvi_004``)."""
    try:
        text = resources.files(package).joinpath(FILENAME).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LookupError(f"{package} has no {FILENAME}: its statements and errata need one") from None
    data = tomllib.loads(text)
    if not isinstance(data.get("citation"), str):
        raise ValueError(f"{package}/{FILENAME}: a top-level `citation` string is required")
    for section, (required, optional) in _KEYS.items():
        for ident, row in data.get(section, {}).items():
            missing, unknown = required - set(row), set(row) - required - optional
            if missing or unknown:
                raise ValueError(
                    f'{package}/{FILENAME} [{section}."{ident}"]: '
                    + (f"missing {sorted(missing)} " if missing else "")
                    + (f"unknown {sorted(unknown)}" if unknown else "")
                )
            _check_fields(f'{package}/{FILENAME} [{section}."{ident}"]', section, row)
    return data


def row(section: str, ident: str, module: str) -> dict:
    """The row ``[section."ident"]`` for a check defined in ``module`` (its package's catalogue; the row must name
    that module)."""
    package, _, stem = module.rpartition(".")
    data = catalog(package)
    entry = data.get(section, {}).get(ident)
    if entry is None:
        raise LookupError(
            f'{section} {ident} (defined in {module}) has no row [{section}."{ident}"] in {package}/{FILENAME}'
        )
    if entry["module"] != stem:
        raise ValueError(
            f"{package}/{FILENAME}: {section} {ident} names module {entry['module']!r}, but its check "
            f"is defined in {stem!r}"
        )
    return dict(entry, citation=data["citation"])


def rows(package: str, section: str) -> dict[str, dict]:
    """All rows of one section of a package's catalogue (for the test that every row has a check)."""
    return dict(catalog(package).get(section, {}))


def strength_counts(packages) -> dict[str, int]:
    """How many statement rows of the given packages check their result as printed, corrected or weaker."""
    counts = dict.fromkeys(STRENGTHS, 0)
    for package in packages:
        for entry in rows(package, "statement").values():
            counts[strength_kind(entry["strength"])] += 1
    return counts
