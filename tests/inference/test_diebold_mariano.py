"""The Diebold–Mariano test with the Harvey–Leybourne–Newbold correction.

Checked against statsmodels (the HAC variance of the mean of ``d_t`` from an OLS
on a constant, ``cov_type="HAC"``, and the autocovariances of ``acovf``), against
a case worked by hand, and by Monte Carlo under an MA(1) null; ``compare`` runs
it on a ``TimeSeriesSplit`` cube. The registry contract
(``tests/inference/test_registry_contract.py``) covers vectorization, laziness,
coordinates, options and the declaration.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal
import scipy.stats
import statsmodels.api as sm
import xarray as xr
from sklearn.model_selection import KFold, TimeSeriesSplit
from statsmodels.tsa.stattools import acovf

import cvstats
from cvstats import ArgumentError, CvstatsWarning, DesignError, designs
from cvstats.cube.compact import compact_cube, to_compact
from cvstats.inference.diebold_mariano import hln_factor
from cvstats.inference.registry import METHODS, applicable_methods, design_kinds


def series_cube(d: np.ndarray, n_splits: int) -> xr.DataArray:
    """A one-model cube whose out-of-sample losses, in time order, are ``d`` (``(..., T)``).

    ``TimeSeriesSplit(n_splits)`` on ``n = T + T / n_splits`` examples: the first chunk
    only trains, the others are tested once each.
    """
    T = d.shape[-1]
    n = T + T // n_splits
    design = designs.from_splitter(TimeSeriesSplit(n_splits), n=n)
    mask = design["test"].values  # (split, example)
    losses = np.full((*d.shape[:-1], n_splits, n, 1), np.nan)
    for j in range(n_splits):
        losses[..., j, mask[j], 0] = d[..., mask[j].nonzero()[0] - (n - T)]
    extra_dims = ["rep"] if d.ndim > 1 else []
    return cvstats.from_arrays(losses, design=design, models=["a"], extra_dims=extra_dims)


def ma1(rng: np.random.Generator, shape: tuple[int, ...], theta: float) -> np.ndarray:
    """``e_t + θ e_{t-1}``: an MA(1) of mean 0 (the loss differences of 2-step forecasts)."""
    e = rng.standard_normal((*shape[:-1], shape[-1] + 1))
    return e[..., 1:] + theta * e[..., :-1]


@pytest.mark.parametrize("horizon", [1, 2, 4])
@pytest.mark.parametrize(("variant", "kernel"), [("rectangular", "uniform"), ("bartlett", None)])
def test_equals_the_published_formula_with_statsmodels_hac(horizon, variant, kernel):
    rng = np.random.default_rng(horizon)
    d = 0.1 + ma1(rng, (60,), 0.6)
    res = cvstats.diebold_mariano(series_cube(d, 4), horizon=horizon, variant=variant, mu0=0.05)
    T = d.size
    # Newey–West variance of the mean: an OLS of d on a constant, HAC up to lag h - 1,
    # no small-sample correction (autocovariances over T, as Diebold & Mariano's)
    kwds = {"maxlags": horizon - 1, "use_correction": False}
    if kernel is None:  # Bartlett (statsmodels' default kernel), Newey & West's 1994 lag rule
        kwds["maxlags"] = max(horizon - 1, int(4 * (T / 100) ** (2 / 9)))
        assert kwds["maxlags"] == 3
    else:
        kwds["kernel"] = kernel
    fit = sm.OLS(d, np.ones(T)).fit(cov_type="HAC", cov_kwds=kwds)
    se = float(fit.bse[0])
    hln = np.sqrt((T + 1 - 2 * horizon + horizon * (horizon - 1) / T) / T)
    statistic = hln * (d.mean() - 0.05) / se
    assert res.estimate.item() == pytest.approx(d.mean(), rel=1e-12)
    np.testing.assert_allclose(res.statistic.item(), statistic, rtol=1e-10)
    np.testing.assert_allclose(res.stderr.item(), se / hln, rtol=1e-10)
    assert res.df.item() == T - 1 and (res.n2, res.n_splits) == (T, 4)
    p = 2 * scipy.stats.t.sf(abs(statistic), T - 1)
    np.testing.assert_allclose(res.pvalue.item(), p, rtol=1e-10)
    low, high = res.conf_int()
    c = scipy.stats.t.ppf(0.975, T - 1)
    np.testing.assert_allclose([low.item(), high.item()], d.mean() + np.array([-c, c]) * se / hln)
    if variant == "rectangular":  # the same from the autocovariances themselves
        gamma = acovf(d, adjusted=False, demean=True, fft=False, nlag=horizon - 1)
        V = gamma[0] + 2 * gamma[1:].sum()
        np.testing.assert_allclose(res.stderr.item(), np.sqrt(V / T) / hln, rtol=1e-10)


def test_a_case_worked_by_hand():
    # d = 1, 3, 2, 5, 4, 6: mean 3.5, γ0 = 17.5/6, γ1 = 1.75/6 (over T = 6)
    d = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 6.0])
    cube = series_cube(d, 2)
    # h = 2, rectangular: V = γ0 + 2γ1 = 3.5, DM² = 3.5² / (3.5/6) = 21; HLN² = (10/3)/6 = 5/9
    res = cvstats.diebold_mariano(cube, horizon=2)
    np.testing.assert_allclose(res.statistic.item(), np.sqrt(21 * 5 / 9), rtol=1e-12)
    np.testing.assert_allclose(res.stderr.item(), np.sqrt(21 / 20), rtol=1e-12)
    # Bartlett: L = max(1, floor(4 (6/100)^(2/9))) = 2, weights 2/3, 1/3; γ2 = 6/6;
    # V = (17.5 + 2 (2/3 1.75 + 1/3 6)) / 6 = 143/36, DM² = 3.5² 6 / V = 2646/143
    res = cvstats.diebold_mariano(cube, horizon=2, variant="bartlett")
    np.testing.assert_allclose(res.statistic.item(), np.sqrt(2646 / 143 * 5 / 9), rtol=1e-12)
    # h = 1: the plain t statistic of the mean with the variance over T, times sqrt((T-1)/T)
    res = cvstats.diebold_mariano(cube)
    t = d.mean() / (d.std(ddof=1) / np.sqrt(6))
    np.testing.assert_allclose(res.statistic.item(), t, rtol=1e-12)
    assert res.title == "Diebold–Mariano (h = 1, rectangular window, HLN)"


def test_the_hln_factor_by_hand():
    assert hln_factor(6, 2) == pytest.approx(np.sqrt(5 / 9))
    assert hln_factor(10, 1) == pytest.approx(np.sqrt(9 / 10))
    # T = 20, h = 3: (20 + 1 - 6 + 6/20) / 20 = 15.3 / 20
    assert hln_factor(20, 3) == pytest.approx(np.sqrt(0.765))
    np.testing.assert_allclose(hln_factor(np.array([6, 20]), 2), np.sqrt([5 / 9, 17.1 / 20]))


def ar1(rng: np.random.Generator, shape: tuple[int, ...], rho: float) -> np.ndarray:
    """A stationary AR(1) series of mean 0 (``scipy.signal.lfilter``)."""
    e = rng.standard_normal(shape)
    e[..., 0] /= np.sqrt(1 - rho**2)  # the stationary start
    return scipy.signal.lfilter([1.0], [1.0, -rho], e, axis=-1)


@pytest.mark.slow
def test_size_under_autocorrelated_nulls():
    # 0.05 ± 4 standard errors of R = 4000 draws (0.0034); HLN's corrected statistic
    # keeps its level where the answer is known, the uncorrected variance does not
    rng = np.random.default_rng(20261128)
    R = 4000
    # two-step-ahead forecasts: d_t an MA(1) of mean 0, the rectangular window at h = 2
    cube = series_cube(ma1(rng, (R, 60), 0.8), 4)
    size = float((cvstats.diebold_mariano(cube, horizon=2).pvalue < 0.05).mean())
    assert 0.036 < size < 0.064, size
    size_h1 = float((cvstats.diebold_mariano(cube).pvalue < 0.05).mean())
    assert size_h1 > 0.12, size_h1  # ignoring the MA(1): far too many rejections
    # an AR(1) of mean 0 (autocorrelation at every lag): Newey–West's Bartlett variance
    # (liberal in finite samples: its lag rule truncates the autocovariances, which
    # biases the variance down; hence the wider upper tolerance)
    cube = series_cube(ar1(rng, (R, 480), 0.3), 4)
    size = float((cvstats.diebold_mariano(cube, variant="bartlett").pvalue < 0.05).mean())
    assert 0.036 < size < 0.085, size
    size_h1 = float((cvstats.diebold_mariano(cube).pvalue < 0.05).mean())
    assert size_h1 > 0.11, size_h1


def test_compare_runs_it_on_a_time_series_cube_and_leaves_out_the_pooled_methods():
    rng = np.random.default_rng(3)
    design = designs.from_splitter(TimeSeriesSplit(5), n=72)
    losses = rng.random((5, 72, 3)) + [0.0, 0.05, 0.3]
    cube = cvstats.from_arrays(losses, design=design, models=["ar", "ets", "naive"])
    assert "time_ordered" in design_kinds(cube)
    table = cvstats.compare("loss ~ model", cube)
    assert list(table.results) == ["diebold_mariano"]
    pooled = [n for n in applicable_methods(cube) if METHODS[n].random_splits]
    assert pooled == ["resampled_t", "corrected_resampled_t"]
    note = next(n for n in table.notes if "left out" in n)
    assert note.startswith("resampled_t, corrected_resampled_t left out: each pools the splits")
    assert "diebold_mariano(cube) (Diebold & Mariano (1995)" in note
    want = cvstats.diebold_mariano(cvstats.contrasts("loss ~ model", cube))
    got = table.results["diebold_mariano"]
    np.testing.assert_allclose(got.statistic.values, want.statistic.values, rtol=1e-12)
    assert "the verdict comes from diebold_mariano" in table.verdict()
    # the pooled methods still refuse the cube, naming the test that applies
    with pytest.raises(DesignError, match=r"use: diebold_mariano\(cube\)"):
        cvstats.corrected_resampled_t(cvstats.pairwise(cube))


def test_a_compact_cube_and_an_extra_dim_give_the_same_numbers():
    rng = np.random.default_rng(5)
    d = ma1(rng, (3, 40), 0.5)
    cube = series_cube(d, 4)
    res = cvstats.diebold_mariano(cube, horizon=2)
    compact = cvstats.diebold_mariano(compact_cube(to_compact(cube)), horizon=2)
    np.testing.assert_allclose(compact.statistic.values, res.statistic.values, rtol=1e-12)
    one = cvstats.diebold_mariano(series_cube(d[1], 4), horizon=2)
    np.testing.assert_allclose(res.statistic.values[1], one.statistic.item(), rtol=1e-12)


def pairs_cube(pairs: list[tuple[range, range]], n: int) -> xr.DataArray:
    design = designs.from_splitter([(list(a), list(b)) for a, b in pairs], n=n)
    losses = np.random.default_rng(0).random((len(pairs), n, 2))
    return cvstats.from_arrays(losses, design=design, models=["a", "b"])


def test_bad_designs_are_refused():
    kfold = designs.from_splitter(KFold(4), n=40)
    cube = cvstats.from_arrays(np.random.default_rng(1).random((4, 40, 1)), design=kfold)
    with pytest.raises(DesignError, match="needs time-ordered splits, .*nested_train"):
        cvstats.diebold_mariano(cube)
    # test windows that overlap (a rolling origin forecasting 10 steps): not this kind
    windows = [(range(10 + 5 * j), range(10 + 5 * j, 20 + 5 * j)) for j in range(3)]
    overlap = pairs_cube(windows, 40)
    assert "time_ordered" not in design_kinds(overlap)
    with pytest.raises(DesignError, match="position 15 is tested by more than one split"):
        cvstats.diebold_mariano(overlap)
    # test chunks that skip periods
    holes = pairs_cube([(range(10), range(10, 15)), (range(20), range(20, 25))], 30)
    with pytest.raises(DesignError, match=r"skip examples 15\.\.19"):
        cvstats.diebold_mariano(holes)
    short = series_cube(np.arange(6.0), 2)
    with pytest.raises(DesignError, match="horizon h = 6 needs more than h .* tests 6"):
        cvstats.diebold_mariano(short, horizon=6)
    with pytest.raises(DesignError, match="main block of J >= 2"):
        cvstats.diebold_mariano(short.isel(split=[1]))
    # time stamps on `example` that do not increase: its order is not the time order
    stamps = np.datetime64("2026-01-01") + np.arange(9).astype("timedelta64[D]")
    shuffled = short.assign_coords(example=stamps[[0, 1, 2, 3, 5, 4, 6, 7, 8]])
    with pytest.raises(DesignError, match="its time stamps do not increase"):
        cvstats.diebold_mariano(shuffled)
    cvstats.diebold_mariano(short.assign_coords(example=stamps))


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"horizon": 0}, "`horizon` must be a positive int .* got 0"),
        ({"horizon": 1.5}, "`horizon` must be a positive int"),
        ({"horizon": True}, "`horizon` must be a positive int"),
        ({"variant": "parzen"}, r"`variant` must be one of \['rectangular', 'bartlett'\]"),
    ],
)
def test_bad_options_are_refused(options, match):
    with pytest.raises(ArgumentError, match=match):
        cvstats.diebold_mariano(series_cube(np.arange(12.0), 3), **options)


def test_a_negative_rectangular_variance_is_nan_with_a_warning():
    # strongly alternating differences: γ0 + 2γ1 < 0 with h = 2
    d = np.tile([1.0, -1.0], 10) + np.linspace(0, 0.1, 20)
    cube = series_cube(d, 4)
    with pytest.warns(CvstatsWarning, match="negative in 1 of 1 .* variant='bartlett'"):
        res = cvstats.diebold_mariano(cube, horizon=2)
    assert np.isnan(res.statistic.item())
    assert np.isfinite(cvstats.diebold_mariano(cube, horizon=2, variant="bartlett").statistic)


def test_time_ordered_true_declares_any_design_a_time_series():
    # contiguous KFold blocks of a series (blocked CV): not forward-chaining, so not detected
    n = 60
    assert designs.from_splitter(KFold(5), n=n).attrs["time_ordered"] == 0
    blocked = designs.from_splitter(KFold(5), n=n, time_ordered=True)
    assert blocked.attrs["time_ordered"] == 1
    rng = np.random.default_rng(29)
    d = 0.15 + ma1(rng, (n,), 0.7)
    base = rng.gamma(2.0, size=n)
    mask = blocked["test"].values[..., None]
    losses = np.where(mask, np.stack([base + d, base], axis=-1)[None], np.nan)
    cube = cvstats.from_arrays(losses, design=blocked, models=["a", "b"])
    assert "time_ordered" in design_kinds(cube)
    res = cvstats.diebold_mariano(cvstats.pairwise(cube), horizon=2)
    kwds = {"maxlags": 1, "kernel": "uniform", "use_correction": False}
    se = float(sm.OLS(d, np.ones(n)).fit(cov_type="HAC", cov_kwds=kwds).bse[0])
    hln = np.sqrt((n + 1 - 4 + 2 / n) / n)
    np.testing.assert_allclose(res.statistic.item(), hln * d.mean() / se, rtol=1e-10)
    with pytest.raises(DesignError, match=r"time-ordered .*use: diebold_mariano\(cube\)"):
        cvstats.kfold_t(cvstats.pairwise(cube))
    table = cvstats.compare("loss ~ model", cube)
    assert list(table.results) == ["diebold_mariano"]
    assert "the verdict comes from diebold_mariano" in table.verdict()


def test_time_ordered_must_be_a_bool_and_cannot_undo_forward_chaining():
    with pytest.raises(ArgumentError, match=r"`time_ordered` must be True, False or None.*'yes'"):
        designs.from_splitter(KFold(4), n=40, time_ordered="yes")
    with pytest.raises(ArgumentError, match=r"`time_ordered=False`, but the splits of "):
        designs.from_splitter(TimeSeriesSplit(4), n=40, time_ordered=False)
    assert designs.from_splitter(KFold(4), n=40, time_ordered=False).attrs["time_ordered"] == 0
