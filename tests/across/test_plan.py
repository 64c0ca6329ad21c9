"""cvstats.plan: width, power and cost against the number of splits (docs/theory.md §10).

* a hand-worked case against scipy, formula by formula;
* a Monte Carlo check under Lemma 2 (Gaussian equicorrelated split means): the planned
  power, size and half-widths at J ∈ {5, 10, 15, 25} against simulated experiments;
* the searches (smallest J meeting a target, budget, unreachable targets), the pilot
  forms (loss cube, score cube, contrasts, a `dataset` dim and fit_rho, k-fold), the
  result protocol and bad inputs.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402
from scipy import special, stats  # noqa: E402

import cvstats  # noqa: E402
from cvstats import (  # noqa: E402
    ArgumentError,
    CubeError,
    CvstatsTypeError,
    DesignError,
    PlanResult,
    designs,
)
from cvstats.results.plan import PLAN_GRID_COLUMNS, PLAN_TABLE_COLUMNS  # noqa: E402

N, N_TEST = 100, 10  # n1 = 90, n2 = 10: ρ0 = 0.1, n2/n1 = 1/9
C = N_TEST / (N - N_TEST)


def f(value):
    """The one number of a DataArray (its size-1 dims dropped)."""
    return float(value.squeeze())


def score_pilot(diffs, n=N, n_test=N_TEST, name="auc"):
    """A score cube of two models whose difference a - b has the given split values."""
    diffs = np.asarray(diffs, dtype=float)
    design = designs.resampled(n, n_test, J=diffs.size, seed=0)
    scores = np.column_stack([0.7 + diffs, np.full(diffs.size, 0.7)])
    return cvstats.from_scores(
        scores, greater_is_better=True, design=design, models=["a", "b"], name=name
    )


def unit_pilot(s2, J_p=3, delta=0.0):
    """A pilot of one contrast whose split means have sample variance exactly ``s2``."""
    base = np.linspace(-1.0, 1.0, J_p)
    base = base / base.std(ddof=1)
    return score_pilot(delta + np.sqrt(s2) * base)


def knee_from_curve(res, kind, tolerance=0.1, **at):
    """The knee read off the curve the plan reports (its grid), for one unit (``at``).

    The best is the least half-width (greatest power) of the grid's designs within the
    budget and the search; the knee the smallest J of the grid within ``tolerance`` of it.
    The grid holds the J before the knee, so its first J within the tolerance is the knee
    of every J searched.
    """
    curve = (res.half_width if kind == "width" else res.power).sel(at).squeeze()
    Js = curve["J"].values
    fits = res.n_fits.sel({d: v for d, v in at.items() if d in res.n_fits.dims}).values
    values = curve.values
    budget = np.inf if res.budget_fits is None else res.budget_fits
    ok = (Js <= res.search_end) & (fits <= budget)
    if kind == "width":
        near = values <= (1 + tolerance) * values[ok].min()
    else:
        near = values >= (1 - tolerance) * values[ok].max()
    knee = int(Js[ok & near].min())
    step = max(res.K, 1)
    assert knee == Js.min() or knee - step in Js.tolist()  # the curve shows the J before
    return knee


# ---------------------------------------------------------------------------
# a hand-worked case
# ---------------------------------------------------------------------------

DIFFS = [0.0, 0.04, -0.01, 0.05]  # mean 0.02; squared deviations .0004 .0004 .0009 .0009
S2 = 0.0026 / 3


def test_hand_worked_case_against_scipy():
    res = cvstats.plan(score_pilot(DIFFS), effect=0.03, J=10, target_width=0.03)
    assert res.rho_source == "rho0" and res.n1 == 90 and res.n2 == 10
    assert f(res.s2) == pytest.approx(S2, rel=1e-12)
    assert f(res.rho) == pytest.approx(0.1)
    assert f(res.sigma1) == pytest.approx(S2 / 0.9)
    assert f(res.pilot_estimate) == pytest.approx(0.02)
    assert res.pilot_df == 3 and res.pilot_splits == 4
    # J = 4: t_{3, .975} = 3.182446305..., (1/4 + 1/9) S² = 0.000312963
    h4 = f(res.half_width.sel(J=4))
    assert h4 == pytest.approx(3.182446305284263 * np.sqrt((0.25 + 1 / 9) * S2), rel=1e-10)
    assert h4 == pytest.approx(0.056299, abs=1e-6)
    # J = 10: the power of the two-sided t_9 test, noncentrality 0.03 / sqrt((1/10 + 1/9) S²)
    crit = stats.t.ppf(0.975, 9)
    lam = 0.03 / np.sqrt((0.1 + 1 / 9) * S2)
    power = stats.nct.sf(crit, 9, lam) + stats.nct.cdf(-crit, 9, lam)
    assert f(res.power.sel(J=10)) == pytest.approx(power, rel=1e-10)
    assert f(res.size.sel(J=10)) == pytest.approx(0.05)
    assert f(res.political_ratio.sel(J=10)) == pytest.approx(1.0)
    # the mean half-width under Lemma 2: c4(10) times the root-mean-square one
    c4 = np.sqrt(2 / 9) * special.gamma(5) / special.gamma(4.5)
    assert f(res.mean_half_width.sel(J=10)) == pytest.approx(c4 * f(res.half_width.sel(J=10)))
    # the pilot's chi-square interval for E[S²] (3 df), carried to the half-width
    lo = f(res.half_width_ci.sel(J=10, ci_bound="lower"))
    hi = f(res.half_width_ci.sel(J=10, ci_bound="upper"))
    h10 = f(res.half_width.sel(J=10))
    assert lo == pytest.approx(h10 * np.sqrt(3 / stats.chi2.ppf(0.975, 3)))
    assert hi == pytest.approx(h10 * np.sqrt(3 / stats.chi2.ppf(0.025, 3)))
    # limits as J -> ∞: z sqrt(n2/n1 S²); the power at ρ = ρ0 tends to P(|N(m, 1)| > z)
    z = stats.norm.ppf(0.975)
    assert f(res.half_width_limit) == pytest.approx(z * np.sqrt(S2 / 9))
    m = 0.03 / np.sqrt(S2 / 9)
    assert f(res.power_limit) == pytest.approx(stats.norm.sf(z - m) + stats.norm.cdf(-z - m))


def test_smallest_designs_by_brute_force():
    res = cvstats.plan(score_pilot(DIFFS), effect=0.03, target_width=0.03, power=0.8)

    def half(J):
        return stats.t.ppf(0.975, J - 1) * np.sqrt((1 / J + 1 / 9) * S2)

    def power(J):
        crit, lam = stats.t.ppf(0.975, J - 1), 0.03 / np.sqrt((1 / J + 1 / 9) * S2)
        return stats.nct.sf(crit, J - 1, lam) + stats.nct.cdf(-crit, J - 1, lam)

    J_width = next(J for J in range(2, 1000) if half(J) <= 0.03)
    J_power = next(J for J in range(2, 1000) if power(J) >= 0.8)
    assert int(f(res.J_width)) == J_width and int(f(res.J_power)) == J_power
    assert int(f(res.J_plan)) == max(J_width, J_power) == int(f(res.J_chosen))
    grid = res.to_frame()
    assert bool(grid.loc[grid.J == int(f(res.J_plan)), "meets_target"].item())
    assert not grid.loc[grid.J < int(f(res.J_plan)), "meets_target"].any()
    assert "is met from J = 11, the power 0.8 is met from J = 60" in res.verdict()


def test_given_rho_enters_the_true_variance_only():
    rho = 0.25  # above ρ0 = 0.1: the test is liberal
    res = cvstats.plan(score_pilot(DIFFS), effect=0.03, rho=rho, J=10)
    assert res.rho_source == "given"
    k = rho / (1 - rho)
    ratio = (0.1 + k) / (0.1 + 1 / 9)
    assert f(res.political_ratio.sel(J=10)) == pytest.approx(ratio)
    # the same width (the interval does not know ρ), a size above alpha
    width = stats.t.ppf(0.975, 9) * np.sqrt((0.1 + 1 / 9) * S2)
    assert f(res.half_width.sel(J=10)) == pytest.approx(width)
    q = stats.t.ppf(0.975, 9) / np.sqrt(ratio)
    assert f(res.size.sel(J=10)) == pytest.approx(2 * stats.t.sf(q, 9))
    lam = 0.03 / np.sqrt(S2 * (0.1 + k))
    power = stats.nct.sf(q, 9, lam) + stats.nct.cdf(-q, 9, lam)
    assert f(res.power.sel(J=10)) == pytest.approx(power)
    assert f(res.sigma1) == pytest.approx(S2 / (1 - rho))
    assert "ρ = 0.25 (as given; the test's actual level is then" in res.verdict()


# ---------------------------------------------------------------------------
# Monte Carlo under Lemma 2
# ---------------------------------------------------------------------------

SIGMA1, DELTA, R = 0.02, 0.06, 40_000


@pytest.mark.parametrize("rho", [0.1, 0.3])  # ρ = ρ0, and a liberal case ρ > ρ0
def test_planned_power_matches_simulated_experiments(rho):
    s2 = SIGMA1 * (1 - rho)  # E[S²] of Lemma 1
    res = cvstats.plan(unit_pilot(s2), effect=DELTA, rho=None if rho == 0.1 else rho)
    rng = np.random.default_rng(17)
    for J in (5, 10, 15, 25):
        common = rng.normal(size=(R, 1)) * np.sqrt(rho)
        own = rng.normal(size=(R, J)) * np.sqrt(1 - rho)
        mu = np.sqrt(SIGMA1) * (common + own)  # equicorrelated Gaussian split means, mean 0
        mean, var = mu.mean(1), mu.var(1, ddof=1)
        se = np.sqrt((1 / J + C) * var)
        crit = stats.t.ppf(0.975, J - 1)
        for delta, planned in ((DELTA, res.power), (0.0, res.size)):
            rate = np.mean(np.abs((mean + delta) / se) > crit)
            p = f(planned.sel(J=J))
            assert abs(rate - p) < 4 * np.sqrt(p * (1 - p) / R) + 1e-3, (rho, J, delta, rate, p)
        half = crit * se
        assert np.sqrt(np.mean(half**2)) == pytest.approx(f(res.half_width.sel(J=J)), rel=0.01)
        assert half.mean() == pytest.approx(f(res.mean_half_width.sel(J=J)), rel=0.01)


# ---------------------------------------------------------------------------
# searches, budgets, unreachable targets
# ---------------------------------------------------------------------------


def test_a_target_below_the_limit_cannot_be_met_at_any_J():
    res = cvstats.plan(score_pilot(DIFFS), target_width=0.005, effect=0.001)
    assert np.isnan(f(res.J_width)) and np.isnan(f(res.J_plan))
    assert f(res.half_width_limit) > 0.005
    text = res.verdict()
    assert "cannot be met with n = 100 examples" in text and "limit as J → ∞" in text
    # out of reach at any J (no budget): the knee of the curves searched, not DEFAULT_J
    assert text.startswith("Not reachable for a − b: ")
    knee = max(knee_from_curve(res, "width"), knee_from_curve(res, "power"))
    assert int(f(res.J_chosen)) == int(f(res.J_knee)) == knee


def test_a_budget_too_small_says_so_and_reports_the_budget():
    res = cvstats.plan(score_pilot(DIFFS), target_width=0.03, budget_fits=4)
    assert np.isnan(f(res.J_width)) and int(f(res.J_chosen)) == 4
    assert "cannot be met within the budget of 4 fits" in res.verdict()
    assert not res.to_frame()["meets_target"].any()
    met = cvstats.plan(score_pilot(DIFFS), target_width=0.03, budget_fits=100)
    assert int(f(met.J_width)) == int(f(met.J_chosen)) < 100
    assert "is met from J = " in met.verdict()


# a pilot of our own for the knee: 6 split differences on n = 300 examples, n2 = 30
KNEE_DIFFS = [0.031, -0.018, 0.052, 0.004, 0.012, -0.037]
KNEE_C = 30 / 270  # n2/n1


def knee_pilot():
    return score_pilot(KNEE_DIFFS, n=300, n_test=30)


def knee_curves(J_max, effect=None):
    """Half-width and power (ρ = ρ0) of the corrected resampled t for J = 2..J_max, by scipy."""
    Js = np.arange(2, J_max + 1)
    s2 = np.var(KNEE_DIFFS, ddof=1)
    crit = stats.t.isf(0.025, Js - 1)
    half = crit * np.sqrt((1 / Js + KNEE_C) * s2)
    if effect is None:
        return Js, half, None
    lam = effect / np.sqrt((1 / Js + KNEE_C) * s2)  # PR = 1 at ρ = ρ0
    power = stats.nct.sf(crit, Js - 1, lam) + stats.nct.cdf(-crit, Js - 1, lam)
    return Js, half, power


def test_a_width_out_of_reach_recommends_the_knee_not_the_budget():
    res = cvstats.plan(knee_pilot(), target_width=0.012, budget_fits=400)
    # by scipy over every J the budget pays for: the best is J = 400's, the knee the
    # smallest J within 10 % of it
    Js, half, _ = knee_curves(400)
    assert half.min() == half[-1] > 0.012
    knee = int(Js[half <= 1.1 * half[-1]].min())
    assert knee < 100  # far from the whole budget
    assert np.isnan(f(res.J_width)) and np.isnan(f(res.J_plan))
    assert int(f(res.J_chosen)) == int(f(res.J_knee)) == knee == knee_from_curve(res, "width")
    assert f(res.half_width.sel(J=knee)) == pytest.approx(half[knee - 2], rel=1e-12)
    assert f(res.half_width.sel(J=knee - 1)) > 1.1 * f(res.half_width.sel(J=400))
    # the verdict says so first, then the knee, then the design
    text = str(res.verdict())
    assert text.startswith("Not reachable for a − b: the target half-width 0.012 cannot")
    best = f"The best within the budget: a half-width of {half[-1]:.2g}, at J = 400."
    assert best in text
    rule = "the smallest J whose half-width is within 10% of the best reachable"
    assert f"Recommended: J = {knee}, the knee ({rule})." in text
    assert text.index("Recommended") < text.index(f"J = {knee} splits ({knee} fits per learner)")
    # the summary too, and it shows the curve with the knee marked
    summary = res.summary().as_text()
    first = next(line for line in summary.splitlines() if line.strip("= "))
    assert first.startswith("Not reachable: the targets (half-width 0.012, budget 400 fits")
    assert "The curve: half-width against J" in summary
    curve = res.curve()
    assert curve.loc[curve["knee"], "J"].tolist() == [knee]
    assert {2, knee - 1, knee, 400} <= set(curve["J"])
    np.testing.assert_allclose(curve["half_width"], half[curve["J"].to_numpy() - 2], rtol=1e-12)
    assert repr(res).splitlines()[1].startswith("Not reachable: ")
    ax = res.plot()
    try:
        knees = [line for line in ax.lines if line.get_marker() == "D"]
        assert len(knees) == 1 and knees[0].get_xdata().tolist() == [knee]
        assert "knee (10% of the best)" in ax.get_legend_handles_labels()[1]
    finally:
        plt.close("all")


def test_a_reachable_target_keeps_the_smallest_design():
    res = cvstats.plan(knee_pilot(), target_width=0.05, budget_fits=400)
    Js, half, _ = knee_curves(400)
    smallest = int(Js[half <= 0.05].min())
    assert int(f(res.J_chosen)) == int(f(res.J_width)) == int(f(res.J_plan)) == smallest
    assert np.isnan(f(res.J_knee))
    assert "Not reachable" not in str(res.verdict()) and "is met from J = " in res.verdict()
    summary = res.summary().as_text()
    assert "Not reachable" not in summary and "The curve" not in summary
    assert res.curve().empty
    ax = res.plot()
    try:
        assert not [line for line in ax.lines if line.get_marker() == "D"]
    finally:
        plt.close("all")


def test_a_power_out_of_reach_takes_the_knee_of_the_power():
    # the width target is met (from J_width), the power 0.8 not: the larger of J_width and
    # the knee of the power curve
    res = cvstats.plan(knee_pilot(), target_width=0.05, effect=0.02, budget_fits=200)
    Js, half, power = knee_curves(200, effect=0.02)
    assert power.max() < 0.8
    J_width = int(Js[half <= 0.05].min())
    knee_power = int(Js[power >= 0.9 * power.max()].min())
    assert int(f(res.J_width)) == J_width and np.isnan(f(res.J_power))
    assert knee_power == knee_from_curve(res, "power")
    assert int(f(res.J_chosen)) == int(f(res.J_knee)) == max(J_width, knee_power)
    assert f(res.power.sel(J=knee_power)) == pytest.approx(power[knee_power - 2], rel=1e-9)
    text = str(res.verdict())
    assert text.startswith("Not reachable for a − b: the power 0.8 cannot be met")
    assert (
        "the smallest J whose power is within 10% of the best reachable and that meets the "
        "target half-width 0.05" in text
    )
    assert f"the target half-width 0.05 is met from J = {J_width}" in text
    summary = res.summary().as_text()
    assert "The curve: power against J" in summary


def test_the_knee_tolerance_is_a_parameter():
    Js, half, _ = knee_curves(400)
    for tolerance in (0.05, 0.25):
        res = cvstats.plan(
            knee_pilot(), target_width=0.012, budget_fits=400, knee_tolerance=tolerance
        )
        knee = int(Js[half <= (1 + tolerance) * half[-1]].min())
        assert int(f(res.J_chosen)) == knee == knee_from_curve(res, "width", tolerance)
        assert res.knee_tolerance == tolerance
        assert f"within {100 * tolerance:g}% of the best reachable" in res.verdict()
    # 0: the design reaching the best, here the whole budget
    whole = cvstats.plan(knee_pilot(), target_width=0.012, budget_fits=400, knee_tolerance=0)
    assert int(f(whole.J_chosen)) == 400


def test_a_J_asked_is_reported_and_the_knee_said():
    res = cvstats.plan(knee_pilot(), target_width=0.012, budget_fits=400, J=20)
    knee = knee_from_curve(res, "width")
    assert int(f(res.J_chosen)) == 20 and int(f(res.J_knee)) == knee != 20
    text = str(res.verdict())
    assert text.startswith("Not reachable for a − b")
    assert f"The knee is J = {knee} (the smallest J" in text and "Recommended" not in text
    assert "J = 20 splits (20 fits per learner)" in text
    assert f"The knee: J = {knee}, the knee" in " ".join(res.summary().as_text().split())


def test_the_knee_per_number_of_replicates_and_per_contrast(loss_pilot):
    res = cvstats.plan(
        loss_pilot, method="corrected_bootstrap_t", target_width=0.05, R=[5, 15], budget_fits=600
    )
    assert res.J_knee.dims == ("contrast", "R")
    for contrast in res.J_chosen["contrast"].values:
        for R in (5, 15):
            knee = knee_from_curve(res, "width", contrast=contrast, R=R)
            assert int(res.J_chosen.sel(contrast=contrast, R=R)) == knee
            assert knee * (R + 1) <= 600
    assert str(res.verdict()).count("Not reachable for ") == 6


def test_the_grid_holds_the_defaults_the_asked_and_the_found():
    res = cvstats.plan(score_pilot(DIFFS), J=73, target_width=0.02, budget_fits=500)
    J = res.half_width["J"].values
    assert set(range(2, 51)) <= set(J.tolist())
    assert {73, 500, int(f(res.J_width))} <= set(J.tolist())
    assert res.n_fits.values.tolist() == J.tolist()
    # monotone: more splits, narrower intervals
    assert np.all(np.diff(res.half_width.squeeze().values) < 0)


def test_no_target_reports_fifteen_splits_within_the_budget():
    assert int(f(cvstats.plan(score_pilot(DIFFS)).J_chosen)) == 15
    assert int(f(cvstats.plan(score_pilot(DIFFS), budget_fits=8).J_chosen)) == 8
    res = cvstats.plan(score_pilot(DIFFS))
    assert np.isnan(res.power.values).all() and np.isnan(f(res.power_limit))
    with pytest.raises(ArgumentError, match="effect="):
        res.plot("power")


# ---------------------------------------------------------------------------
# pilots: loss cubes, contrasts, many models, a dataset dim, n_test, k-fold
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loss_pilot():
    d = designs.resampled(N, N_TEST, J=6, seed=1)
    rng = np.random.default_rng(3)
    losses = rng.normal(size=(6, N, 3)) + rng.normal(size=(6, 1, 3)) * 0.2
    return cvstats.from_arrays(losses, design=d, models=["x", "y", "z"], name="sq")


def test_a_loss_cube_of_models_is_planned_pairwise(loss_pilot):
    res = cvstats.plan(loss_pilot, target_width=0.5)
    assert res.J_chosen.dims == ("contrast",)
    assert res.J_chosen["contrast"].values.tolist() == ["x - y", "x - z", "y - z"]
    assert "3 pairwise differences" in res.note
    assert res.half_width.dims == ("J", "contrast")
    # the same numbers from the contrast cube itself, and S² by hand
    direct = cvstats.plan(cvstats.pairwise(loss_pilot), target_width=0.5)
    xr.testing.assert_allclose(direct.half_width, res.half_width)
    means = loss_pilot.mean("example", skipna=True)
    s2 = (means.sel(model="x") - means.sel(model="y")).var("split", ddof=1)
    assert f(res.s2.sel(contrast="x - y")) == pytest.approx(float(s2))
    lines = res.verdict().splitlines()
    assert len(lines) == 3 and lines[0].startswith("J = ") and "x − y" in lines[0]


def test_one_model_is_planned_for_its_level(loss_pilot):
    res = cvstats.plan(loss_pilot.sel(model=["x"]), target_width=0.5)
    assert res.J_chosen.dims == ("model",) and res.note == ""


def test_n_test_carries_the_variance_with_the_within_split_variance(loss_pilot):
    pair = cvstats.pairwise(loss_pilot, models=["x", "y"])
    res = cvstats.plan(pair, n_test=20)
    assert (res.n1, res.n2, res.pilot_n2) == (80, 20, N_TEST)
    main = pair.isel(contrast=0)
    within = float(main.var("example", ddof=1, skipna=True).mean("split"))
    s2 = float(main.mean("example", skipna=True).var("split", ddof=1))
    expected = max(s2 - within / N_TEST, 0.0) + within / 20
    assert f(res.s2) == pytest.approx(expected)
    assert f(res.rho) == pytest.approx(20 / 100)
    assert "within-split variance" in res.note
    with pytest.raises(CubeError, match="score cube"):
        cvstats.plan(score_pilot(DIFFS), n_test=20)


def test_a_score_pilot_plans_and_says_rho0_is_a_guess():
    res = cvstats.plan(score_pilot(DIFFS), target_width=0.03)
    assert "guess" in res.note and res.loss == "auc"
    assert res.J_chosen["contrast"].values.tolist() == ["a - b"]


def test_a_dataset_dim_pools_s2_and_takes_rho_from_fit_rho():
    rng = np.random.default_rng(8)
    n_data, J_p, rho = 60, 6, 0.4
    common = rng.normal(size=(n_data, 1, 1)) * np.sqrt(rho)
    own = rng.normal(size=(n_data, J_p, 1)) * np.sqrt(1 - rho)
    mu = 0.1 * (common + own) * np.array([1.0, 2.0])  # two models, one dataset-level factor
    d = designs.resampled(20, 5, J=J_p, seed=0)
    losses = np.broadcast_to(mu[:, :, None, :], (n_data, J_p, 20, 2))
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b"], extra_dims=["dataset"])
    res = cvstats.plan(cube, target_width=0.05)
    assert res.rho_source == "fit_rho" and res.pilot_df == n_data * (J_p - 1)
    fit = cvstats.fit_rho(cvstats.pairwise(cube))
    assert f(res.rho) == pytest.approx(max(float(fit.rho.squeeze()), 0.0))
    assert f(res.rho) == pytest.approx(rho, abs=0.1)
    s2 = cube.mean("example").diff("model").var("split", ddof=1).mean("dataset")
    assert f(res.s2) == pytest.approx(float(s2.squeeze()))
    assert "dataset" not in res.half_width.dims
    assert "fit_rho across 60 datasets" in res.verdict()
    assert "fit_rho across 60 datasets" in str(res.summary())
    # rho= overrides it
    assert cvstats.plan(cube, rho=0.1).rho_source == "given"
    # 60 datasets: the pilot power model, but not at another test size
    assert res.power_model == "pilot"
    other = cvstats.plan(cube, effect=0.05, n_test=4)
    assert other.power_model == "gaussian" and "drop `n_test`" not in other.note
    assert "pilot's own test size" in other.note


def test_other_extra_dims_are_kept():
    d = designs.resampled(N, N_TEST, J=5, seed=2)
    rng = np.random.default_rng(4)
    losses = rng.normal(size=(2, 5, N, 2))
    cube = cvstats.from_arrays(
        losses,
        design=d,
        models=["a", "b"],
        extra_dims=["problem"],
        extra_coords={"problem": ["p", "q"]},
    )
    res = cvstats.plan(cube, target_width=0.5)
    assert res.half_width.dims == ("J", "contrast", "problem")
    assert res.to_frame("plan")["problem"].tolist() == ["p", "q"]
    assert res.verdict().splitlines()[1].startswith("problem = q: ")


def test_repeated_kfold_plan():
    d = designs.kfold(60, K=5, repeats=2, seed=0)
    rng = np.random.default_rng(5)
    cube = cvstats.from_arrays(rng.normal(size=(10, 60, 2)), design=d, models=["a", "b"])
    res = cvstats.plan(cube, method="corrected_repeated_kfold_t", J=20, effect=0.3)
    assert res.K == 5 and f(res.rho) == pytest.approx(0.2)
    assert set(res.half_width["J"].values.tolist()) >= {5, 10, 15, 20, 50}
    assert all(J % 5 == 0 for J in res.half_width["J"].values.tolist())
    means = cube.mean("example", skipna=True)
    s2 = float((means.sel(model="a") - means.sel(model="b")).var("split", ddof=1))
    width = stats.t.ppf(0.975, 19) * np.sqrt((1 / 20 + 1 / 4) * s2)
    assert f(res.half_width.sel(J=20)) == pytest.approx(width)
    assert "20 folds (4 × 5-fold)" in res.verdict()
    with pytest.raises(ArgumentError, match="multiple of K"):
        cvstats.plan(cube, method="corrected_repeated_kfold_t", J=12)
    with pytest.raises(DesignError, match="k-fold"):
        cvstats.plan(score_pilot(DIFFS), method="corrected_repeated_kfold_t")


# ---------------------------------------------------------------------------
# the result protocol
# ---------------------------------------------------------------------------


def test_result_protocol(loss_pilot):
    res = cvstats.plan(loss_pilot, target_width=0.5, effect=0.4, budget_fits=60)
    assert isinstance(res, PlanResult)
    grid = res.to_frame()
    assert list(grid.columns) == ["J", "contrast", *PLAN_GRID_COLUMNS]
    table = res.to_frame("plan")
    assert list(table.columns) == ["contrast", *PLAN_TABLE_COLUMNS]
    assert len(table) == 3 and table["J"].tolist() == res.J_chosen.values.tolist()
    for method in ("to_markdown", "to_latex", "to_html"):
        assert isinstance(getattr(res, method)(), str)
    assert "|   J |" in res.to_markdown(table="plan")
    text = str(res.summary())
    assert "Verdict:" in text and "ρ = ρ0 = n2/(n1 + n2) = 0.1" in text
    assert len(repr(res).splitlines()) <= 20 and repr(res).startswith("PlanResult: ")
    with pytest.raises(ArgumentError, match="table"):
        res.to_frame("nope")
    for kind in ("width", "power"):
        ax = res.plot(kind)
        try:
            assert len(ax.lines) >= 3 and ax.get_xlabel() == "fits per learner"
        finally:
            plt.close("all")
    with pytest.raises(ArgumentError, match="kind"):
        res.plot("nope")


# ---------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------


def test_a_pilot_with_one_split_is_refused():
    d = designs.resampled(N, N_TEST, J=1, seed=0)
    cube = cvstats.from_arrays(np.zeros((1, N, 2)) + np.arange(2), design=d, models=["a", "b"])
    with pytest.raises(DesignError, match="at least 2 splits"):
        cvstats.plan(cube)


def test_zero_variance_is_refused():
    with pytest.raises(DesignError, match="zero"):
        cvstats.plan(score_pilot([0.01, 0.01, 0.01]))


@pytest.mark.parametrize(
    "options, match",
    [
        ({"target_width": 0}, "target_width"),
        ({"target_width": -0.1}, "target_width"),
        ({"target_width": float("nan")}, "target_width"),
        ({"effect": 0}, "effect"),
        ({"effect": 0.1, "power": 1.0}, "power"),
        ({"effect": 0.1, "power": 0.01}, "power"),
        ({"method": "t_test"}, "method"),
        ({"method": "dietterich_5x2cv_t"}, "method"),
        ({"method": "resampled_t"}, "method"),
        ({"M": 5}, "`M` applies"),
        ({"R": 5}, "`R` applies"),
        ({"method": "corrected_bootstrap_t", "M": 5}, "`M` does not apply"),
        ({"method": "corrected_bootstrap_t", "R": 1}, "`R`"),
        ({"method": "corrected_bootstrap_t", "R": []}, "`R`"),
        ({"method": "corrected_bootstrap_t", "budget_fits": 20, "R": [2, 30]}, "R = 30"),
        ({"method": "corrected_bootstrap_t", "J": 0}, "`J`"),
        ({"budget_fits": 1}, "budget_fits"),
        ({"budget_fits": 2.5}, "budget_fits"),
        ({"J": 1}, "`J`"),
        ({"rho": 1.0}, "rho"),
        ({"rho": -0.1}, "rho"),
        ({"alpha": 1.5}, "alpha"),
        ({"knee_tolerance": -0.1}, r"`knee_tolerance` must lie in \[0, 1\).*got -0.1"),
        ({"knee_tolerance": 1.0}, "`knee_tolerance`"),
        ({"knee_tolerance": float("nan")}, "`knee_tolerance`"),
        ({"knee_tolerance": "10%"}, "`knee_tolerance`"),
    ],
)
def test_bad_options(options, match):
    with pytest.raises(ArgumentError, match=match):
        cvstats.plan(score_pilot(DIFFS), **options)


def test_bad_pilots():
    with pytest.raises(CvstatsTypeError, match="pilot"):
        cvstats.plan(np.zeros((3, 2)))
    with pytest.raises(ArgumentError, match="n_test"):
        cvstats.plan(score_pilot(DIFFS), n_test=N)
    frame = pd.DataFrame({"x": [1]})
    with pytest.raises(CvstatsTypeError):
        cvstats.plan(frame)


def test_extreme_tails_stay_finite_and_a_huge_budget_is_searched_to_the_limit():
    res = cvstats.plan(score_pilot(DIFFS), effect=5.0, rho=0.0, budget_fits=10**7)
    assert np.isfinite(res.power.values).all() and np.isfinite(res.power_ci.values).all()
    assert f(res.power.sel(J=50)) == pytest.approx(1.0)
    assert res.search_end == cvstats.across.plan.SEARCH_LIMIT
    far = cvstats.plan(score_pilot(DIFFS), target_width=1e-4, budget_fits=10**7)
    assert far.search_end == cvstats.across.plan.SEARCH_LIMIT
    assert int(f(far.J_chosen)) == knee_from_curve(far, "width") < far.search_end
    assert "cannot be met with n = 100 examples" in far.verdict()


# ---------------------------------------------------------------------------
# the bootstraps (docs/theory.md §4, methods 5 and 7) and the conservative Z (method 4)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method, c", [("corrected_bootstrap_t", 1 / 9), ("bootstrap_t", 0.0)])
def test_bootstrap_plan_by_hand(method, c):
    res = cvstats.plan(score_pilot(DIFFS), method=method, effect=0.03, R=[5, 15], J=10)
    assert res.design_dim == "R" and res.half_width.dims == ("J", "contrast", "R")
    for R in (5, 15):
        crit = stats.t.ppf(0.975, R - 1)
        # E[σ̌²] = τ²/J (Lemma 1.3 over replicates): (1 + J c) τ²/J = (1/J + c) τ²
        half = crit * np.sqrt((0.1 + c) * S2)
        assert f(res.half_width.sel(J=10, R=R)) == pytest.approx(half, rel=1e-12)
        ratio = (0.1 + 1 / 9) / (0.1 + c)  # ρ = ρ0: Var = (1/J + n2/n1) τ²
        q, lam = crit / np.sqrt(ratio), 0.03 / np.sqrt((0.1 + 1 / 9) * S2)
        power = stats.nct.sf(q, R - 1, lam) + stats.nct.cdf(-q, R - 1, lam)
        assert f(res.power.sel(J=10, R=R)) == pytest.approx(power, rel=1e-9)
        assert f(res.size.sel(J=10, R=R)) == pytest.approx(2 * stats.t.sf(q, R - 1), rel=1e-9)
        c4 = np.sqrt(2 / (R - 1)) * special.gamma(R / 2) / special.gamma((R - 1) / 2)
        assert f(res.mean_half_width.sel(J=10, R=R)) == pytest.approx(c4 * half)
        assert int(res.n_fits.sel(J=10, R=R)) == (R + 1) * 10
        # J → ∞ with R fixed: E[σ̂²] → c τ², Var[μ̂_J] → k τ²
        assert f(res.half_width_limit.sel(R=R)) == pytest.approx(crit * np.sqrt(c * S2))
    text = res.verdict()
    assert "J = 10 splits and R = 5 replicates (60 fits per learner)" in text
    assert len(text.splitlines()) == 2 and "R = 15 replicates (160 fits" in text


def test_bootstrap_budget_is_per_replicate_count():
    res = cvstats.plan(
        score_pilot(DIFFS), method="corrected_bootstrap_t", target_width=0.03, R=[5, 15],
        budget_fits=200,
    )  # fmt: skip
    for R in (5, 15):
        crit = stats.t.ppf(0.975, R - 1)
        hand = next(
            (J for J in range(1, 200 // (R + 1) + 1)
             if crit * np.sqrt((1 / J + 1 / 9) * S2) <= 0.03),
            None,
        )  # fmt: skip
        got = f(res.J_width.sel(R=R))
        assert (np.isnan(got) and hand is None) or int(got) == hand
    assert not (res.n_fits.where(res.meets_target.any("contrast")) > 200).any()
    assert (
        "cannot be met within the budget of 200 fits" in res.verdict()
        or np.isfinite(res.J_width.values).all()
    )


def cz_pilot(main, inner, n=100, n_test=10):
    """A score pilot on designs.conservative_z: main split values, inner[m][side] values."""
    inner = np.asarray(inner, dtype=float)
    M_p, _, J_h = inner.shape
    d = designs.conservative_z(n, n_test, J=max(len(main), J_h), M=M_p, seed=0)
    values, keep, seen, k = [], [], {}, 0
    for i in range(d.sizes["split"]):
        if d["block"].values[i] == "main":
            if k < len(main):
                keep.append(i)
                values.append(main[k])
            k += 1
            continue
        key = (int(d["half"].values[i]), int(d["side"].values[i]))
        j = seen.get(key, 0)
        seen[key] = j + 1
        if j < J_h:
            keep.append(i)
            values.append(inner[key[0], key[1], j])
    diffs = np.asarray(values)
    scores = np.column_stack([0.7 + diffs, np.full(diffs.size, 0.7)])
    return cvstats.from_scores(
        scores, greater_is_better=True, design=d.isel(split=keep), models=["a", "b"], name="auc"
    )


INNER = [
    [[0.02, 0.05, 0.03], [-0.01, 0.01, 0.0]],
    [[0.04, 0.0, 0.02], [0.01, 0.03, -0.02]],
]


def test_conservative_z_plan_by_hand():
    res = cvstats.plan(cz_pilot(DIFFS, INNER), method="conservative_z", effect=0.03, M=[5, 10])
    inner = np.asarray(INNER)
    tau2_h = inner.var(-1, ddof=1).mean()
    diff = inner[:, 0].mean(-1) - inner[:, 1].mean(-1)
    v_h = (diff**2 / 2).mean()
    sigma2_h = v_h - tau2_h / 3
    assert sigma2_h > 0
    assert res.design_dim == "M" and res.pilot_halves == 2 and res.half_n1 == 40
    z = stats.norm.ppf(0.975)
    for J in (1, 4, 20):
        v_est = sigma2_h + tau2_h / J  # E[σ̂²_cz] = Var[μ̂'_J] = σ2' + τ'²/J
        v_true = S2 * (1 / J + 1 / 9)  # ρ = ρ0 for the numerator
        assert f(res.expected_variance.sel(J=J, M=5)) == pytest.approx(v_est, rel=1e-12)
        assert f(res.variance.sel(J=J, M=5)) == pytest.approx(v_true, rel=1e-12)
        for M in (5, 10):
            assert f(res.half_width.sel(J=J, M=M)) == pytest.approx(z * np.sqrt(v_est))
            q, lam = z * np.sqrt(v_est / v_true), 0.03 / np.sqrt(v_true)
            power = stats.nct.sf(q, M, lam) + stats.nct.cdf(-q, M, lam)
            assert f(res.power.sel(J=J, M=M)) == pytest.approx(power, rel=1e-9)
            assert f(res.size.sel(J=J, M=M)) == pytest.approx(2 * stats.t.sf(q, M), rel=1e-9)
            assert int(res.n_fits.sel(J=J, M=M)) == J * (1 + 2 * M)
            # the band for E[σ̂²_cz] = (V'_3 - τ'²/3)_+ + τ'²/J: its range over the box of
            # the chi-square intervals of V'_3 (M_p = 2 df) and τ'² (2 M_p (J_h - 1) = 8 df),
            # by brute force over a grid of the box (with the kink τ'² = 3 V'_3 at V'_3's low end)
            vs = np.linspace(*(v_h * 2 / stats.chi2.isf([0.025, 0.975], 2)), 801)
            ts = np.linspace(*(tau2_h * 8 / stats.chi2.isf([0.025, 0.975], 8)), 801)
            ts = np.append(ts, np.clip(3 * vs[0], ts[0], ts[-1]))
            w = np.maximum(vs[:, None] - ts[None, :] / 3, 0) + ts[None, :] / J
            lo = f(res.half_width_ci.sel(J=J, M=M, ci_bound="lower"))
            hi = f(res.half_width_ci.sel(J=J, M=M, ci_bound="upper"))
            assert lo == pytest.approx(z * np.sqrt(w.min()), rel=1e-12)
            assert hi == pytest.approx(z * np.sqrt(w.max()), rel=1e-12)
    # J → ∞: E[σ̂²_cz] → σ2'
    assert f(res.half_width_limit.sel(M=5)) == pytest.approx(z * np.sqrt(sigma2_h))
    # the power 0.8 is out of reach: the knee of each M's power curve
    for M in (5, 10):
        knee = knee_from_curve(res, "power", M=M)
        assert int(res.J_chosen.sel(M=M).squeeze()) == knee
        text = f"J = {knee} splits and M = {M} half-splits ({knee * (1 + 2 * M)} fits per learner)"
        assert text in res.verdict()
    assert "M half-splits of n/2" in str(res.summary())


def test_conservative_z_clips_a_negative_sigma2():
    # halves whose two sides agree: V'_{J_h} < τ'²/J_h, so σ2' is clipped at 0 (Lemma 1.2)
    inner = [[[0.0, 0.05, -0.05], [0.01, 0.06, -0.04]], [[0.02, -0.03, 0.04], [0.02, -0.02, 0.03]]]
    res = cvstats.plan(cz_pilot(DIFFS, inner), method="conservative_z", J=6)
    tau2_h = np.asarray(inner).var(-1, ddof=1).mean()
    assert f(res.expected_variance.sel(J=6)) == pytest.approx(tau2_h / 6)
    assert f(res.half_width_limit) == 0.0
    assert "clipped at 0 for ['a - b']" in res.note and "biased upward" in res.note
    # the band keeps V'_{J_h}'s own uncertainty (M_p = 2 df): its upper end is the plan at
    # V'_3's upper end and the best end of τ'²'s interval, not τ'²'s interval alone
    inner = np.asarray(inner)
    diff = inner[:, 0].mean(-1) - inner[:, 1].mean(-1)
    v_hi = (diff**2 / 2).mean() * 2 / stats.chi2.ppf(0.025, 2)
    t_lo, t_hi = tau2_h * 8 / stats.chi2.isf([0.025, 0.975], 8)
    w_hi = max(max(v_hi - t / 3, 0) + t / 6 for t in (t_lo, t_hi))
    hi = f(res.half_width_ci.sel(J=6, ci_bound="upper"))
    assert hi == pytest.approx(stats.norm.isf(0.025) * np.sqrt(w_hi))
    assert hi > stats.norm.isf(0.025) * np.sqrt(t_hi / 6)
    assert "clipped" not in cvstats.plan(cz_pilot(DIFFS, INNER), method="conservative_z").note


def test_conservative_z_bad_pilots():
    with pytest.raises(DesignError, match="'half' block"):
        cvstats.plan(score_pilot(DIFFS), method="conservative_z")
    with pytest.raises(DesignError, match="at least 2 inner splits"):
        cvstats.plan(cz_pilot(DIFFS, np.asarray(INNER)[..., :1]), method="conservative_z")
    with pytest.raises(ArgumentError, match="n_test"):
        cvstats.plan(cz_pilot(DIFFS, INNER), method="conservative_z", n_test=20)
    flat = np.zeros((2, 2, 3))
    with pytest.raises(DesignError, match="zero variance"):
        cvstats.plan(cz_pilot(DIFFS, flat), method="conservative_z")


# ---------------------------------------------------------------------------
# the uncertainty of ρ̂ (fit_rho) in the band
# ---------------------------------------------------------------------------


def rho_grid(ends, rho_hat):
    """The ρ at which the plan evaluates the power: 7 points evenly spaced in k = ρ/(1 - ρ)
    across ρ̂'s interval, and ρ̂ itself."""
    ks = np.linspace(*(np.asarray(ends) / (1 - np.asarray(ends))), 7)
    return [*(ks / (1 + ks)), rho_hat]


def test_rho_interval_widens_the_power_band_not_the_width():
    rng = np.random.default_rng(12)
    n_data, J_p, rho = 40, 5, 0.3
    mu = 0.1 * (rng.normal(size=(n_data, 1)) * np.sqrt(rho) + rng.normal(size=(n_data, J_p)))
    d = designs.resampled(20, 5, J=J_p, seed=0)
    scores = np.stack([mu, np.zeros_like(mu)], axis=-1)
    cube = cvstats.from_scores(
        scores, greater_is_better=False, design=d, models=["a", "b"], extra_dims=["dataset"]
    )
    res = cvstats.plan(cube, effect=0.05, J=10, power_model="gaussian")
    fit = cvstats.fit_rho(cvstats.pairwise(cube))
    ends = fit.rho_ci.squeeze().values.clip(0, 0.999)
    np.testing.assert_allclose(res.rho_ci.squeeze().values, ends)
    table = res.to_frame("plan")
    assert table["rho_low"].item() == pytest.approx(ends[0])
    # the width is ρ-free: its band is the chi-square band of E[S²] alone
    s2, df = f(res.s2), res.pilot_df
    h = stats.t.ppf(0.975, 9) * np.sqrt((0.1 + 5 / 15) * s2 * df / stats.chi2.isf(0.025, df))
    assert f(res.half_width_ci.sel(J=10, ci_bound="lower")) == pytest.approx(h)

    # the power band: min and max over E[S²]'s and ρ's intervals, by hand
    def power(tau2, r):
        k, c = r / (1 - r), 5 / 15
        crit = stats.t.ppf(0.975, 9)
        q, lam = crit / np.sqrt((0.1 + k) / (0.1 + c)), 0.05 / np.sqrt(tau2 * (0.1 + k))
        return stats.nct.sf(q, 9, lam) + stats.nct.cdf(-q, 9, lam)

    taus = [s2 * df / stats.chi2.isf(0.025, df), s2, s2 * df / stats.chi2.ppf(0.025, df)]
    grid = [power(t, r) for t in taus for r in rho_grid(ends, f(res.rho))]
    lo = f(res.power_ci.sel(J=10, ci_bound="lower"))
    hi = f(res.power_ci.sel(J=10, ci_bound="upper"))
    assert lo == pytest.approx(min(grid)) and hi == pytest.approx(max(grid))
    fixed = cvstats.plan(cube, effect=0.05, J=10, rho=float(res.rho.squeeze()))
    assert f(fixed.power_ci.sel(J=10, ci_bound="upper")) < hi
    assert f(fixed.power_ci.sel(J=10, ci_bound="lower")) > lo
    np.testing.assert_allclose(fixed.half_width_ci.values, res.half_width_ci.values)
    np.testing.assert_allclose(fixed.rho_ci.squeeze().values, [f(fixed.rho)] * 2)


def test_the_power_band_finds_an_interior_extremum_in_rho():
    # few datasets, ρ = 0.4: ρ̂'s interval is wide and, at effect 0.18 and J = 50, the power
    # at the upper end of E[S²]'s interval dips inside it, away from ρ̂ (a larger Var[μ̂_J]
    # first spreads μ̂_J out of the rejection region, then into its other side)
    rng = np.random.default_rng(2)
    n_data, J_p, rho = 10, 5, 0.4
    mu = 0.1 * (rng.normal(size=(n_data, 1)) * np.sqrt(rho / (1 - rho))
                + rng.normal(size=(n_data, J_p)))  # fmt: skip
    d = designs.resampled(N, N_TEST, J=J_p, seed=0)
    cube = cvstats.from_scores(
        np.stack([mu, np.zeros_like(mu)], axis=-1),
        greater_is_better=False,
        design=d,
        models=["a", "b"],
        extra_dims=["dataset"],
    )
    J, effect = 50, 0.18
    res = cvstats.plan(cube, effect=effect, J=J, budget_fits=60)
    s2, df = f(res.s2), res.pilot_df
    crit = stats.t.ppf(0.975, J - 1)

    def power(tau2, r):
        k = r / (1 - r)
        q, lam = crit / np.sqrt((1 / J + k) / (1 / J + C)), effect / np.sqrt(tau2 * (1 / J + k))
        return stats.nct.sf(q, J - 1, lam) + stats.nct.cdf(-q, J - 1, lam)

    taus = [s2 * df / stats.chi2.isf(0.025, df), s2, s2 * df / stats.chi2.ppf(0.025, df)]
    rhos = rho_grid(res.rho_ci.squeeze().values, f(res.rho))
    grid = np.array([[power(t, r) for r in rhos] for t in taus])
    # the case has an interior minimum: the ends of ρ̂'s interval and ρ̂ alone would miss it
    assert grid.min() < grid[:, [0, 6, 7]].min() - 0.01
    assert 0 < np.argmin(grid[2, :7]) < 6
    lo = f(res.power_ci.sel(J=J, ci_bound="lower"))
    hi = f(res.power_ci.sel(J=J, ci_bound="upper"))
    assert lo == pytest.approx(grid.min(), rel=1e-9)
    assert hi == pytest.approx(grid.max(), rel=1e-9)
    # a grid even in ρ (not in ρ/(1 - ρ)) gives another minimum
    even = np.linspace(*res.rho_ci.squeeze().values, 7)
    assert min(power(taus[2], r) for r in even) != pytest.approx(lo, rel=1e-4)


# ---------------------------------------------------------------------------
# the pilot power model (docs/theory.md §10, "The pilot power model")
# ---------------------------------------------------------------------------

EFFECT = 0.5


def dataset_pilot(values, n=N, n_test=N_TEST):
    """A score cube of one contrast with a ``dataset`` dim: ``values`` is (dataset, split)."""
    values = np.asarray(values, dtype=float)
    design = designs.resampled(n, n_test, J=values.shape[1], seed=0)
    return cvstats.from_scores(
        values[..., None],
        greater_is_better=False,
        design=design,
        models=["a-b"],
        name="sq",
        extra_dims=["dataset"],
    )


def heterogeneous_values(n_data=20, J_p=5, seed=0):
    """Split means whose spread and mean vary with the dataset."""
    rng = np.random.default_rng(seed)
    tau = np.exp(0.5 * rng.normal(size=(n_data, 1)))
    effects = 0.3 * (tau - 1) + 0.2 * rng.normal(size=(n_data, 1))
    return effects + tau * rng.normal(size=(n_data, J_p))


def denoised_by_hand(x):
    """``(Ã_d, τ̃_d)`` of one unit's ``x`` (datasets, splits), formula by formula."""
    D, J_p = x.shape
    nu = J_p - 1
    A, s2 = x.mean(1), x.var(1, ddof=1)
    mu = A.mean()
    L = np.log(s2)
    dL, dA = L - L.mean(), A - mu
    # the moments of (A_d, log τ_d²): the pilot's, minus those of the noise
    var_L = max(np.mean(dL**2) - special.polygamma(1, nu / 2), 0.0)
    mean_L = L.mean() - special.digamma(nu / 2) - np.log(2 / nu)
    var_A = max(np.mean(dA**2) - s2.mean() / J_p, 0.0)
    cov = np.mean(dA * dL)  # the noises are independent: the covariance is the pilot's
    assert var_L > 0
    cov_true = float(np.clip(cov, -np.sqrt(var_L * var_A), np.sqrt(var_L * var_A)))
    L_tilde = mean_L + np.sqrt(var_L / np.mean(dL**2)) * dL
    residual = dA - cov / np.mean(dL**2) * dL
    var_rest = var_A - cov_true**2 / var_L
    cov = cov_true
    A_tilde = (
        mu
        + cov / var_L * (L_tilde - mean_L)
        + np.sqrt(max(var_rest, 0.0) / (max(var_rest, 0.0) + s2 / J_p)) * residual
    )
    return A_tilde, np.exp(L_tilde / 2)


def mixture_by_hand(x, J, delta, c=C):
    """The pilot model's p_d for J > J_p: a noncentral t per dataset (scipy.stats.nct)."""
    A_tilde, tau_tilde = denoised_by_hand(x)
    theta = (A_tilde - x.mean(1).mean() + delta) / tau_tilde
    q = stats.t.isf(0.025, J - 1) * np.sqrt(1 + J * c)
    lam = theta * np.sqrt(J)
    return stats.nct.sf(q, J - 1, lam) + stats.nct.sf(q, J - 1, -lam)


def test_the_mixture_of_three_datasets_against_scipy():
    x = np.array(
        [[0.3, -0.2, 0.9, 0.1, 0.4, -0.6],
         [1.5, 0.2, 2.8, -0.4, 1.9, 0.7],
         [-0.1, 0.05, 0.2, -0.15, 0.12, 0.0]]
    )  # fmt: skip
    model = cvstats.across.plan.power.PilotModel(x[None], c_test=C, alpha=0.05)
    for J in (9, 40):
        for delta in (0.6, -0.6, 0.0):
            p = mixture_by_hand(x, J, delta)
            rate, _ = model.curve(np.array([J]), [delta])
            assert rate[0, 0, 0] == pytest.approx(p.mean(), rel=1e-9)
            by_dataset = model.per_dataset(np.array([J]), np.array([[delta - x.mean()]]))
            np.testing.assert_allclose(by_dataset[0, :, 0, 0], p, rtol=1e-9)
    # beyond 100 degrees of freedom: Abramowitz & Stegun's approximation, within 3e-4
    rate, _ = model.curve(np.array([500]), [0.6])
    assert rate[0, 0, 0] == pytest.approx(mixture_by_hand(x, 500, 0.6).mean(), abs=3e-4)
    # the limit J → ∞: the share of datasets with |θ̃_d| > z sqrt(c)
    A_tilde, tau_tilde = denoised_by_hand(x)
    theta = (A_tilde - x.mean() + 0.6) / tau_tilde
    expected = np.mean(np.abs(theta) > stats.norm.isf(0.025) * np.sqrt(C))
    assert model.limit(0.6)[0] == pytest.approx(expected)


def test_the_pilot_model_by_hand():
    x = heterogeneous_values()
    D, J_p = x.shape
    res = cvstats.plan(dataset_pilot(x), effect=EFFECT, J=8, power_model="pilot")
    assert res.power_model == "pilot" and "pilot's 20 datasets" in res.note
    mu = x.mean(1).mean()
    assert f(res.pilot_estimate) == pytest.approx(mu)

    def rejects(sample, delta):
        J = sample.shape[-1]
        crit = stats.t.isf(0.025, J - 1)
        stat = np.abs(sample.mean(-1) - mu + delta)
        return stat > crit * np.sqrt((1 / J + C) * sample.var(-1, ddof=1))

    # J = J_p: each dataset's own test; J < J_p: the module's random subsets of its splits
    for delta, field in ((EFFECT, res.power), (0.0, res.size)):
        assert f(field.sel(J=J_p)) == pytest.approx(rejects(x, delta).mean())
        rng = np.random.default_rng(cvstats.across.plan.power.SUBSET_SEED)
        perms = rng.permuted(
            np.tile(np.arange(J_p), (cvstats.across.plan.power.SUBSETS, 1)), axis=1
        )
        for J in (2, 3, 4):
            by_subset = [rejects(x[:, perm[:J]], delta) for perm in perms]
            assert f(field.sel(J=J)) == pytest.approx(np.mean(by_subset))
        # J > J_p: the mixture of noncentral t's
        for J in (8, 30):
            assert f(field.sel(J=J)) == pytest.approx(mixture_by_hand(x, J, delta).mean())
    # the band at J = J_p: ± z standard errors of the mean of p_d, with μ̄'s error
    p = rejects(x, EFFECT).astype(float)
    h = x.mean(1).std(ddof=1) / np.sqrt(D)
    slope = (rejects(x, EFFECT - h).mean() - rejects(x, EFFECT + h).mean()) / (2 * h)
    se = np.std(p + slope * (x.mean(1) - mu), ddof=1) / np.sqrt(D)
    z = stats.norm.isf(0.025)
    band = res.power_ci.sel(J=J_p).squeeze().values
    np.testing.assert_allclose(band, np.clip(p.mean() + np.array([-z, z]) * se, 0, 1))
    # the limit
    A_tilde, tau_tilde = denoised_by_hand(x)
    theta = (A_tilde - mu + EFFECT) / tau_tilde
    assert f(res.power_limit) == pytest.approx(np.mean(np.abs(theta) > z * np.sqrt(C)))
    # the width and the variances do not depend on the power model
    gaussian = cvstats.plan(dataset_pilot(x), effect=EFFECT, J=8, power_model="gaussian")
    for name in ("half_width", "half_width_ci", "variance", "expected_variance", "rho"):
        # on the J of both grids (each holds the knee of its own power curve)
        xr.testing.assert_allclose(*xr.align(getattr(res, name), getattr(gaussian, name)))


def test_the_pilot_model_searches_its_own_power():
    x = heterogeneous_values(n_data=40, J_p=8, seed=1)
    res = cvstats.plan(dataset_pilot(x), effect=1.0, power=0.6)
    assert res.power_model == "pilot"
    J_power = int(f(res.J_power))
    power = res.power.squeeze()
    assert float(power.sel(J=J_power)) >= 0.6
    assert (power.sel(J=slice(None, J_power - 1)) < 0.6).all()
    # with a width target too, and a budget: both met at J_plan, none before
    both = cvstats.plan(dataset_pilot(x), effect=1.0, power=0.6, target_width=1.2)
    J_plan = int(f(both.J_plan))
    meets = both.meets_target.squeeze()
    assert bool(meets.sel(J=J_plan)) and not meets.sel(J=slice(None, J_plan - 1)).any()
    tight = cvstats.plan(dataset_pilot(x), effect=1.0, power=0.99, budget_fits=30)
    # out of reach within the budget: the knee of the pilot model's power, not the budget
    assert np.isnan(f(tight.J_power))
    assert int(f(tight.J_chosen)) == int(f(tight.J_knee)) == knee_from_curve(tight, "power")
    assert tight.verdict().startswith("Not reachable for ")


def test_auto_chooses_the_pilot_model_when_it_can():
    x = heterogeneous_values()
    cube = dataset_pilot(x)
    assert cvstats.plan(cube, effect=EFFECT).power_model == "pilot"
    few = cvstats.plan(dataset_pilot(x[:10]), effect=EFFECT)
    assert few.power_model == "gaussian" and "at least 20 datasets" in few.note
    given = cvstats.plan(cube, effect=EFFECT, rho=0.1)
    assert given.power_model == "gaussian" and "`rho` enters the Gaussian" in given.note
    boot = cvstats.plan(cube, effect=EFFECT, method="corrected_bootstrap_t")
    assert boot.power_model == "gaussian" and "corrected_resampled_t" in boot.note
    # no dataset dim: the Gaussian model, silently
    plain = cvstats.plan(score_pilot(DIFFS), effect=0.03)
    assert plain.power_model == "gaussian" and "power_model" not in plain.note
    # the Gaussian model's numbers are the same whether asked or chosen
    asked = cvstats.plan(dataset_pilot(x[:10]), effect=EFFECT, power_model="gaussian")
    xr.testing.assert_identical(asked.power, few.power)


def test_the_result_says_which_power_model():
    res = cvstats.plan(dataset_pilot(heterogeneous_values()), effect=EFFECT, J=10)
    grid, table = res.to_frame(), res.to_frame("plan")
    assert list(grid.columns) == ["J", "model", *PLAN_GRID_COLUMNS]
    assert list(table.columns) == ["model", *PLAN_TABLE_COLUMNS]
    assert set(grid["power_model"]) == {"pilot"} and table["power_model"].tolist() == ["pilot"]
    text = str(res.summary())
    assert "Power model:" in text and "pilot (mixture over the pilot's datasets)" in text
    assert "power model: pilot" in repr(res)
    assert "with power and level from the pilot's 20 datasets" in res.verdict()
    gaussian = cvstats.plan(score_pilot(DIFFS), effect=0.03)
    assert "gaussian (Lemma 2, noncentral t)" in str(gaussian.summary())
    assert set(gaussian.to_frame()["power_model"]) == {"gaussian"}


def test_bad_power_models():
    x = heterogeneous_values()
    cube = dataset_pilot(x)
    for bad in ("normal", None, 1):
        with pytest.raises(ArgumentError, match="power_model"):
            cvstats.plan(cube, effect=EFFECT, power_model=bad)
    with pytest.raises(CubeError, match="`dataset` dim|'dataset' dim"):
        cvstats.plan(score_pilot(DIFFS), effect=0.03, power_model="pilot")
    with pytest.raises(DesignError, match="at least 20 datasets"):
        cvstats.plan(dataset_pilot(x[:19]), effect=EFFECT, power_model="pilot")
    with pytest.raises(DesignError, match="at least 5 main splits"):
        cvstats.plan(dataset_pilot(x[:, :4]), effect=EFFECT, power_model="pilot")
    flat = x.copy()
    flat[3] = 0.2  # one dataset whose split means do not vary
    with pytest.raises(DesignError, match="vary within every dataset"):
        cvstats.plan(dataset_pilot(flat), effect=EFFECT, power_model="pilot")
    assert cvstats.plan(dataset_pilot(flat), effect=EFFECT).power_model == "gaussian"
    with pytest.raises(ArgumentError, match="rho"):
        cvstats.plan(cube, effect=EFFECT, rho=0.1, power_model="pilot")
    with pytest.raises(ArgumentError, match="n_test"):
        cvstats.plan(cube, effect=EFFECT, n_test=20, power_model="pilot")
    for method in ("corrected_bootstrap_t", "bootstrap_t", "corrected_repeated_kfold_t"):
        with pytest.raises(ArgumentError, match="implemented for"):
            cvstats.plan(cube, effect=EFFECT, method=method, power_model="pilot")
