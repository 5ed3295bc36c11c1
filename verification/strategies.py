"""Shared Hypothesis strategies for the statements: random instances that shrink to instances, not to seeds.

A statement that builds its instance from a NumPy generator (``rng.standard_normal``, ``rng.uniform``, ...) draws that
generator from :data:`RNG`: a :class:`DrawnRNG` whose every number is a Hypothesis choice.  On a failure Hypothesis
shrinks those numbers themselves (toward 0, toward the low end of each range, toward smaller integers), and the
falsifying example prints the numbers the instance was built from, not an opaque seed.  Fixed, named instances keep
plain integer seeds: :func:`rng_of` turns either into a generator.

Ranges: ``standard_normal`` / ``normal`` draw from [-4, 4] standard deviations (bounded, so a shrunk or extreme
instance stays a valid one), ``uniform(a, b)`` from [a, b], ``integers(a, b)`` from a..b-1 (NumPy's convention).
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import strategies as st

_SD = 4.0


class _Tape:
    """The primitive draws of a ``random.Random`` (uniform, random, randrange, randint, choice, sample, shuffle),
    recorded as they are made, or played back from a recording (``r`` None): a drawn instance pickles as its tape,
    so ``--replay`` rebuilds the very instance that failed."""

    def __init__(self, r: random.Random | None, values: list | None = None):
        self._r = r
        self.values: list = [] if values is None else list(values)
        self._pos = 0

    def _draw(self, name, *args):
        if self._r is None:
            if self._pos >= len(self.values):
                raise IndexError("the replayed instance draws more numbers than were recorded")
            v = self.values[self._pos]
            self._pos += 1
            return v
        v = getattr(self._r, name)(*args)
        self.values.append(v)
        return v

    def uniform(self, a, b):
        return self._draw("uniform", a, b)

    def random(self):
        return self._draw("random")

    def randrange(self, a, b):
        return self._draw("randrange", a, b)

    def randint(self, a, b):
        return self._draw("randint", a, b)

    def choice(self, pool):
        return self._draw("choice", pool)

    def sample(self, pool, n):
        return list(self._draw("sample", pool, n))

    def shuffle(self, pool):
        if self._r is None:
            pool[:] = self._draw("shuffle")
        else:
            self._r.shuffle(pool)
            self.values.append(list(pool))


class DrawnRNG:
    """The subset of ``numpy.random.Generator`` the statements use, driven by a Hypothesis-controlled ``Random``;
    ``repr`` lists the draws (the instance).  It pickles as the numbers it has drawn, and the unpickled copy draws
    them again in the same order."""

    def __init__(self, r: random.Random | None, tape: list | None = None):
        self._r = _Tape(r, tape)
        self._log: list[str] = []

    def __reduce__(self):
        return (DrawnRNG, (None, list(self._r.values)))

    def _fill(self, size, one, name):
        if size is None:
            v = one()
            self._log.append(f"{name}={v:.6g}" if isinstance(v, float) else f"{name}={v}")
            return v
        shape = (size,) if np.ndim(size) == 0 else tuple(size)
        out = np.array([one() for _ in range(int(np.prod(shape)))]).reshape(shape)
        self._log.append(f"{name}{list(shape)}={np.array2string(out.ravel(), precision=3, threshold=12)}")
        return out

    def standard_normal(self, size=None):
        return self._fill(size, lambda: self._r.uniform(-_SD, _SD), "normal")

    def normal(self, loc=0.0, scale=1.0, size=None):
        return loc + scale * self.standard_normal(size)

    def uniform(self, low=0.0, high=1.0, size=None):
        if np.ndim(low) or np.ndim(high):
            lo, hi = np.broadcast_arrays(np.asarray(low, float), np.asarray(high, float))
            flat = [self._r.uniform(a, b) for a, b in zip(lo.ravel(), hi.ravel(), strict=True)]
            self._log.append(f"uniform{list(lo.shape)}")
            return np.array(flat).reshape(lo.shape)
        return self._fill(size, lambda: self._r.uniform(float(low), float(high)), "uniform")

    def random(self, size=None):
        return self._fill(size, self._r.random, "random")

    def integers(self, low, high=None, size=None, endpoint=False):
        lo, hi = (0, low) if high is None else (low, high)
        hi = int(hi) + (1 if endpoint else 0)
        return self._fill(size, lambda: self._r.randrange(int(lo), hi), "integers")

    def choice(self, a, size=None, replace=True):
        pool = list(range(a)) if np.ndim(a) == 0 else list(a)
        if size is None:
            v = self._r.choice(pool)
            self._log.append(f"choice={v}")
            return v
        n = int(np.prod((size,) if np.ndim(size) == 0 else size))
        picks = [self._r.choice(pool) for _ in range(n)] if replace else self._r.sample(pool, n)
        self._log.append(f"choice[{n}]={picks}")
        return np.array(picks).reshape(size)

    def poisson(self, lam=1.0, size=None):
        """A count in 0 .. lam + 6 sqrt(lam) + 5 (the Poisson's bulk), shrinking to 0."""
        top = int(float(lam) + 6.0 * float(lam) ** 0.5 + 5.0)
        return self._fill(size, lambda: self._r.randint(0, top), "poisson")

    def exponential(self, scale=1.0, size=None):
        return self._fill(size, lambda: float(scale) * self._r.uniform(0.0, 8.0), "exponential")

    def dirichlet(self, alpha, size=None):
        a = np.asarray(alpha, dtype=float)
        w = np.array([self._r.uniform(1e-3, 1.0) for _ in range(a.size)]) * a
        self._log.append(f"dirichlet[{a.size}]")
        return w / w.sum()

    def permutation(self, x):
        pool = list(range(x)) if np.ndim(x) == 0 else list(x)
        self._r.shuffle(pool)
        return np.array(pool)

    def __repr__(self) -> str:
        return "DrawnRNG(" + ", ".join(self._log) + ")"


#: a source of random instance parameters that Hypothesis shrinks draw by draw
RNG = st.randoms(use_true_random=False).map(DrawnRNG)


def rng_of(source) -> np.random.Generator | DrawnRNG:
    """A generator for an instance: a drawn :class:`DrawnRNG` as is, an integer seed (fixed instances) through
    ``numpy.random.default_rng``."""
    if isinstance(source, (DrawnRNG, np.random.Generator)):
        return source
    return np.random.default_rng(int(source))
