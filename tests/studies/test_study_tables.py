"""Several simulations per command, combined table, truth comparison, reports of saved runs."""

import math

import matplotlib
import numpy as np
import pytest
import scipy.stats
import xarray as xr

matplotlib.use("Agg")

from cvstats import studies as st  # noqa: E402
from cvstats.errors import ArgumentError, StorageError  # noqa: E402
from cvstats.studies.classification import run_classification  # noqa: E402
from cvstats.studies.cli import _comparison_text, main, sim_out_dirs  # noqa: E402
from cvstats.studies.letter import run_letter  # noqa: E402
from cvstats.studies.regression import run_regression  # noqa: E402

TINY = ["--datasets", "3", "--J", "5", "--M", "5", "--R", "3", "--quiet"]


def _run(per_config: list[list[float]], truth: list[float], truth_se: list[float] | None):
    """4 datasets, 2 configurations, 1 quantity: μ̂_J of dataset d is per_config[c][d]."""
    main = np.array(per_config).T[:, :, None, None] * np.ones(2)  # (dataset, config, quantity, j)
    ds = xr.Dataset(
        {
            "main": (("dataset", "config", "quantity", "j"), main),
            "five": (("dataset", "quantity", "m5", "side"), np.full((4, 1, 5, 2), 0.3)),
            "truth": (("config", "quantity"), np.array(truth)[:, None]),
        },
        coords={
            "config": ["a", "b"],
            "quantity": ["A"],
            "n1": ("config", [100, 180]),
            "n2": ("config", [20, 20]),
        },
    )
    if truth_se is not None:
        ds["truth_se"] = (("config", "quantity"), np.array(truth_se)[:, None])
    return ds


def test_truth_comparison_against_hand_computation():
    mu_a, mu_b = [0.10, 0.20, 0.30, 0.40], [0.50, 0.52, 0.54, 0.56]
    runs = {
        "mc truth": _run([mu_a, mu_b], [0.30, 0.58], [0.04, 0.02]),
        "analytic": _run([mu_a, mu_b], [0.60, 0.53], None),
    }
    frame = st.truth_comparison(runs)
    # by hand: means 0.25 and 0.53; sd² = 0.05/3 and 0.002/3 (ddof 1); se = sd/2
    se_a, se_b = math.sqrt(0.05 / 3) / 2, math.sqrt(0.002 / 3) / 2
    c = 1.959963984540054
    expected_z = [
        (0.25 - 0.30) / math.sqrt(se_a**2 + 0.04**2),  # -0.658: truth inside [0.123, 0.377]
        # -2.100: [0.505, 0.555] meets the truth's [0.541, 0.619]
        (0.53 - 0.58) / math.sqrt(se_b**2 + 0.02**2),
        (0.25 - 0.60) / se_a,  # -5.42: analytic 0.60 outside [0.123, 0.377]
        0.0,
    ]
    assert frame["z"].to_numpy() == pytest.approx(expected_z)
    assert list(frame["verdict"]) == ["inside", "overlapping", "disjoint", "inside"]
    assert frame.loc[("mc truth", "a", "A"), "lower"] == pytest.approx(0.25 - c * se_a)
    assert frame.loc[("mc truth", "b", "A"), "truth_upper"] == pytest.approx(0.58 + c * 0.02)
    assert frame.loc[("analytic", "a", "A"), "truth_se"] == 0.0
    assert list(frame["n1"]) == [100, 180, 100, 180]
    # Bonferroni over the 4 cells: Φ⁻¹(1 − 0.05/8) = 2.4977
    assert frame.attrs["cells"] == 4
    assert frame.attrs["band"] == pytest.approx(2.497705474412)
    assert list(frame["within_band"]) == [True, True, False, True]
    # another family level and confidence level
    other = st.truth_comparison(runs, confidence_level=0.99, family_level=0.2)
    assert other.attrs["band"] == pytest.approx(scipy.stats.norm.ppf(1 - 0.2 / 8))
    assert other.loc[("mc truth", "b", "A"), "verdict"] == "overlapping"
    assert other.loc[("mc truth", "a", "A"), "upper"] == pytest.approx(
        0.25 + scipy.stats.norm.ppf(0.995) * se_a
    )


def test_truth_comparison_bad_inputs():
    run = _run([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.6, 0.6]], [0.3, 0.5], None)
    with pytest.raises(ArgumentError, match="no run of `runs` .* has a truth"):
        st.truth_comparison({"x": run.drop_vars("truth")})
    with pytest.raises(ArgumentError, match=r"`family_level` must be in the open interval"):
        st.truth_comparison({"x": run}, family_level=1.0)
    with pytest.raises(ArgumentError, match=r"`confidence_level` must be in the open interval"):
        st.truth_comparison({"x": run}, confidence_level=0)


def test_sim_out_dirs_layout(tmp_path):
    assert sim_out_dirs([3], tmp_path) == {3: tmp_path}
    assert sim_out_dirs([2, 4], tmp_path) == {2: tmp_path / "sim2", 4: tmp_path / "sim4"}


def _mtimes(out):
    return {p.relative_to(out): p.stat().st_mtime_ns for p in sorted(out.rglob("*batch*.nc"))}


def _combined(text):
    """The combined table and comparison printed after the per-simulation reports."""
    return text[text.index("=== Nadeau & Bengio problem 1, simulations 3 4 ===") :]


def test_cli_several_simulations_resume_per_sim_and_report_only(tmp_path, capsys):
    argv = ["study", "nb-regression", "--sim", "3", "4", *TINY, "--out", str(tmp_path)]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sim3", "sim4"]
    for s in (3, 4):
        assert list((tmp_path / f"sim{s}").glob(f"nb-regression-sim{s}-batch*.nc"))
        assert (tmp_path / f"sim{s}" / f"nb-regression-sim{s}-power.png").exists()
    combined = _combined(first)
    header = next(line for line in combined.splitlines() if line.startswith("quantity"))
    assert "simulation 3" in header and "simulation 4" in header  # one column per simulation
    assert "ρ_A-B(1000,200)" in combined and "r_A-B" in combined
    assert "18 cells:" in combined and "Φ⁻¹(1 − 0.05/(2·18)) = 2.99" in combined
    # the printed comparison is truth_comparison of the two runs
    runs = {f"simulation {s}": run_regression(s, 3, tmp_path / f"sim{s}", J=5, M=5, R=3)
            for s in (3, 4)}  # fmt: skip
    frame = st.truth_comparison(runs)
    assert f"{frame['z'].iloc[-1]:.4f}" in combined.splitlines()[-2]
    # resume per simulation: only the removed batch of simulation 4 is computed again
    before = _mtimes(tmp_path)
    (removed,) = (tmp_path / "sim4").glob("*batch*.nc")
    removed.unlink()
    assert main(argv) == 0
    assert _combined(capsys.readouterr().out) == combined
    after = _mtimes(tmp_path)
    changed = {p for p in before if after[p] != before[p]}
    assert changed == {removed.relative_to(tmp_path)}
    # --report-only computes nothing and prints the same report
    before = after
    assert main([*argv, "--report-only"]) == 0
    assert _combined(capsys.readouterr().out) == combined
    assert _mtimes(tmp_path) == before
    # ... and refuses an incomplete run before printing anything
    removed.unlink()
    assert main([*argv, "--report-only"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot report without computing" in captured.err and removed.name in captured.err
    assert not removed.exists()


def test_single_sim_runs_join_a_combined_report(tmp_path, capsys):
    """Runs made one by one in DIR/sim<N> (today's layout) feed the combined table of DIR."""
    for s in (3, 4):
        out = tmp_path / f"sim{s}"
        assert main(["study", "nb-regression", "--sim", str(s), *TINY, "--out", str(out)]) == 0
        single = capsys.readouterr().out
        assert "Monte Carlo mean of μ̂_J against the truth" in single and "9 cells:" in single
    before = _mtimes(tmp_path)
    argv = ["study", "nb-regression", "--sim", "3", "4", *TINY, "--out", str(tmp_path)]
    assert main([*argv, "--report-only"]) == 0
    assert "18 cells:" in _combined(capsys.readouterr().out)
    assert _mtimes(tmp_path) == before


def test_cli_rejects_repeated_sim_and_missing_run(tmp_path, capsys):
    argv = ["study", "nb-regression", *TINY, "--out", str(tmp_path / "x")]
    assert main([*argv, "--sim", "2", "2"]) == 2
    assert "`--sim` must not repeat a simulation, got [2, 2]" in capsys.readouterr().err
    assert main([*argv, "--sim", "1", "--report-only"]) == 2
    assert "no finished run to report" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_report_only_refuses_other_parameters(tmp_path):
    run_regression(1, 3, tmp_path, J=5, M=5, R=3)
    with pytest.raises(StorageError, match="was written with other parameters"):
        run_regression(1, 3, tmp_path, J=6, M=5, R=3, compute=False)
    ds = run_regression(1, 3, tmp_path, J=5, M=5, R=3, compute=False)
    assert ds.sizes["dataset"] == 3


def test_letter_report_only_reads_the_run(tmp_path, capsys):
    ds = run_letter(1, 2, tmp_path, learners="nn", J=5, M=5, R=3)
    before = _mtimes(tmp_path)
    xr.testing.assert_identical(
        run_letter(1, 2, tmp_path, learners="nn", J=5, M=5, R=3, compute=False), ds
    )
    argv = ["study", "nb-letter", "--learners", "nn", *TINY, "--datasets", "2", "--out",
            str(tmp_path), "--truth-sets", "0", "--report-only"]  # fmt: skip
    assert main(argv) == 0
    assert "r_B" in capsys.readouterr().out
    assert _mtimes(tmp_path) == before
    with pytest.raises(StorageError, match="batch file .*-batch00000.nc' is missing"):
        run_letter(5, 2, tmp_path, learners="nn", J=5, M=5, R=3, compute=False)


def test_classification_report_only_recomputes_the_same_truth(tmp_path, capsys):
    argv = ["study", "nb-classification", "--sim", "1", "2", *TINY, "--out", str(tmp_path),
            "--truth-sets", "2"]  # fmt: skip
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main([*argv, "--report-only"]) == 0
    again = capsys.readouterr().out
    tail = first[first.index("=== Nadeau & Bengio problem 2, simulations 1 2 ===") :]
    assert tail == again[again.index("=== Nadeau & Bengio problem 2, simulations 1 2 ===") :]
    assert "true (MC)" in tail and "18 cells:" in tail
    ds = run_classification(2, 3, tmp_path / "sim2", J=5, M=5, R=3, truth_sets=2, compute=False)
    frame = st.truth_comparison({"simulation 2": ds})
    assert (frame["truth_se"] > 0).all()


def test_classification_report_only_uses_the_truth_test_size(tmp_path, capsys):
    # --truth-test-size is the truth's test sample in a run and in --report-only
    argv = ["study", "nb-classification", "--sim", "2", *TINY, "--out", str(tmp_path),
            "--truth-sets", "2", "--truth-test-size"]  # fmt: skip
    assert main([*argv, "1000"]) == 0
    first = capsys.readouterr().out
    before = _mtimes(tmp_path)
    assert main([*argv, "3000", "--report-only"]) == 0
    again = capsys.readouterr().out
    assert _mtimes(tmp_path) == before
    kw = {"J": 5, "M": 5, "R": 3, "truth_sets": 2, "compute": False}
    for out, size in ((first, 1000), (again, 3000)):
        ds = run_classification(2, 3, tmp_path, truth_test_size=size, **kw)
        assert _comparison_text({"simulation 2": ds}) in out
    assert first[first.index("Monte Carlo mean") :] != again[again.index("Monte Carlo mean") :]
    with pytest.raises(SystemExit):  # argparse: not an int
        main([*argv, "1e5", "--report-only"])
    assert "argument --truth-test-size: invalid int value: '1e5'" in capsys.readouterr().err
