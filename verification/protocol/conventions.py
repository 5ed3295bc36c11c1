"""The conventions of the protocols that a statement relies on beyond a method's name and shapes, each stated on the
method's docstring and on its paper's protocol page (``docs/protocol-*.md``).

A convention belongs to protocol methods (dotted names, as in a statement's ``uses``), so the conventions a
statement relies on are those of the methods it uses: :func:`of_statement`.  ``python -m refvi.verification --list``
prints them under each statement.  ``tests/verification/test_conventions.py`` checks that every convention's
``phrase`` is written, word for word, in the docstring of each of its methods and on its protocol page, so that an
outside maintainer finds it where they read, not by failing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable


@dataclasses.dataclass(frozen=True)
class Convention:
    """One convention: a short ``name``, the protocol ``methods`` it applies to, the ``page`` that states it
    (``docs/<page>``), and the ``phrase`` both the docstrings and the page contain (compared without markup)."""

    name: str
    methods: tuple[str, ...]
    page: str
    phrase: str


#: every convention, by paper: what the statements rely on beyond the methods' names and shapes
CONVENTIONS: tuple[Convention, ...] = (
    # ---- seed 000 / 002: the core protocol
    Convention(
        "base samples as given",
        ("energy", "entropy", "stl", "score"),
        "protocol-core.md",
        "the plain mean over the rows of U, as given (never re-sampled)",
    ),
    Convention(
        "gradients projected onto V",
        ("energy", "entropy", "stl", "score", "grad_neg_entropy"),
        "protocol-core.md",
        "every gradient with respect to C is returned projected onto V",
    ),
    Convention(
        "optimizer base samples per step",
        ("prox_sgd", "proj_sgd"),
        "protocol-core.md",
        "step t uses the rows of U[t] (U of shape (T, S, d))",
    ),
    Convention(
        "average over w^0..w^T",
        ("prox_sgd", "proj_sgd"),
        "protocol-core.md",
        "weights of length T + 1 over w^0..w^T; weights=None returns the last iterate twice",
    ),
    # ---- seed 003: the online protocol
    Convention(
        "online update rules",
        ("online.run", "online.run_adversarial"),
        "protocol-online.md",
        "row t of M is the mean the learner predicts with in round t (the state before the update)",
    ),
    Convention(
        "online boxes after each step",
        ("online.run", "online.run_nn", "online.run_adversarial"),
        "protocol-online.md",
        "the boxes mbox, sbox are per-coordinate projections applied after each step",
    ),
    Convention(
        "run_nn start clipped into the box",
        ("online.run_nn",),
        "protocol-online.md",
        "m0 is the prior mean and the start of m, clipped into the box [-mbox, mbox] first",
    ),
    Convention(
        "EWA on an empty stream",
        ("online.ewa_1d",),
        "protocol-online.md",
        "an empty stream (data = []) is a valid input: it returns no rounds and log_norm = [0] (a refusal is an error)",
    ),
    Convention(
        "expected loss at sigma = 0",
        ("online.expected_loss",),
        "protocol-online.md",
        "sigma = 0: the point loss and a subgradient",
    ),
    # ---- seed 004: the NGVI protocol
    Convention(
        "NGD runs start from natural parameters",
        ("ngvi.blr_run", "ngvi.blr_trajectory", "ngvi.glm_ngd", "ngvi.glm_ngd_exact"),
        "protocol-ngvi.md",
        "init is the natural parameters (lam, Lam)",
    ),
    Convention(
        "SGD baseline starts from (m, C)",
        ("ngvi.blr_sgd", "ngvi.glm_sgd"),
        "protocol-ngvi.md",
        "init is the moment parameters (m, C), C lower triangular",
    ),
    Convention(
        "NGD estimator names",
        ("ngvi.glm_ngd", "ngvi.glm_ngd_history"),
        "protocol-ngvi.md",
        'estimator is "price" (Eq. 11) or "autodiff" (Algorithm 1)',
    ),
    Convention(
        "SGD baseline estimator names",
        ("ngvi.glm_sgd", "ngvi.glm_sgd_history"),
        "protocol-ngvi.md",
        'estimator is "price" or "reparam"',
    ),
    Convention(
        "mini-batches of row indices",
        ("ngvi.blr_run", "ngvi.blr_stochastic_grad", "ngvi.glm_ngd", "ngvi.glm_sgd", "ngvi.blr_sgd"),
        "protocol-ngvi.md",
        "mini-batches are integer row indices (repeats allowed), the batch rescaled by n/m",
    ),
)


def normalize(text: str) -> str:
    """Text without markup (back-quotes, emphasis, escapes) and with single spaces, for comparing a phrase."""
    text = re.sub(r"[`*\\]", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def of_methods(methods: Iterable[str]) -> list[Convention]:
    """The conventions of these protocol methods (dotted names), in the order of :data:`CONVENTIONS`."""
    chosen = set(methods)
    return [c for c in CONVENTIONS if chosen & set(c.methods)]


def of_statement(st) -> list[Convention]:
    """The conventions a statement relies on: those of the protocol methods it declares in ``uses``."""
    return of_methods(st.uses or ())
