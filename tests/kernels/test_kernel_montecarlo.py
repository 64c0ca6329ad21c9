"""Monte Carlo calibration of the kernels under Lemma 2 (docs/theory.md §2, §4).

Split means are drawn Gaussian with exact equicorrelation ρ
(``μ̂_j = sqrt(ρ) Z_0 + sqrt(1 - ρ) Z_j``), replications on a batch axis. Under
Lemma 2 the resampled-type statistics are exactly ``sqrt(PR) · t`` with PR the
political ratio, so the rejection rate is known in closed form
(:func:`predicted_rejection_rate`). Seeded; tolerance 4 binomial SEs.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cvstats.kernels import (
    bootstrap_t,
    conservative_z,
    corrected_bootstrap_t,
    corrected_resampled_t,
    critical_value,
    dietterich_5x2_t,
    political_ratio_corrected,
    political_ratio_resampled,
    predicted_rejection_rate,
    pvalue,
    resampled_t,
    rho0,
)

N = 20_000
ALPHA = 0.1
J = 15
N1, N2 = 90, 10  # ρ0 = 0.1


def _rate(stat, df, alternative="two-sided"):
    return float(np.mean(pvalue(stat, df, alternative) < ALPHA))


def _assert_rate(observed, expected):
    se = np.sqrt(expected * (1 - expected) / N)
    assert abs(observed - expected) < 4 * se, (observed, expected, se)


def _equicorrelated(rng, rho, shape):
    """Gaussian with unit variance and correlation rho along the flattened last axes."""
    common = rng.standard_normal(shape[:-1] + (1,))
    return np.sqrt(rho) * common + np.sqrt(1 - rho) * rng.standard_normal(shape)


def test_corrected_resampled_t_exact_at_rho0_and_political_ratio_elsewhere():
    rng = np.random.default_rng(2024)
    r0 = float(rho0(N1, N2))
    rhos = np.array([r0, 0.3, 0.02])  # exact, liberal, conservative
    mu = np.sqrt(rhos)[:, None, None] * rng.standard_normal((3, N, 1)) + np.sqrt(1 - rhos)[
        :, None, None
    ] * rng.standard_normal((3, N, J))
    mu0 = 0.0  # the true mean
    plain = resampled_t(mu, mu0=mu0)
    corr = corrected_resampled_t(mu, N1, N2, mu0=mu0)
    for k, rho in enumerate(rhos):
        pr_plain = political_ratio_resampled(J, rho)
        pr_corr = political_ratio_corrected(J, rho, N1, N2)
        _assert_rate(
            _rate(plain.statistic[k], J - 1), predicted_rejection_rate(pr_plain, J - 1, ALPHA)
        )
        _assert_rate(
            _rate(corr.statistic[k], J - 1), predicted_rejection_rate(pr_corr, J - 1, ALPHA)
        )
    # at ρ0 the corrected test has exactly level α; the plain one is far above
    _assert_rate(_rate(corr.statistic[0], J - 1), ALPHA)
    assert _rate(plain.statistic[0], J - 1) > 2 * ALPHA
    # above ρ0 the corrected test is liberal, below it conservative
    assert _rate(corr.statistic[1], J - 1) > ALPHA + 0.05
    assert _rate(corr.statistic[2], J - 1) < ALPHA - 0.05
    # one-sided, at ρ0
    _assert_rate(_rate(corr.statistic[0], J - 1, "greater"), ALPHA)


def test_corrected_bootstrap_exact_at_rho0():
    # R + 1 resamplings of J splits each; all (R + 1) J split means equicorrelated
    rng = np.random.default_rng(7)
    R, rho = 15, float(rho0(N1, N2))
    allmu = _equicorrelated(rng, rho, (N, (R + 1) * J)).reshape(N, R + 1, J)
    main, rep = allmu[:, 0], allmu[:, 1:]
    cb = corrected_bootstrap_t(main, rep, N1, N2)
    b = bootstrap_t(main, rep)
    _assert_rate(_rate(cb.statistic, R - 1), ALPHA)
    pr = political_ratio_resampled(J, rho)  # Lemma 2.1: 1/(1 - π) = 1 + Jρ/(1-ρ)
    _assert_rate(_rate(b.statistic, R - 1), predicted_rejection_rate(pr, R - 1, ALPHA))


def test_conservative_z_scale_of_eq11():
    # Main estimate independent of M half pairs, all with the same variance v:
    # then z = N(0, v) / sqrt(v χ²_M / M) ~ t_M, a check of the 1/(2M) in eq. (11).
    rng = np.random.default_rng(11)
    M = 10
    main = rng.standard_normal((N, 1))  # J = 1 inside for simplicity
    half = rng.standard_normal((N, M, 2, 1))
    z = conservative_z(np.repeat(main, 2, axis=-1), half)
    want = 2 * stats.t.sf(critical_value(np.inf, ALPHA), M)
    _assert_rate(_rate(z.statistic, np.inf), want)
    # larger inner variance (smaller training sets, n1' < n1): conservative
    z2 = conservative_z(np.repeat(main, 2, axis=-1), 1.5 * half)
    assert _rate(z2.statistic, np.inf) < ALPHA


@pytest.mark.parametrize("variant", ["t4", "t5"])
def test_5x2_variants_exact_for_independent_gaussian_halves(variant):
    # μ̃_(m), μ̃^c_(m) i.i.d. N(μ0, 1): variants (a) and (b) are exactly t_4 / t_5
    rng = np.random.default_rng(5)
    p = 0.3 + rng.standard_normal((N, 5, 2))
    r = dietterich_5x2_t(p, mu0=0.3, variant=variant)
    _assert_rate(_rate(r.statistic, r.df), ALPHA)
