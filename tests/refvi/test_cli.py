"""The refvi console script: fit on a bundled data set prints a summary; errors exit with status 2."""

from refvi.cli import main


def test_fit_prints_summary(capsys):
    assert main(["fit", "wine", "--steps", "4000", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "wine: LogisticRegression" in out and "us/step" in out and "posterior mean" in out


def test_fit_gd_and_bad_input(capsys):
    assert main(["fit", "diabetes", "--method", "gd-prox", "--steps", "5", "--no-progress"]) == 1   # 5 steps: not converged
    assert main(["fit", "nope", "--steps", "5"]) == 2
    assert main(["fit", "wine", "--steps", "0"]) == 2
    assert "steps T must be >= 1" in capsys.readouterr().err


def test_existing_subcommands(capsys):
    assert main(["datasets"]) == 0
    assert "breast_cancer" in capsys.readouterr().out
