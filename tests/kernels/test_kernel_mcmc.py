"""R̂ and effective sample sizes (Vehtari et al. 2021) against known answers and ArviZ.

The reference numbers of ``test_matches_arviz_stats`` were computed with
arviz-stats 0.8.0 (``arviz_stats.base.array_stats``: ``ess(method="bulk")``,
``ess(method="tail", prob=(0.05, 0.95))``, ``ess(method="mean")``, ``rhat``,
``mcse(method="mean")``) on the AR(1) chains of :func:`_ar1` (ArviZ is not a
dependency of cvstats, so they are recorded here).
"""

from __future__ import annotations

import numpy as np
import pytest

from cvstats.kernels import mcmc


def _ar1(phi: float, chains: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros((chains, n))
    e = rng.normal(size=(chains, n))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


#: arviz-stats 0.8.0 on ``_ar1(0.6, 4, 500, 123)`` and on it with the last chain shifted by 0.5:
#: (ess bulk, ess tail, ess mean, rhat, mcse mean).
ARVIZ = {
    "ar1": (
        456.2084215448424,
        1015.6572563827729,
        457.8349407131935,
        1.0029119733562843,
        0.05971183853735049,
    ),
    "shifted": (
        390.40651758382245,
        940.3518359901453,
        390.92478953317834,
        1.0136937431942827,
        0.06522555647146297,
    ),
}


@pytest.mark.parametrize("case", list(ARVIZ))
def test_matches_arviz_stats(case):
    x = _ar1(0.6, 4, 500, 123)
    if case == "shifted":
        x = x + np.array([0, 0, 0, 0.5])[:, None]
    ours = (
        mcmc.ess_bulk(x),
        mcmc.ess_tail(x),
        mcmc.ess(mcmc._split(x)),
        mcmc.rhat(x),
        mcmc.mcse_mean(x),
    )
    np.testing.assert_allclose(ours, ARVIZ[case], rtol=1e-9)


def test_iid_draws_have_ess_near_their_number():
    x = np.random.default_rng(0).normal(size=(4, 5000))
    assert 0.95 * x.size < mcmc.ess(x) < 1.05 * x.size
    assert 0.95 * x.size < mcmc.ess_bulk(x) < 1.05 * x.size


def test_ar1_ess_is_n_times_one_minus_phi_over_one_plus_phi():
    # the integrated autocorrelation time of an AR(1) is (1 + φ)/(1 - φ)
    phi = 0.8
    x = _ar1(phi, 8, 20_000, 1)
    expected = x.size * (1 - phi) / (1 + phi)
    assert mcmc.ess(x) == pytest.approx(expected, rel=0.08)


def test_rhat_flags_chains_that_disagree():
    rng = np.random.default_rng(3)
    same = rng.normal(size=(4, 2000))
    assert mcmc.rhat(same) < mcmc.RHAT_MAX
    apart = same + np.array([0.0, 0.0, 0.0, 0.5])[:, None]
    assert mcmc.rhat(apart) > 1.01
    # a chain with a larger spread only: the folded (tail) R̂ sees it
    wide = same * np.array([1.0, 1.0, 1.0, 2.0])[:, None]
    assert mcmc.rhat(wide) > 1.01


def test_constant_draws():
    x = np.ones((2, 10))
    assert mcmc.ess(x) == 20
    assert mcmc.mcse_mean(x) == 0.0
