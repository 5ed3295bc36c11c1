"""A degenerate instance refvi does not serve yet, kept out of 000.claim-degenerate-data until it does: a logistic
regression whose rows are two distinct rows repeated three times, each with one label (separable data; only the
prior keeps the optimum finite).  The oracle's Newton solver finds the VI optimum; refvi.optim.exact.solve's fixed
point stalls above a gradient norm of 1e-8 and raises RuntimeError.  When this test XPASSes, add the instance to the
statement (verification/statements/convergence_000/degenerate.py) and delete this file."""

import numpy as np
import pytest

from refvi.verification.oracles import vi_objective as vo
from refvi.verification.protocol import targets as specs
from refvi.verification.protocol.refvi_impl import REFVI


@pytest.mark.xfail(strict=True, raises=RuntimeError, reason="refvi.optim.exact.solve stalls on separable data")
@pytest.mark.parametrize("structure", ["tril", "sym"])
def test_exact_optimum_on_separable_duplicated_rows(structure):
    rows = np.array([[0.19328415, -1.14312289, -0.71675159], [-2.49610419, 3.93551955, 1.98536695]])
    X, y = np.vstack([rows] * 3), np.tile([-1.0, 1.0], 3)
    model = {"kind": "logistic", "X": X, "y": y, "prior_scale": 1.791445485312492}
    mo, Co, fo = vo.solve(model, structure)
    m, C, f = REFVI.exact_optimum(specs.from_model(model), structure)
    np.testing.assert_allclose(f, fo, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(m, mo, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(C @ C.T, Co @ Co.T, rtol=1e-6, atol=1e-6)
