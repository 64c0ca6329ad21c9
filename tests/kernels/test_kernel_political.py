"""ρ0 and the political ratios of docs/theory.md §2–§4, against covariance algebra."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cvstats import kernels
from cvstats.kernels import critical_value


def _equicorrelated_moments(K, delta, gamma):
    """Var[Ū] and E[S_U²] from the K x K covariance matrix (Lemma 1, by brute force)."""
    cov = np.full((K, K), gamma) + np.eye(K) * (delta - gamma)
    ones = np.ones(K)
    var_mean = ones @ cov @ ones / K**2
    # E[Σ (U_k - Ū)²] = tr(cov) - 1'cov1/K
    e_s2 = (np.trace(cov) - ones @ cov @ ones / K) / (K - 1)
    return var_mean, e_s2


def test_hand_values():
    # ρ0 = 10/100; ρ0/(1 - ρ0) = n2/n1 = 1/9
    assert kernels.rho0(90, 10) == pytest.approx(0.1)
    # 1 + 15 * .1/.9 = 1 + 5/3 = 8/3
    assert kernels.political_ratio_resampled(15, 0.1) == pytest.approx(8 / 3)
    assert kernels.political_ratio_bootstrap(15, 0.1) == pytest.approx(8 / 3)
    # ρ = ρ0: (8/3) / (1 + 15/9) = 1
    assert kernels.political_ratio_corrected(15, 0.1, 90, 10) == pytest.approx(1.0)
    # (100 * .01 + 1 - .01) / (1 - .01) = 1.99/.99
    assert kernels.political_ratio_holdout(1.0, 0.01, 100) == pytest.approx(1.99 / 0.99)
    # σ1 / (σ1 - σ4) = 1 / .75
    assert kernels.political_ratio_dietterich(1.0, 0.25) == pytest.approx(4 / 3)


@pytest.mark.parametrize("J", [2, 5, 15, 25])
@pytest.mark.parametrize("rho", [0.0, 0.05, 0.3, 0.8])
def test_ratios_equal_lemma1_algebra(J, rho):
    sigma1 = 2.5
    var_mean, e_s2 = _equicorrelated_moments(J, sigma1, rho * sigma1)
    assert kernels.political_ratio_resampled(J, rho) == pytest.approx(var_mean / (e_s2 / J))
    n1, n2 = 80, 20
    assert kernels.political_ratio_corrected(J, rho, n1, n2) == pytest.approx(
        var_mean / ((1 / J + n2 / n1) * e_s2)
    )


def test_holdout_ratio_equals_algebra():
    # L(1, i) for i = 1..n2: variance σ0, covariance σ3
    s0, s3, n2 = 0.3, 0.02, 40
    var_mean, e_s2 = _equicorrelated_moments(n2, s0, s3)
    assert kernels.political_ratio_holdout(s0, s3, n2) == pytest.approx(var_mean / (e_s2 / n2))


def test_dietterich_ratio_equals_algebra():
    # (μ̃_(m), μ̃^c_(m)) with variance σ1, covariance σ4: E[(a - b)²/2] = σ1 - σ4
    s1, s4 = 0.2, 0.05
    e_pair = (2 * s1 - 2 * s4) / 2
    assert kernels.political_ratio_dietterich(s1, s4) == pytest.approx(s1 / e_pair)


def test_ratios_broadcast():
    J = np.array([5, 10, 15])[:, None]
    rho = np.array([0.0, 0.1, 0.2])
    got = kernels.political_ratio_corrected(J, rho, 90, 10)
    assert got.shape == (3, 3)
    assert got[2, 1] == pytest.approx(kernels.political_ratio_corrected(15, 0.1, 90, 10))


def test_predicted_rejection_rate():
    # ratio 1: the nominal level
    assert kernels.predicted_rejection_rate(1.0, 14, 0.1) == pytest.approx(0.1)
    assert kernels.predicted_rejection_rate(1.0, np.inf, 0.05, "greater") == pytest.approx(0.05)
    # ratio 4: P(|T| > c/2)
    c = critical_value(9, 0.1)
    assert kernels.predicted_rejection_rate(4.0, 9, 0.1) == pytest.approx(2 * stats.t.sf(c / 2, 9))
    assert (
        kernels.predicted_rejection_rate(4.0, 9, 0.1)
        > 0.1
        > kernels.predicted_rejection_rate(0.25, 9, 0.1)
    )


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"`rho` must be in \[0, 1\)"):
        kernels.political_ratio_resampled(10, 1.0)
    with pytest.raises(ValueError, match="`J` must be finite and > 0"):
        kernels.political_ratio_resampled(0, 0.1)
    with pytest.raises(ValueError, match="`sigma3` must be smaller"):
        kernels.political_ratio_holdout(0.1, 0.1, 10)
    with pytest.raises(ValueError, match="`sigma4` must be smaller"):
        kernels.political_ratio_dietterich(0.1, 0.2)
    with pytest.raises(ValueError, match="`ratio` must be finite and > 0"):
        kernels.predicted_rejection_rate(0.0, 5)
