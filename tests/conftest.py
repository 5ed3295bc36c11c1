"""Test configuration: Hypothesis profiles (ci = default, fast; deep = many examples) and single-threaded Numba."""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_header(config):
    return f"hypothesis profile: {settings._current_profile}; REFVI_PROFILE={os.environ.get('REFVI_PROFILE', 'ci')}"
