"""How the recorder names a protocol call's arguments (``recorder._bind``): the capabilities, ``supports()`` and the
call log see them by name.  Its fast path for plain signatures must give exactly what ``inspect`` gives."""

import inspect

from hypothesis import example, given
from hypothesis import strategies as st

from refvi.verification.protocol import recorder
from refvi.verification.protocol.core import Implementation


def _energy(self, target, m, C, U, structure="tril"): ...


def _varargs(self, a, *rest, b=2, **more): ...


NAMES = ["target", "m", "C", "U", "structure", "a", "b", "other"]


@given(
    n_args=st.integers(0, 6),
    keywords=st.lists(st.sampled_from(NAMES), unique=True, max_size=4),
    spec=st.sampled_from([_energy, _varargs, Implementation.energy, Implementation.fit_as_user]),
)
@example(n_args=2, keywords=["m"], spec=_energy)  # m given twice: inspect refuses, the keywords are kept
@example(n_args=6, keywords=[], spec=_energy)  # too many positional arguments
@example(n_args=1, keywords=["U", "m"], spec=_energy)  # keywords in another order than the signature's
def test_bind_names_the_arguments_as_inspect_does(n_args, keywords, spec):
    sig = recorder._signature(spec)
    args = tuple(f"arg{i}" for i in range(n_args))
    kwargs = {k: f"kw-{k}" for k in keywords}
    got = recorder._bind(sig, args, kwargs)
    want = recorder._bind_by_inspect(sig, args, kwargs)
    assert got == want and list(got) == list(want)  # the same names, values and order


def test_the_fast_path_is_taken_for_plain_signatures_only():
    assert recorder._simple_parameters(recorder._signature(_energy)) is not None
    assert recorder._simple_parameters(recorder._signature(_varargs)) is None
    assert recorder._bind(None, (1,), {"x": 2}) == {"x": 2}
    assert inspect.signature(_energy).parameters  # the spec's self is dropped by _signature
    assert "self" not in recorder._bind(recorder._signature(_energy), (1, 2, 3, 4), {})


def test_a_method_or_sub_adapter_that_is_none_or_absent_is_missing_but_an_attribute_error_inside_one_is_not():
    """recording(impl): a protocol method or sub-adapter set to None, or absent, is MissingMethod (the instance is
    declined); an AttributeError raised inside the implementation's own property is a bug of the implementation
    and propagates as it is; statements cannot write to the implementation."""
    import pytest

    from refvi.verification.protocol import recording

    class Impl:
        name = "partial"
        entropy = None  # declared absent
        online = None

        @property
        def boosting(self):
            return self._broken  # an AttributeError of the implementation's own making

        helper = object()

        @property
        def score(self):
            return self.helper.cache  # an AttributeError about another object (the helper)

    view = recording(Impl(), {})
    for attr, message in (("entropy", "method 'entropy'"), ("energy", "method 'energy'"),
                          ("online", r"sub-adapter .online. \(OnlineProtocol\)"), ("ngvi", "sub-adapter 'ngvi'")):
        with pytest.raises(recorder.MissingMethod, match=message):
            getattr(view, attr)
    with pytest.raises(AttributeError, match="_broken"):
        view.boosting  # noqa: B018
    with pytest.raises(AttributeError, match="'object' object has no attribute 'cache'"):
        view.score  # noqa: B018
    with pytest.raises(AttributeError, match="read-only to statements"):
        view.energy = None
