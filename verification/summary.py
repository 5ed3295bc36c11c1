"""The README's generated block on the five papers: statements per paper by kind and strength, errata by status.

Counted from the statement registry and the ``catalog.toml`` rows, so the figures cannot drift from the code::

    python -m refvi.verification.summary            # print the block
    python -m refvi.verification.summary --update   # rewrite it in README.md (between the papers markers)
    python -m refvi.verification.summary --check    # exit 1 if README.md's block is not current

``tests/test_readme.py`` runs the check.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from refvi.verification import catalog, coverage

START, END = "<!-- papers:start -->", "<!-- papers:end -->"
README = pathlib.Path(__file__).resolve().parents[1] / "README.md"

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
    from refvi.verification import runner

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


def current(text: str) -> bool:
    """Whether the README text carries the current block between the markers."""
    return f"{START}\n{block()}\n{END}" in text


def update(path: pathlib.Path = README) -> bool:
    """Rewrite the block in ``path``; True if it changed."""
    from refvi import _atomic

    text = path.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{path}: markers {START} / {END} not found")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{START}\n{block()}\n{END}{tail}"
    if new != text:
        _atomic.write_text(path, new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m refvi.verification.summary", description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="rewrite README.md's block")
    ap.add_argument("--check", action="store_true", help="exit 1 if README.md's block is not current")
    args = ap.parse_args(argv)
    if args.update:
        print("README.md updated" if update() else "README.md already current")
        return 0
    if args.check:
        ok = current(README.read_text(encoding="utf-8"))
        print(
            "README.md's papers block is current"
            if ok
            else "README.md's papers block is stale: run python -m refvi.verification.summary --update"
        )
        return 0 if ok else 1
    print(block())
    return 0


if __name__ == "__main__":
    sys.exit(main())
