"""refvi.fit as stages: following a target through fit visits validate, frame, step, loop, outcome and map back, each
once and in that order, with the frame or without, for SGD and for seed 002's gradient descent."""

import importlib

import numpy as np
import pytest

import refvi
from refvi.targets import Gaussian

F = importlib.import_module("refvi.optim.fit")  # the module (refvi.optim.fit is also the function's name)
FR = importlib.import_module("refvi.optim.frame")

ORDER = ["validate", "frame", "step", "loop", "outcome", "back"]


@pytest.fixture
def visits(monkeypatch):
    seen = []

    def spy(owner, name, label):
        real = getattr(owner, name)

        def wrapped(*args, **kwargs):
            seen.append(label)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapped)

    spy(F, "_validate", "validate")
    spy(FR, "build", "frame")
    spy(F, "_choose_step", "step")
    spy(F, "_run", "loop")
    spy(F, "_outcome", "outcome")
    spy(FR.Framed, "back", "back")
    return seen


G = Gaussian(np.array([1.0, -2.0]), np.array([[4.0, 1.0], [1.0, 2.0]]))


@pytest.mark.parametrize(
    "kwargs",
    [
        {},  # the Laplace frame, its step rule
        {"frame": None},  # the paper's algorithm, 1/M
        {"method": "proj-sgd", "step_size": 0.05},
        {"method": "gd-prox"},
    ],
)
def test_each_stage_once_in_order(visits, kwargs):
    res = refvi.fit(G, steps=200, diagnose=0, **kwargs)
    assert visits == ORDER
    assert (res.frame is not None) == (kwargs == {})


def test_a_bad_argument_stops_at_validation(visits):
    with pytest.raises(ValueError, match="samples must be an integer >= 1"):
        refvi.fit(G, steps=200, samples=0)
    assert visits == ["validate"]  # before any frame search
