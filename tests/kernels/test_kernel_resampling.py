"""Methods 2, 4, 5, 6, 7 and the k-fold tests of docs/theory.md §4, against the formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cvstats.errors import CvstatsError, DesignError, ZeroVarianceWarning
from cvstats.kernels import (
    bootstrap_t,
    conf_int,
    conservative_z,
    corrected_bootstrap_t,
    corrected_repeated_kfold_t,
    corrected_resampled_t,
    kfold_t,
    pvalue,
    resampled_t,
)

# ---------------------------------------------------------------------------
# Independent reference implementations: plain Python, straight from docs/theory.md §4


def _mean(xs):
    return sum(xs) / len(xs)


def _s2(xs):
    m = _mean(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def ref_resampled(mu, mu0, n1=None, n2=None):
    """Method 2 (n1 = n2 = None) or method 6: μ̂_J, (1/J [+ n2/n1]) S², t_{J-1}."""
    J = len(mu)
    factor = 1 / J + (0 if n1 is None else n2 / n1)
    est = _mean(mu)
    se = math.sqrt(factor * _s2(mu))
    return est, se, (est - mu0) / se, J - 1


def ref_bootstrap(main, rep, mu0, n1=None, n2=None):
    """Methods 5 / 7: μ̂_J from main; σ̌² of the R replicate means; (1 + J n2/n1)."""
    J = len(main)
    checks = [_mean(r) for r in rep]
    var = _s2(checks) * (1 if n1 is None else 1 + J * n2 / n1)
    est = _mean(main)
    return est, math.sqrt(var), (est - mu0) / math.sqrt(var), len(rep) - 1


def ref_cz(main, half, mu0):
    """Method 4, eq. (11): (1/2M) Σ_m (μ̂_(m) - μ̂^c_(m))²."""
    M = len(half)
    var = sum((_mean(h[0]) - _mean(h[1])) ** 2 for h in half) / (2 * M)
    est = _mean(main)
    return est, math.sqrt(var), (est - mu0) / math.sqrt(var), math.inf


def _check(res, ref):
    est, se, t, df = ref
    assert res.estimate == pytest.approx(est, rel=1e-12)
    assert res.stderr == pytest.approx(se, rel=1e-12)
    assert res.statistic == pytest.approx(t, rel=1e-10)
    assert res.df == df


# ---------------------------------------------------------------------------
# hand-worked cases


def test_resampled_t_hand():
    # mu = .1 .2 .3 .4: mean .25, S² = (.0225 + .0025 + .0025 + .0225)/3 = .05/3,
    # S²/J = .05/12, t = .25 / sqrt(.05/12) = sqrt(.0625 * 240) = sqrt(15)
    r = resampled_t([0.1, 0.2, 0.3, 0.4])
    assert r.estimate == pytest.approx(0.25)
    assert r.stderr == pytest.approx(math.sqrt(0.05 / 12))
    assert r.statistic == pytest.approx(math.sqrt(15))
    assert r.df == 3


def test_corrected_resampled_t_hand():
    # n1 = 90, n2 = 10: factor 1/4 + 1/9 = 13/36; σ̂² = 13/36 * .05/3 = .65/108
    # t² = .0625 * 108 / .65 = 135/13
    r = corrected_resampled_t([0.1, 0.2, 0.3, 0.4], 90, 10)
    assert r.stderr == pytest.approx(math.sqrt(0.65 / 108))
    assert r.statistic == pytest.approx(math.sqrt(135 / 13))
    assert r.df == 3
    # with mu0 = .25 the statistic is 0
    assert corrected_resampled_t([0.1, 0.2, 0.3, 0.4], 90, 10, mu0=0.25).statistic == 0


def test_bootstrap_hand():
    # main .2 .4 -> μ̂_J = .3; replicate means .2 .3 .4 -> σ̌² = .01, t_2 = .3/.1 = 3
    main = [0.2, 0.4]
    rep = [[0.1, 0.3], [0.2, 0.4], [0.3, 0.5]]
    r = bootstrap_t(main, rep)
    assert (r.estimate, r.stderr, r.statistic, r.df) == pytest.approx((0.3, 0.1, 3.0, 2))
    # corrected, n1 = n2: (1 + J n2/n1) = 3 -> σ̂² = .03, t = .3/sqrt(.03) = sqrt(3)
    r = corrected_bootstrap_t(main, rep, 50, 50)
    assert r.stderr == pytest.approx(math.sqrt(0.03))
    assert r.statistic == pytest.approx(math.sqrt(3))


def test_conservative_z_hand():
    # main .3 .5 -> .4. m=0: side means .2 and .4 (d = -.2); m=1: .5 and .3 (d = .2)
    # σ̂²_cz = (.04 + .04)/(2*2) = .02; z = .4/sqrt(.02) = 2 sqrt(2)
    main = [0.3, 0.5]
    half = [[[0.1, 0.3], [0.4, 0.4]], [[0.5, 0.5], [0.2, 0.4]]]
    r = conservative_z(main, half)
    assert r.estimate == pytest.approx(0.4)
    assert r.stderr == pytest.approx(math.sqrt(0.02))
    assert r.statistic == pytest.approx(2 * math.sqrt(2))
    assert r.df == np.inf


def test_corrected_repeated_kfold_hand():
    # r = 2, k = 3, fold means 1 2 3 2 3 4: mean 2.5, S² = 5.5/5 = 1.1
    # factor 1/6 + 1/2 = 2/3 -> σ̂² = 11/15, t = 2.5 / sqrt(11/15), df 5
    r = corrected_repeated_kfold_t([1.0, 2, 3, 2, 3, 4], 3)
    assert r.stderr == pytest.approx(math.sqrt(11 / 15))
    assert r.statistic == pytest.approx(2.5 / math.sqrt(11 / 15))
    assert r.df == 5
    # it is method 6 on the r·k folds with n2/n1 = 1/(k-1)
    c = corrected_resampled_t([1.0, 2, 3, 2, 3, 4], 2, 1)
    assert r.statistic == pytest.approx(c.statistic)


def test_kfold_t_hand():
    # folds 1 2 3: mean 2, S² = 1, σ̂² = 1/3, t(mu0=1) = 1/sqrt(1/3) = sqrt 3, df 2
    r = kfold_t([1.0, 2.0, 3.0], mu0=1.0)
    assert (r.estimate, r.stderr**2, r.statistic, r.df) == pytest.approx(
        (2.0, 1 / 3, math.sqrt(3), 2)
    )


# ---------------------------------------------------------------------------
# random arrays against the loops


def test_resampled_and_corrected_random_against_loops():
    rng = np.random.default_rng(10)
    mu = rng.normal(0.2, 0.05, size=(3, 4, 9))
    n1 = np.array([[80.0], [60.0], [150.0]])  # broadcast over the (3, 4) batch
    n2 = 20.0
    mu0 = rng.normal(0.2, 0.01, size=(3, 4))
    r = resampled_t(mu, mu0=mu0)
    c = corrected_resampled_t(mu, n1, n2, mu0=mu0)
    assert r.statistic.shape == c.statistic.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            m = mu[i, j].tolist()
            _check(type(r)(*(a[i, j] for a in r)), ref_resampled(m, mu0[i, j]))
            _check(type(c)(*(a[i, j] for a in c)), ref_resampled(m, mu0[i, j], n1[i, 0], n2))


def test_bootstrap_random_against_loops():
    rng = np.random.default_rng(11)
    main = rng.normal(size=(3, 4, 5))
    rep = rng.normal(size=(3, 4, 6, 5))
    b = bootstrap_t(main, rep, mu0=0.1)
    cb = corrected_bootstrap_t(main, rep, 40, np.array([10.0, 20, 5, 8]), mu0=0.1)
    n2 = [10.0, 20, 5, 8]
    for i in range(3):
        for j in range(4):
            ref = ref_bootstrap(main[i, j].tolist(), rep[i, j].tolist(), 0.1)
            _check(type(b)(*(a[i, j] for a in b)), ref)
            ref = ref_bootstrap(main[i, j].tolist(), rep[i, j].tolist(), 0.1, 40, n2[j])
            _check(type(cb)(*(a[i, j] for a in cb)), ref)


def test_conservative_z_random_against_loops():
    rng = np.random.default_rng(12)
    main = rng.normal(size=(3, 4, 15))
    half = rng.normal(size=(3, 4, 10, 2, 15))
    r = conservative_z(main, half, mu0=-0.2)
    for i in range(3):
        for j in range(4):
            ref = ref_cz(main[i, j].tolist(), half[i, j].tolist(), -0.2)
            _check(type(r)(*(a[i, j] for a in r)), ref)


# ---------------------------------------------------------------------------
# equality with scipy.stats.ttest_1samp (the resampled t is the one-sample t)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_resampled_t_equals_scipy_ttest_1samp(alternative):
    rng = np.random.default_rng(13)
    mu = rng.normal(0.3, 0.1, size=(3, 4, 15))
    res = resampled_t(mu, mu0=0.28)
    sp = stats.ttest_1samp(mu, 0.28, axis=-1, alternative=alternative)
    np.testing.assert_allclose(res.statistic, sp.statistic, rtol=1e-12)
    np.testing.assert_allclose(res.df, sp.df)
    np.testing.assert_allclose(pvalue(res.statistic, res.df, alternative), sp.pvalue, rtol=1e-10)
    ci = sp.confidence_interval(confidence_level=0.9)
    lo, hi = conf_int(res.estimate, res.stderr, res.df, 0.1, alternative)
    np.testing.assert_allclose(lo, ci.low, rtol=1e-12)
    np.testing.assert_allclose(hi, ci.high, rtol=1e-12)


def test_kfold_t_equals_scipy_ttest_1samp():
    mu = np.random.default_rng(14).normal(size=(2, 10))
    res = kfold_t(mu, mu0=0.1)
    np.testing.assert_allclose(res.statistic, stats.ttest_1samp(mu, 0.1, axis=-1).statistic)


def test_mu0_grid_broadcasts_to_power_curve():
    # a grid of mu0 on a new leading axis gives one statistic per (mu0, batch)
    mu = np.random.default_rng(15).normal(size=(4, 10))
    grid = np.linspace(-1, 1, 7)[:, None]
    r = resampled_t(mu, mu0=grid)
    assert r.statistic.shape == r.estimate.shape == r.df.shape == (7, 4)
    np.testing.assert_allclose(r.statistic[3], resampled_t(mu, mu0=grid[3, 0]).statistic)


# ---------------------------------------------------------------------------
# zero variance and bad input


def test_zero_variance_warns_and_returns_inf_nan():
    # .25 and .5 are binary fractions, so the mean of equal values is exact
    mu = np.array([[0.25, 0.25, 0.25], [0.1, 0.2, 0.3], [0.5, 0.5, 0.5]])
    with pytest.warns(ZeroVarianceWarning, match=r"2 of 3 .*all J split means are equal"):
        r = resampled_t(mu, mu0=0.5)
    assert r.statistic[0] == -np.inf and np.isnan(r.statistic[2])
    assert np.isfinite(r.statistic[1])
    assert r.stderr[0] == 0.0
    with pytest.warns(ZeroVarianceWarning, match="corrected resampled t"):
        corrected_resampled_t(mu, 9, 1)


def test_zero_variance_other_methods():
    with pytest.warns(ZeroVarianceWarning, match="all R replicate means"):
        r = bootstrap_t([0.1, 0.5], [[0.1, 0.3], [0.3, 0.1]])
    assert r.statistic == np.inf
    with pytest.warns(ZeroVarianceWarning, match=r"μ̂_\(m\) equals μ̂\^c_\(m\)"):
        conservative_z([0.1, 0.5], [[[0.1, 0.3], [0.3, 0.1]]])
    with pytest.warns(ZeroVarianceWarning, match="all K fold means"):
        kfold_t([1.0, 1.0])
    with pytest.warns(ZeroVarianceWarning, match="all fold means"):
        corrected_repeated_kfold_t([1.0, 1.0, 1.0, 1.0], 2)


def test_nan_propagates_without_warning():
    r = corrected_resampled_t([0.1, np.nan, 0.3], 9, 1)
    assert np.isnan(r.statistic) and np.isnan(r.stderr)


def test_bad_inputs():
    with pytest.raises(DesignError, match=r"at least 2 split means \(J\).*got 1"):
        resampled_t([[0.1], [0.2]])
    with pytest.raises(CvstatsError, match="at least 1 dimension"):
        resampled_t(0.3)
    with pytest.raises(ValueError, match="`n1` must be finite and > 0"):
        corrected_resampled_t([0.1, 0.2], 0, 10)
    with pytest.raises(ValueError, match="`n2` must be finite and > 0"):
        corrected_resampled_t([0.1, 0.2], 10, [1.0, -1.0])
    with pytest.raises(DesignError, match="same J as the main"):
        bootstrap_t([0.1, 0.2], [[0.1, 0.2, 0.3], [0.1, 0.2, 0.3]])
    with pytest.raises(DesignError, match=r"at least 2 replicates \(R\)"):
        bootstrap_t([0.1, 0.2], [[0.1, 0.2]])
    with pytest.raises(DesignError, match=r"shape \(\.\.\., M, 2, J\)"):
        conservative_z([0.1, 0.2], np.zeros((4, 3, 2)))
    with pytest.raises(ValueError, match="`k` must be an integer >= 2"):
        corrected_repeated_kfold_t([0.1, 0.2, 0.3], 1)
    with pytest.raises(DesignError, match="not a multiple of k = 4"):
        corrected_repeated_kfold_t([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], 4)
