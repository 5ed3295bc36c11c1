"""What a certificate run produces, byte for byte: the printed table, summary, value coverage, per-paper block and
comparison with refvi's own run; the JSON certificate; the JUnit XML; the reproducers and a replay of one.

A fixed selection of nine statements (exact, symbolic, statistical, oracle-only, bad-input, Hypothesis-drawn, one
with an erratum, from four papers) runs against the NumPy example with two bugs of the zoo planted, so that some fail
and some pass, and is compared with refvi (``--compare refvi``).  Wall times and temporary paths are masked, and the
JSON's floats are kept to 6 significant digits; everything else must be as recorded in ``golden/``.  A change of the
verdict machinery that changes any of it fails here: after an intended change, rerun with ``REFVI_UPDATE_GOLDEN=1``
to rewrite ``golden/`` and review its diff like code.  (Subprocesses, as a user runs it: inside pytest, Hypothesis's
own plugin may change what a derandomized run draws.)"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
IDS = ["000.def4", "000.lemma31", "000.claim-theta-averages", "002.lemma11", "000.claim-bad-input",
       "000.claim-target-models", "000.thm7", "004.lemma4", "001.eq10"]
IMPL = """\
from refvi.verification.examples.bug_zoo import load_zoo

_zoo = load_zoo()
IMPL = _zoo["prox-accepts-upper-entries"].build(_zoo["energy-mean-factor"].build())
"""


def _cli(cwd, *args):
    proc = subprocess.run([sys.executable, "-m", "refvi.verification", "--no-progress", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def _short(match) -> str:
    return f"{float(match.group(0)):.6g}"


def _mask_text(text: str, tmp: Path) -> str:
    """Temporary paths, wall times ("(0.01 s)" and the table's seconds column, a right-aligned field under the
    header's 'seconds'), and numbers printed to more than 6 decimals cut to 6 significant digits."""
    text = text.replace(str(tmp), "<tmp>")
    text = re.sub(r"\(\d+\.\d+ s\)", "(<s>)", text)
    text = re.sub(r"-?\d+\.\d{7,}(?:e[-+]?\d+)?", _short, text)
    out, col = [], None
    for line in text.splitlines():
        if line.startswith("statement ") and " seconds " in line:
            col = line.index(" seconds ") + 1
        elif col is not None and re.match(r"\d{3}\.\S+ ", line) and len(line) > col + 7:
            line = line[:col] + "   <s> " + line[col + 7:]
        out.append(line)
    return "\n".join(out) + "\n"


def _mask_json(obj, tmp: Path):
    if isinstance(obj, dict):
        return {k: ("<s>" if k == "seconds" else _mask_json(v, tmp)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_mask_json(v, tmp) for v in obj]
    if isinstance(obj, float):
        return float(f"{obj:.6g}")
    if isinstance(obj, str):
        return obj.replace(str(tmp), "<tmp>")
    return obj


def _outputs(tmp: Path) -> dict[str, str]:
    (tmp / "golden_impl.py").write_text(IMPL, encoding="utf-8")
    out = {}
    code, stdout, stderr = _cli(tmp, "--select", *IDS, "--impl", "golden_impl:IMPL", "--json", "cert.json",
                                "--junit-xml", "cert.xml", "--artifacts", "art", "--compare", "refvi")
    out["run.txt"] = f"exit {code}\n--- stdout\n{stdout}--- stderr\n{stderr}"
    out["certificate.txt"] = json.dumps(_mask_json(json.loads((tmp / "cert.json").read_text()), tmp), indent=1) + "\n"
    out["cert.xml"] = re.sub(r'time="[0-9.]+"', 'time="<s>"', (tmp / "cert.xml").read_text())
    for f in sorted((tmp / "art").glob("*.py")):
        out[f"art-{f.name}.txt"] = f.read_text()
    code, stdout, stderr = _cli(tmp, "--replay", "art/000.def4.npz", "--impl", "golden_impl:IMPL")
    out["replay.txt"] = f"exit {code}\n--- stdout\n{stdout}--- stderr\n{stderr}"
    return {k: v if k == "certificate.txt" else _mask_text(v, tmp) for k, v in out.items()}


def test_a_certificate_run_writes_what_it_wrote_before(tmp_path):
    got = _outputs(tmp_path)
    if os.environ.get("REFVI_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        for old in GOLDEN.iterdir():
            old.unlink()
        for name, text in got.items():
            (GOLDEN / name).write_text(text, encoding="utf-8")
    want = {p.name: p.read_text(encoding="utf-8") for p in sorted(GOLDEN.iterdir())}
    assert sorted(got) == sorted(want), "a different set of outputs (REFVI_UPDATE_GOLDEN=1 rewrites golden/)"
    for name in sorted(want):
        assert got[name] == want[name], f"{name} differs from tests/verification/golden/{name}"
