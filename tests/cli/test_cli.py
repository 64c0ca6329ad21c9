"""The ``cvstats`` command line: demo, table, describe, plan, errors, --version, --help."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import cvstats
from cvstats.cli import describe, main

SMALL_DEMO = ["demo", "--J", "3", "--M", "2", "--R", "2", "--quiet"]


def _run(argv):
    """Run ``main(argv)``; return (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "demo.nc"
    status, text, _ = _run([*SMALL_DEMO, "--out", str(out)])
    assert status == 0
    return out, text


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = cvstats.designs.nadeau_bengio(60, 6, J=4, M=2, R=2, seed=1)
    rng = np.random.default_rng(1)
    losses = (rng.random((d.sizes["split"], 60, 3)) < [0.2, 0.3, 0.5]).astype(float)
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b", "c"], name="zero_one")
    path = tmp_path_factory.mktemp("cube") / "cube.nc"
    cvstats.save(cube, path)
    return path


@pytest.fixture(scope="module")
def pilot(tmp_path_factory):
    """A pilot of 5 random splits (n = 150, n2 = 15) of two learners' squared losses."""
    d = cvstats.designs.resampled(150, 15, J=5, seed=3)
    rng = np.random.default_rng(11)
    losses = rng.gamma(2.0, 0.5, size=(5, 150, 2)) + rng.normal(size=(5, 1, 2)) * 0.05
    cube = cvstats.from_arrays(losses, design=d, models=["ridge", "knn"], name="squared")
    path = tmp_path_factory.mktemp("pilot") / "pilot.nc"
    cvstats.save(cube, path)
    return path


# --------------------------------------------------------------------------
# demo
# --------------------------------------------------------------------------


def test_demo_runs_and_saves(demo):
    out, text = demo
    cube = cvstats.open_cube(out)
    assert cube.attrs["design"] == "nadeau_bengio"
    assert cube.sizes["model"] == 3
    assert cube.sizes["split"] == 3 * (1 + 2 * 2) + 2 * 3 + 10
    assert str(describe(cube)) in text
    assert "design 'nadeau_bengio', n = 569, seed = 0" in text
    for block, count in [("main", 3), ("half", 12), ("replicate", 6), ("5x2", 10)]:
        assert f"  {block:<9}  {count:>6}" in text
    # the printed mean loss per model is the main-block mean of split means
    main_block = cube.isel(split=(cube.block == "main").values)
    tree = float(main_block.sel(model="tree").mean("example").mean("split"))
    assert f"tree         {tree:.4f}" in text
    assert f"saved to {out}" in text
    assert "Comparison" in text and "zero_one ~ model" in text


def test_demo_compares_roc_auc_from_the_same_fits(demo):
    out, text = demo
    auc_path = out.with_name("demo-auc.nc")
    auc = cvstats.open_cube(auc_path)
    cube = cvstats.open_cube(out)
    assert auc.name == "roc_auc" and auc.attrs["metric"] == "roc_auc"
    assert bool(auc.attrs["greater_is_better"])
    assert "example" not in auc.dims and auc.sizes["model"] == 3
    for coord in ("split", "block", "n_train", "half", "side", "replicate"):
        np.testing.assert_array_equal(auc[coord].values, cube[coord].values)
    np.testing.assert_array_equal(auc["n_test"].values, cube.notnull().sum("example")[:, 0])
    assert ((auc > 0.5) & (auc <= 1)).all()  # three decent classifiers
    section = text[text.index("ROC AUC of the same fits") :]
    assert "higher is better" in section.splitlines()[0]
    means = auc.isel(split=(auc.block == "main").values).mean("split")
    for model in ("logreg", "tree", "naive_bayes"):
        assert f"  {model:<12} {float(means.sel(model=model)):.4f}" in section
    assert f"saved to {auc_path}" in section
    expected = cvstats.compare(
        cvstats.pairwise(auc), methods=["corrected_resampled_t", "conservative_z"]
    )
    assert expected.summary().as_text() in section
    assert f"cvstats table {auc_path} --pairwise --methods" in section


def test_demo_scores_with_sklearns_roc_auc_name(tmp_path, monkeypatch):
    import cvstats.designs.collect as collect_module

    asked = []
    real = collect_module.collect

    def recording(*args, **kwargs):
        asked.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(collect_module, "collect", recording)
    status, _, _ = _run([*SMALL_DEMO, "--out", str(tmp_path / "demo.nc")])
    assert status == 0 and len(asked) == 1
    # the route users take: the scorer name, whose direction scikit-learn gives
    assert asked[0]["scoring"] == "roc_auc" and asked[0].get("greater_is_better") is None


def test_demo_without_auc(tmp_path):
    out = tmp_path / "losses.nc"
    status, text, _ = _run([*SMALL_DEMO, "--no-auc", "--out", str(out)])
    assert status == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["losses.nc"]
    assert "ROC AUC" not in text


def test_demo_refuses_foreign_files_before_fitting(tmp_path):
    out = tmp_path / "demo.nc"
    foreign = tmp_path / "demo-auc.nc"
    xr.Dataset({"x": ("a", np.arange(3.0))}).to_netcdf(foreign, engine="h5netcdf")
    before = foreign.read_bytes()
    status, text, err = _run([*SMALL_DEMO, "--out", str(out)])
    assert status == 2 and text == ""  # refused before the data were even announced
    assert err.startswith("cvstats: error: `--out` ") and len(err.splitlines()) == 1
    assert "is not a cube written by cvstats" in err
    assert foreign.read_bytes() == before and not out.exists()


# --------------------------------------------------------------------------
# errors: one line, status 2, no traceback
# --------------------------------------------------------------------------


def _files(tmp_path):
    (tmp_path / "text.nc").write_text("hello, not a cube\n")
    (tmp_path / "empty.nc").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "afile").write_text("keep me")
    xr.Dataset({"x": ("a", np.arange(3.0))}).to_netcdf(tmp_path / "plain.nc", engine="h5netcdf")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["table", "{tmp}/missing.nc"], "does not exist"),
        (["describe", "{tmp}/missing.zarr"], "does not exist"),
        (["table", "{tmp}/text.nc"], "cannot read"),
        (["describe", "{tmp}/empty.nc"], "cannot read"),
        (["table", "{tmp}/notes.txt"], "use '.nc' (netCDF-4) or '.zarr'"),
        (["describe", "{tmp}/plain.nc"], "holds no cvstats cube"),
        (["demo", "--J", "-1"], "`--J` must be at least 1"),
        (["demo", "--R", "1"], "`--R` must be at least 2"),
        (["demo", "--n-jobs", "0"], "`--n-jobs` must be a non-zero int"),
        (["demo", "--out", "{tmp}/demo.txt"], "use '.nc' (netCDF-4) or '.zarr'"),
        (["demo", "--out", "{tmp}/afile/demo.nc"], "afile' is not a directory"),
        (["demo", "--out", "{tmp}/plain.nc"], "`--out` '{tmp}/plain.nc' is not a cube written"),
        # mistakes in the options of `table` on a valid cube
        (["table", "{saved}", "--formula", "zero_one ~ foo"], "the only variable is `model`"),
        (["table", "{saved}", "--formula", "zero_one ~ model +"], "cannot parse the formula"),
        (["table", "{saved}", "--formula", "loss ~ model"], "write e.g. 'zero_one ~ model'"),
        (
            ["table", "{saved}", "--formula", "zero_one ~ __import__('os')"],
            "formulas do not allow",
        ),
        (
            ["table", "{saved}", "--alpha", "1.5"],
            "`--alpha` must be in the open interval (0, 1), got 1.5",
        ),
        (["table", "{saved}", "--alpha", "0"], "`--alpha` must be in the open interval (0, 1)"),
        (["table", "{saved}", "--precision", "0"], "`--precision` must be an int >= 1"),
        (["table", "{saved}", "--mu0", "nan"], "`mu0` must be a finite real number"),
        (
            ["table", "{saved}", "--methods", "nope", "kfold_t"],
            "unknown method(s) 'nope'; the methods are",
        ),
        # plan: the file, then its options
        (["plan", "{tmp}/missing.nc", "--target-width", "0.1"], "does not exist"),
        (["plan", "{tmp}/text.nc", "--target-width", "0.1"], "cannot read"),
        (["plan", "{tmp}/plain.nc", "--target-width", "0.1"], "holds no cvstats cube"),
        (["plan", "{tmp}/notes.txt"], "use '.nc' (netCDF-4) or '.zarr'"),
        (
            ["plan", "{saved}", "--target-width", "-0.05", "--budget", "100"],
            "`--target-width` must be a positive half-width (in the loss's units), got -0.05",
        ),
        (["plan", "{saved}", "--target-width", "0"], "`--target-width` must be a positive"),
        (
            ["plan", "{saved}", "--target-width", "0.1", "--budget", "1"],
            "`--budget` = 1 does not pay for the smallest design (J = 2: 2 fits per learner)",
        ),
        (
            ["plan", "{saved}", "--method", "corrected_bootstrap_t", "--budget", "10"],
            "`--budget` = 10 does not pay for the smallest design with R = 15",
        ),
        (["plan", "{saved}", "--budget", "-3"], "`--budget` must be an int >= 1, got -3"),
        (["plan", "{saved}", "--method", "resampled_t"], "`--method` must be one of"),
        (["plan", "{saved}", "--effect", "0.1", "--power", "1.5"], "`--power` must lie"),
        (["plan", "{saved}", "--alpha", "2"], "`--alpha` must be in the open interval (0, 1)"),
        (["plan", "{saved}", "--knee-tolerance", "1"], "`--knee-tolerance` must lie in [0, 1)"),
        (["plan", "{saved}", "--J", "1"], "`--J` must be an int >= 2, got 1"),
        (["plan", "{saved}", "--M", "5"], "`--M` applies to the conservative Z"),
        (["plan", "{saved}", "--power-model", "nope"], "`--power-model` must be one of"),
        (["plan", "{saved}", "--precision", "0"], "`--precision` must be an int >= 1"),
        (
            ["table", "{saved}", "--adjust", "tukey"],
            "`--adjust` must be a statsmodels multipletests method or None, got 'tukey'",
        ),
        (["table", "{saved}", "--n1", "0"], "`--n1` must be a positive int"),
    ],
)
def test_user_mistakes_exit_2_with_one_line(tmp_path, saved, argv, message):
    _files(tmp_path)
    argv = [a.format(tmp=tmp_path, saved=saved) for a in argv]
    status, out, err = _run(argv)
    assert status == 2
    assert out == ""
    assert err.startswith("cvstats: error: ") and len(err.strip().splitlines()) == 1
    assert message.format(tmp=tmp_path) in err
    assert (tmp_path / "afile").read_text() == "keep me"


@pytest.mark.parametrize("address", ["garbage", "foo://bar"])
def test_study_bad_scheduler_address_exits_2(tmp_path, capsys, address):
    argv = ["study", "nb-regression", "--datasets", "2", "--J", "5", "--M", "5", "--R", "2"]
    assert main([*argv, "--out", str(tmp_path), "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cvstats study nb-regression: error: `--scheduler` ")
    assert "cannot connect to a dask scheduler" in err and len(err.strip().splitlines()) == 1


def test_unknown_method_lists_the_registry(saved, capsys):
    from cvstats.inference.registry import METHODS

    assert main(["table", str(saved), "--methods", "corrected_t"]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in METHODS)


def test_argparse_errors_exit_2(saved, capsys):
    with pytest.raises(SystemExit) as info:
        main(["table", str(saved), "--formula", "zero_one ~ model", "--pairwise"])
    assert info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["table", str(saved), "--format", "pdf"])
    assert info.value.code == 2


@pytest.mark.parametrize("command", [["table"], ["plan", "--target-width", "0.1"]])
def test_missing_file_without_traceback_in_a_subprocess(tmp_path, command):
    name, *options = command
    proc = subprocess.run(
        [sys.executable, "-m", "cvstats.cli", name, str(tmp_path / "missing.nc"), *options],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("cvstats: error: ")
    assert len(proc.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------
# --version, --help
# --------------------------------------------------------------------------


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"cvstats {cvstats.__version__}"


@pytest.mark.parametrize(
    ("argv", "defaults"),
    [
        (["demo"], ["(default: 15)", "(default: 10)", "(default: -1)", "demo.nc)"]),
        (
            ["table"],
            ["(default: 0.05)", "(default: learner)", "(default: text)", "(default: 4)"]
            + ["(default: holm)"],
        ),
        (
            ["plan"],
            [
                "(default: 0.8)",
                "(default: 0.05)",
                "(default: corrected_resampled_t)",
                "(default: auto)",
                "(default: 0.1)",
                "(default: plan)",
            ],
        ),
        (["study", "nb-regression"], ["(default: 1000)", "(default: 25)", "(default: 0.1)"]),
        (["study", "nb-letter"], ["(default: 1.0)", "(default: both)", "(default: 200)"]),
        (["study", "population"], ["(default: letter)", "(default: 300)", "(default: 4)"]),
        (["study", "bg-experiment1"], ["(default: 1000)", "(default: 10)"]),
    ],
)
def test_help_shows_defaults(capsys, argv, defaults):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # undo the wrapping
    for default in defaults:
        assert default in text
    assert "(default: None)" not in text and "(default: False)" not in text


# --------------------------------------------------------------------------
# describe, table --pairwise
# --------------------------------------------------------------------------


def test_describe_command(saved, capsys):
    assert main(["describe", str(saved)]) == 0
    out = capsys.readouterr().out
    assert out == str(cvstats.describe(cvstats.open_cube(saved))) + "\n"
    assert out.startswith("cube 'zero_one': loss cube")


def test_describe_and_table_of_a_compact_file(saved, tmp_path, capsys):
    compact = cvstats.to_compact(cvstats.open_cube(saved))
    path = tmp_path / "compact.nc"
    cvstats.save_compact(compact, path)
    assert main(["describe", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cube 'zero_one': compact loss cube")
    dense = cvstats.describe(cvstats.open_cube(saved))
    assert f"  {'a':<12} {dense.means[0]:.4f}" in out.splitlines()
    assert main(["table", str(path), "--methods", "conservative_z"]) == 0
    table = cvstats.compare("zero_one ~ model", compact, methods=["conservative_z"])
    assert capsys.readouterr().out == table.summary().as_text() + "\n"


def test_cli_describe_is_the_public_describe():
    assert describe is cvstats.describe


def test_table_pairwise(saved, capsys):
    methods = ["corrected_resampled_t", "conservative_z"]
    assert main(["table", str(saved), "--pairwise", "--methods", *methods]) == 0
    out = capsys.readouterr().out
    cube = cvstats.open_cube(saved)
    table = cvstats.compare(cvstats.pairwise(cube), methods=methods)
    assert out == table.summary().as_text() + "\n"
    assert set(table.to_frame().contrast) == {"a − b", "a − c", "b − c"}
    assert main(["table", str(saved), "--pairwise", "--format", "markdown"]) == 0
    assert capsys.readouterr().out == cvstats.compare(cvstats.pairwise(cube)).to_markdown() + "\n"


def test_table_pairwise_of_a_score_cube(tmp_path, capsys):
    scores = np.array([[0.8, 0.7, 0.6], [0.9, 0.75, 0.7], [0.85, 0.72, 0.66]])
    cube = cvstats.from_scores(
        scores, n_test=10, n_train=40, greater_is_better=True, name="roc_auc",
        models=["x", "y", "z"],
    )  # fmt: skip
    path = cvstats.save(cube, tmp_path / "auc.nc")
    assert main(["table", str(path), "--pairwise", "--methods", "resampled_t"]) == 0
    table = cvstats.compare(cvstats.pairwise(cube), methods=["resampled_t"])
    assert capsys.readouterr().out == table.summary().as_text() + "\n"


def test_table_adjust_and_sizes(saved, capsys):
    cube = cvstats.open_cube(saved)
    pairs = cvstats.pairwise(cube)
    argv = ["table", str(saved), "--pairwise", "--format", "markdown"]
    assert main([*argv, "--adjust", "none"]) == 0
    assert capsys.readouterr().out == cvstats.compare(pairs, adjust=None).to_markdown() + "\n"
    assert main([*argv, "--adjust", "bonferroni", "--n1", "20", "--n2", "10"]) == 0
    want = cvstats.compare(pairs, adjust="bonferroni", n1=20, n2=10).to_markdown()
    assert capsys.readouterr().out == want + "\n" and "Bonferroni-adjusted" in want


def test_table_default_formula_and_methods(saved, capsys):
    assert main(["table", str(saved), "--methods", "conservative_z", "--alpha", "0.1"]) == 0
    cube = cvstats.open_cube(saved)
    table = cvstats.compare("zero_one ~ model", cube, methods=["conservative_z"], alpha=0.1)
    assert capsys.readouterr().out == table.summary().as_text() + "\n"


# --------------------------------------------------------------------------
# plan
# --------------------------------------------------------------------------


def test_plan_out_of_reach_prints_the_knee_first(pilot, capsys):
    argv = ["plan", str(pilot), "--target-width", "0.01", "--budget", "250"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    res = cvstats.plan(cvstats.open_cube(pilot), target_width=0.01, budget_fits=250)
    assert out == res.summary().as_text() + "\n"
    knee = int(res.J_knee.squeeze())
    assert int(res.J_chosen.squeeze()) == knee < 250
    first = next(line for line in out.splitlines() if line.strip("= "))
    assert first.startswith("Not reachable: the targets (half-width 0.01, budget 250 fits")
    assert f"Recommended: J = {knee}, the knee" in " ".join(out.split())
    assert "The curve: half-width against J" in out


def test_plan_reachable_and_its_options(pilot, capsys):
    cube = cvstats.open_cube(pilot)
    assert main(["plan", str(pilot), "--target-width", "0.5", "--budget", "250"]) == 0
    out = capsys.readouterr().out
    assert out == cvstats.plan(cube, target_width=0.5, budget_fits=250).summary().as_text() + "\n"
    assert "Not reachable" not in out and "is met from J = " in out
    argv = [
        "plan", str(pilot), "--method", "corrected_bootstrap_t", "--R", "5", "10",
        "--effect", "0.3", "--power", "0.7", "--alpha", "0.1", "--rho", "0.2",
        "--knee-tolerance", "0.2", "--J", "12", "--table", "grid", "--precision", "3",
    ]  # fmt: skip
    assert main(argv) == 0
    res = cvstats.plan(
        cube, method="corrected_bootstrap_t", R=[5, 10], effect=0.3, power=0.7, alpha=0.1,
        rho=0.2, knee_tolerance=0.2, J=12,
    )  # fmt: skip
    assert capsys.readouterr().out == res.summary("grid", precision=3).as_text() + "\n"


# --------------------------------------------------------------------------
# study progress bars count datasets
# --------------------------------------------------------------------------


def test_study_progress_counts_datasets(tmp_path, capsys):
    from cvstats.studies.regression import run_regression

    run_regression(1, 10, tmp_path, n=40, J=6, M=4, R=3, J_rep=4, batch_size=4, progress=True)
    err = capsys.readouterr().err.replace("\r", "\n")
    assert "10/10" in err and "dataset" in err  # 10 datasets in 3 batches
    assert "3/3" not in err


def test_population_progress_counts_samples(tmp_path, capsys):
    from cvstats.studies.population import run_population, synthetic_population

    run_population(
        synthetic_population(size=400, seed=0), ["nb"], 5, tmp_path, N=20, folds=[2],
        repetitions=2, batch_size=2, progress=True,
    )  # fmt: skip
    err = capsys.readouterr().err.replace("\r", "\n")
    assert "5/5" in err and "sample" in err  # 5 samples in 3 batches
    assert "3/3" not in err
