"""How hard a statement looks: the ``ci`` and ``deep`` profiles (Hypothesis examples per site, Monte Carlo scale)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Profile:
    """How hard to look: Hypothesis examples per ``forall`` and a multiplier for Monte Carlo repetitions."""

    name: str
    max_examples: int
    mc_scale: int


PROFILES = {
    "ci": Profile("ci", max_examples=20, mc_scale=1),
    "deep": Profile("deep", max_examples=400, mc_scale=8),
}
