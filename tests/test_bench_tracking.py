"""The benchmark-tracking gate (tests/benchmarks/track.py): ratios land in pytest-benchmark's extra_info, the
committed baseline passes against itself, and a planted slowdown of one kernel fails the gate."""

import copy
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
import track  # noqa: E402


def _run(times):
    """A pytest-benchmark JSON with one group per entry: {group: {impl: min seconds}}."""
    return {"benchmarks": [{"group": g, "params": {"impl": impl}, "stats": {"min": t}, "extra_info": {}}
                           for g, impls in times.items() for impl, t in impls.items()]}


TIMES = {"logistic energy": {"kernel": 2.0e-5, "numpy": 4.0e-5, "floor": 1.8e-5},
         "one FW iteration": {"refvi": 1.0e-3, "numpy": 3.0e-3},
         "Prox-SGD loop": {"numba_loop": 0.1, "numpy_loop": 0.9},
         "unpaired": {"kernel": 1.0}}


def test_ratios_go_into_extra_info():
    run = _run(TIMES)
    track.add_ratios(run)
    info = {(b["group"], b["params"]["impl"]): b["extra_info"] for b in run["benchmarks"]}
    assert info[("logistic energy", "kernel")] == {"ratio_to_numpy": 0.5, "ratio_to_floor": pytest.approx(2 / 1.8)}
    assert info[("one FW iteration", "refvi")]["ratio_to_numpy"] == pytest.approx(1 / 3)
    assert info[("Prox-SGD loop", "numba_loop")]["ratio_to_numpy"] == pytest.approx(1 / 9)
    assert info[("logistic energy", "numpy")] == {} and info[("unpaired", "kernel")] == {}


def test_gate_passes_on_noise_and_fails_on_a_planted_slowdown(tmp_path, monkeypatch):
    base = track.group_ratios(_run(TIMES))
    assert track.compare(base, base) == []
    noisy = copy.deepcopy(TIMES)
    noisy["logistic energy"]["kernel"] *= 1.3                 # within the tolerance
    assert track.compare(track.group_ratios(_run(noisy)), base) == []
    slow = copy.deepcopy(TIMES)
    slow["one FW iteration"]["refvi"] *= 2.0                  # a kernel made 2x slower
    bad = track.compare(track.group_ratios(_run(slow)), base)
    assert len(bad) == 1 and bad[0].startswith("one FW iteration")
    # the command: exit 1 on the regression, 0 on the baseline itself
    monkeypatch.setattr(track, "BASELINE", tmp_path / "baseline.json")
    track.BASELINE.write_text(json.dumps(base))
    (tmp_path / "slow.json").write_text(json.dumps(_run(slow)))
    (tmp_path / "same.json").write_text(json.dumps(_run(TIMES)))
    assert track.main(["compare", str(tmp_path / "slow.json")]) == 1
    assert track.main(["compare", str(tmp_path / "same.json")]) == 0


def test_committed_baseline_covers_the_benchmark_groups():
    base = json.loads(track.BASELINE.read_text())
    assert len(base) >= 40
    assert all(r["numpy"] > 0 for r in base.values())
    history = [json.loads(line) for line in track.HISTORY.read_text().splitlines() if line.strip()]
    assert history and all({"commit", "date", "ratios"} <= set(e) for e in history)


def test_check_leaves_the_tracked_history_alone_unless_asked(tmp_path, monkeypatch):
    """``track.py check`` compares; only ``check --record`` (and ``update-baseline``) append to history.jsonl."""
    monkeypatch.setattr(track, "BASELINE", tmp_path / "baseline.json")
    monkeypatch.setattr(track, "HISTORY", tmp_path / "history.jsonl")
    monkeypatch.setattr(track, "run_benchmarks", lambda out: _run(TIMES))
    monkeypatch.setattr(track, "_commit", lambda: "abc1234")
    (tmp_path / "baseline.json").write_text(json.dumps(track.group_ratios(_run(TIMES))))
    assert track.main(["check"]) == 0
    assert not (tmp_path / "history.jsonl").exists()
    assert track.main(["check", "--record"]) == 0
    assert len((tmp_path / "history.jsonl").read_text().splitlines()) == 1
