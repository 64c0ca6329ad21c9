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
    assert int(f(res.J_chosen)) == cvstats.across.plan.DEFAULT_J


def test_a_budget_too_small_says_so_and_reports_the_budget():
    res = cvstats.plan(score_pilot(DIFFS), target_width=0.03, budget_fits=4)
    assert np.isnan(f(res.J_width)) and int(f(res.J_chosen)) == 4
    assert "cannot be met within the budget of 4 fits" in res.verdict()
    assert not res.to_frame()["meets_target"].any()
    met = cvstats.plan(score_pilot(DIFFS), target_width=0.03, budget_fits=100)
    assert int(f(met.J_width)) == int(f(met.J_chosen)) < 100
    assert "is met from J = " in met.verdict()


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
        ({"method": "conservative_z"}, "method"),
        ({"budget_fits": 1}, "budget_fits"),
        ({"budget_fits": 2.5}, "budget_fits"),
        ({"J": 1}, "`J`"),
        ({"rho": 1.0}, "rho"),
        ({"rho": -0.1}, "rho"),
        ({"alpha": 1.5}, "alpha"),
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
    assert int(f(far.J_chosen)) == far.search_end
    assert "cannot be met with n = 100 examples" in far.verdict()
