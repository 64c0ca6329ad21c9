"""Intervals shown within the range of their metric (cvstats.results.ranges; issue 26, point 5).

A near-perfect model's AUC and a near-zero error rate give Wald intervals that cross
the metric's range; every interval shown or exported is clipped there and marked, the
raw one stays available with ``clip=False``. The raw bounds are checked against an
independent computation (scipy's t quantile on the split means).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import cvstats
from cvstats.cube.score import LOSS_RANGES, from_scores, value_range
from cvstats.designs.losses import LOSSES
from cvstats.results import InferenceResult
from cvstats.results.ranges import CLIP_MARK, clip_interval, contrast_range


@pytest.fixture(scope="module")
def auc_cube() -> xr.DataArray:
    """A near-perfect model (AUC about 0.995) and a weaker one, on repeated 5-fold CV."""
    d = cvstats.designs.kfold(200, 5, repeats=2, seed=0)
    S = d.sizes["split"]
    rng = np.random.default_rng(1)
    auc = np.column_stack(
        [np.clip(0.994 + 0.02 * rng.standard_normal(S), 0, 1), 0.9 + 0.03 * rng.standard_normal(S)]
    )
    return from_scores(
        auc, greater_is_better=True, design=d, models=["boost", "logreg"], name="roc_auc"
    )


@pytest.fixture(scope="module")
def error_cube() -> xr.DataArray:
    """Zero-one losses: one model almost never wrong, one wrong a fifth of the time."""
    d = cvstats.designs.kfold(150, 5, repeats=2, seed=3)
    rng = np.random.default_rng(4)
    S = d.sizes["split"]
    losses = (rng.random((S, 150, 2)) < np.array([0.01, 0.2])).astype(float)
    losses[~d["test"].values.astype(bool)] = np.nan
    return cvstats.from_arrays(losses, design=d, models=["forest", "stump"], name="zero_one")


def _raw_corrected_kfold(cube: xr.DataArray, model: str, alpha: float = 0.05) -> tuple:
    """The corrected repeated k-fold t interval, by hand: x̄ ± t_{J-1} sqrt((1/J + n2/n1) S²)."""
    m = cube.sel(model=model)
    means = m.mean("example").values if "example" in m.dims else m.values
    J = means.size
    n2 = float(cube["n_test"].values[0]) if "n_test" in cube.coords else 150 / 5
    n1 = float(cube["n_train"].values[0])
    se = math.sqrt((1 / J + n2 / n1) * means.var(ddof=1))
    c = stats.t.ppf(1 - alpha / 2, J - 1)
    return means.mean() - c * se, means.mean() + c * se


# -- the table of ranges ------------------------------------------------------------------


def test_every_collected_loss_has_its_range():
    assert set(LOSS_RANGES) == set(LOSSES)
    assert value_range({"loss": "zero_one"}, "whatever") == (0.0, 1.0)
    assert value_range({}, "zero_one") == (0.0, 1.0)  # the name, as the verdict reads it
    assert value_range({"greater_is_better": 1, "metric": "r2"}, "score") == (-math.inf, 1.0)
    assert value_range({"greater_is_better": 1}, "my_metric") is None
    assert value_range({}, "loss") is None


def test_contrast_range_by_hand():
    assert contrast_range("1*a", 0.0, 1.0) == (0.0, 1.0)
    assert contrast_range("1*a - 1*b", 0.0, 1.0) == (-1.0, 1.0)
    assert contrast_range("-1*b + 1*a", -1.0, 1.0) == (-2.0, 2.0)  # Matthews' correlation
    assert contrast_range("1*a - 1*b", -math.inf, 1.0) == (-math.inf, math.inf)  # R²
    # another contrast: its range by hand, [-1, 1], widened by 5e-4 * sum|w| * 1 for the
    # 4 significant digits of its weights
    low, high = contrast_range("0.5*a + 0.5*b - 1*c", 0.0, 1.0)
    assert (low, high) == pytest.approx((-1.001, 1.001), abs=1e-12)
    low, high = contrast_range("0.3333*a + 0.3333*b + 0.3333*c", 0.0, 1.0)  # a mean of three
    assert low == pytest.approx(-5e-4 * 0.9999) and high == pytest.approx(0.9999 + 5e-4 * 0.9999)
    assert high >= 1.0  # never narrower than the true range, [0, 1]
    # [-3, 3] widened by 5e-4 * (2 + 1) * 1
    assert contrast_range("2*a - 1*b", -1.0, 1.0) == pytest.approx((-3.0015, 3.0015))
    assert contrast_range("0.5*a + 0.5*b - 1*c", 0.0, math.inf) == (-math.inf, math.inf)
    assert contrast_range("not weights", 0.0, 1.0) == (-math.inf, math.inf)


# -- a near-perfect AUC --------------------------------------------------------------------


def test_auc_interval_clipped_at_one_and_raw_kept(auc_cube):
    res = cvstats.corrected_repeated_kfold_t(auc_cube)
    low, high = _raw_corrected_kfold(auc_cube, "boost")
    assert high > 1  # the Wald interval crosses the bound: the case of the test
    raw = res.conf_int(clip=False)
    np.testing.assert_allclose(float(raw.high.sel(model="boost")), high, rtol=1e-10)
    np.testing.assert_allclose(float(raw.low.sel(model="boost")), low, rtol=1e-10)
    shown = res.conf_int()
    assert float(shown.high.sel(model="boost")) == 1.0
    assert float(shown.low.sel(model="boost")) == pytest.approx(low, rel=1e-10)
    frame = res.to_frame().set_index("model")
    assert frame.loc["boost", "ci_upper"] == 1.0
    assert frame["ci_clipped"].tolist() == [True, False]
    assert not res.to_frame(clip=False)["ci_clipped"].any()
    assert float(res.interval(clip=False).sel(model="boost", ci_bound="upper")) > 1


def test_auc_result_exports_never_cross_one(auc_cube):
    res = cvstats.corrected_repeated_kfold_t(auc_cube)
    _, high = _raw_corrected_kfold(auc_cube, "boost")
    crossing = f"{high:.4g}"  # the raw bound as the exports would print it
    texts = {
        "summary": str(res.summary()),
        "markdown": res.to_markdown(),
        "latex": res.to_latex(),
        "html": res.to_html(),
        "repr": repr(res),
        "html display": res._repr_html_(),
    }
    for where, text in texts.items():
        assert crossing not in text, where
        assert "clipped at the quantity" in text, where
    for where in ("summary", "markdown", "html"):
        assert f"1{CLIP_MARK}" in texts[where], where
    assert r"1\S{}" in texts["latex"]
    assert "clipped at the metric's range" in str(res.verdict())


def test_comparison_table_exports_clip_the_levels(auc_cube):
    table = cvstats.compare("roc_auc ~ model", auc_cube)
    frame = table.to_frame()
    assert (frame["ci_upper"] <= 1).all() and (frame["ci_lower"] >= -1).all()
    level = frame[frame["contrast"] == "boost"].iloc[0]
    assert level["ci_upper"] == 1.0 and level["ci_clipped"]
    _, high = _raw_corrected_kfold(auc_cube, "boost")
    crossing = f"{high:.4g}"
    for text in (
        str(table.summary()),
        str(table.summary(full=True)),
        table.to_markdown(),
        table.to_html(),
        table.to_latex(),
    ):
        assert crossing not in text
        assert "clipped at the quantity" in text
        assert re.search(r"1\]" + re.escape(CLIP_MARK) + r"|1\]\\S\{\}", text)
    assert table.levels is not None
    assert table.levels.to_frame().set_index("model").loc["boost", "ci_upper"] == 1.0


def test_bayesian_credible_interval_clipped(auc_cube):
    res = cvstats.bayesian_correlated_t(auc_cube)
    raw = res.credible_interval(clip=False)
    assert float(raw.high.sel(model="boost")) > 1
    assert float(res.credible_interval().high.sel(model="boost")) == 1.0
    frame = res.to_frame()
    assert frame["ci_clipped"].tolist() == [True, False]
    assert "clipped at the metric's range" in str(res.verdict()).splitlines()[0]
    assert f"1{CLIP_MARK}" in res.to_markdown()


# -- an error rate near zero --------------------------------------------------------------


def test_error_rate_clipped_at_zero_difference_not(error_cube):
    res = cvstats.corrected_repeated_kfold_t(error_cube)
    low, _ = _raw_corrected_kfold(error_cube, "forest")
    assert low < 0
    frame = res.to_frame().set_index("model")
    assert frame.loc["forest", "ci_lower"] == 0.0 and frame.loc["forest", "ci_clipped"]
    assert not frame.loc["stump", "ci_clipped"]
    verdict = str(res.verdict())
    assert "forest's error is" in verdict and "0.0% to" in verdict
    assert "clipped at the metric's range" in verdict.splitlines()[0]
    # the difference lies well inside [-1, 1]: nothing clipped, nothing marked
    diff = cvstats.corrected_repeated_kfold_t(cvstats.pairwise(error_cube))
    assert not diff.to_frame()["ci_clipped"].any()
    assert CLIP_MARK not in str(diff.summary())


# -- contrasts, one-sided intervals, unknown ranges ---------------------------------------


def _result(estimate, stderr, weights, attrs, alternative="two-sided"):
    est = xr.DataArray(
        np.asarray(estimate, dtype=float),
        dims="contrast",
        coords={
            "contrast": [f"c{i}" for i in range(len(weights))],
            "weights": ("contrast", weights),
        },
        attrs=attrs,
    )
    se = xr.full_like(est, 0.0) + np.asarray(stderr, dtype=float)
    return InferenceResult(
        "corrected_resampled_t", "Corrected resampled t", "acc", est, se, est / se,
        xr.full_like(est, np.inf), xr.full_like(est, 0.5), 0.0, 0.05, alternative, "normal",
        "n1μ", "learner", 90, 10, 15, 15, "liberal",
    )  # fmt: skip


ACCURACY = {"greater_is_better": 1, "metric": "accuracy"}


def test_contrast_ranges_clip_levels_differences_and_other_contrasts():
    res = _result(
        [0.99, 0.98, 0.99, 1.02, 0.5],
        [0.01, 0.02, 0.02, 0.01, 0.01],
        ["1*a", "-1*a + 1*b", "0.5*a + 0.5*b - 1*c", "1*c", "0.5*a + 0.5*b - 1*c"],
        ACCURACY,
    )
    z = stats.norm.ppf(0.975)
    se = np.array([0.01, 0.02, 0.02, 0.01, 0.01])
    raw_high = np.array([0.99, 0.98, 0.99, 1.02, 0.5]) + z * se
    frame = res.to_frame()
    # a level and a difference at their ranges ([0, 1] and [-1, 1]); another contrast at its
    # range widened for its 4-digit weights (1.001); an estimate outside its range: not these
    # values' range; an interval inside the range as it is
    np.testing.assert_allclose(frame["ci_upper"], [1.0, 1.0, 1.001, raw_high[3], raw_high[4]])
    assert frame["ci_clipped"].tolist() == [True, True, True, False, False]
    np.testing.assert_allclose(res.to_frame(clip=False)["ci_upper"], raw_high)


def test_one_sided_infinite_bound_is_kept():
    res = _result([0.99], [0.01], ["1*a"], ACCURACY, alternative="less")
    low, high = res.conf_int()
    assert float(low[0]) == -math.inf  # "no bound on this side", not a value
    assert float(high[0]) == 1.0
    assert "95% upper bound 1" in str(res.verdict())


def test_unknown_metric_is_not_clipped():
    res = _result([0.99], [0.01], ["1*a"], {"greater_is_better": 1, "metric": "my_score"})
    assert float(res.conf_int().high[0]) > 1
    assert not res.to_frame()["ci_clipped"].any()


def test_clip_interval_lazy_and_aligned():
    est = xr.DataArray([0.5, 0.99], dims="model", attrs={"loss": "zero_one"}).chunk()
    low, high, cut = clip_interval(est - 0.6, est + 0.02, est, "zero_one")
    assert cut.chunks is not None  # stays lazy on dask
    np.testing.assert_allclose(low.values, [0.0, 0.39])
    np.testing.assert_allclose(high.values, [0.52, 1.0])
    assert cut.values.tolist() == [True, True]


# -- the Bayesian verdict writes numbers as the frequentist one does (issue 26, point 7) ---


def test_bayesian_level_written_like_the_frequentist_level(error_cube):
    bayes = cvstats.bayesian_correlated_t(error_cube)
    freq = cvstats.corrected_repeated_kfold_t(error_cube)
    b_line = str(bayes.verdict()).splitlines()[1]  # stump: nothing clipped
    f_line = str(freq.verdict()).splitlines()[1]
    # the same interval (ρ = 1/K is the correction's n2/n1 as a correlation): the same digits
    shown = re.search(r"stump's error is (\S+%)", f_line).group(1)
    assert f"stump: posterior mean {shown} (" in b_line
    interval = re.search(r"CI (\S+%) to (\S+%)", f_line).groups()
    assert f"credible interval {interval[0]} to {interval[1]};" in b_line
