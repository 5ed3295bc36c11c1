"""The generated blocks of the README and the docs, counted from the code so that their figures cannot drift:

* ``papers`` in README.md: statements per paper by kind and strength, errata by status (the statement registry and
  the ``catalog.toml`` rows);
* ``strength`` in docs/fidelity.md: statements per paper by strength; ``weaker``: the rows checked weaker than printed,
  with why; ``loose``: the bounds no instance brings within 10x, with why and the tightness refvi's committed
  certificate measured; ``given``: the reported values statements declare inputs of their claim, with why;
* ``zoo`` in docs/verification-power.md: the planted bugs of the public zoo per paper (every one must be caught:
  ``tests/verification/test_selftest.py`` fails otherwise).

::

    python -m refvi.verification.certificate.summary            # print the blocks
    python -m refvi.verification.certificate.summary --update   # rewrite them between their markers
    python -m refvi.verification.certificate.summary --check    # exit 1 if a block is not current

``tests/test_readme.py`` runs the check.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from refvi.verification import catalog
from refvi.verification.certificate import coverage

_SOURCE = pathlib.Path(__file__).resolve().parents[2]
#: the checkout whose README and docs the blocks live in: this package's, when it is run from a checkout (an
#: editable install), else the current directory (an installed copy has no README or docs beside it)
ROOT = _SOURCE if (_SOURCE / "README.md").is_file() else pathlib.Path.cwd()
START, END = "<!-- papers:start -->", "<!-- papers:end -->"

#: seed -> (statements package, refvi modules that implement it)
PACKAGES = {
    "000": ("convergence_000", "`refvi.targets`, `refvi.estimators`, `refvi.prox`, `refvi.optim`"),
    "001": ("boosting_001", "`refvi.boosting`"),
    "002": ("smoothness_002", "`refvi.families`, `refvi.optim`"),
    "003": ("online_003", "`refvi.online`"),
    "004": ("ngvi_004", "`refvi.ngvi`"),
}


def block() -> str:
    """The Markdown table (one row per paper and a total row)."""
    from refvi.verification.running import runner

    registry = runner.load_statements()
    head = (
        "| seed | paper | refvi modules | statements | as printed / corrected / weaker | oracle-only | "
        "errata: refuted / not proven |"
    )
    lines = [head, "|---|---|---|---|---|---|---|"]
    total = {"n": 0, "as printed": 0, "corrected": 0, "weaker": 0, "oracle": 0, "refuted": 0, "not proven": 0}
    for seed, (package, modules) in PACKAGES.items():
        pkg = f"refvi.verification.statements.{package}"
        strengths = catalog.strength_counts([pkg])
        errata = catalog.rows(pkg, "erratum")
        status = {s: sum(1 for r in errata.values() if r["status"] == s) for s in catalog.STATUSES}
        mine = [st for sid, st in registry.items() if sid.startswith(seed + ".")]
        oracle = sum(1 for st in mine if st.oracle_only)
        lines.append(
            f"| {seed} | {coverage.PAPERS[seed]} | {modules} | {len(mine)} | "
            f"{strengths['as printed']} / {strengths['corrected']} / {strengths['weaker']} | {oracle} | "
            f"{status['refuted']} / {status['not proven']} |"
        )
        for key in ("as printed", "corrected", "weaker"):
            total[key] += strengths[key]
        total["n"] += len(mine)
        total["oracle"] += oracle
        total["refuted"] += status["refuted"]
        total["not proven"] += status["not proven"]
    lines.append(
        f"| | **all five** | | **{total['n']}** | {total['as printed']} / {total['corrected']} / "
        f"{total['weaker']} | {total['oracle']} | {total['refuted']} / {total['not proven']} |"
    )
    return "\n".join(lines)


def strength_block() -> str:
    """docs/fidelity.md's table: statements per paper as printed / corrected / weaker."""
    lines = ["| paper | as printed | corrected | weaker |", "|---|---|---|---|"]
    total = {"as printed": 0, "corrected": 0, "weaker": 0}
    for seed, (package, _) in PACKAGES.items():
        counts = catalog.strength_counts([f"refvi.verification.statements.{package}"])
        lines.append(
            f"| {seed} {coverage.PAPERS[seed].split(':')[0]} | " + " | ".join(str(counts[k]) for k in total) + " |"
        )
        for k in total:
            total[k] += counts[k]
    lines.append("| **all** | " + " | ".join(f"**{v}**" for v in total.values()) + " |")
    return "\n".join(lines)


def _rows() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for package, _ in PACKAGES.values():
        out.update(catalog.rows(f"refvi.verification.statements.{package}", "statement"))
    return dict(sorted(out.items()))


def _refvi_certificate() -> dict[str, dict]:
    """The statement records of refvi's committed certificate (docs/certificates/refvi.json), by id."""
    import json

    path = ROOT / "docs" / "certificates" / "refvi.json"
    if not path.is_file():
        return {}
    return {r["id"]: r for r in json.loads(path.read_text("utf-8")).get("statements", [])}


def weaker_block() -> str:
    """docs/fidelity.md's list of the rows checked weaker than printed, with the reason from their catalogue row."""
    rows = [(sid, r["strength"].split("weaker: ", 1)[1]) for sid, r in _rows().items() if "weaker: " in r["strength"]]
    return "\n".join(f"* `{sid}`: {why}" for sid, why in rows) or "None."


def loose_block() -> str:
    """docs/fidelity.md's table of the bounds that no instance brings within 10x: the reason (the catalogue's
    ``loose``) and the tightness measured in refvi's committed certificate."""
    cert = _refvi_certificate()
    lines = ["| statement | bound | tightness | why it cannot come within 10x |", "|---|---|---|---|"]
    for sid, row in _rows().items():
        for name, why in sorted((row.get("loose") or {}).items()):
            t = (cert.get(sid, {}).get("checks") or {}).get(name, {}).get("tightness")
            measured = "no ratio" if t is None else f"{t:.2g}"
            lines.append(f"| `{sid}` | {_md(name)} | {measured} | {_md(why)} |")
    return "\n".join(lines)


def given_block() -> str:
    """docs/fidelity.md's table of the reported values statements declare inputs of their claim (``ctx.given``),
    from refvi's committed certificate."""
    lines = ["| statement | protocol method | field | why it is an input |", "|---|---|---|---|"]
    for sid, rec in _refvi_certificate().items():
        for method, field, why in rec.get("given") or []:
            lines.append(f"| `{sid}` | `{method}` | `{field}` | {_md(why)} |")
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def zoo_block() -> str:
    """docs/verification-power.md's line: the planted bugs per paper, all caught (test_selftest.py enforces it)."""
    from refvi.verification.examples.bug_zoo import load_zoo

    zoo = load_zoo()
    per = [f"{sum(1 for m in zoo.values() if m.seed == seed)} in seed {seed}" for seed in PACKAGES]
    return (
        f"**{len(zoo)} of {len(zoo)} planted bugs caught by the certificate alone** in the `ci` profile "
        f"({', '.join(per)}; `tests/verification/test_selftest.py` keeps it at 100 %)."
    )


#: name -> (its file, relative to the checkout, its markers, the function that renders the block)
BLOCKS = {
    "papers": ("README.md", (START, END), block),
    "strength": ("docs/fidelity.md", ("<!-- strength:start -->", "<!-- strength:end -->"), strength_block),
    "weaker": ("docs/fidelity.md", ("<!-- weaker:start -->", "<!-- weaker:end -->"), weaker_block),
    "loose": ("docs/fidelity.md", ("<!-- loose:start -->", "<!-- loose:end -->"), loose_block),
    "given": ("docs/fidelity.md", ("<!-- given:start -->", "<!-- given:end -->"), given_block),
    "zoo": ("docs/verification-power.md", ("<!-- zoo:start -->", "<!-- zoo:end -->"), zoo_block),
}


def current(text: str, name: str = "papers") -> bool:
    """Whether ``text`` (the block's file) carries the current block ``name`` between its markers."""
    _, (start, end), render = BLOCKS[name]
    return f"{start}\n{render()}\n{end}" in text


def stale(root: pathlib.Path = ROOT) -> list[str]:
    """The files under the checkout ``root`` whose generated block is not current (``file: block``)."""
    return [
        f"{rel}: {name}" for name, (rel, _, _) in BLOCKS.items() if not current((root / rel).read_text("utf-8"), name)
    ]


def update(name: str = "papers", root: pathlib.Path = ROOT) -> bool:
    """Rewrite the block ``name`` in its file under the checkout ``root``; True if it changed."""
    from refvi import _atomic

    rel, (start, end), render = BLOCKS[name]
    path = root / rel
    text = path.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise SystemExit(f"{path}: markers {start} / {end} not found")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    new = f"{head}{start}\n{render()}\n{end}{tail}"
    if new != text:
        _atomic.write_text(path, new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m refvi.verification.certificate.summary", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--update", action="store_true", help="rewrite every generated block")
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated block is not current")
    args = ap.parse_args(argv)
    if args.update:
        for name, (rel, _, _) in BLOCKS.items():
            print(f"{rel} ({name}): {'updated' if update(name) else 'already current'}")
        return 0
    if args.check:
        bad = stale()
        print(
            "stale: " + ", ".join(bad) + " (run python -m refvi.verification.certificate.summary --update)"
            if bad
            else "all current"
        )
        return 1 if bad else 0
    for name, (rel, _, render) in BLOCKS.items():
        print(f"{rel} ({name}):\n{render()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
