"""000.claim-fit with frames optional: an implementation without affine frames (capabilities decline ``frame``, or
``supports`` declines it and there is no ``frame`` method) gets its plain Prox-SGD / Proj-SGD runs checked; each
framed run is a declined instance, counted, never the whole statement."""

import importlib

from refvi.verification.examples.numpy_adapter import NumpyImplementation
from refvi.verification.running import runner

S = importlib.import_module("refvi.verification.statement")

FRAMED_INSTANCES = 10  # six Gaussian targets, one linear and two logistic regressions, a NumPy model, each in a frame


class _CapabilitiesDeclineFrames(NumpyImplementation):
    name = "numpy-no-frames"
    capabilities = {"frame": (None,)}


class _SupportsDeclinesFrames(NumpyImplementation):
    name = "numpy-no-frame-method"
    frame = None                                     # no frame method at all: the Laplace instance is declined too

    def supports(self, method, arguments):
        return arguments.get("frame") is None or "no affine frames"


def test_claim_fit_runs_its_plain_paths_and_counts_the_declined_frames():
    runner.load_statements()
    for impl in (_CapabilitiesDeclineFrames(), _SupportsDeclinesFrames()):
        rec = runner.run_statement(S.REGISTRY["000.claim-fit"], impl)
        assert rec["verdict"] == "pass", rec
        assert rec["instances_skipped"] == FRAMED_INSTANCES, rec
        assert rec["examples"] == 13 and "fit" in rec["methods"], rec
