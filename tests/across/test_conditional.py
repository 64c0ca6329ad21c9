"""Conditional vs. unconditional error across datasets (docs/theory.md §1, survey seed)."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import cvstats
from cvstats import CubeError, CvstatsTypeError, DesignError, designs
from cvstats.across.conditional import cv_bias, cv_estimates, variance_decomposition, winner_table
from cvstats.errors import ArgumentError
from cvstats.kernels.lemma1 import lemma1_components


def covers(ci, value):
    return bool((ci.sel(ci_bound="lower") <= value) & (value <= ci.sel(ci_bound="upper")))


# ---------------------------------------------------------------------------
# cv_estimates
# ---------------------------------------------------------------------------


def test_cv_estimates_kfold_is_per_example_mean():
    # n = 7, K = 3: folds of sizes 2, 2, 3, so the per-example mean differs from
    # the mean of the fold means
    d = designs.kfold(7, K=3, repeats=2, seed=0)
    rng = np.random.default_rng(0)
    losses = rng.random((6, 7, 2))
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b"])
    est = cv_estimates(cube)
    assert est.dims == ("repetition", "model")
    assert est.repetition.values.tolist() == [0, 1]
    for r in range(2):
        splits = cube.split.values[cube.repeat.values == r]
        block = cube.sel(split=splits).values  # (fold, example, model)
        per_example = np.nansum(block, axis=0)  # each example is tested once per repeat
        np.testing.assert_allclose(est.isel(repetition=r), per_example.mean(axis=0))
        fold_means = np.nanmean(block, axis=1).mean(axis=0)
        assert not np.allclose(est.isel(repetition=r), fold_means)


def test_cv_estimates_random_splits_are_split_means():
    d = designs.resampled(12, 3, J=4, seed=1)
    losses = np.random.default_rng(1).random((2, 4, 12, 1))
    cube = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])
    est = cv_estimates(cube)
    assert est.dims == ("dataset", "repetition", "model")
    np.testing.assert_allclose(est.values, cube.mean("example").values)
    assert "main split" in est.attrs["repetition"]


# ---------------------------------------------------------------------------
# variance decomposition
# ---------------------------------------------------------------------------

VAR_A, VAR_B = 1.0, 0.25  # sample and internal variance


@pytest.fixture(scope="module")
def kfold_cube():
    """ε̂_{t,r} = a_t + b_{t,r}: every out-of-fold loss of repeat r is a_t + b_{t,r}."""
    rng = np.random.default_rng(42)
    n_data, R, K, n = 400, 5, 2, 10
    d = designs.kfold(n, K=K, repeats=R, seed=0)
    a = rng.normal(size=(n_data, 1, 2)) * np.sqrt(VAR_A)
    b = rng.normal(size=(n_data, R, 2)) * np.sqrt(VAR_B)
    per_split = a + b[:, d.repeat.values, :]  # (dataset, split, model)
    losses = np.broadcast_to(per_split[:, :, None, :], (n_data, R * K, n, 2))
    cube = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"], models=["a", "b"])
    return cube, a + b  # (dataset, repeat, model)


def test_variance_decomposition_recovers_components(kfold_cube):
    cube, eps = kfold_cube
    out = variance_decomposition(cube)
    truth = {
        "total_variance": VAR_A + VAR_B,
        "sample_variance": VAR_A,
        "internal_variance": VAR_B,
        "sample_fraction": VAR_A / (VAR_A + VAR_B),
        "mean": 0.0,
    }
    for m in ["a", "b"]:
        for name, value in truth.items():
            assert covers(out[f"{name}_ci"].sel(model=m), value), (m, name)
    np.testing.assert_allclose(
        out.sample_variance + out.internal_variance, out.total_variance, rtol=1e-12
    )
    assert out.attrs["R"] == 5 and out.attrs["N"] == 400
    assert "repeat" in out.attrs["repetition"]


def test_variance_decomposition_matches_kernel(kfold_cube):
    cube, eps = kfold_cube
    out = variance_decomposition(cube)
    for k, m in enumerate(["a", "b"]):
        c = lemma1_components(eps[:, :, k])
        one = out.sel(model=m)
        np.testing.assert_allclose(
            [one.sample_variance, one.internal_variance, one.sample_variance_se],
            [c.gamma, c.within, c.gamma_se],
            rtol=1e-10,
        )
        # internal variance: mean within-dataset sample variance (Lemma 1.3), exactly
        within = eps[:, :, k].var(axis=1, ddof=1).mean()
        total = ((eps[:, :, k] - eps[:, :, k].mean()) ** 2).mean()
        # δ̂(1 - π̂) = (R/(R-1)) (δ̂ - v̂) = mean of within-row variances (ddof=1)
        assert float(one.internal_variance) == pytest.approx(within, rel=1e-10)
        assert float(one.total_variance) == pytest.approx(total, rel=1e-12)


def test_variance_decomposition_lazy_on_dask(kfold_cube):
    da = pytest.importorskip("dask.array")
    cube, _ = kfold_cube
    # chunk the losses only: cube.chunk() would also chunk the split coordinates, which
    # validate() cannot group a k-fold main block by (reported to the lead)
    lazy_cube = cube.copy(data=da.from_array(cube.values, chunks=(100, -1, -1, -1)))
    lazy = variance_decomposition(lazy_cube)
    assert lazy.sample_variance.chunks is not None
    xr.testing.assert_allclose(lazy.compute().dataset, variance_decomposition(cube).dataset)


def test_variance_decomposition_formula_and_random_splits(kfold_cube):
    cube, _ = kfold_cube
    xr.testing.assert_identical(
        variance_decomposition("loss ~ model", cube).dataset,
        variance_decomposition(cvstats.contrasts("loss ~ model", cube)).dataset,
    )
    d = designs.resampled(10, 5, J=3, seed=0)
    losses = np.random.default_rng(0).random((5, 3, 10, 1))
    plain = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])
    out = variance_decomposition(plain)
    assert out.attrs["R"] == 3


def test_component_interval_coverage():
    # delta-method intervals of the components, 1000 replications x N = 200 x R = 5.
    # Measured (seed 3): total 0.937, sample 0.927, internal 0.934, fraction 0.943
    # (2000 replications: 0.942, 0.938, 0.942, 0.941); binomial sd ~0.007.
    rng = np.random.default_rng(3)
    T = rng.normal(size=(1000, 200, 1)) * np.sqrt(VAR_A)
    T = T + rng.normal(size=(1000, 200, 5)) * np.sqrt(VAR_B)
    c = lemma1_components(T)
    z = stats.norm.isf(0.025)
    truth = {"delta": VAR_A + VAR_B, "gamma": VAR_A, "within": VAR_B}
    for name, value in truth.items():
        rate = np.mean(np.abs(getattr(c, name) - value) <= z * getattr(c, f"{name}_se"))
        assert 0.915 <= rate <= 0.971, (name, rate)


def test_variance_decomposition_errors(kfold_cube):
    cube, _ = kfold_cube
    with pytest.raises(CubeError, match="variance_decomposition needs many independent"):
        variance_decomposition(cube.isel(dataset=0, drop=True))
    one_repeat = cube.isel(split=np.flatnonzero(cube.repeat.values == 0))
    with pytest.raises(DesignError, match="at least 2 repetitions"):
        variance_decomposition(one_repeat)


# ---------------------------------------------------------------------------
# cv_bias
# ---------------------------------------------------------------------------


@pytest.fixture
def bias_case():
    levels = np.array([[0.20, 0.30], [0.25, 0.10], [0.40, 0.35], [0.10, 0.15], [0.30, 0.20]])
    d = designs.kfold(6, K=3, repeats=2, seed=0)
    losses = np.broadcast_to(levels[:, None, None, :], (5, 6, 6, 2))
    cube = cvstats.from_arrays(
        losses,
        design=d,
        extra_dims=["dataset"],
        models=["a", "b"],
        extra_coords={"dataset": list("vwxyz")},
    )
    ec = np.array([[0.15, 0.28], [0.22, 0.12], [0.30, 0.30], [0.12, 0.10], [0.20, 0.21]])
    conditional = xr.DataArray(
        ec, dims=("dataset", "model"), coords={"dataset": list("vwxyz"), "model": ["a", "b"]}
    )
    return cube, levels, conditional, ec


def test_cv_bias_hand_made(bias_case):
    cube, levels, conditional, ec = bias_case
    out = cv_bias(cube, conditional, alpha=0.1)
    n = 5
    for k, m in enumerate(["a", "b"]):
        cv, true = levels[:, k], ec[:, k]
        diff = cv - true
        se = diff.std(ddof=1) / np.sqrt(n)
        t = stats.t.isf(0.05, n - 1)
        one = out.sel(model=m)
        assert float(one.cv_estimate) == pytest.approx(cv.mean())
        assert float(one.conditional_error) == pytest.approx(true.mean())
        assert float(one.unconditional_error) == pytest.approx(true.mean())
        assert float(one.bias_conditional) == pytest.approx(diff.mean())
        assert float(one.bias_conditional_se) == pytest.approx(se)
        np.testing.assert_allclose(
            one.bias_conditional_ci, [diff.mean() - t * se, diff.mean() + t * se]
        )
        assert float(one.bias_unconditional) == pytest.approx(diff.mean())
        assert float(one.rmse_conditional) == pytest.approx(np.sqrt(np.mean(diff**2)))
        assert float(one.rmse_unconditional) == pytest.approx(
            np.sqrt(np.mean((cv - true.mean()) ** 2))
        )
        r = np.corrcoef(cv, true)[0, 1]
        assert float(one.correlation) == pytest.approx(r)
        half = stats.norm.isf(0.05) / np.sqrt(n - 3)
        np.testing.assert_allclose(
            one.correlation_ci, np.tanh([np.arctanh(r) - half, np.arctanh(r) + half])
        )
        assert float(one.sd_cv) == pytest.approx(cv.std(ddof=1))
    assert out.attrs["unconditional_error"] == "mean of conditional_error"


def test_cv_bias_known_unconditional_error(bias_case):
    cube, levels, conditional, _ = bias_case
    eu = xr.DataArray([0.2, 0.2], dims="model", coords={"model": ["a", "b"]})
    out = cv_bias(cube, conditional, unconditional_error=eu)
    np.testing.assert_allclose(out.bias_unconditional, levels.mean(0) - 0.2)
    np.testing.assert_allclose(out.bias_unconditional_se, levels.std(0, ddof=1) / np.sqrt(5))
    assert out.attrs["unconditional_error"] == "given"
    scalar = cv_bias(cube, conditional, unconditional_error=0.2)
    np.testing.assert_allclose(scalar.bias_unconditional, out.bias_unconditional)


def test_cv_bias_errors(bias_case):
    cube, _, conditional, _ = bias_case
    with pytest.raises(ArgumentError, match="lacks the dim"):
        cv_bias(cube, conditional.isel(model=0, drop=True))
    with pytest.raises(ArgumentError, match="NaN"):
        cv_bias(cube, conditional.where(conditional > 0.2))
    with pytest.raises(ArgumentError, match="does not match"):
        cv_bias(cube, conditional.assign_coords(dataset=list("abcde")))
    with pytest.raises(CvstatsTypeError, match="DataArray"):
        cv_bias(cube, conditional.values)
    with pytest.raises(CvstatsTypeError, match="unconditional_error"):
        cv_bias(cube, conditional, unconditional_error="0.2")


# ---------------------------------------------------------------------------
# winner_table
# ---------------------------------------------------------------------------


def survey_case():
    """The survey's NB vs C4.5 table: counts 25, 37 / 7, 31 over 100 datasets."""
    cells = [(1, 1, 25), (1, 0, 37), (0, 1, 7), (0, 0, 31)]
    cv_nb, true_nb = [], []
    for cv_worse, true_worse, count in cells:
        cv_nb += [0.3 if cv_worse else 0.1] * count
        true_nb += [0.3 if true_worse else 0.1] * count
    n = len(cv_nb)
    dt = np.full(n, 0.2)
    coords = {"model": ["nb", "dt"]}
    cv = xr.DataArray(np.c_[cv_nb, dt], dims=("dataset", "model"), coords=coords)
    true = xr.DataArray(np.c_[true_nb, dt], dims=("dataset", "model"), coords=coords)
    return cv, true


def test_winner_table_survey_counts():
    cv, true = survey_case()
    res = winner_table(cv, true, ("nb", "dt"))
    expected = pd.DataFrame(
        [[25, 37], [7, 31]],
        index=pd.Index(["nb > dt", "nb <= dt"], name="cv", dtype=object),
        columns=pd.Index(["nb > dt", "nb <= dt"], name="conditional", dtype=object),
    )
    pd.testing.assert_frame_equal(res.table, expected)
    np.testing.assert_allclose(res.p_true_given_cv.values, [25 / 62, 31 / 38])
    np.testing.assert_allclose(res.p_cv_given_true.values, [25 / 32, 31 / 68])
    assert res.agreement == pytest.approx(56 / 100)
    assert res.n_datasets == 100 and res.ties_cv == 0 and res.ties_true == 0
    # swapping the models transposes the verdicts
    swapped = winner_table(cv, true, ("dt", "nb"))
    assert swapped.table.values.tolist() == [[31, 7], [37, 25]]


def test_winner_table_ties():
    coords = {"model": ["a", "b"]}
    cv = xr.DataArray(
        [[0.2, 0.2], [0.3, 0.1], [0.1, 0.3], [0.3, 0.1]], dims=("dataset", "model"), coords=coords
    )
    true = xr.DataArray(
        [[0.3, 0.1], [0.2, 0.2], [0.1, 0.3], [0.3, 0.1]], dims=("dataset", "model"), coords=coords
    )
    kept = winner_table(cv, true, ["a", "b"])
    # dataset 0: CV tie -> "a <= b" row; dataset 1: true tie -> "a <= b" column
    assert kept.table.values.tolist() == [[1, 1], [1, 1]]
    assert (kept.ties_cv, kept.ties_true, kept.n_datasets) == (1, 1, 4)
    dropped = winner_table(cv, true, ["a", "b"], ties="exclude")
    assert dropped.table.values.tolist() == [[1, 0], [0, 1]]
    assert dropped.n_datasets == 2 and dropped.agreement == 1.0
    # an empty row gives NaN, not a warning
    one_sided = winner_table(cv.isel(dataset=[1, 3]), true.isel(dataset=[1, 3]), ["a", "b"])
    assert np.isnan(one_sided.p_true_given_cv.iloc[1])


def test_winner_table_from_cube(bias_case):
    cube, levels, conditional, ec = bias_case
    res = winner_table(cube, conditional, ("a", "b"))
    cv_worse = levels[:, 0] > levels[:, 1]
    true_worse = ec[:, 0] > ec[:, 1]
    assert res.table.iloc[0, 0] == np.sum(cv_worse & true_worse)
    assert res.table.values.sum() == 5


def test_winner_table_errors():
    cv, true = survey_case()
    with pytest.raises(ArgumentError, match="two different models"):
        winner_table(cv, true, ("nb", "nb"))
    with pytest.raises(ArgumentError, match="not models of"):
        winner_table(cv, true, ("nb", "rf"))
    with pytest.raises(ArgumentError, match="`ties`"):
        winner_table(cv, true, ("nb", "dt"), ties="half")
    with pytest.raises(ArgumentError, match="besides"):
        winner_table(cv.expand_dims(loss=2), true, ("nb", "dt"))
    with pytest.raises(ArgumentError, match="does not match"):
        winner_table(cv, true.isel(dataset=slice(0, 50)), ("nb", "dt"))


def test_winner_table_of_scores_calls_the_smaller_worse():
    """Accuracies 1 - error: the same verdicts as the errors, in score terms (issue 26)."""
    cv, true = survey_case()
    acc_cv, acc_true = 1 - cv, 1 - true
    acc_cv.attrs = {"greater_is_better": 1, "metric": "accuracy"}
    res = winner_table(acc_cv, acc_true.rename("accuracy"), ("nb", "dt"))
    assert res.greater_is_better
    assert list(res.table.index) == ["nb < dt", "nb >= dt"]
    assert res.table.values.tolist() == [[25, 37], [7, 31]]  # as the errors' table
    np.testing.assert_allclose(res.p_true_given_cv.values, [25 / 62, 31 / 38])
    assert "worse: the smaller score" in repr(res)
    # plain arrays are errors unless told; told, the same table
    told = winner_table(1 - cv, 1 - true, ("nb", "dt"), greater_is_better=True)
    pd.testing.assert_frame_equal(told.table, res.table)
    # ties count as "not worse" (a >= b) for scores too
    coords = {"model": ["a", "b"]}
    tcv = xr.DataArray(
        [[0.8, 0.8], [0.7, 0.9], [0.9, 0.7]], dims=("dataset", "model"), coords=coords
    )
    ttrue = xr.DataArray(
        [[0.7, 0.9], [0.8, 0.8], [0.9, 0.7]], dims=("dataset", "model"), coords=coords
    )
    tied = winner_table(tcv, ttrue, ["a", "b"], greater_is_better=True)
    # set0: CV tie (a not worse), a truly worse; set1: CV a worse, true tie; set2: a not worse
    assert tied.table.values.tolist() == [[0, 1], [1, 1]]


def test_winner_table_refuses_directions_that_disagree():
    cv, true = survey_case()
    acc = (1 - cv).assign_attrs(greater_is_better=1, metric="accuracy")
    with pytest.raises(ArgumentError, match="`conditional_error`: nothing, so an error"):
        winner_table(acc, true, ("nb", "dt"))
    with pytest.raises(ArgumentError, match="`cv_estimate` records the opposite"):
        winner_table(acc, 1 - true, ("nb", "dt"), greater_is_better=False)
    with pytest.raises(ArgumentError, match="must be True or False"):
        winner_table(cv, true, ("nb", "dt"), greater_is_better=1)
