"""The pure logic of the mutation driver (no cosmic-ray import, so its unit tests run in the default test run).

* which files are mutated and how each is judged (:func:`load_config`, :func:`kind_of`, :func:`group_of`);
* the static map from a source file to the statements that can reach it and to the unit tests that exercise it
  (:class:`ProjectMap`): the import graph of ``refvi/``, ``kernels/`` and ``verification/``, and the protocol
  methods of refvi's adapters (``verification/protocol/refvi_*.py``), each with the modules its body reaches;
* which source spans are never mutated (:func:`excluded_lines`), the stable id of a mutant (:func:`mutant_ids`), the
  seeded sample of mutation sites (:func:`sample_sites`), the lines changed since a git revision
  (:func:`parse_diff_lines`);
* the log (one JSON line per mutant), the kill rates, the triage join and the generated block of
  ``docs/verification-power.md`` (:func:`summarize`, :func:`render_block`, :func:`update_doc`).
"""

from __future__ import annotations

import ast
import fnmatch
import json
import random
import re
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CONFIG = HERE / "config.toml"
TRIAGE = HERE / "triage.toml"

#: the three source folders and the import names they are installed under
PACKAGES = {"refvi": "refvi", "kernels": "refvi.kernels", "verification": "refvi.verification"}

OUTCOMES = ("killed-by-certificate", "killed-by-tests", "timeout", "survived", "incompetent")


# ---------------------------------------------------------------------------------------------------- configuration
def load_config(path: Path | str = CONFIG) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)["refvi-mutation"]


def _match(rel: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) for p in patterns)


def mutable_files(root: Path, cfg: dict, paths: Sequence[str] | None = None) -> list[str]:
    """The source files that may be mutated (relative paths, sorted): every ``.py`` under ``cfg['include']`` (or
    under ``paths``, files or folders), less ``cfg['exclude']``."""
    out = set()
    for p in paths or cfg["include"]:
        full = root / p
        if full.is_file():
            cands = [full]
        else:
            cands = [q for q in full.rglob("*.py") if not q.is_symlink()]
        for q in cands:
            rel = q.relative_to(root).as_posix()
            if rel.endswith(".py") and rel.split("/")[0] in PACKAGES and not _match(rel, cfg["exclude"]):
                out.add(rel)
    return sorted(out)


def kind_of(rel: str, cfg: dict) -> str:
    """``machinery`` (judged by its own tests alone) or ``implementation`` (the certificate first, then tests):
    refvi's adapters behind the protocols are implementation."""
    if rel in cfg["adapters"]:
        return "implementation"
    return "machinery" if _match(rel, cfg["machinery"]) else "implementation"


def group_of(rel: str, cfg: dict) -> str:
    """The report group of a file: ``verdict machinery``, else the first of ``cfg['groups']`` (name -> globs) that
    matches."""
    if kind_of(rel, cfg) == "machinery":
        return "verdict machinery"
    for name, globs in cfg["groups"].items():
        if _match(rel, globs):
            return name
    return "other"


def package_of(rel: str) -> str:
    if rel.startswith("verification/protocol/refvi_"):
        return "verification/protocol/refvi_* (adapters)"
    if rel.startswith("verification/"):
        return "verification/ (machinery)"
    return rel.split("/")[0] + "/"


def module_name(rel: str) -> str:
    """``kernels/prox.py`` -> ``refvi.kernels.prox``; ``refvi/boosting/__init__.py`` -> ``refvi.boosting``."""
    parts = rel[:-3].split("/")
    head = PACKAGES[parts[0]].split(".")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(head + parts[1:])


def module_file(name: str, root: Path) -> str | None:
    """The inverse of :func:`module_name` for a module of this project (None for anything else)."""
    parts = name.split(".")
    if parts[0] != "refvi":
        return None
    if len(parts) > 1 and parts[1] in ("kernels", "verification"):
        base, rest = parts[1], parts[2:]
    else:
        base, rest = "refvi", parts[1:]
    stem = "/".join([base, *rest])
    for rel in (stem + ".py", stem + "/__init__.py"):
        if (root / rel).is_file():
            return rel
    return None


# ---------------------------------------------------------------------------------------------------- import graph
class ProjectMap:
    """The static map from a source file to the statements and unit tests that can see a mutant in it.

    ``deps[f]``: the project modules ``f`` imports (anywhere in the file; a name imported from a package's
    ``__init__`` is followed to the module that defines it).  A statement can reach ``f`` when one of the protocol
    methods it declares (``uses`` in its catalogue row) reaches it: the method's body in refvi's adapter, the
    adapter's helpers it calls and the modules those import, closed under ``deps``.  In an adapter file the map is
    by line: a line inside a method reaches only the statements of the methods that call it.  A unit test exercises
    ``f`` when it imports ``f`` or a module that imports ``f`` (a package ``__init__`` counts as the modules it
    re-exports), or when its name contains ``f``'s name (``test_crosscheck_prox.py`` for ``prox.py``).
    """

    def __init__(self, root: Path = ROOT, cfg: dict | None = None):
        self.root = Path(root)
        self.cfg = cfg if cfg is not None else load_config()
        self.files = self._project_files()
        self._trees: dict[str, ast.Module] = {}
        self._resolve_memo: dict[tuple[str, str], set[str]] = {}
        self.deps = {f: self._imports_of(f) for f in self.files}
        self.rdeps: dict[str, set[str]] = defaultdict(set)
        for f, ds in self.deps.items():
            for d in ds:
                self.rdeps[d].add(f)
        self.statements = self._catalogue()
        self.distance: dict[str, dict[str, int]] = {}
        self.adapters = self._adapters()

    # -- files and their imports
    def _project_files(self) -> list[str]:
        out = []
        for top in PACKAGES:
            for q in (self.root / top).rglob("*.py"):
                rel = q.relative_to(self.root).as_posix()
                if rel.startswith(("refvi/kernels/", "refvi/verification/")):
                    continue  # the symbolic links to kernels/ and verification/
                out.append(rel)
        return sorted(out)

    def tree(self, rel: str) -> ast.Module:
        if rel not in self._trees:
            self._trees[rel] = ast.parse((self.root / rel).read_text(encoding="utf-8"), filename=rel)
        return self._trees[rel]

    def _base_module(self, rel: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        pkg = module_name(rel).split(".")
        if not rel.endswith("__init__.py"):
            pkg = pkg[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        return ".".join(pkg + ([node.module] if node.module else []))

    def resolve(self, module: str, name: str | None = None, _seen=None) -> set[str]:
        """The project files that define ``module`` (``name`` None) or ``name`` imported from ``module``."""
        key = (module, name or "")
        if key in self._resolve_memo:
            return self._resolve_memo[key]
        seen = _seen or set()
        if key in seen:
            return set()
        seen.add(key)
        out: set[str] = set()
        if name is not None:
            sub = module_file(f"{module}.{name}", self.root)
            if sub is not None:
                out = {sub}
            else:
                rel = module_file(module, self.root)
                if rel is not None:
                    out = self._binding(rel, name, seen) or {rel}
        else:
            rel = module_file(module, self.root)
            out = {rel} if rel is not None else set()
        self._resolve_memo[key] = out
        return out

    def _binding(self, rel: str, name: str, seen) -> set[str]:
        """Where the module-level name ``name`` of ``rel`` comes from, when ``rel`` imports it."""
        for node in self.tree(rel).body:
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if (a.asname or a.name) == name:
                        return self.resolve(self._base_module(rel, node), a.name, seen)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname == name:
                        return self.resolve(a.name, None, seen)
        return set()

    def _import_node(self, rel: str, node) -> set[str]:
        out: set[str] = set()
        if isinstance(node, ast.Import):
            for a in node.names:
                out |= self.resolve(a.name)
        elif isinstance(node, ast.ImportFrom):
            base = self._base_module(rel, node)
            for a in node.names:
                out |= self.resolve(base, None if a.name == "*" else a.name)
        return out

    def _imports_of(self, rel: str) -> set[str]:
        out: set[str] = set()
        for node in ast.walk(self.tree(rel)):
            out |= self._import_node(rel, node)
        out.discard(rel)
        return out

    def closure(self, files: Iterable[str]) -> set[str]:
        todo, seen = list(files), set(files)
        while todo:
            for d in self.deps.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    def importers_closure(self, rel: str) -> set[str]:
        """``rel`` and every project module that imports it, directly or not: the Numba cache entries of these
        modules can hold code compiled from ``rel`` (a kernel inlines the kernels it calls)."""
        todo, seen = [rel], {rel}
        while todo:
            for d in self.rdeps.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    # -- statements and adapters
    def _catalogue(self) -> dict[str, dict]:
        out = {}
        for cat in sorted((self.root / "verification" / "statements").glob("*/catalog.toml")):
            with open(cat, "rb") as fh:
                data = tomllib.load(fh)
            for sid, row in data.get("statement", {}).items():
                out[sid] = {"uses": list(row.get("uses", [])), "kind": row.get("kind", "exact")}
        return out

    def _adapters(self) -> dict[str, dict]:
        """Per adapter file: ``methods`` (protocol name -> (first line, last line, reached files)) and ``module``
        (the files its module-level code reaches)."""
        out = {}
        for rel, spec in self.cfg["adapters"].items():
            if not (self.root / rel).is_file():
                continue
            out[rel] = self._adapter(rel, spec["class"], spec.get("prefix", ""))
        return out

    def _adapter(self, rel: str, cls_name: str, prefix: str) -> dict:
        tree = self.tree(rel)
        imported: dict[str, set[str]] = {}
        functions: dict[str, ast.AST] = {}
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                for a in node.names:
                    nm = a.asname or a.name.split(".")[0]
                    if isinstance(node, ast.ImportFrom):
                        imported[nm] = self.resolve(self._base_module(rel, node), a.name)
                    else:
                        imported[nm] = self.resolve(a.name if a.asname else a.name.split(".")[0])
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                functions[node.name] = node
        cls = functions.get(cls_name)
        if not isinstance(cls, ast.ClassDef):
            raise ValueError(f"{rel}: no class {cls_name}")
        members: dict[str, ast.AST] = {}
        for node in cls.body:
            if isinstance(node, ast.FunctionDef):
                members[node.name] = node
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            members[n.id] = node

        memo: dict[int, set[str]] = {}

        def reach(node, stack=()) -> set[str]:
            if id(node) in memo:
                return memo[id(node)]
            if id(node) in stack:
                return set()
            stack = (*stack, id(node))
            got: set[str] = {rel}
            for n in ast.walk(node):
                got |= self._import_node(rel, n)
                if isinstance(n, ast.Name):
                    if n.id in imported:
                        got |= imported[n.id]
                    elif n.id in functions and n.id != cls_name:
                        got |= reach(functions[n.id], stack)
                elif (
                    isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name)
                    and n.value.id == "self"
                    and n.attr in members
                ):
                    got |= reach(members[n.attr], stack)
            memo[id(node)] = got
            return got

        methods = {}
        for name, node in members.items():
            if name.startswith("_"):
                continue
            direct = reach(node) - {rel}  # the adapter's own imports are followed per method, not per file
            methods[prefix + name] = (node.lineno, node.end_lineno, self.closure(direct) | {rel})
            self.distance[prefix + name] = self._depths(direct)
        # the lines of a module-level helper or a private member reach the methods that call them
        spans = [(n.lineno, n.end_lineno, n) for n in functions.values() if n is not cls]
        spans += [(n.lineno, n.end_lineno, n) for nm, n in members.items() if nm.startswith("_")]
        helpers = []
        for lo, hi, node in spans:
            callers = {m for m, (_, _, _r) in methods.items() if self._calls(members, functions, m, prefix, node)}
            helpers.append((lo, hi, callers))
        module_reach = self.closure(set().union(*imported.values()) | {rel}) if imported else {rel}
        return {"methods": methods, "helpers": helpers, "module": module_reach, "class": (cls.lineno, cls.end_lineno)}

    def _depths(self, start: set[str]) -> dict[str, int]:
        """Import distance from the files ``start`` (0) to every file they reach."""
        depth = dict.fromkeys(start, 0)
        frontier = list(start)
        while frontier:
            nxt = []
            for f in frontier:
                for d in self.deps.get(f, ()):
                    if d not in depth:
                        depth[d] = depth[f] + 1
                        nxt.append(d)
            frontier = nxt
        return depth

    def order(self, sids: Sequence[str], rel: str, seconds: dict[str, float] | None = None) -> list[str]:
        """``sids`` in the order a mutant of ``rel`` runs them: nearest first (a method whose own code imports
        ``rel`` before one that reaches it through five modules), exact before statistical, fastest first (by
        ``seconds``, a baseline's).  The order changes the time to the first failing statement, never which
        statements run."""
        seconds = seconds or {}

        def dist(sid):
            ds = [self.distance.get(m, {}).get(rel, 99) for m in self.statements[sid]["uses"]]
            return min(ds) if ds else 99

        return sorted(sids, key=lambda s: (dist(s), self.statements[s]["kind"] == "statistical", seconds.get(s, 5.0)))

    @staticmethod
    def _calls(members, functions, method, prefix, target) -> bool:
        """Whether protocol method ``method`` reaches the helper ``target`` (by name, through self. and helpers)."""
        start = members[method[len(prefix) :]]
        todo, seen = [start], {id(start)}
        while todo:
            node = todo.pop()
            if node is target:
                return True
            for n in ast.walk(node):
                nxt = None
                if isinstance(n, ast.Name) and n.id in functions:
                    nxt = functions[n.id]
                elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                    nxt = members.get(n.attr)
                if nxt is not None and id(nxt) not in seen:
                    seen.add(id(nxt))
                    todo.append(nxt)
        return False

    def methods_reaching(self, rel: str, line: int | None = None) -> set[str]:
        """The protocol methods whose code reaches ``rel`` (at ``line``, for an adapter file)."""
        out: set[str] = set()
        own = self.adapters.get(rel)
        in_class = own is not None and line is not None and own["class"][0] <= line <= own["class"][1]
        for arel, ad in self.adapters.items():
            if in_class and rel != arel:
                continue  # a line of an adapter's class: only that adapter's methods call it
            if rel == arel and line is not None:
                hit = [m for m, (lo, hi, _) in ad["methods"].items() if lo <= line <= hi]
                if hit:
                    out.update(hit)
                    continue
                helper = [callers for lo, hi, callers in ad["helpers"] if lo <= line <= hi]
                if helper:
                    out.update(*helper)
                    continue
                out.update(ad["methods"])  # module-level code: every method of the adapter
                continue
            for m, (_, _, reached) in ad["methods"].items():
                if rel in reached:
                    out.add(m)
        return out

    def statements_for(self, rel: str, line: int | None = None) -> list[str]:
        """The statements that can see a mutant of ``rel`` (at ``line``), in catalogue order.  A statement that
        uses a method no adapter defines is kept for every implementation file (it cannot be ruled out)."""
        if kind_of(rel, self.cfg) == "machinery":
            return []
        methods = self.methods_reaching(rel, line)
        known = {m for ad in self.adapters.values() for m in ad["methods"]}
        out = []
        for sid, row in self.statements.items():
            uses = set(row["uses"])
            if not uses:
                continue  # oracle-only: never touches an implementation
            # in refvi_impl.py, a sub-adapter's property (REFVI.boosting) reaches every method of its sub-protocol
            sub = {u.split(".")[0] for u in uses} & methods if rel in self.adapters else set()
            if uses & methods or (uses - known) or sub:
                out.append(sid)
        return sorted(out)

    # -- unit tests
    def test_files(self) -> list[str]:
        out = []
        for q in (self.root / "tests").rglob("test_*.py"):
            rel = q.relative_to(self.root).as_posix()
            if not _match(rel, self.cfg["tests"]["exclude"]):
                out.append(rel)
        return sorted(out)

    def _expand_inits(self, files: set[str]) -> set[str]:
        todo, seen = list(files), set(files)
        while todo:
            f = todo.pop()
            if f.endswith("__init__.py"):
                for d in self.deps.get(f, ()):
                    if d not in seen:
                        seen.add(d)
                        todo.append(d)
        return seen

    def tests_for(self, rel: str, seconds: dict[str, float] | None = None) -> list[str]:
        """The unit tests that exercise ``rel`` (see the class docstring): the configuration's overrides
        (``[refvi-mutation.tests.extra]``), then the direct importers, the files named after it and the importers of
        its importers, each group fastest first by ``seconds`` (a baseline's) when given."""
        stem = Path(rel).stem
        callers = {f for f in self.rdeps.get(rel, ()) if not f.endswith("__init__.py")}
        direct, hop, named = [], [], []
        deps_of = {t: self._test_deps(t) for t in self.test_files()}
        for t, tdeps in deps_of.items():
            if rel in tdeps:
                direct.append(t)
            elif tdeps & callers:
                hop.append(t)
            elif stem != "__init__" and stem.strip("_") and stem.strip("_") in Path(t).stem:
                named.append(t)
        extra = [
            t for pat, ts in self.cfg["tests"].get("extra", {}).items() if fnmatch.fnmatchcase(rel, pat) for t in ts
        ]
        if seconds:
            direct, named, hop = (sorted(g, key=lambda t: seconds.get(t, 30.0)) for g in (direct, named, hop))
        # a module that no test reaches within one importer (a mixin two imports below the class the tests use):
        # the tests of the nearest importers further up, level by level, until some are found (the configuration's
        # extras do not count: they come first, not instead)
        level, seen = callers, {rel} | callers
        while not (direct or named or hop) and level:
            level = {f for g in level for f in self.rdeps.get(g, ()) if f not in seen and not f.endswith("__init__.py")}
            seen |= level
            found = [t for t, tdeps in deps_of.items() if tdeps & level]
            hop = sorted(found, key=lambda t: seconds.get(t, 30.0)) if seconds else found
        out = []
        for t in [*extra, *direct, *named, *hop]:
            if t not in out:
                out.append(t)
        return out

    def _test_deps(self, t: str) -> set[str]:
        tdeps: set[str] = set()
        for node in ast.walk(self.tree(t)):
            tdeps |= self._import_node(t, node)
        return self._expand_inits(tdeps)


# ---------------------------------------------------------------------------------------------------- sites
def excluded_lines(source: str) -> set[int]:
    """Lines never mutated: decorators (``@njit(cache=True)``: compilation options), annotations (never evaluated
    under ``from __future__ import annotations``), ``raise`` statements and f-strings (the text of a message),
    ``__all__``, ``if TYPE_CHECKING:`` blocks and lines marked ``# pragma: no mutate``."""
    tree = ast.parse(source)
    out: set[int] = set()

    def span(node):
        out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for d in node.decorator_list:
                span(d)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
                span(node.returns)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            span(node.annotation)
        elif isinstance(node, ast.AnnAssign):
            span(node.annotation)
        elif isinstance(node, ast.Raise | ast.JoinedStr):
            span(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            span(node)
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            span(node)
    for i, line in enumerate(source.splitlines(), 1):
        if "pragma: no mutate" in line:
            out.add(i)
    return out


def operator_allowed(name: str, cfg: dict) -> bool:
    """Whether cosmic-ray's operator ``name`` (``core/ReplaceBinaryOperator_Add_Sub``) is used (see config)."""
    short = name.split("/")[-1]
    if not any(re.fullmatch(p, short) for p in cfg["operators"]["include"]):
        return False
    return not any(re.search(p, short) for p in cfg["operators"]["exclude"])


FAMILIES = (
    ("ReplaceBinaryOperator", "arithmetic"),
    ("ReplaceComparisonOperator", "comparison"),
    ("ReplaceUnaryOperator", "unary"),
    ("NumberReplacer", "number"),
    ("AddNot", "boolean"),
    ("ReplaceTrueWithFalse", "boolean"),
    ("ReplaceFalseWithTrue", "boolean"),
    ("ReplaceAndWithOr", "boolean"),
    ("ReplaceOrWithAnd", "boolean"),
    ("ReplaceBreakWithContinue", "break/continue"),
    ("ReplaceContinueWithBreak", "break/continue"),
    ("ZeroIterationForLoop", "loop"),
    ("ExceptionReplacer", "exception"),
)


def family_of(operator: str) -> str:
    short = operator.split("/")[-1]
    for prefix, fam in FAMILIES:
        if short.startswith(prefix):
            return fam
    return "other"


def mutant_ids(sites: Sequence[dict]) -> list[str]:
    """Stable ids ``file:line:operator:k``, k counting the positions of the same operator on the same line (so an
    edit elsewhere in the file changes at most the line number, never which mutant an id names on that line).
    ``sites``: dicts with ``file``, ``line``, ``operator`` in cosmic-ray's occurrence order."""
    seen: Counter = Counter()
    out = []
    for s in sites:
        key = (s["file"], s["line"], s["operator"].split("/")[-1])
        out.append(f"{key[0]}:{key[1]}:{key[2]}:{seen[key]}")
        seen[key] += 1
    return out


def sample_sites(candidates: Sequence[dict], n: int | None, seed: int) -> list[dict]:
    """``n`` mutants drawn with ``random.Random(seed)``: first ``n`` distinct *sites* (file, line, column), each
    equally likely whatever the number of operators that apply there, then one of the site's mutants.  So a line of
    arithmetic does not count six times as much as a comparison; the draw spreads over files in proportion to their
    mutable sites.  ``n`` None: every candidate.  The result is sorted by file (a worker then recompiles one file's
    kernels for consecutive mutants) and is the same for the same candidates and seed."""
    if n is None or n >= len(candidates):
        chosen = list(candidates)
    else:
        by_site: dict[tuple, list[dict]] = defaultdict(list)
        for c in candidates:
            by_site[(c["file"], c["line"], c["col"])].append(c)
        keys = sorted(by_site)
        rng = random.Random(seed)
        picked = rng.sample(keys, min(n, len(keys)))
        chosen = [rng.choice(by_site[k]) for k in picked]
    return sorted(chosen, key=lambda c: (c["file"], c["line"], c["col"], c["operator"], c["occurrence"]))


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def parse_diff_lines(diff: str) -> dict[str, set[int]]:
    """From ``git diff -U0`` output: file -> the line numbers (new side) added or changed."""
    out: dict[str, set[int]] = defaultdict(set)
    current = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip()
            current = path[2:] if path.startswith("b/") else (None if path == "/dev/null" else path)
        elif line.startswith("@@") and current is not None:
            m = _HUNK.match(line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
                out[current].update(range(start, start + count))
    return dict(out)


# ---------------------------------------------------------------------------------------------------- log and report
def read_log(paths: Iterable[Path | str]) -> list[dict]:
    """The records of one or more logs, the last record of each mutant id winning (a re-run replaces)."""
    by_id: dict[str, dict] = {}
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line:
                    rec = json.loads(line)
                    by_id[rec["id"]] = rec
    return list(by_id.values())


def load_triage(path: Path | str = TRIAGE) -> dict[str, dict]:
    p = Path(path)
    if not p.is_file():
        return {}
    with open(p, "rb") as fh:
        return tomllib.load(fh).get("mutant", {})


def triage_for(rec: dict, triage: dict[str, dict]) -> dict | None:
    """The triage entry of a survivor: by id, else (the line moved) by file, operator, k and the line's text."""
    hit = triage.get(rec["id"])
    if hit is not None:
        return hit
    file, _line, op, k = rec["id"].rsplit(":", 3)
    for tid, entry in triage.items():
        tf, _tl, top, tk = tid.rsplit(":", 3)
        if (tf, top, tk) == (file, op, k) and entry.get("line") and entry.get("line") == rec.get("line_text"):
            return entry
    return None


def _rate(k: int, n: int) -> str:
    return f"{k} / {n} ({100.0 * k / n:.0f} %)" if n else "—"


def summarize(records: Sequence[dict], triage: dict[str, dict], key) -> list[dict]:
    """Rows of kill rates grouped by ``key(record)``.  Denominators leave out incompetent mutants and survivors
    triaged as equivalent; a timeout counts as a kill by the stage that was running."""
    rows: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        c = rows[key(r)]
        c["drawn"] += 1
        out = r["outcome"]
        if out == "incompetent":
            c["incompetent"] += 1
            continue
        t = triage_for(r, triage) if out == "survived" else None
        if t is not None and t.get("status") == "equivalent":
            c["equivalent"] += 1
            continue
        c["valid"] += 1
        if r.get("kind") == "machinery":
            c["machinery"] += 1
        cert = out == "killed-by-certificate" or (out == "timeout" and r.get("stage") == "certificate")
        tests = out == "killed-by-tests" or (out == "timeout" and r.get("stage") == "tests")
        c["cert"] += cert
        c["both"] += cert or tests
        c["survived"] += out == "survived"
        c["later"] += out == "survived" and t is not None and t.get("status") == "killed"
    out = []
    for name in sorted(rows):
        c = rows[name]
        impl_valid = c["valid"] - c["machinery"]
        keys = ("drawn", "incompetent", "equivalent", "valid", "machinery", "cert", "both", "survived", "later")
        out.append({"name": name, **{k: c[k] for k in keys}, "impl_valid": impl_valid})
    return out


def _table(rows: Sequence[dict], label: str) -> list[str]:
    lines = [
        f"| {label} | drawn | incompetent | equivalent | certificate alone | certificate + tests | survivors |",
        "|---|---|---|---|---|---|---|",
    ]
    tot: Counter = Counter()
    for r in rows:
        for k, v in r.items():
            if k != "name":
                tot[k] += v
        lines.append(_row(r))
    if len(rows) > 1:
        lines.append(_row({"name": "**all**", **tot}))
    return lines


def _row(r) -> str:
    cert = _rate(r["cert"], r["impl_valid"]) if r["impl_valid"] else "— (tests only)"
    return (
        f"| {r['name']} | {r['drawn']} | {r['incompetent']} | {r['equivalent']} | {cert} | "
        f"{_rate(r['both'], r['valid'])} | {r['survived']} |"
    )


def _runs_table(records: Sequence[dict], triage: dict[str, dict], runs: Sequence[dict], cfg: dict) -> list[str]:
    """One row per run of a resumed session (the log in run order; run j holds the records from its ``before``):
    each part's rates against the code and checks of its own time."""
    bounds = [r["before"] for r in runs[1:]] + [len(records)]
    lines = [
        "By run (a resumed session runs its remaining mutants against the code and checks of its own time, so a "
        "later part measures checks written since on mutants they never saw):",
        "",
        "| run | code and checks of | mutants | paper code: certificate alone | refvi features: certificate alone "
        "| implementation: certificate + tests | verdict machinery: tests |",
        "|---|---|---|---|---|---|---|",
    ]
    for j, run in enumerate(runs):
        part = records[run["before"] : bounds[j]]
        rows = {row["name"]: row for row in summarize(part, triage, lambda r: group_of(r["file"], cfg))}
        impl = [row for row in rows.values() if row["machinery"] == 0]
        paper, mach = rows.get("paper code"), rows.get("verdict machinery")
        feat = next((row for name, row in rows.items() if name.startswith("refvi features")), None)
        lines.append(
            f"| {j + 1} | `{run.get('commit', '?')}`, {run.get('date', '?')} | {len(part)} | "
            f"{_rate(paper['cert'], paper['impl_valid']) if paper else '—'} | "
            f"{_rate(feat['cert'], feat['impl_valid']) if feat else '—'} | "
            f"{_rate(sum(r['both'] for r in impl), sum(r['valid'] for r in impl))} | "
            f"{_rate(mach['both'], mach['valid']) if mach else '—'} |"
        )
    return lines


def _diff_lines(diff: str) -> tuple[str, str]:
    old = new = ""
    for line in (diff or "").splitlines():
        if line.startswith("-") and not line.startswith("---"):
            old = old or line[1:].strip()
        elif line.startswith("+") and not line.startswith("+++"):
            new = new or line[1:].strip()
    return old, new


def _cell(s: str, limit: int = 90, code: bool = True) -> str:
    s = s.replace("|", "\\|")
    if code:
        s = s.replace("`", "'")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def render_block(records: Sequence[dict], triage: dict[str, dict], meta: dict, cfg: dict) -> str:
    """The generated Markdown between the markers of ``docs/verification-power.md``."""
    n = len(records)
    secs = sorted(r["seconds"] for r in records)
    med = secs[len(secs) // 2] if secs else 0.0
    outcome = Counter(r["outcome"] for r in records)
    drawn = ""
    if meta.get("sample") and meta.get("candidates"):
        drawn = f" of {meta['sample']} drawn from {meta['candidates']} candidates"
        if meta.get("budget_minutes") and n < meta["sample"]:
            drawn += (
                f" (run in a seeded random order, a uniform part of the draw, with a {meta['budget_minutes']:g}-minute"
                f" budget; the rest run when the session is resumed)"
            )
    lines = [
        f"Generated by `{meta.get('command', 'python tests/mutation/run.py report --update-docs')}` "
        f"from {n} mutants{drawn} ({', '.join(meta.get('logs', []))}); measured {meta.get('date', '?')} on "
        f"{meta.get('machine', '?')}, commit `{meta.get('commit', '?')}`; cosmic-ray {meta.get('cosmic_ray', '?')}.",
        "",
        "Outcomes: " + ", ".join(f"{k} {outcome[k]}" for k in OUTCOMES if outcome[k]) + ".  Time per mutant "
        f"(wall, on a shared machine): median {med:.0f} s, mean {sum(secs) / max(n, 1):.0f} s, total "
        f"{sum(secs) / 60:.0f} min over {meta.get('workers', '?')} worker(s).",
        "",
        "Rates are of valid mutants: drawn less incompetent (the mutated module does not import, or Numba cannot "
        "type the mutated kernel) and less survivors triaged as equivalent. *Certificate alone* counts the mutants "
        "that a statement fails or errors on (or that time out in the certificate); *certificate + tests* adds the "
        "named unit tests run after it. The verdict machinery is judged by its tests alone.",
        "",
        *_table(summarize(records, triage, lambda r: group_of(r["file"], cfg)), "group"),
        "",
        *_table(summarize(records, triage, lambda r: package_of(r["file"])), "package"),
        "",
        *_table(summarize(records, triage, lambda r: family_of(r["operator"])), "operator"),
        "",
    ]
    if len(meta.get("runs") or ()) > 1 and len(meta.get("logs", ())) == 1:
        lines += [*_runs_table(records, triage, meta["runs"], cfg), ""]
    survivors = sorted((r for r in records if r["outcome"] == "survived"), key=lambda r: r["id"])
    if survivors:
        lines += [
            f"Survivors ({len(survivors)}), triaged in `tests/mutation/triage.toml`:",
            "",
            "| mutant | was | became | triage |",
            "|---|---|---|---|",
        ]
        for r in survivors:
            old, new = _diff_lines(r.get("diff", ""))
            t = triage_for(r, triage)
            if t is None:
                verdict = "**untriaged**"
            elif t.get("status") == "equivalent":
                verdict = f"equivalent: {t.get('reason', '')}"
            elif t.get("status") == "killed":
                verdict = f"killed since by `{t.get('by', '?')}`" + (f": {t['reason']}" if t.get("reason") else "")
            else:
                verdict = f"{t.get('status', '?')}: {t.get('reason', '')}"
            lines.append(f"| `{r['id']}` | `{_cell(old)}` | `{_cell(new)}` | {_cell(verdict, 300, code=False)} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


START, END = "<!-- mutation:start -->", "<!-- mutation:end -->"

SECTION = """
## Blind mutation with cosmic-ray

`python tests/mutation/run.py mutate --sample N --seed S` draws N mutants with [cosmic-ray](https://cosmic-ray.readthedocs.io)'s
operators over `refvi/`, `kernels/` and the verdict machinery of `verification/`, runs for each the statements that
can reach the mutated file (then the unit tests that exercise it), and `python tests/mutation/run.py report
--update-docs` writes the block below from its log (CONTRIBUTING.md, "Mutation testing", says how to read and triage it).

{start}
{end}
"""


def update_doc(text: str, block: str) -> str:
    """``text`` with the generated block between the markers (the section is appended when it has none)."""
    if START not in text:
        text = text.rstrip("\n") + "\n" + SECTION.format(start=START, end=END)
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{block}{END}{tail}"


def rebase_sites(todo: Sequence[dict], candidates: Sequence[dict], taken: set[str], seed: int) -> list[str]:
    """Point the not-yet-run mutants of a resumed session at the code as it is now (in place).

    cosmic-ray applies a mutant by its *occurrence* (the n-th place its operator applies in the file), so an edit
    above a drawn mutant since the draw would make a resumed run mutate another place.  Each mutant in ``todo`` is
    matched in ``candidates`` (the current mutants of its file) by operator, line text, column and its index on the
    line, the nearest line winning; its line, occurrence, end and id are updated.  A mutant whose line no longer
    exists is replaced by a seeded draw of a current mutant of the same file not in ``taken`` (ids already in the
    session), so the sample keeps its size and spread.  Returns one note per changed mutant."""
    rng = random.Random(seed)
    by_key: dict[tuple, list[dict]] = defaultdict(list)
    by_file: dict[str, list[dict]] = defaultdict(list)
    for c in candidates:
        by_key[(c["file"], c["operator"], c["line_text"], c["col"], c["id"].rsplit(":", 1)[1])].append(c)
        by_file[c["file"]].append(c)
    notes = []
    for m in todo:
        alts = by_key.get((m["file"], m["operator"], m["line_text"], m["col"], m["id"].rsplit(":", 1)[1]), [])
        alts = [c for c in alts if c["id"] == m["id"] or c["id"] not in taken]
        if alts:
            new = min(alts, key=lambda c: (abs(c["line"] - m["line"]), c["line"]))
            why = "moved"
        else:
            pool = [c for c in by_file.get(m["file"], []) if c["id"] not in taken]
            if not pool:
                notes.append(f"{m['id']}: its line is gone and its file has no other mutant; it keeps its old place")
                continue
            new = rng.choice(sorted(pool, key=lambda c: c["id"]))
            why = "gone, replaced by a draw from the same file"
        if new["id"] == m["id"] and new["occurrence"] == m["occurrence"]:
            continue
        notes.append(f"{m['id']} -> {new['id']} ({why})")
        taken.discard(m["id"])
        taken.add(new["id"])
        m["rebased_from"] = m["id"]
        for k in ("id", "operator", "line", "col", "end", "occurrence", "line_text"):
            m[k] = new[k]
    return notes
