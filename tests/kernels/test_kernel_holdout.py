"""Hold-out t and McNemar's tests (docs/theory.md §4, method 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from cvstats.errors import CubeError, DesignError, ZeroVarianceWarning
from cvstats.kernels import (
    holdout_t,
    mcnemar_chi2,
    mcnemar_counts,
    mcnemar_exact,
    mcnemar_z,
    pvalue,
)

NAN = np.nan


def test_holdout_t_hand():
    # test losses 1, 2, 4 (NaN = not in the test set): mean 7/3, S_L² = 7/3 (see
    # test_nan_moments_hand), σ̂² = S_L²/n2 = 7/9, z = (7/3 - 1)/(sqrt 7 / 3) = 4/sqrt 7
    r = holdout_t([1.0, NAN, 2.0, 4.0, NAN], mu0=1.0)
    assert r.estimate == pytest.approx(7 / 3)
    assert r.stderr == pytest.approx(math.sqrt(7) / 3)
    assert r.statistic == pytest.approx(4 / math.sqrt(7))
    assert r.df == np.inf
    assert holdout_t([1.0, NAN, 2.0, 4.0, NAN], reference="t").df == 2


def test_holdout_t_batch_with_varying_n2_matches_loop():
    rng = np.random.default_rng(20)
    losses = rng.normal(size=(3, 4, 30))
    losses[rng.random(losses.shape) < 0.5] = NAN
    losses[..., :2] = 0.5  # at least two test examples everywhere
    r = holdout_t(losses, mu0=0.1, reference="t")
    for idx in np.ndindex(3, 4):
        x = [v for v in losses[idx] if not np.isnan(v)]
        n2 = len(x)
        m = sum(x) / n2
        s2 = sum((v - m) ** 2 for v in x) / (n2 - 1)
        assert r.estimate[idx] == pytest.approx(m)
        assert r.stderr[idx] == pytest.approx(math.sqrt(s2 / n2))
        assert r.statistic[idx] == pytest.approx((m - 0.1) / math.sqrt(s2 / n2))
        assert r.df[idx] == n2 - 1
        # the t reference is scipy's one-sample t on the test losses
        assert r.statistic[idx] == pytest.approx(stats.ttest_1samp(x, 0.1).statistic)


def test_holdout_errors_and_warnings():
    with pytest.raises(ValueError, match=r"`reference` must be one of \['z', 't'\]"):
        holdout_t([1.0, 2.0], reference="normal")
    with pytest.raises(DesignError, match="at least 2 test examples"):
        holdout_t([[1.0, NAN], [1.0, 2.0]])
    with pytest.raises(CubeError, match="no test example"):
        holdout_t([NAN, NAN])
    with pytest.warns(ZeroVarianceWarning, match="all test losses are equal"):
        r = holdout_t([0.0, 0.0, NAN, 0.0], mu0=0.5)
    assert r.statistic == -np.inf


# ---------------------------------------------------------------------------
# McNemar


def test_mcnemar_counts_hand():
    a = [1, 1, 0, 0, 1, NAN, 1]
    b = [0, 1, 1, 0, 0, NAN, 0]
    # A wrong & B right at positions 0, 4, 6 -> n10 = 3; A right & B wrong at 2 -> n01 = 1
    n10, n01 = mcnemar_counts(a, b)
    assert (n10, n01) == (3, 1)
    # z = (3 - 1)/sqrt(4) = 1; chi² corrected = (2 - 1)²/4 = 0.25
    assert mcnemar_z(n10, n01).statistic == pytest.approx(1.0)
    assert mcnemar_chi2(n10, n01).statistic == pytest.approx(0.25)
    assert mcnemar_chi2(n10, n01, correction=False).statistic == pytest.approx(1.0)
    # exact: 2 P(Bin(4, 1/2) <= 1) = 2 * 5/16 = 0.625
    assert mcnemar_exact(n10, n01).pvalue == pytest.approx(0.625)
    # one-sided: P(X >= 3) = 5/16 ("A errs more"), P(X <= 3) = 15/16
    assert mcnemar_exact(n10, n01, alternative="greater").pvalue == pytest.approx(5 / 16)
    assert mcnemar_exact(n10, n01, alternative="less").pvalue == pytest.approx(15 / 16)


def test_mcnemar_counts_batch():
    rng = np.random.default_rng(21)
    a = (rng.random((3, 4, 50)) < 0.3).astype(float)
    b = (rng.random((3, 4, 50)) < 0.2).astype(float)
    mask = rng.random((3, 4, 50)) < 0.3
    a[mask] = NAN
    b[mask] = NAN
    n10, n01 = mcnemar_counts(a, b)
    for idx in np.ndindex(3, 4):
        pairs = [(x, y) for x, y in zip(a[idx], b[idx], strict=True) if not np.isnan(x)]
        assert n10[idx] == sum(1 for x, y in pairs if x == 1 and y == 0)
        assert n01[idx] == sum(1 for x, y in pairs if x == 0 and y == 1)


# (n10, n01) pairs including ties, small and large counts; (0, 0) handled separately
PAIRS = [(3, 1), (1, 3), (5, 5), (0, 4), (7, 0), (12, 30), (40, 25), (1, 1), (100, 71)]


@pytest.mark.parametrize(("n10", "n01"), PAIRS)
def test_mcnemar_equals_statsmodels(n10, n01):
    # statsmodels' table[0, 1] and table[1, 0] are its two discordant cells
    table = np.array([[10, n10], [n01, 20]])
    sm_exact = mcnemar(table, exact=True)
    sm_cc = mcnemar(table, exact=False, correction=True)
    sm_nocc = mcnemar(table, exact=False, correction=False)
    ex = mcnemar_exact(n10, n01)
    assert ex.pvalue == pytest.approx(sm_exact.pvalue, rel=1e-12)
    assert min(n10, n01) == sm_exact.statistic  # statsmodels' statistic is min(n10, n01)
    cc = mcnemar_chi2(n10, n01, correction=True)
    assert cc.statistic == pytest.approx(sm_cc.statistic, rel=1e-12)
    assert cc.pvalue == pytest.approx(sm_cc.pvalue, rel=1e-12)
    nocc = mcnemar_chi2(n10, n01, correction=False)
    assert nocc.statistic == pytest.approx(sm_nocc.statistic, rel=1e-12)
    assert nocc.pvalue == pytest.approx(sm_nocc.pvalue, rel=1e-12)
    # the z form squared is the uncorrected statistic, with the same two-sided p-value
    z = mcnemar_z(n10, n01)
    assert z.statistic**2 == pytest.approx(sm_nocc.statistic, rel=1e-12)
    assert z.pvalue == pytest.approx(sm_nocc.pvalue, rel=1e-10)


def test_mcnemar_vectorized_equals_statsmodels_loop():
    n10 = np.array([[3, 1, 5], [0, 12, 40]])
    n01 = np.array([[1, 3, 5], [4, 30, 25]])
    ex, cc = mcnemar_exact(n10, n01), mcnemar_chi2(n10, n01)
    for idx in np.ndindex(2, 3):
        table = [[0, n10[idx]], [n01[idx], 0]]
        assert ex.pvalue[idx] == pytest.approx(mcnemar(table, exact=True).pvalue)
        assert cc.pvalue[idx] == pytest.approx(mcnemar(table, exact=False).pvalue)


@pytest.mark.parametrize(("n10", "n01"), PAIRS)
def test_mcnemar_one_sided_against_binomtest(n10, n01):
    for alt in ("less", "greater"):
        want = stats.binomtest(n10, n10 + n01, 0.5, alternative=alt).pvalue
        assert mcnemar_exact(n10, n01, alternative=alt).pvalue == pytest.approx(want)
        z = (n10 - n01) / math.sqrt(n10 + n01)
        assert mcnemar_z(n10, n01, alternative=alt).pvalue == pytest.approx(
            pvalue(z, alternative=alt)
        )


def test_mcnemar_no_discordant_pair():
    assert mcnemar_exact(0, 0).pvalue == 1.0
    with pytest.warns(ZeroVarianceWarning, match="discordant pairs n10 \\+ n01"):
        r = mcnemar_z(0, 0)
    assert np.isnan(r.statistic) and np.isnan(r.pvalue)
    with pytest.warns(ZeroVarianceWarning, match="err on the same test examples"):
        mcnemar_chi2([0, 2], [0, 3])


def test_mcnemar_z_vs_holdout_t_on_contrast():
    # Same numerator (mean of L_A - L_B = (n10 - n01)/n2); McNemar's variance is
    # (n10 + n01)/n2², the hold-out t's is S²/n2 with S² of the -1/0/1 differences.
    a = np.array([1, 1, 0, 0, 1, 1, 0, 0.0])
    b = np.array([0, 1, 1, 0, 0, 0, 0, 0.0])
    n10, n01 = mcnemar_counts(a, b)  # 3, 1
    h = holdout_t(a - b)
    assert h.estimate == pytest.approx((n10 - n01) / 8)
    s2 = (n10 + n01 - (n10 - n01) ** 2 / 8) / 7
    assert h.stderr == pytest.approx(math.sqrt(s2 / 8))


def test_mcnemar_bad_inputs():
    with pytest.raises(CubeError, match="zero-one losses; `loss_b` has 1"):
        mcnemar_counts([0, 1, 1], [0, 0.5, 1])
    with pytest.raises(CubeError, match="NaN on the same examples"):
        mcnemar_counts([0, 1, NAN], [0, 1, 1])
    with pytest.raises(CubeError, match="same shape"):
        mcnemar_counts([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="`n01` must hold non-negative integer counts"):
        mcnemar_exact(3, 1.5)
    with pytest.raises(ValueError, match="`alternative`"):
        mcnemar_exact(3, 1, alternative="bigger")
