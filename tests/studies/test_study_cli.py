import argparse

import matplotlib

matplotlib.use("Agg")

from cvstats.studies.cli import add_study_parser, main  # noqa: E402


def test_cli_regression_writes_outputs(tmp_path, capsys):
    code = main(
        ["study", "nb-regression", "--sim", "1", "--datasets", "4", "--out", str(tmp_path),
         "--J", "5", "--M", "5", "--R", "3", "--quiet"]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "ρ_A(100,100)" in out and "corrected_resampled_t" in out
    assert (tmp_path / "nb-regression-sim1-power.png").exists()
    assert (tmp_path / "nb-regression-sim1-rates.nc").exists()
    assert list(tmp_path.glob("nb-regression-sim1-batch*.nc"))


def test_add_study_parser_hooks_into_a_parser():
    parser = argparse.ArgumentParser()
    add_study_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["study", "nb-classification", "--sim", "2", "--out", "x", "--n-jobs", "2"]
    )
    assert (args.study, args.sim, args.n_jobs) == ("nb-classification", [2], 2)
    assert args.datasets == 1000
    assert callable(args.func)


def test_cli_bengio_grandvalet_experiments(tmp_path, capsys):
    assert main(["study", "bg-experiment1", "--out", str(tmp_path), "--replicates", "20"]) == 0
    out = capsys.readouterr().out
    assert "ratio1" in out and "Experiment 1" in out
    assert (tmp_path / "bg-experiment1.png").exists() and (tmp_path / "bg-experiment1.nc").exists()
    assert main(["study", "bg-experiment2", "--out", str(tmp_path), "--replicates", "20"]) == 0
    out = capsys.readouterr().out
    assert "share_gamma" in out and "against-K" in out
    for name in ("bg-experiment2-n.png", "bg-experiment2-K.png", "bg-experiment2-outliers.nc"):
        assert (tmp_path / name).exists()


def test_cli_tree_option(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_study_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["study", "nb-letter", "--out", "x"])
    assert args.tree == "auto"
    code = main(
        ["study", "nb-classification", "--sim", "1", "--datasets", "2", "--out", str(tmp_path),
         "--J", "5", "--M", "5", "--R", "3", "--truth-sets", "0", "--tree", "batched", "--quiet"]
    )  # fmt: skip
    assert code == 0
    assert "corrected_resampled_t" in capsys.readouterr().out
