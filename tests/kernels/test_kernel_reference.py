"""Reference distributions: p-values, critical values, intervals (docs/theory.md §4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cvstats.errors import CvstatsError
from cvstats.kernels import conf_int, critical_value, pvalue, pvalue_f


def test_pvalue_normal_hand_values():
    # Phi(-1.959963984540054) = 0.025, so the two-sided p-value is 0.05
    assert pvalue(1.959963984540054) == pytest.approx(0.05, rel=1e-12)
    # one-sided: P(Z >= 1.6448536269514722) = 0.05, P(Z <= 1.6448...) = 0.95
    assert pvalue(1.6448536269514722, alternative="greater") == pytest.approx(0.05)
    assert pvalue(1.6448536269514722, alternative="less") == pytest.approx(0.95)
    # Phi(x) = (1 + erf(x / sqrt 2)) / 2: independent of scipy
    x = -0.7
    assert pvalue(x, alternative="less") == pytest.approx((1 + math.erf(x / math.sqrt(2))) / 2)


def test_pvalue_t_hand_values():
    # t_1 is Cauchy: P(T >= 1) = 1/2 - atan(1)/pi = 1/4, so two-sided p = 1/2
    assert pvalue(1.0, 1) == pytest.approx(0.5)
    assert pvalue(1.0, 1, "greater") == pytest.approx(0.25)
    assert pvalue(1.0, 1, "less") == pytest.approx(0.75)
    # t_2: P(T >= t) = 1/2 - t / (2 sqrt(t^2 + 2))
    t = 1.3
    assert pvalue(t, 2, "greater") == pytest.approx(0.5 - t / (2 * math.sqrt(t * t + 2)))


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_pvalue_mixed_df_array(alternative):
    rng = np.random.default_rng(1)
    t = rng.normal(scale=2, size=(4, 6))
    df = np.array([1, 3, 10, np.inf, 7, np.inf])
    got = pvalue(t, df, alternative)
    for i in range(4):
        for j in range(6):
            dist = stats.norm if np.isinf(df[j]) else stats.t(df[j])
            if alternative == "two-sided":
                want = 2 * dist.sf(abs(t[i, j]))
            elif alternative == "greater":
                want = dist.sf(t[i, j])
            else:
                want = dist.cdf(t[i, j])
            assert got[i, j] == pytest.approx(want, rel=1e-10)


def test_pvalue_extremes():
    p = pvalue(np.array([np.inf, -np.inf, np.nan, 0.0]), 5)
    np.testing.assert_array_equal(p, [0.0, 0.0, np.nan, 1.0])
    np.testing.assert_array_equal(pvalue([np.inf, -np.inf], np.inf, "greater"), [0.0, 1.0])


def test_critical_value_hand_values():
    # z_{0.975} = 1.959963984540054, t_{5, 0.975} = 2.570581835636314 (tables)
    assert critical_value(np.inf, 0.05) == pytest.approx(1.959963984540054)
    assert critical_value(5, 0.05) == pytest.approx(2.570581835636314)
    # one-sided uses 1 - alpha: z_{0.95} = 1.6448536269514722
    assert critical_value(np.inf, 0.05, "less") == pytest.approx(1.6448536269514722)
    assert critical_value(np.inf, 0.05, "greater") == pytest.approx(1.6448536269514722)
    # t_1 (Cauchy): quantile 0.975 is tan(pi (0.975 - 1/2))
    assert critical_value(1, 0.05) == pytest.approx(math.tan(math.pi * 0.475))
    np.testing.assert_allclose(
        critical_value(np.array([5.0, np.inf]), 0.05), [2.570581835636314, 1.959963984540054]
    )


def test_conf_int_two_and_one_sided():
    # estimate 1, stderr 0.5, z: 1 -+ 1.959963984540054 * 0.5
    lo, hi = conf_int(1.0, 0.5, np.inf, 0.05)
    assert lo == pytest.approx(1 - 0.979981992270027)
    assert hi == pytest.approx(1 + 0.979981992270027)
    lo, hi = conf_int(1.0, 0.5, np.inf, 0.05, "less")
    assert lo == -np.inf
    assert hi == pytest.approx(1 + 0.5 * 1.6448536269514722)
    lo, hi = conf_int(1.0, 0.5, np.inf, 0.05, "greater")
    assert lo == pytest.approx(1 - 0.5 * 1.6448536269514722)
    assert hi == np.inf


def test_conf_int_broadcasts():
    est = np.arange(6.0).reshape(2, 3)
    se = np.array([1.0, 2.0, 0.5])
    df = np.array([[4.0], [np.inf]])
    lo, hi = conf_int(est, se, df, 0.1)
    assert lo.shape == hi.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            c = stats.norm.isf(0.05) if np.isinf(df[i, 0]) else stats.t.isf(0.05, df[i, 0])
            assert lo[i, j] == pytest.approx(est[i, j] - c * se[j])
            assert hi[i, j] == pytest.approx(est[i, j] + c * se[j])
    lo, hi = conf_int(est, se, df, 0.1, "less")
    assert np.all(np.isneginf(lo)) and lo.shape == (2, 3)


def test_pvalue_f():
    # F(2, 2): P(F >= f) = 1 / (1 + f)
    assert pvalue_f(3.0, 2, 2) == pytest.approx(0.25)
    np.testing.assert_allclose(pvalue_f([0.5, 2.0], 10, 5), stats.f.sf([0.5, 2.0], 10, 5))
    assert pvalue_f(np.inf, 10, 5) == 0.0


@pytest.mark.parametrize("bad", ["two_sided", "both", None, 1])
def test_alternative_validated(bad):
    with pytest.raises(ValueError, match="`alternative` must be one of"):
        pvalue(1.0, 5, bad)
    with pytest.raises(CvstatsError, match="`alternative`"):
        critical_value(5, 0.05, bad)


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, np.nan, True, "0.05", None])
def test_alpha_validated(bad):
    with pytest.raises(ValueError, match="`alpha` must be"):
        critical_value(5, bad)
    with pytest.raises(CvstatsError, match="`alpha`"):
        conf_int(0.0, 1.0, 5, bad)


def test_df_validated():
    with pytest.raises(ValueError, match="`df` must be > 0"):
        pvalue(1.0, 0)
    with pytest.raises(ValueError, match="`dfd` must be > 0"):
        pvalue_f(1.0, 10, -5)


def test_survival_and_quantiles_equal_scipy_stats_exactly():
    """The special functions are the ones scipy.stats' t and norm call: equal to the bit."""
    from cvstats.kernels.reference import _isf, survival

    x = np.array([-np.inf, -40.0, -3.2, -1e-9, 0.0, 0.7, 2.5, 9.0, 1e3, np.inf, np.nan])
    for df in [0.5, 1.0, 2.0, 3.7, 29.0, 1e6, np.inf, np.nan]:
        d = np.full_like(x, df)
        want = stats.norm.sf(x) if np.isinf(df) else stats.t.sf(x, d)
        np.testing.assert_array_equal(survival(x, d), want)
        for q in [1e-12, 0.005, 0.025, 0.05, 0.5, 0.9]:
            got = _isf(q, np.asarray(df))
            want_q = stats.norm.isf(q) if np.isinf(df) else stats.t.isf(q, df)
            np.testing.assert_array_equal(got, want_q)


def test_quantile_at_the_bounds_and_float32_input_as_scipy():
    from cvstats.kernels.reference import _isf, survival

    df = np.array([5.0, np.inf, np.nan])
    np.testing.assert_array_equal(_isf(0.0, df), [np.inf, np.inf, np.nan])  # t.isf(0) = inf
    np.testing.assert_array_equal(_isf(1.0, df), [-np.inf, -np.inf, np.nan])
    assert critical_value(5.0, alpha=5e-324) == stats.t.isf(5e-324 / 2, 5) == np.inf
    x = np.array(np.float32(0.1257302))  # computed in float64, as scipy.stats does
    assert survival(x, np.array(np.inf)) == stats.norm.sf(x)
    assert survival(x, np.array(7.0)) == stats.t.sf(x, 7.0)
