"""The cluster-robust variance of a mean (cvstats.kernels.cluster) against statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from cvstats.errors import ArgumentError, DesignError
from cvstats.kernels.cluster import MIN_GROUPS, cluster_moments, cluster_t, group_sum_squares
from cvstats.kernels.moments import nan_moments


def _statsmodels_variance(x: np.ndarray, groups: np.ndarray) -> float:
    """Variance of the mean: OLS on a constant, cluster-robust (CR1, statsmodels' default)."""
    fit = sm.OLS(x, np.ones_like(x)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return float(fit.bse[0] ** 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cluster_variance_equals_statsmodels_cluster_ols(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, n_groups = 83, 17
    groups = rng.integers(0, n_groups, n)
    x = rng.gamma(2.0, size=(3, n)) + rng.normal(size=n_groups)[groups]
    x[1, rng.random(n) < 0.3] = np.nan  # a sample per slice, as off a split's test set
    m = cluster_moments(x, groups)
    for b in range(3):
        keep = ~np.isnan(x[b])
        assert m.count[b] == keep.sum()
        assert m.n_groups[b] == np.unique(groups[keep]).size
        assert m.mean[b] == pytest.approx(x[b][keep].mean(), rel=1e-12)
        expected = _statsmodels_variance(x[b][keep], groups[keep])
        assert m.variance[b] == pytest.approx(expected, rel=1e-10, abs=0)


def test_one_example_per_group_is_the_iid_variance() -> None:
    # statsmodels' CR1 factor G/(G-1)·(N-1)/(N-1) with G = N turns Σ r²/N² into S²/N
    x = np.random.default_rng(5).standard_t(4, size=(2, 31))
    m = cluster_moments(x, np.arange(31))
    count, _, s2 = nan_moments(x)
    np.testing.assert_allclose(m.variance, s2 / count, rtol=1e-13)
    assert _statsmodels_variance(x[0], np.arange(31)) == pytest.approx(s2[0] / 31, rel=1e-12)


def test_cluster_t_df_and_refusal_of_few_groups() -> None:
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(12), 3)
    x = rng.normal(size=36)
    res = cluster_t(x, groups, reference="t", mu0=0.1)
    assert float(res.df) == 11.0
    assert float(res.statistic) == pytest.approx((x.mean() - 0.1) / float(res.stderr))
    few = np.repeat(np.arange(MIN_GROUPS - 1), 4)
    with pytest.raises(DesignError, match=r"at least 10 groups.*G = 9"):
        cluster_t(rng.normal(size=few.size), few)


def test_bad_group_codes() -> None:
    with pytest.raises(ArgumentError, match=r"`groups` must hold integer group codes.*float64"):
        cluster_moments([1.0, 2.0], [0.0, 1.0])
    with pytest.raises(ArgumentError, match=r"non-negative integer codes, got -1"):
        cluster_moments([1.0, 2.0], [0, -1])
    with pytest.raises(ArgumentError, match=r"does not broadcast"):
        cluster_moments([1.0, 2.0, 3.0], [0, 1])


def test_group_sum_squares_by_hand() -> None:
    # groups {0: 1, 2}, {1: 4} (the NaN is off the sample), {2: -3, 1}; batch of two rows
    values = np.array([[1.0, 2.0, np.nan, 4.0, -3.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
    ss, n_groups = group_sum_squares(values, [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(ss, [3.0**2 + 4.0**2 + 2.0**2, 3 * 2.0**2])
    np.testing.assert_array_equal(n_groups, [3, 3])
