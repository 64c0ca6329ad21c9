"""cvstats.plan against Monte Carlo experiments (docs/theory.md §10, docs/planning.md).

Three kinds of checks:

* **problem 1 of the studies** (Nadeau & Bengio's simple linear regression, simulation 1,
  ``n = 200``, ``(n1, n2) = (9n/10, n/10)``, the contrast A − B; docs/studies.md §A): a pilot of
  independent datasets (a ``dataset`` dim: pooled variances, ``ρ`` from fit_rho) is planned for
  the corrected resampled t, the conservative Z (``M = 10``) and the corrected bootstrap
  (``R = 15``); on *other* datasets of the same problem the tests are run at
  ``J ∈ {5, 10, 15, 25}``, and the root mean square of their half-widths must agree with the
  planned half-width within the Monte Carlo error of both (the plan's own error from the pilot,
  the experiments' from their datasets). The half-width needs Lemma 1 only, which holds there.
  The power (at a difference of 4) and the size of the corrected resampled t come from the
  pilot power model (the default with >= 20 datasets, docs/theory.md §10) and must agree with
  the experiments' rejection rates within the binomial error of the rates and the plan's own
  error (its band); the Gaussian model (Lemma 2), which fails on this problem, must fail the
  same check;
* **Lemma 2 worlds** (Gaussian split means, Gaussian half differences with ``r = 0``), where the
  planned powers and sizes of the new methods must match simulated experiments within the
  binomial error, and the conservative Z's band for ``E[σ̂²_cz]`` from the smallest pilot
  (``J_h = M_p = 2``) must cover at about its level (docs/theory.md §10, "The bands");
* **the pilot power model in Gaussian worlds**: with one spread (Lemma 2) it agrees with the
  exact power and with the Gaussian model; with spreads varying across datasets and dataset
  effects growing with them it agrees with a direct simulation, where the Gaussian model does
  not.

Every test here runs in the full suite: the fast ones in about 30 s together, the slow one
(``@pytest.mark.slow``, 4000 datasets) in about a minute; ``pytest -m slow
tests/across/test_plan_montecarlo.py`` runs the slow one alone, ``-m "not slow"`` skips it.
The z-scores of problem 1 (docs/theory.md §10, "Measured agreement") come from
``power_z_scores`` (returns them per J).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import cvstats
from cvstats import designs
from cvstats.studies import run_regression

CFG, Q = "9n/10,n/10", "A-B"
N_EX, N2 = 200, 20
C = N2 / (N_EX - N2)
JS = (5, 10, 15, 25)
M_PLAN, R_PLAN = 10, 15


def f(value):
    return float(value.squeeze())


def simulate(n_datasets, tmp_path):
    """Split means of problem 1 (simulation 1) for ``n_datasets`` datasets."""
    return run_regression(1, n_datasets, tmp_path, seed=11, J=25, M=M_PLAN, R=R_PLAN, J_rep=25)


def pilot_cube(ds, datasets, J_p=25, M_p=M_PLAN, J_h=25):
    """A score cube of the contrast A − B on a conservative-Z design, one row per dataset."""
    d = designs.conservative_z(N_EX, N2, J=max(J_p, J_h), M=M_p, seed=0)
    block, half, side = (d[c].values for c in ("block", "half", "side"))
    keep, sources, seen = [], [], {}
    for i in range(d.sizes["split"]):
        key = ("main",) if block[i] == "main" else ("half", int(half[i]), int(side[i]))
        j = seen.get(key, 0)
        seen[key] = j + 1
        if j < (J_p if key[0] == "main" else J_h):
            keep.append(i)
            sources.append((*key, j))
    main = ds["main"].sel(config=CFG, quantity=Q).values[datasets]
    halves = ds["half"].sel(quantity=Q).values[datasets]
    columns = [main[:, s[1]] if s[0] == "main" else halves[:, s[1], s[2], s[3]] for s in sources]
    return cvstats.from_scores(
        np.stack(columns, axis=1)[..., None],
        greater_is_better=False,
        design=d.isel(split=keep),
        models=["A-B"],
        name="sq",
        extra_dims=["dataset"],
    )


def experiments(ds, datasets, J):
    """Per dataset: μ̂_J and the variance estimates of the three tests at J splits."""
    main = ds["main"].sel(config=CFG, quantity=Q).values[datasets, :J]
    halves = ds["half"].sel(quantity=Q).values[datasets, :M_PLAN, :, :J]
    reps = ds["rep"].sel(config=CFG, quantity=Q).values[datasets, :R_PLAN, :J]
    diff = halves[:, :, 0].mean(-1) - halves[:, :, 1].mean(-1)
    return {
        "estimate": main.mean(1),
        "corrected_resampled_t": (1 / J + C) * main.var(1, ddof=1),
        "conservative_z": (diff**2).sum(1) / (2 * M_PLAN),
        "corrected_bootstrap_t": (1 + J * C) * reps.mean(-1).var(1, ddof=1),
    }


def critical(method, J):
    if method == "conservative_z":
        return stats.norm.isf(0.025)
    return stats.t.isf(0.025, (J if method == "corrected_resampled_t" else R_PLAN) - 1)


def planned_square(ds, datasets, method, J, J_h=25):
    """Return the planned E[σ̂²] per pilot dataset (mean: the plan; spread: its error)."""
    main = ds["main"].sel(config=CFG, quantity=Q).values[datasets]
    if method != "conservative_z":
        return (1 / J + C) * main.var(1, ddof=1)
    halves = ds["half"].sel(quantity=Q).values[datasets, :M_PLAN, :, :J_h]
    tau2 = halves.var(-1, ddof=1).mean((1, 2))
    diff = halves[:, :, 0].mean(-1) - halves[:, :, 1].mean(-1)
    return (diff**2 / 2).mean(1) + (1 / J - 1 / J_h) * tau2


def rejection_rate(ds, datasets, J, delta):
    """The corrected resampled t's rejection rate at J splits when the truth is the null + δ."""
    truth = float(ds["truth"].sel(config=CFG, quantity=Q))
    mc = experiments(ds, datasets, J)
    shifted = np.abs(mc["estimate"] - truth + delta)
    return np.mean(shifted / np.sqrt(mc["corrected_resampled_t"]) > stats.t.isf(0.025, J - 1))


def power_z_scores(ds, res, mc_sets):
    """z-scores of the Monte Carlo rejection rates against the planned power and size.

    Per J of JS: the power at the plan's effect and the size, with the error of both sides:
    the binomial error of the Monte Carlo rate (at the planned rate) and the plan's own
    error from its pilot, read off its band (``power_ci``, ``size_ci``: ``z_{0.975}``
    standard errors over the pilot's datasets for the pilot model, docs/theory.md §10;
    the larger side when the band is clipped at 0 or 1). Returns
    ``{(J, kind): (mc, planned, z)}``.
    """
    z95 = stats.norm.isf(0.025)
    out = {}
    for J in JS:
        for kind, delta in (("power", res.effect), ("size", 0.0)):
            planned = f(getattr(res, kind).sel(J=J))
            low, high = getattr(res, f"{kind}_ci").sel(J=J).squeeze().values
            own = max(high - planned, planned - low) / z95
            rate = rejection_rate(ds, mc_sets, J, delta)
            se = np.sqrt(planned * (1 - planned) / len(mc_sets) + own**2)
            out[J, kind] = (rate, planned, (rate - planned) / se)
    return out


def check_power(ds, res, mc_sets, sigmas):
    for key, (rate, planned, z) in power_z_scores(ds, res, mc_sets).items():
        assert abs(z) < sigmas, (key, rate, planned, z)


def check_problem_one(ds, n_pilot, n_mc, sigmas):
    pilot_sets = np.arange(n_pilot)
    mc_sets = np.arange(n_pilot, n_pilot + n_mc)
    cube = pilot_cube(ds, pilot_sets)
    plans = {
        m: cvstats.plan(cube, method=m, effect=4.0)
        for m in ("corrected_resampled_t", "conservative_z", "corrected_bootstrap_t")
    }
    for J in JS:
        mc = experiments(ds, mc_sets, J)
        for method, res in plans.items():
            crit = critical(method, J)
            planned = f(res.half_width.sel(J=J))
            # the plan's formula, by hand from the pilot's datasets
            per_dataset = planned_square(ds, pilot_sets, method, J)
            expected_var = f(res.expected_variance.sel(J=J))
            assert expected_var == pytest.approx(per_dataset.mean(), rel=1e-9), (method, J)
            assert planned == pytest.approx(crit * np.sqrt(expected_var), rel=1e-12)
            # the experiments: the mean squared half-width against the planned square
            squares = crit**2 * mc[method]
            se = np.sqrt(squares.var(ddof=1) / n_mc + crit**4 * per_dataset.var(ddof=1) / n_pilot)
            gap = squares.mean() - planned**2
            assert abs(gap) < sigmas * se, (method, J, squares.mean(), planned**2, se)
    # the power and size of the corrected resampled t: the pilot model (the default with a
    # dataset dim of >= 20 datasets) against the experiments on the other datasets
    res = plans["corrected_resampled_t"]
    assert res.power_model == "pilot"
    assert plans["conservative_z"].power_model == "gaussian"
    check_power(ds, res, mc_sets, sigmas)
    # Lemma 2 fails on this contrast: under the Gaussian model the test would be conservative
    # (ρ̂ < ρ0) and far weaker; it is liberal, as the pilot model says, and the same check
    # rejects the Gaussian model's powers
    gaussian = cvstats.plan(cube, effect=4.0, power_model="gaussian")
    rate = rejection_rate(ds, mc_sets, 15, 0.0)
    assert f(gaussian.size.sel(J=15)) < 0.05 < rate
    assert f(res.size.sel(J=15)) > 0.05
    with pytest.raises(AssertionError):
        check_power(ds, gaussian, mc_sets, sigmas)
    return res


def test_problem_one_fast(tmp_path):
    ds = simulate(300, tmp_path)
    check_problem_one(ds, 150, 150, sigmas=4.5)


@pytest.mark.slow
def test_problem_one_slow(tmp_path):
    ds = simulate(4000, tmp_path)
    check_problem_one(ds, 2000, 2000, sigmas=4.0)


# ---------------------------------------------------------------------------
# Lemma 2 worlds: the planned powers of the conservative Z and the bootstraps
# ---------------------------------------------------------------------------

TAU2, K_TRUE, DELTA, REPS = 0.02, 0.15, 0.06, 40_000


def score_pilot(values, design):
    return cvstats.from_scores(
        np.asarray(values, dtype=float)[:, None],
        greater_is_better=False,
        design=design,
        models=["a-b"],
        name="sq",
    )


def exact_pilot_resampled(J_p=4):
    """Split means with sample variance exactly TAU2 (S² = τ²)."""
    base = np.linspace(-1.0, 1.0, J_p)
    design = designs.resampled(100, 10, J=J_p, seed=0)
    return score_pilot(np.sqrt(TAU2) * base / base.std(ddof=1), design)


@pytest.mark.parametrize("method", ["corrected_bootstrap_t", "bootstrap_t"])
def test_bootstrap_power_matches_gaussian_experiments(method):
    rho = K_TRUE / (1 + K_TRUE)
    res = cvstats.plan(exact_pilot_resampled(), method=method, effect=DELTA, rho=rho, R=[5, 15])
    c = 10 / 90 if method == "corrected_bootstrap_t" else 0.0  # n2/n1, or none
    rng = np.random.default_rng(3)
    for J in (5, 15):
        for R in (5, 15):
            # R + 1 resamplings of the same data: a shared data effect, independent split effects
            common = rng.normal(size=(REPS, 1)) * np.sqrt(K_TRUE * TAU2)
            own = rng.normal(size=(REPS, R + 1, J)) * np.sqrt(TAU2)
            est = common + own.mean(-1)  # (REPS, R + 1): μ̂_J and the R replicates
            var = (1 + J * c) * est[:, 1:].var(1, ddof=1)
            crit = stats.t.isf(0.025, R - 1)
            for delta, planned in ((DELTA, res.power), (0.0, res.size)):
                rate = np.mean(np.abs(est[:, 0] + delta) / np.sqrt(var) > crit)
                p = f(planned.sel(J=J, R=R))
                assert abs(rate - p) < 4 * np.sqrt(p * (1 - p) / REPS) + 1e-3, (J, R, delta)
            rms = np.sqrt(np.mean(crit**2 * var))
            assert rms == pytest.approx(f(res.half_width.sel(J=J, R=R)), rel=0.01)
            assert f(res.n_fits.sel(J=J, R=R)) == (R + 1) * J


def test_conservative_z_power_matches_gaussian_experiments():
    # a pilot whose halves give exactly τ'² = 0.03 and V'_{J_h} = 0.02 (σ2' = 0.02 - 0.03/3)
    J_h, M_p = 3, 2
    d = designs.conservative_z(100, 10, J=J_h, M=M_p, seed=0)
    tau2_h, v_h = 0.03, 0.02
    base = np.array([-1.0, 0.0, 1.0]) * np.sqrt(tau2_h)  # sample variance τ'²
    values, seen = [], {}
    shift = np.sqrt(v_h)  # side means ±shift/√2: (a - b)²/2 = shift² = v_h
    for i in range(d.sizes["split"]):
        if d["block"].values[i] == "main":
            values.append(np.sqrt(TAU2) * [-1.0, 0.0, 1.0][len(values) % 3])
            continue
        key = (int(d["half"].values[i]), int(d["side"].values[i]))
        j = seen.get(key, 0)
        seen[key] = j + 1
        sign = 1.0 if key[1] == 0 else -1.0
        values.append(sign * shift / np.sqrt(2) + base[j])
    res = cvstats.plan(score_pilot(values, d), method="conservative_z", effect=DELTA,
                       rho=K_TRUE / (1 + K_TRUE), M=[3, 10])  # fmt: skip
    sigma2_h = v_h - tau2_h / J_h
    rng = np.random.default_rng(5)
    z = stats.norm.isf(0.025)
    for J in (5, 15):
        v_true = TAU2 * (1 / J + K_TRUE)
        v_est = sigma2_h + tau2_h / J
        assert f(res.expected_variance.sel(J=J, M=3)) == pytest.approx(v_est)
        assert f(res.variance.sel(J=J, M=3)) == pytest.approx(v_true)
        for M in (3, 10):
            est = rng.normal(size=REPS) * np.sqrt(v_true)
            diffs = rng.normal(size=(REPS, M)) * np.sqrt(2 * v_est)  # r = 0, Gaussian
            var = (diffs**2).sum(1) / (2 * M)
            for delta, planned in ((DELTA, res.power), (0.0, res.size)):
                rate = np.mean(np.abs(est + delta) / np.sqrt(var) > z)
                p = f(planned.sel(J=J, M=M))
                assert abs(rate - p) < 4 * np.sqrt(p * (1 - p) / REPS) + 1e-3, (J, M, delta)
            assert np.sqrt(np.mean(z**2 * var)) == pytest.approx(
                f(res.half_width.sel(J=J, M=M)), rel=0.01
            )
            assert np.mean(z * np.sqrt(var)) == pytest.approx(
                f(res.mean_half_width.sel(J=J, M=M)), rel=0.01
            )
            assert f(res.n_fits.sel(J=J, M=M)) == J * (1 + 2 * M)


def cz_world(rng, draws, sigma2_h, tau2_h, J_h=2, M_p=2):
    """``draws`` pilots on designs.conservative_z(J=J_h, M=M_p) in a Lemma 2 world (r = 0).

    Each half holds a Gaussian half effect of variance σ2' (independent halves: r = 0) and
    its inner split means add independent Gaussian noise of variance τ'². Returns the score
    cube (an extra ``draw`` dim: one pilot per draw, planned at once) and, per draw, the
    pilot's ``V̂'_{J_h}`` and ``τ̂'²``.
    """
    d = designs.conservative_z(100, 10, J=J_h, M=M_p, seed=0)
    block, half, side = (d[c].values for c in ("block", "half", "side"))
    effect = rng.normal(size=(draws, M_p, 2)) * np.sqrt(sigma2_h)
    columns, inner = [], {}
    for i in range(d.sizes["split"]):
        if block[i] == "main":
            columns.append(rng.normal(size=draws))
            continue
        key = (int(half[i]), int(side[i]))
        columns.append(effect[:, key[0], key[1]] + rng.normal(size=draws) * np.sqrt(tau2_h))
        inner.setdefault(key, []).append(columns[-1])
    means = np.array([[np.mean(inner[m, s], 0) for s in (0, 1)] for m in range(M_p)])
    tau2 = np.mean([np.var(v, 0, ddof=1) for v in inner.values()], 0)
    v_h = ((means[:, 0] - means[:, 1]) ** 2 / 2).mean(0)
    cube = cvstats.from_scores(
        np.stack(columns, axis=1)[..., None],
        greater_is_better=False,
        design=d,
        models=["a-b"],
        name="sq",
        extra_dims=["draw"],
    )
    return cube, v_h, tau2


@pytest.mark.parametrize("sigma2_h", [0.0, 0.2, 1.0])
def test_conservative_z_band_covers_with_a_small_pilot(sigma2_h):
    # the recommended-minimum pilot (J_h = 2, M_p = 2): σ̂2' is clipped at 0 in 25-55% of the
    # draws; the band for E[σ̂²_cz] = σ2' + τ'²/J must still cover at about 1 - alpha
    draws, J_h, tau2_h = 2000, 2, 1.0
    cube, v_h, tau2 = cz_world(np.random.default_rng(21), draws, sigma2_h, tau2_h)
    res = cvstats.plan(cube, method="conservative_z", J=15, M=2, budget_fits=250)
    z = stats.norm.isf(0.025)
    floor = 0.95 - 4 * np.sqrt(0.05 * 0.95 / draws)
    for J in (2, 15, 50):
        truth = sigma2_h + tau2_h / J
        band = res.half_width_ci.sel(J=J, M=2).squeeze("model").transpose("draw", "ci_bound")
        lo, hi = (band.values[:, i] ** 2 / z**2 for i in (0, 1))
        assert np.mean((lo <= truth) & (truth <= hi)) >= floor, J
        # the point estimate, through the positive part, is biased upward
        point = res.expected_variance.sel(J=J, M=2).values.ravel()
        np.testing.assert_allclose(point, np.maximum(v_h - tau2 / J_h, 0) + tau2 / J)
        if sigma2_h > 0 and J > J_h:
            assert point.mean() > truth
            # Satterthwaite's band (τ'²'s degrees of freedom alone once σ̂2' is clipped) misses
            b = 1 / J - 1 / J_h
            nu = (v_h + b * tau2) ** 2 / (v_h**2 / 2 + b**2 * tau2**2 / 4)
            nu = np.where(v_h < tau2 / J_h, 4.0, nu)
            with np.errstate(divide="ignore"):  # a tiny ν: an infinite upper end
                old_lo = point * nu / stats.chi2.isf(0.025, nu)
                old_hi = point * nu / stats.chi2.ppf(0.025, nu)
            if J == 50:
                assert np.mean((old_lo <= truth) & (truth <= old_hi)) < 0.9


# ---------------------------------------------------------------------------
# the pilot power model in Gaussian worlds: homogeneous (Lemma 2) and heterogeneous
# ---------------------------------------------------------------------------

WORLD_C, WORLD_DELTA, WORLD_JS = 10 / 90, 0.8, (5, 10, 20, 40)  # J_p = 10: 20, 40 beyond it


def lemma2_world(rng, n):
    """Dataset effects A_d ~ N(0, 0.15) and one spread τ_d = 1: Lemma 2 (k = 0.15)."""
    return np.sqrt(0.15) * rng.normal(size=n), np.ones(n)


def heterogeneous_world(rng, n):
    """Log-normal spreads τ_d, and dataset effects that grow with them."""
    tau = np.exp(0.8 * rng.normal(size=n) - 0.32)
    return 0.5 * (tau - 1.0) + 0.2 * rng.normal(size=n), tau


def world_pilots(world, rng, n_data=300, J_p=10, draws=10):
    """``draws`` pilots of ``n_data`` datasets: split means ``A_d + τ_d N(0, 1)``."""
    effects, tau = world(rng, n_data * draws)
    x = effects[:, None] + tau[:, None] * rng.normal(size=(n_data * draws, J_p))
    x = x.reshape(draws, n_data, J_p).transpose(1, 0, 2)  # (dataset, draw, split)
    return cvstats.from_scores(
        x[..., None],
        greater_is_better=False,
        design=designs.resampled(100, 10, J=J_p, seed=0),
        models=["a-b"],
        name="sq",
        extra_dims=["dataset", "draw"],
    )


def world_rate(world, rng, J, delta, n=400_000):
    """The corrected resampled t's rejection rate on ``n`` fresh datasets of the world."""
    effects, tau = world(rng, n)
    mean = effects + delta + tau * rng.normal(size=n) / np.sqrt(J)
    s2 = tau**2 * rng.chisquare(J - 1, size=n) / (J - 1)
    return np.mean(np.abs(mean) / np.sqrt((1 / J + WORLD_C) * s2) > stats.t.isf(0.025, J - 1))


def pilot_errors(res, J):
    """Per draw: the planned power and size and their standard errors from the pilot."""
    z95 = stats.norm.isf(0.025)
    out = {}
    for kind in ("power", "size"):
        value = getattr(res, kind).sel(J=J).squeeze().values
        band = getattr(res, f"{kind}_ci").sel(J=J).squeeze().transpose("draw", "ci_bound")
        low, high = band.values.T
        out[kind] = (value, np.maximum(high - value, value - low) / z95)
    return out


def check_world(planned, se, target, target_se, J, J_p=10):
    """The pilot model against the truth: each pilot within 4 of its errors, and their mean.

    Up to ``J_p`` the model is unbiased (random subsets of the pilot's splits); beyond, the
    mixture of noncentral t's is an approximation whose bias, measured in the heterogeneous
    world below over 80 pilots, is +0.01 to +0.02 (0.25 to 0.4 of a pilot's standard error)
    at J = 20 and 40: there each pilot and the mean get an allowance of 0.02 (documented in
    docs/theory.md §10). Each pilot is held to 4.5 of its errors (80 comparisons per
    test), their mean to 4.
    """
    allowance = 0.0 if J <= J_p else 0.02
    gap = planned - target
    assert (np.abs(gap) < 4.5 * np.sqrt(se**2 + target_se**2) + allowance).all(), (J, gap, se)
    mean_se = np.sqrt(np.mean(se**2) / se.size + target_se**2)
    assert abs(gap.mean()) < 4 * mean_se + allowance, (J, gap.mean(), mean_se)
    return mean_se


def test_pilot_and_gaussian_models_agree_in_a_lemma2_world():
    lemma2_checks(31)


def world_plans(world, seed):
    """The world's pilots planned by both power models; the generator, for more draws."""
    rng = np.random.default_rng(seed)
    cube = world_pilots(world, rng)
    plans = [
        cvstats.plan(cube, effect=WORLD_DELTA, budget_fits=40, power_model=model)
        for model in ("pilot", "gaussian")
    ]
    assert [p.power_model for p in plans] == ["pilot", "gaussian"]
    return rng, *plans


def lemma2_checks(seed):
    _, pilot, gaussian = world_plans(lemma2_world, seed)
    k = 0.15
    for J in WORLD_JS:
        # the truth: Lemma 2 with τ² = 1, k = 0.15 (docs/theory.md §10, "Power under Lemma 2")
        crit, nu = stats.t.isf(0.025, J - 1), J - 1
        v_true, v_est = 1 / J + k, 1 / J + WORLD_C
        q, lam = crit * np.sqrt(v_est / v_true), WORLD_DELTA / np.sqrt(v_true)
        truth = {
            "power": stats.nct.sf(q, nu, lam) + stats.nct.sf(q, nu, -lam),
            "size": 2 * stats.t.sf(q, nu),
        }
        for kind, (planned, se) in pilot_errors(pilot, J).items():
            check_world(planned, se, truth[kind], 0.0, J)
            # the Gaussian model, from the same pilots, within the pilot model's error
            other = getattr(gaussian, kind).sel(J=J).squeeze().values
            assert (np.abs(planned - other) < 4 * se).all(), (J, kind, planned, other)


def test_pilot_model_matches_a_heterogeneous_world_where_gaussian_fails():
    heterogeneous_checks(32)


def heterogeneous_checks(seed):
    rng, pilot, gaussian = world_plans(heterogeneous_world, seed)
    n_sim = 400_000
    for J in WORLD_JS:
        for kind, (planned, se) in pilot_errors(pilot, J).items():
            delta = WORLD_DELTA if kind == "power" else 0.0
            rate = world_rate(heterogeneous_world, rng, J, delta, n_sim)
            mean_se = check_world(planned, se, rate, np.sqrt(rate * (1 - rate) / n_sim), J)
            # Lemma 2's one spread: on average over the pilots, far too low a size and power
            # by the yardstick the pilot model meets (one pilot's fit_rho may happen to land
            # near the size: the Gaussian model's numbers vary much from pilot to pilot here)
            other = getattr(gaussian, kind).sel(J=J).squeeze().values
            assert rate - other.mean() > 4 * mean_se, (J, kind, other, rate)
