"""pytest-benchmark: every saved run records, per benchmark of refvi's code, its time as a RATIO to the plain-NumPy
reference of the same group measured in the same run (and to the arithmetic floor where the group has one), in
``extra_info``.  Absolute times are meaningless across our shared machines; these ratios are what
``tests/benchmarks/track.py`` compares with the committed baseline."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from track import add_ratios  # noqa: E402


def pytest_benchmark_update_json(config, benchmarks, output_json):
    add_ratios(output_json)
