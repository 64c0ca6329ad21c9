"""Comparisons against a control by average ranks (Demšar 2006, §3.2.2): control_test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy
import xarray as xr
from statsmodels.stats.multitest import multipletests

import cvstats
from cvstats.errors import ArgumentError

#: Error rates of 5 learners on 9 datasets (lower is better), with ties on two datasets.
ERRORS = pd.DataFrame(
    {
        "ctl": [0.10, 0.12, 0.20, 0.05, 0.30, 0.15, 0.22, 0.08, 0.11],
        "m1": [0.14, 0.13, 0.25, 0.07, 0.31, 0.15, 0.26, 0.09, 0.12],
        "m2": [0.12, 0.11, 0.21, 0.05, 0.29, 0.18, 0.21, 0.10, 0.13],
        "m3": [0.20, 0.19, 0.30, 0.12, 0.40, 0.25, 0.31, 0.16, 0.18],
        "m4": [0.16, 0.15, 0.24, 0.09, 0.35, 0.17, 0.27, 0.12, 0.10],
    },
    index=[f"d{i}" for i in range(9)],
)


def _by_hand(errors: pd.DataFrame, control: str, method: str) -> dict[str, np.ndarray]:
    """Demšar's (2006, §3.2.2) z from average ranks computed row by row, then statsmodels."""
    N, k = errors.shape
    ranks = np.array([scipy.stats.rankdata(row) for row in errors.to_numpy()])  # 1 = lowest
    avg = dict(zip(errors.columns, ranks.mean(axis=0), strict=True))
    others = [m for m in errors.columns if m != control]
    z = np.array([(avg[m] - avg[control]) / np.sqrt(k * (k + 1) / (6 * N)) for m in others])
    p = 2 * scipy.stats.norm.cdf(-np.abs(z))
    reject, adjusted, _, _ = multipletests(p, 0.05, method)
    return {"z": z, "p": p, "adjusted": adjusted, "reject": reject}


@pytest.mark.parametrize(
    ("adjust", "method"),
    [("holm", "holm"), ("hochberg", "simes-hochberg"), ("bonferroni", "bonferroni")],
)
def test_matches_demsar_formula_by_hand(adjust, method):
    res = cvstats.control_test(ERRORS, "ctl", adjust=adjust, greater_is_better=False)
    want = _by_hand(ERRORS, "ctl", method)
    assert res.rank_difference["model"].values.tolist() == ["m1", "m2", "m3", "m4"]
    np.testing.assert_allclose(res.statistic.values, want["z"], rtol=1e-12)
    np.testing.assert_allclose(res.pvalue.values, want["p"], rtol=1e-12)
    np.testing.assert_allclose(res.pvalue_adjusted.values, want["adjusted"], rtol=1e-12)
    np.testing.assert_array_equal(res.reject.values, want["reject"])
    # the average ranks, worked out on paper: ctl (1+2+1+1.5+2+1.5+2+1+2)/9, m3 always last
    assert res.average_ranks["m3"] == 5.0
    assert res.average_ranks["ctl"] == pytest.approx(14 / 9)


def test_adjustments_differ_and_are_ordered():
    # Holm and Hochberg are never less powerful than Bonferroni-Dunn
    p = {
        a: cvstats.control_test(ERRORS, "ctl", adjust=a, greater_is_better=False).pvalue_adjusted
        for a in ("holm", "hochberg", "bonferroni")
    }
    assert (p["hochberg"] <= p["holm"] + 1e-15).all()
    assert (p["holm"] <= p["bonferroni"] + 1e-15).all()
    assert not np.allclose(p["holm"], p["bonferroni"])


def test_scores_and_losses_mirrored():
    loss = cvstats.control_test(ERRORS, "ctl", greater_is_better=False)
    score = cvstats.control_test(1 - ERRORS, "ctl", greater_is_better=True)
    xr.testing.assert_allclose(loss.statistic, score.statistic)
    # the same table read the wrong way round reverses every rank difference
    wrong = cvstats.control_test(ERRORS, "ctl", greater_is_better=True)
    np.testing.assert_allclose(wrong.rank_difference.values, -loss.rank_difference.values)
    assert (loss.rank_difference > 0).all()  # the control ranks best on these losses


def test_direction_read_from_a_dataarray():
    acc = xr.DataArray(
        (1 - ERRORS).to_numpy(),
        dims=("dataset", "model"),
        coords={"model": list(ERRORS.columns)},
        name="accuracy",
    )
    res = cvstats.control_test(acc, "ctl")
    assert res.greater_is_better
    assert (res.rank_difference > 0).all()
    verdict = str(res.verdict())
    assert "ctl better than m3" in verdict and "Holm-adjusted" in verdict


def test_frame_and_verdict():
    res = cvstats.control_test(ERRORS, "ctl", greater_is_better=False)
    frame = res.to_frame()
    assert list(frame.columns) == [
        "model",
        "rank_difference",
        "statistic",
        "pvalue",
        "pvalue_adjusted",
        "reject",
    ]
    lines = str(res.verdict()).splitlines()
    assert len(lines) == 4
    for line, reject in zip(lines, res.reject.values, strict=True):
        assert ("better than" in line) == bool(reject)


def test_bad_inputs():
    with pytest.raises(ArgumentError, match=r"`control` 'nope' is not a learner"):
        cvstats.control_test(ERRORS, "nope", greater_is_better=False)
    with pytest.raises(ArgumentError, match=r"at least 2 datasets and 2 learners"):
        cvstats.control_test(ERRORS[["ctl"]], "ctl", greater_is_better=False)
    with pytest.raises(ArgumentError, match=r"at least 2 datasets and 2 learners"):
        cvstats.control_test(ERRORS.iloc[:1], "ctl", greater_is_better=False)
    with pytest.raises(ArgumentError, match=r"`greater_is_better` is required"):
        cvstats.control_test(ERRORS, "ctl")
    with pytest.raises(ArgumentError, match=r"`adjust` must be one of"):
        cvstats.control_test(ERRORS, "ctl", adjust="fdr_bh", greater_is_better=False)
    nan = ERRORS.copy()
    nan.iloc[0, 1] = np.nan
    with pytest.raises(ArgumentError, match=r"must be finite"):
        cvstats.control_test(nan, "ctl", greater_is_better=False)


# --- effect sizes of two learners over datasets -------------------------------------------


def test_effect_sizes_by_hand():
    # x = ctl, y = m1 on 9 datasets: every sum and count worked out from the definitions
    x, y = ERRORS["ctl"].to_numpy(), ERRORS["m1"].to_numpy()
    n = x.size
    sx2 = ((x - x.mean()) ** 2).sum() / (n - 1)
    sy2 = ((y - y.mean()) ** 2).sum() / (n - 1)
    d = (x.mean() - y.mean()) / np.sqrt(((n - 1) * sx2 + (n - 1) * sy2) / (2 * n - 2))
    greater = sum(int(xi > yj) for xi in x for yj in y)
    less = sum(int(xi < yj) for xi in x for yj in y)
    res = cvstats.effect_size(ERRORS, "ctl", "m1", greater_is_better=False)
    assert float(res.cohens_d) == pytest.approx(d, rel=1e-12)
    assert float(res.cliffs_delta) == pytest.approx((greater - less) / n**2, rel=1e-12)
    assert res.to_frame()["measure"].tolist() == ["cohens_d", "akinshin_gamma", "cliffs_delta"]
    assert "ctl is ahead on average" in str(res.verdict())  # lower errors: ctl is better


def test_akinshin_gamma_by_hand():
    # medians and median absolute deviations worked out with numpy's sort, the MAD scaled by
    # 1 / Φ⁻¹(3/4) to estimate a normal standard deviation (Akinshin 2020)
    x, y = ERRORS["ctl"].to_numpy(), ERRORS["m2"].to_numpy()
    k = 1.0 / scipy.stats.norm.ppf(0.75)

    def median(v):
        s = np.sort(v)
        return s[s.size // 2] if s.size % 2 else (s[s.size // 2 - 1] + s[s.size // 2]) / 2

    mx, my = k * median(np.abs(x - median(x))), k * median(np.abs(y - median(y)))
    gamma = (median(x) - median(y)) / np.sqrt((mx**2 + my**2) / 2)
    res = cvstats.effect_size(ERRORS, "ctl", "m2", greater_is_better=False)
    assert float(res.akinshin_gamma) == pytest.approx(gamma, rel=1e-12)
    assert (
        res.gamma_magnitude
        == cvstats.effect_size(ERRORS, "m2", "ctl", greater_is_better=False).gamma_magnitude
    )
    assert f"Akinshin's γ = {gamma:.2f}" in str(res.verdict())


#: Two learners' accuracies on 9 datasets, and 12 skewed (lognormal) scores of two others.
AUTORANK_X = [0.812, 0.733, 0.901, 0.655, 0.874, 0.790, 0.702, 0.955, 0.688]
AUTORANK_Y = [0.794, 0.741, 0.862, 0.610, 0.851, 0.772, 0.699, 0.930, 0.650]
AUTORANK_U = [1.134, 0.8762, 1.8973, 1.1106, 0.5853, 1.4356, 3.684, 2.5782, 0.4947, 0.2821]
AUTORANK_U += [0.5362, 1.0422]
AUTORANK_V = [0.1612, 1.3247, 0.4743, 0.7927, 0.9567, 1.2017, 2.4884, 4.6763, 1.4499, 6.4654]
AUTORANK_V += [0.8477, 2.3432]


def test_effect_sizes_match_autorank():
    # autorank 1.3.0, autorank._util: _akinshin_gamma(x, y), _effect_level(g, "akinshin_gamma"),
    # _cohen_d(x, y), _cliffs_delta(x, y) (run in a separate venv). autorank scales the MAD by
    # 1.4826, cvstats by 1 / Φ⁻¹(3/4) = 1.482602...: γ agrees to a relative 2e-6.
    res = cvstats.effect_size(
        pd.DataFrame({"x": AUTORANK_X, "y": AUTORANK_Y}), "x", "y", greater_is_better=True
    )
    assert float(res.akinshin_gamma) == pytest.approx(0.1451885178505741, rel=1e-5)
    assert res.gamma_magnitude == "negligible"
    assert float(res.cohens_d) == pytest.approx(0.21431675839141057, rel=1e-12)
    assert float(res.cliffs_delta) == pytest.approx(0.1358024691358025, rel=1e-12)
    skewed = pd.DataFrame({"u": AUTORANK_U, "v": AUTORANK_V})
    res = cvstats.effect_size(skewed, "u", "v", greater_is_better=True)
    assert float(res.akinshin_gamma) == pytest.approx(-0.2189284161291562, rel=1e-5)
    assert res.gamma_magnitude == "small"


def test_akinshin_gamma_without_spread_is_undefined():
    # more than half of each column equal: both MADs are 0, γ is 0/0 or x/0
    table = pd.DataFrame({"a": [0.8, 0.8, 0.8, 0.9, 0.7], "b": [0.6, 0.6, 0.6, 0.65, 0.5]})
    res = cvstats.effect_size(table, "a", "b", greater_is_better=True)
    assert np.isnan(float(res.akinshin_gamma)) and res.gamma_magnitude == "undefined"
    assert res.d_magnitude == "large"  # d is still defined
    assert "Akinshin's γ = nan (undefined)" in str(res.verdict())


@pytest.mark.parametrize(
    ("shift", "d_level", "delta_level"),
    [
        (0.0, "negligible", "negligible"),
        (0.2, "small", "small"),  # d = 0.334, δ = 0.1675
        (0.4, "medium", "medium"),  # d = 0.667, δ = 0.34
        (3.0, "large", "large"),
    ],
)
def test_effect_size_magnitudes(shift, d_level, delta_level):
    # two columns of the same 40 spread-out values, one shifted: d = shift / sd exactly
    base = np.linspace(-1.0, 1.0, 40)
    table = pd.DataFrame({"a": base + shift, "b": base})
    res = cvstats.effect_size(table, "a", "b", greater_is_better=True)
    assert float(res.cohens_d) == pytest.approx(shift / base.std(ddof=1))
    assert (res.d_magnitude, res.delta_magnitude) == (d_level, delta_level)


def test_effect_size_thresholds_are_cohen_and_romano():
    from cvstats.across.ranks import CLIFF_DELTA_MAGNITUDES, COHEN_D_MAGNITUDES, _magnitude

    assert [_magnitude(v, COHEN_D_MAGNITUDES) for v in (0.19, 0.2, -0.49, 0.5, 0.79, 0.8)] == [
        "negligible",
        "small",
        "small",
        "medium",
        "medium",
        "large",
    ]
    assert [
        _magnitude(v, CLIFF_DELTA_MAGNITUDES) for v in (0.146, 0.147, 0.33, -0.473, 0.474)
    ] == [
        "negligible",
        "small",
        "medium",
        "medium",
        "large",
    ]


def test_effect_size_bad_inputs():
    with pytest.raises(ArgumentError, match=r"unknown learner"):
        cvstats.effect_size(ERRORS, "ctl", "zz", greater_is_better=False)
    with pytest.raises(ArgumentError, match=r"`greater_is_better` is required"):
        cvstats.effect_size(ERRORS, "ctl", "m1")
    flat = pd.DataFrame({"a": [0.5, 0.5, 0.5], "b": [0.4, 0.4, 0.4]})
    with pytest.raises(ArgumentError, match=r"Cohen's d .* is undefined"):
        cvstats.effect_size(flat, "a", "b", greater_is_better=True)
