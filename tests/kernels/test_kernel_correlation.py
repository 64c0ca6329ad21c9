"""Pearson correlation and its Fisher-z interval (docs/theory.md §1, ``cv_bias``)."""

from __future__ import annotations

import math
import statistics
import warnings

import numpy as np
import pytest
from scipy import stats

from cvstats.errors import ArgumentError
from cvstats.kernels import fisher_z_interval, pearson_r


def test_pearson_r_matches_scipy_pearsonr_on_every_batch_element():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4, 25))
    y = 0.6 * x + rng.normal(size=(3, 4, 25))
    got = pearson_r(x, y)
    assert got.shape == (3, 4)
    for idx in np.ndindex(got.shape):
        want = stats.pearsonr(x[idx], y[idx]).statistic
        assert got[idx] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_pearson_r_hand_value_and_corrcoef():
    # x = (1, 2, 3), y = (2, 4, 7): Sxy = 5, Sxx = 2, Syy = 12.67 -> r = 5/sqrt(2 * 38/3)
    assert pearson_r([1.0, 2.0, 3.0], [2.0, 4.0, 7.0]) == pytest.approx(5 / math.sqrt(76 / 3))
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2, 40))
    assert pearson_r(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1], rel=1e-12)


def test_pearson_r_broadcasts_batch_axes():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 1, 30))
    y = rng.normal(size=(1, 3, 30))
    got = pearson_r(x, y)
    assert got.shape == (5, 3)
    assert got[4, 2] == pytest.approx(pearson_r(x[4, 0], y[0, 2]), rel=1e-13)


def test_pearson_r_zero_variance_is_nan():
    got = pearson_r([[1.0, 2.0, 3.0], [4.0, 4.0, 4.0]], [[5.0, 5.0, 5.0], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(got, [np.nan, np.nan])
    # scipy agrees (it warns that the correlation is undefined)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(stats.pearsonr([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]).statistic)


@pytest.mark.parametrize("n", [4, 5, 12, 200])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.3])
def test_fisher_z_interval_matches_scipy_pearsonr_confidence_interval(n, alpha):
    # scipy's interval is the Fisher-z form tanh(atanh(r) -/+ z_{1-a/2} / sqrt(n - 3))
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    y = 0.4 * x + rng.normal(size=n)
    res = stats.pearsonr(x, y)
    want = res.confidence_interval(confidence_level=1 - alpha)
    lo, hi = fisher_z_interval(pearson_r(x, y), n, alpha)
    assert lo == pytest.approx(want.low, rel=1e-12, abs=1e-14)
    assert hi == pytest.approx(want.high, rel=1e-12, abs=1e-14)


def test_fisher_z_interval_hand_value_independent_of_scipy():
    # r = 0.5, n = 28: sqrt(n - 3) = 5; z_{0.975} from the standard library
    z = math.atanh(0.5)
    half = statistics.NormalDist().inv_cdf(0.975) / 5
    lo, hi = fisher_z_interval(0.5, 28)
    assert lo == pytest.approx(math.tanh(z - half), rel=1e-12)
    assert hi == pytest.approx(math.tanh(z + half), rel=1e-12)


def test_fisher_z_interval_vectorized_and_edges():
    r = np.array([[-1.0, -0.3, 0.0], [0.3, 1.0, np.nan]])
    lo, hi = fisher_z_interval(r, 10, 0.1)
    assert lo.shape == hi.shape == r.shape
    for idx in np.ndindex(r.shape):
        if np.isnan(r[idx]):
            assert np.isnan(lo[idx]) and np.isnan(hi[idx])
            continue
        one_lo, one_hi = fisher_z_interval(r[idx], 10, 0.1)
        assert (lo[idx], hi[idx]) == (one_lo, one_hi)
        assert lo[idx] <= r[idx] <= hi[idx]
    # r = +-1: the degenerate interval; symmetric in the sign of r
    assert (lo[0, 0], hi[0, 0], lo[1, 1], hi[1, 1]) == (-1.0, -1.0, 1.0, 1.0)
    np.testing.assert_allclose(lo[0, 1], -hi[1, 0], rtol=1e-15)
    # a rounding error beyond 1 is clipped, not NaN
    assert fisher_z_interval(1.0 + 1e-15, 10) == (1.0, 1.0)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_fisher_z_interval_needs_more_than_three_pairs(n):
    lo, hi = fisher_z_interval(np.array([0.2, 0.9]), n)
    np.testing.assert_array_equal(lo, [np.nan, np.nan])
    np.testing.assert_array_equal(hi, [np.nan, np.nan])


@pytest.mark.parametrize(
    ("n", "alpha"), [(0, 0.05), (2.5, 0.05), (True, 0.05), (10, 0.0), (10, 1.0), (10, -0.1)]
)
def test_fisher_z_interval_rejects_bad_arguments(n, alpha):
    with pytest.raises(ArgumentError):
        fisher_z_interval(0.5, n, alpha)
