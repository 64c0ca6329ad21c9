import numpy as np
import pytest
import xarray as xr
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression

import cvstats
from cvstats import inference as methods
from cvstats import studies as st
from cvstats.errors import ArgumentError
from cvstats.studies._splits import dataset_rngs
from cvstats.studies.regression import (
    example_losses,
    mean_from_sums,
    mean_loss_from_sums,
    ols_from_sums,
    regression_problem,
    run_regression,
    true_errors,
)

SIZES = {"J": 6, "M": 4, "R": 3, "J_rep": 4}


def _data_and_splits(problem, seed=0, dataset=0, **sizes):
    r_data, r_split = dataset_rngs(seed, problem.simulation, dataset)
    data = problem.generate(r_data)
    return data, st.draw_study_splits(r_split, problem.n, **sizes)


# ---------------------------------------------------------------- learners


def test_batched_learners_equal_sklearn_split_by_split():
    problem = regression_problem(1)
    data, sp = _data_and_splits(problem, **SIZES)
    stats = problem.stats(data[None])
    for c in st.configurations(problem.n):
        test, train = sp.main_test[c.name][None], sp.main_train[c.name][None]
        tsum = st._splits.gather_sums(stats, test)
        trsum = st._splits.gather_sums(stats, train)
        got = problem.split_means(data[None], test, train, tsum, trsum)[0]  # (J, 2)
        per_example = example_losses(data[None], test, train)[0]  # (J, n2, 2)
        for j in range(3):
            X, y = data[:, :1], data[:, 1]
            tr, te = train[0, j], test[0, j]
            ols = LinearRegression().fit(X[tr], y[tr])
            dummy = DummyRegressor().fit(X[tr], y[tr])
            loss_b = (y[te] - ols.predict(X[te])) ** 2
            loss_a = (y[te] - dummy.predict(X[te])) ** 2
            np.testing.assert_allclose(loss_a, (y[te] - np.mean(y[tr])) ** 2, rtol=1e-12)
            np.testing.assert_allclose(per_example[j, :, 0], loss_a, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(per_example[j, :, 1], loss_b, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(got[j], [loss_a.mean(), loss_b.mean()], rtol=1e-10)


def test_closed_forms_on_sums():
    rng = np.random.default_rng(1)
    x = rng.normal(size=50)
    y = 3 + 2 * x + rng.normal(size=50)
    sums = np.array([50, x.sum(), y.sum(), (x * x).sum(), (x * y).sum(), (y * y).sum()])
    a, b = ols_from_sums(sums)
    np.testing.assert_allclose([b, a], np.polyfit(x, y, 1), rtol=1e-12)
    np.testing.assert_allclose(mean_from_sums(sums), [y.mean(), 0.0])
    np.testing.assert_allclose(
        mean_loss_from_sums(np.array([a, b]), sums), np.mean((y - a - b * x) ** 2), rtol=1e-10
    )


def test_true_errors_formula():
    t = true_errors(100, {"var_y": 97.0, "beta": 1.0, "var_x": 1.0})
    assert t["A"] == pytest.approx(101 / 100 * 98)
    assert t["B"] == pytest.approx(101 / 100 * 98 / 97 * 97)
    assert t["A-B"] == pytest.approx(t["A"] - t["B"])


def test_unknown_simulation_is_rejected():
    with pytest.raises(ArgumentError, match="`simulation` must be one of"):
        regression_problem(7)


# ---------------------------------------------------------------- designs


def test_designs_per_configuration():
    n = 200
    problem = regression_problem(1)
    _, sp = _data_and_splits(problem, **SIZES)
    h, t = n // 2, n // 10
    assert [(c.n1, c.n2) for c in st.configurations(n)] == [(h, h), (h, t), (n - t, t)]
    for c in st.configurations(n):
        te, tr = sp.main_test[c.name], sp.main_train[c.name]
        assert te.shape == (SIZES["J"], c.n2) and tr.shape == (SIZES["J"], c.n1)
        assert sp.rep_test[c.name].shape == (SIZES["R"], SIZES["J_rep"], c.n2)
        both = np.concatenate([te, tr], axis=1)
        # train and test partition the pool of the first n1 + n2 examples
        assert (np.sort(both, axis=1) == np.arange(c.pool)).all()
    # (n/2, n/10): the dataset is cut once to its first 0.6 n examples
    cut = st.configurations(n)[1]
    assert cut.pool == int(0.6 * n)
    assert sp.main_test[cut.name].max() < 0.6 * n and sp.rep_train[cut.name].max() < 0.6 * n
    # halves are disjoint; inner splits (test n/10, train n/2 - n/10) stay inside their half
    assert sp.half_test.shape == (SIZES["M"], 2, SIZES["J"], t)
    assert sp.half_train.shape == (SIZES["M"], 2, SIZES["J"], h - t)
    for m in range(SIZES["M"]):
        assert not set(sp.halves[m, 0]) & set(sp.halves[m, 1])
        for s in (0, 1):
            inside = np.concatenate([sp.half_test[m, s], sp.half_train[m, s]], axis=1)
            assert (np.sort(inside, axis=1) == np.sort(sp.halves[m, s])).all()
    # 5x2: side 1 swaps the roles of the halves
    assert (sp.five_test[:, 0] == sp.five_train[:, 1]).all()


def _cube_of_one_dataset(problem, seed, J, M, R, config):
    data, sp = _data_and_splits(problem, seed=seed, J=J, M=M, R=R, J_rep=J)
    design = st.to_design(sp, problem.n, config, J=J, M=M, R=R)
    losses = np.full((design.sizes["split"], problem.n, 2), np.nan)
    for s in range(design.sizes["split"]):
        tr = np.flatnonzero(design.train[s].values)
        te = np.flatnonzero(design.test[s].values)
        losses[s, te] = example_losses(data[None], te[None], tr[None])[0]
    return cvstats.from_arrays(losses, design=design, models=["A", "B"], name="loss")


def test_study_equals_cvstats_methods_on_the_full_cube():
    problem = regression_problem(1, n=60)
    J, M, R = 5, 3, 3
    batch = st.compute_batch(problem, 3, [0], J=J, M=M, R=R, J_rep=J)
    res = st.method_results(batch, J=J, M=M, R=R)
    for config in st.CONFIGS[:2]:
        cube = _cube_of_one_dataset(problem, 3, J, M, R, config)
        cvstats.validate(cube)
        got = res.sel(dataset=0, config=config, quantity=["A", "B"])
        for name, func, kw in [
            ("resampled_t", methods.resampled_t, {}),
            ("corrected_resampled_t", methods.corrected_resampled_t, {}),
            ("conservative_z", methods.conservative_z, {}),
            ("bootstrap_t", methods.bootstrap_t, {}),
            ("corrected_bootstrap_t", methods.corrected_bootstrap_t, {}),
            ("dietterich_5x2cv_t4", methods.dietterich_5x2cv, {"variant": "t4"}),
            ("holdout_t", methods.holdout_t, {"split": 0}),
        ]:
            want = func(cube, **kw)
            row = got.sel({"method": name})
            np.testing.assert_allclose(row.estimate.values, want.estimate.values, rtol=1e-9)
            np.testing.assert_allclose(row.stderr.values, want.stderr.values, rtol=1e-7)


def test_rho_fit_equals_cvstats_fit_rho():
    problem = regression_problem(1, n=60)
    J = 4
    batch = st.compute_batch(problem, 5, range(12), J=J, M=2, R=2, J_rep=J)
    rho, _ = st.rho_r_fit(batch, J_rho=J, M_r=2, J_r=J)
    parts = []
    for d in range(12):
        r_data, r_split = dataset_rngs(5, problem.simulation, d)
        data = problem.generate(r_data)
        sp = st.draw_study_splits(r_split, problem.n, J=J, M=2, R=2, J_rep=J)
        te, tr = sp.main_test["n/2,n/2"], sp.main_train["n/2,n/2"]
        losses = np.full((J, problem.n, 2), np.nan)
        for j in range(J):
            losses[j, te[j]] = example_losses(data[None], te[j][None], tr[j][None])[0]
        parts.append(losses)
    test_mask = ~np.isnan(np.stack(parts)[..., 0])
    cube = cvstats.from_arrays(
        np.stack(parts),
        test_mask,
        n_train=problem.n // 2,
        extra_dims=["dataset"],
        models=["A", "B"],
    )
    want = cvstats.fit_rho(cube)
    got = rho.sel(config="n/2,n/2", quantity=["A", "B"])
    np.testing.assert_allclose(got.pi.values, want.rho.values, rtol=1e-8)
    np.testing.assert_allclose(got.beta.values, want.mu.values, rtol=1e-10)


# ---------------------------------------------------------------- runner


def test_reproducible_and_independent_of_batching_and_jobs(tmp_path):
    kw = dict(n=40, **SIZES)
    a = run_regression(2, 7, tmp_path / "a", batch_size=3, **kw)
    b = run_regression(2, 7, tmp_path / "b", batch_size=7, **kw)
    c = run_regression(2, 7, tmp_path / "c", batch_size=2, n_jobs=2, **kw)
    for other in (b, c):
        xr.testing.assert_identical(a.drop_attrs(), other.drop_attrs())
    assert len(list((tmp_path / "a").glob("*.nc"))) == 3


def test_resume_after_interruption(tmp_path):
    kw = dict(n=40, batch_size=2, **SIZES)
    first = run_regression(1, 6, tmp_path, **kw)
    files = sorted(tmp_path.glob("*.nc"))
    assert len(files) == 3
    stamps = {f: f.stat().st_mtime_ns for f in files}
    files[1].unlink()
    files[2].write_bytes(b"truncated")  # a corrupt batch is recomputed too, with a warning
    with pytest.warns(st.BatchFileWarning, match=f"{files[2].name}' cannot be read"):
        again = run_regression(1, 6, tmp_path, **kw)
    xr.testing.assert_identical(first.drop_attrs(), again.drop_attrs())
    assert (tmp_path / (files[2].name + ".corrupt")).read_bytes() == b"truncated"  # kept aside
    assert files[0].stat().st_mtime_ns == stamps[files[0]]  # complete batch skipped
    assert files[1].exists()


def test_changed_parameters_recompute(tmp_path):
    a = run_regression(1, 2, tmp_path, n=40, **SIZES)
    b = run_regression(1, 2, tmp_path, n=40, seed=1, **SIZES)
    assert not np.allclose(a.main.values, b.main.values)


def test_method_results_size_checks(tmp_path):
    ds = run_regression(1, 2, tmp_path, n=40, **SIZES)
    with pytest.raises(ArgumentError, match="`M` = 9 exceeds the 4 half-splits"):
        st.method_results(ds, J=4, M=9, R=3)
    res = st.method_results(ds, J=6, M=4, R=3)  # J > J_rep: no bootstrap
    assert res.estimate.sel({"method": "bootstrap_t"}).isnull().all()


# ---------------------------------------------------------------- statistics


@pytest.fixture(scope="module")
def sim1(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim1")
    return run_regression(1, 300, out, seed=11, J=15, M=10, R=15, J_rep=15)


def test_analytic_truth_inside_monte_carlo_interval(sim1):
    mc = st.mc_truth(sim1, confidence_level=0.999)
    inside = (mc["lower"] <= sim1["truth"]) & (sim1["truth"] <= mc["upper"])
    assert bool(inside.all()), (mc["mean"] - sim1["truth"]).values


def test_sizes_at_the_truth(sim1):
    res = st.method_results(sim1, J=15, M=10, R=15)
    rates = st.rejection_rates(res, st.targets(sim1, res), alpha=0.1)
    N = 300
    sd = np.sqrt(0.1 * 0.9 / N)
    # (9n/10, n/10): ρ_A ≈ ρ0 = 0.1 (Table 2 of Nadeau & Bengio), so the corrected
    # resampled t has size close to α
    crt = float(
        rates.sel({"config": "9n/10,n/10", "quantity": "A", "method": "corrected_resampled_t"})
    )
    assert abs(crt - 0.1) < 3 * sd
    # the conservative Z is not liberal (within binomial error: at (n/2, n/10) its
    # variance, from (2n/5, n/10) inside halves, is close to the numerator's), and
    # clearly conservative at (n/2, n/2)
    cz = rates.sel({"method": "conservative_z"})
    assert bool((cz <= 0.1 + 3 * sd).all())
    assert bool((cz.sel(config="n/2,n/2") <= 0.1).all())
    # the resampled t is liberal (political ratio 1 + Jρ/(1-ρ))
    assert bool((rates.sel({"method": "resampled_t"}) > 0.2).all())


def test_rejection_rates_over_a_grid_and_table(sim1, tmp_path):
    res = st.method_results(sim1, J=15, M=10, R=15)
    grid = st.mu0_grid(sim1, res, width=3, points=7)
    rates = st.rejection_rates(res, grid, alpha=0.1)
    assert rates.dims == ("point", "config", "quantity", "method")
    assert rates.sel({"config": "9n/10,n/10", "method": "combined_5x2cv_f"}).isnull().all()
    f = rates.sel({"config": "n/2,n/2", "method": "combined_5x2cv_f"})
    assert bool(f.notnull().all())
    # power rises away from the truth
    crt = rates.sel({"config": "n/2,n/2", "quantity": "A", "method": "corrected_resampled_t"})
    assert crt.isel(point=0) > crt.isel(point=3) < crt.isel(point=6)
    table = st.study_table({"Simulation 1": sim1}, J_rho=15, M_r=10)
    text = str(table)
    assert "ρ_A(100,100)" in text and "r_A-B" in text
    fig = st.power_figure(rates, grid, truth_ci=st.mc_truth(sim1), path=tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 0
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_j_and_m_studies(sim1):
    js = st.j_study(sim1, (5, 10, 15, 25))
    assert list(js["J"].values) == [5, 10, 15]  # the run has J = 15
    resampled = js.sel({"quantity": "A", "method": "resampled_t"}).values
    assert resampled[0] < resampled[-1]  # liberal, more so as J grows (1 + Jρ/(1-ρ))
    ms = st.m_study(sim1, (5, 10, 20))
    assert list(ms["M"].values) == [5, 10]
    assert ms.dims == ("M", "config", "quantity")


@pytest.mark.slow
def test_analytic_truths_of_all_four_simulations(tmp_path):
    """n1μ_A, n1μ_B (docs/studies.md §A) against the Monte Carlo means, Bonferroni over 4 × 12."""
    from scipy import stats as sps

    crit = sps.norm.isf(0.05 / 2 / 48)  # 4 simulations x (9 cells + 3 common targets)
    for sim in (1, 2, 3, 4):
        ds = run_regression(sim, 300, tmp_path / f"s{sim}", seed=5, J=15, M=2, R=2, J_rep=2)
        mc = st.mc_truth(ds)
        z = (mc["mean"] - ds["truth"]) / (mc["sd"] / np.sqrt(300))
        zh = (mc["half_mean"] - ds["truth_half"]) / (mc["half_sd"] / np.sqrt(300))
        assert float(np.abs(z).max()) < crit, (sim, z.values)
        assert float(np.abs(zh).max()) < crit, (sim, zh.values)
