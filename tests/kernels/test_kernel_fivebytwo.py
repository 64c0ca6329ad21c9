"""Dietterich's 5x2cv t, its variants and Alpaydın's F (docs/theory.md §4, method 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cvstats.errors import DesignError, ZeroVarianceWarning
from cvstats.kernels import (
    alpaydin_f,
    dietterich_5x2_t,
    dietterich_variance,
    pvalue,
    pvalue_f,
)

# p[m] = (μ̃_(m), μ̃^c_(m)) for m = 1..5; hand-picked numbers
P_HAND = np.array([[0.3, 0.1], [0.2, 0.2], [0.4, 0.3], [0.1, 0.3], [0.25, 0.15]])
# differences .2 0 .1 -.2 .1 -> squares .04 0 .01 .04 .01, sum .10


def test_dietterich_hand():
    # σ̂²_Diet = .10/10 = .01, t = (.3 - 0)/.1 = 3, t_5
    r = dietterich_5x2_t(P_HAND)
    assert dietterich_variance(P_HAND) == pytest.approx(0.01)
    assert (r.estimate, r.stderr, r.statistic, r.df) == pytest.approx((0.3, 0.1, 3.0, 5))
    # variant (a): m = 2..5 squares sum to .06, /8 = .0075, t_4
    r = dietterich_5x2_t(P_HAND, variant="t4")
    assert r.stderr == pytest.approx(math.sqrt(0.0075))
    assert r.statistic == pytest.approx(0.3 / math.sqrt(0.0075))
    assert r.df == 4
    # variant (b): sqrt 2 ((.3 + .1)/2 - .05)/.1 = sqrt 2 * 1.5, t_5
    r = dietterich_5x2_t(P_HAND, variant="t5", mu0=0.05)
    assert r.estimate == pytest.approx(0.2)
    assert r.stderr == pytest.approx(0.1 / math.sqrt(2))
    assert r.statistic == pytest.approx(math.sqrt(2) * 1.5)
    assert r.df == 5


def test_alpaydin_hand():
    # Σ p² = (.09+.01) + (.04+.04) + (.16+.09) + (.01+.09) + (.0625+.0225) = .615
    # s_m² = (a-b)²/2 -> Σ s_m² = .10/2 = .05; F = .615/(2 * .05) = 6.15, F(10, 5)
    f = alpaydin_f(P_HAND)
    assert f.statistic == pytest.approx(6.15)
    assert (f.dfn, f.dfd) == (10, 5)
    assert f.pvalue == pytest.approx(stats.f.sf(6.15, 10, 5))
    # with mu0 = .1 (Σ p = 2.3): Σ (p - .1)² = .615 - 2*.1*2.3 + 10*.01 = .255; s_m² unchanged
    assert alpaydin_f(P_HAND, mu0=0.1).statistic == pytest.approx(0.255 / 0.1)


def _dietterich_1998(p, mu0=0.0):
    """Dietterich (1998) literally: s_m² around p̄_m, t = p_1^(1) / sqrt(Σ s_m² / 5)."""
    s2 = []
    for a, b in p:
        pbar = (a + b) / 2
        s2.append((a - pbar) ** 2 + (b - pbar) ** 2)
    return (p[0][0] - mu0) / math.sqrt(sum(s2) / 5), s2


def _alpaydin_1999(p, mu0=0.0):
    """Alpaydın (1999) as written in docs/theory.md: p with mu0 subtracted."""
    num = den = 0.0
    for a, b in p:
        a, b = a - mu0, b - mu0
        pbar = (a + b) / 2
        num += a * a + b * b
        den += (a - pbar) ** 2 + (b - pbar) ** 2
    return num / (2 * den)


def test_spec_formula_equals_dietterich_1998_definition():
    # (a - b)²/2 = s_m², hence (1/10) Σ (a - b)² = (1/5) Σ s_m²
    rng = np.random.default_rng(30)
    p = rng.normal(0.2, 0.05, size=(3, 4, 5, 2))
    r = dietterich_5x2_t(p, mu0=0.15)
    for idx in np.ndindex(3, 4):
        t, s2 = _dietterich_1998(p[idx].tolist(), 0.15)
        assert r.statistic[idx] == pytest.approx(t, rel=1e-12)
        for m in range(5):
            assert s2[m] == pytest.approx((p[idx][m, 0] - p[idx][m, 1]) ** 2 / 2)


def test_variants_and_f_random_against_loops():
    rng = np.random.default_rng(31)
    p = rng.normal(0.2, 0.05, size=(3, 4, 5, 2))
    mu0 = rng.normal(0.2, 0.02, size=(3, 4))
    t4 = dietterich_5x2_t(p, mu0=mu0, variant="t4")
    t5 = dietterich_5x2_t(p, mu0=mu0, variant="t5")
    f = alpaydin_f(p, mu0=mu0)
    for idx in np.ndindex(3, 4):
        q = p[idx].tolist()
        var4 = sum((a - b) ** 2 for a, b in q[1:]) / 8
        assert t4.statistic[idx] == pytest.approx((q[0][0] - mu0[idx]) / math.sqrt(var4))
        var_diet = sum((a - b) ** 2 for a, b in q) / 10
        num5 = math.sqrt(2) * ((q[0][0] + q[0][1]) / 2 - mu0[idx])
        assert t5.statistic[idx] == pytest.approx(num5 / math.sqrt(var_diet))
        assert f.statistic[idx] == pytest.approx(_alpaydin_1999(q, mu0[idx]))


# ---------------------------------------------------------------------------
# mlxtend on identical inputs
#
# mlxtend.evaluate.paired_ttest_5x2cv / combined_ftest_5x2cv (v0.23-0.25) loop
# over i = 0..4: split (X, y) in halves, then score_diff(X_1, X_2, ...) and
# score_diff(X_2, X_1, ...), each fitting estimator1 and estimator2 on the first
# half and calling scorer(estimator1, ...) then scorer(estimator2, ...) on the
# other. With p_i^(k) = score_A - score_B it computes
#   t = p_1^(1) / sqrt((1/5) Σ_i s_i²),  p-value = 2 t5.sf(|t|)
#   F = Σ_i Σ_k (p_i^(k))² / (2 Σ_i s_i²), p-value = F(10, 5).sf(F)
# i.e. Dietterich's and Alpaydın's formulas with mu0 = 0, on *scores*. Feeding a
# scorer that returns accuracies 1 - loss in that call order reproduces our
# half means exactly; score differences are then -(L_A - L_B), so mlxtend's t is
# minus ours for the loss contrast A - B, and its F is ours.


class _NoFit:
    def fit(self, X, y):
        return self


def _queue_scorer(loss_a, loss_b):
    """Scorer returning accuracy 1 - loss in mlxtend's call order."""
    values = []
    for m in range(5):
        for side in range(2):
            values += [1.0 - loss_a[m, side], 1.0 - loss_b[m, side]]
    it = iter(values)
    return lambda estimator, X, y: next(it)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_mlxtend(seed):
    mlxtend_eval = pytest.importorskip("mlxtend.evaluate")
    rng = np.random.default_rng(seed)
    loss_a = rng.uniform(0.1, 0.3, size=(5, 2))
    loss_b = rng.uniform(0.1, 0.3, size=(5, 2))
    p = loss_a - loss_b  # loss contrast A - B
    X, y = np.zeros((20, 1)), np.zeros(20)
    t_ml, pt_ml = mlxtend_eval.paired_ttest_5x2cv(
        _NoFit(), _NoFit(), X, y, scoring=_queue_scorer(loss_a, loss_b), random_seed=seed
    )
    f_ml, pf_ml = mlxtend_eval.combined_ftest_5x2cv(
        _NoFit(), _NoFit(), X, y, scoring=_queue_scorer(loss_a, loss_b), random_seed=seed
    )
    r = dietterich_5x2_t(p)
    assert r.statistic == pytest.approx(-t_ml, rel=1e-10)
    assert pvalue(r.statistic, r.df) == pytest.approx(pt_ml, rel=1e-10)
    f = alpaydin_f(p)
    assert f.statistic == pytest.approx(f_ml, rel=1e-10)
    assert f.pvalue == pytest.approx(pf_ml, rel=1e-10)
    assert pvalue_f(f.statistic, 10, 5) == pytest.approx(pf_ml, rel=1e-10)


def test_zero_variance_and_bad_shape():
    p = np.full((5, 2), 0.25)
    with pytest.warns(ZeroVarianceWarning, match=r"for every m = 1\.\.5"):
        r = dietterich_5x2_t(p)
    assert r.statistic == np.inf
    p4 = P_HAND.copy()
    p4[1:, 1] = p4[1:, 0]
    with pytest.warns(ZeroVarianceWarning, match=r"for every m = 2\.\.5"):
        dietterich_5x2_t(p4, variant="t4")
    with pytest.warns(ZeroVarianceWarning, match="denominator 2 Σ_m s_m²"):
        f = alpaydin_f(p, mu0=0.25)
    assert np.isnan(f.statistic) and np.isnan(f.pvalue)
    with pytest.raises(DesignError, match=r"shape \(\.\.\., 5, 2\).*got shape \(4, 2\)"):
        dietterich_5x2_t(np.zeros((4, 2)))
    with pytest.raises(DesignError, match="got shape"):
        alpaydin_f(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="`variant` must be one of"):
        dietterich_5x2_t(P_HAND, variant="t3")
