"""The public estimators' fused input check (:func:`refvi.kernels.checked.inputs_status`): a status per kind of bad
input, and OK for every valid input of both structures it serves, so the fast path is taken (a wrongly refused valid
input would only fall back to the slow validation: same numbers, nothing else would see it)."""

import numpy as np
import pytest

from refvi.kernels import checked as K
from refvi.kernels.structure import DIAG, TRIL


def _status(m, C, U, code):
    return K.inputs_status(np.ascontiguousarray(m), np.ascontiguousarray(C), np.ascontiguousarray(U), len(m), code)


@pytest.mark.parametrize("code", [TRIL, DIAG])
def test_valid_inputs_of_each_structure_are_ok(code):
    d = 4
    C = np.diag([1.0, 2.0, 3.0, 0.5])
    if code == TRIL:
        C[2, 0], C[3, 1] = -1.5, 0.25
    assert _status(np.zeros(d), C, np.ones((3, d)), code) == K.OK


@pytest.mark.parametrize("code", [TRIL, DIAG])
def test_each_bad_input_has_its_status(code):
    d, m, U = 3, np.zeros(3), np.ones((2, 3))
    C = np.diag([1.0, 2.0, 3.0])
    up = C.copy()
    up[0, 2] = 1e-300  # above the diagonal: outside V for both
    assert _status(m, up, U, code) == K.OUTSIDE_V
    low = C.copy()
    low[2, 1] = 0.5  # below the diagonal: in V for tril, outside for diag
    assert _status(m, low, U, code) == (K.OK if code == TRIL else K.OUTSIDE_V)
    nan_in = C.copy()
    nan_in[1, 1] = np.nan
    assert _status(m, nan_in, U, code) == K.BAD_C
    nan_out = C.copy()
    nan_out[0, 1] = np.nan  # a NaN outside V fails too
    assert _status(m, nan_out, U, code) == K.OUTSIDE_V
    neg = C.copy()
    neg[2, 2] = -1.0
    assert _status(m, neg, U, code) == K.NOT_IN_DOMAIN
    assert _status(np.array([0.0, np.inf, 0.0]), C, U, code) == K.BAD_M
    assert _status(m, C, np.array([[0.0, np.nan, 0.0]]), code) == K.BAD_U
    assert _status(m, C, np.ones((0, d)), code) == K.BAD_SHAPE
    assert _status(np.zeros(d), C, np.ones((2, d + 1)), code) == K.BAD_SHAPE
