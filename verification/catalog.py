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
import tomllib
from importlib import resources

FILENAME = "catalog.toml"

#: the keys a row must have and the ones it may have, per section
_KEYS = {
    "statement": ({"module", "title", "source", "kind", "uses"}, {"erratum", "profiles"}),
    "erratum": ({"module", "where", "printed", "corrected", "instance"}, set()),
}


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
                raise ValueError(f"{package}/{FILENAME} [{section}.\"{ident}\"]: "
                                 + (f"missing {sorted(missing)} " if missing else "")
                                 + (f"unknown {sorted(unknown)}" if unknown else ""))
    return data


def row(section: str, ident: str, module: str) -> dict:
    """The row ``[section."ident"]`` for a check defined in ``module`` (its package's catalogue; the row must name
    that module)."""
    package, _, stem = module.rpartition(".")
    data = catalog(package)
    entry = data.get(section, {}).get(ident)
    if entry is None:
        raise LookupError(f"{section} {ident} (defined in {module}) has no row [{section}.\"{ident}\"] in "
                          f"{package}/{FILENAME}")
    if entry["module"] != stem:
        raise ValueError(f"{package}/{FILENAME}: {section} {ident} names module {entry['module']!r}, but its check "
                         f"is defined in {stem!r}")
    return dict(entry, citation=data["citation"])


def rows(package: str, section: str) -> dict[str, dict]:
    """All rows of one section of a package's catalogue (for the test that every row has a check)."""
    return dict(catalog(package).get(section, {}))
