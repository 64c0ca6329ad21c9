"""fit_rho and fit_r across many datasets (docs/theory.md §3, §4 method 4, §5)."""

import numpy as np
import pytest
import xarray as xr

import cvstats
from cvstats import CubeError, CvstatsTypeError, DesignError, designs
from cvstats.across.rho import fit_r, fit_rho
from cvstats.errors import ArgumentError
from cvstats.kernels.lemma1 import lemma1_fit, political_ratio_from_rho
from cvstats.kernels.political import political_ratio_corrected

N_DATA, J, N, N_TEST = 400, 10, 20, 5  # n1 = 15, n2 = 5, ρ0 = 0.25
RHOS = {"a": 0.4, "b": 0.1, "c": 0.25}
MEANS = {"a": 0.3, "b": -0.1, "c": 0.0}
SIGMA1 = {"a": 0.04, "b": 0.01, "c": 0.02}


def equicorrelated_means(rng, n_data, J, models):
    """Split means (dataset, split, model): mean, variance σ1 and correlation ρ per model."""
    out = np.empty((n_data, J, len(models)))
    for k, m in enumerate(models):
        rho, s1 = RHOS[m], SIGMA1[m]
        common = rng.normal(size=(n_data, 1))
        own = rng.normal(size=(n_data, J))
        out[:, :, k] = MEANS[m] + np.sqrt(s1) * (np.sqrt(rho) * common + np.sqrt(1 - rho) * own)
    return out


@pytest.fixture(scope="module")
def cube():
    """Every test example of split j carries the loss μ_j: the split means are known."""
    rng = np.random.default_rng(2024)
    models = list(RHOS)
    mu = equicorrelated_means(rng, N_DATA, J, models)
    d = designs.resampled(N, N_TEST, J=J, seed=0)
    losses = np.broadcast_to(mu[:, :, None, :], (N_DATA, J, N, len(models)))
    return cvstats.from_arrays(losses, design=d, extra_dims=["dataset"], models=models)


def covers(ci, value):
    return bool((ci.sel(ci_bound="lower") <= value) & (value <= ci.sel(ci_bound="upper")))


def test_fit_rho_recovers_known_rho(cube):
    fit = fit_rho(cube)
    for m in RHOS:
        one = fit.sel(model=m)
        assert covers(one.rho_ci, RHOS[m]), (m, one.rho_ci.values)
        assert covers(one.mu_ci, MEANS[m]), (m, one.mu_ci.values)
        assert covers(one.delta_ci, SIGMA1[m]), (m, one.delta_ci.values)
    # interval widths are sensible for N = 400 datasets
    width = fit.rho_ci.diff("ci_bound").squeeze("ci_bound")
    assert float(width.max()) < 0.15


def test_fit_rho_outputs(cube):
    fit = fit_rho(cube, alpha=0.1)
    assert float(fit.rho0) == pytest.approx(N_TEST / N)  # n2 / (n1 + n2)
    assert fit.attrs["J"] == J and fit.attrs["n1"] == N - N_TEST and fit.attrs["n2"] == N_TEST
    assert fit.attrs["N"] == N_DATA and fit.attrs["alpha"] == 0.1
    assert fit["rho_ci"].dims == ("model", "ci_bound")
    assert fit.model.values.tolist() == list(RHOS)
    expected = political_ratio_corrected(J, fit.rho.values, N - N_TEST, N_TEST)
    np.testing.assert_allclose(fit.political_ratio, expected, rtol=1e-12)
    bounds = political_ratio_corrected(J, fit.rho_ci.values, N - N_TEST, N_TEST)
    np.testing.assert_allclose(fit.political_ratio_ci, bounds, rtol=1e-12)
    # ρ > ρ0 liberal, ρ < ρ0 conservative
    assert (
        float(fit.political_ratio.sel(model="a")) > 1 > float(fit.political_ratio.sel(model="b"))
    )


def test_fit_rho_matches_lemma1_kernel(cube):
    fit = fit_rho(cube)
    means = cube.mean("example").sel(split=cube.split[cube.block == "main"])
    for m in RHOS:
        k = lemma1_fit(means.sel(model=m).values)
        np.testing.assert_allclose(
            [fit.mu.sel(model=m), fit.delta.sel(model=m), fit.rho.sel(model=m)],
            k.theta,
            rtol=1e-12,
        )
        np.testing.assert_allclose(fit.rho_se.sel(model=m), k.stderr[2], rtol=1e-12)


def test_vectorized_over_models_equals_per_model(cube):
    fit = fit_rho(cube)
    for m in RHOS:
        one = fit_rho(cube.sel(model=[m]))
        xr.testing.assert_allclose(fit.sel(model=[m]).dataset, one.dataset)


def test_vectorized_over_extra_dims_equals_loop(cube):
    stacked = xr.concat(
        [cube.isel(dataset=slice(0, 200)), cube.isel(dataset=slice(200, 400))],
        dim="setting",
    ).transpose("setting", "dataset", ...)
    fit = fit_rho(stacked)
    for s, part in enumerate([slice(0, 200), slice(200, 400)]):
        xr.testing.assert_allclose(
            fit.isel(setting=s).dataset, fit_rho(cube.isel(dataset=part)).dataset
        )


def test_formula_path_equals_contrasts(cube):
    by_formula = fit_rho("loss ~ model", cube)
    by_cube = fit_rho(cvstats.contrasts("loss ~ model", cube))
    xr.testing.assert_identical(by_formula.dataset, by_cube.dataset)
    xr.testing.assert_identical(fit_rho(cube, "loss ~ model").dataset, by_formula.dataset)
    assert by_formula.contrast.values.tolist() == ["Intercept", "model[T.b]", "model[T.c]"]
    assert by_formula.attrs["formula"] == "loss ~ model"
    # the intercept contrast is model a
    np.testing.assert_allclose(
        by_formula.rho.sel(contrast="Intercept"), fit_rho(cube).rho.sel(model="a")
    )
    dataset_of_cubes = cube.to_dataset()
    xr.testing.assert_allclose(
        fit_rho("loss ~ model", dataset_of_cubes).dataset.drop_attrs(),
        by_formula.dataset.drop_attrs(),
    )


def test_lazy_on_dask(cube):
    pytest.importorskip("dask")
    lazy = fit_rho(cube.chunk({"dataset": 100}))
    assert lazy.rho.chunks is not None
    xr.testing.assert_allclose(lazy.compute().dataset, fit_rho(cube).dataset)


def test_loss_of_test_example_only_gives_rho0():
    """If the loss depends only on the test example, ρ = n2/(n1 + n2) (docs/theory.md §3).

    Each dataset has its own splits; n_train < n - n_test cuts the data once to
    n1 + n2 = 20 examples (docs/theory.md §6), so ρ0 = 8/20 and not 8/40.
    """
    rng = np.random.default_rng(5)
    per_dataset = [designs.resampled(40, 8, J=6, n_train=12, seed=i) for i in range(300)]
    masks = np.stack([d.test.values for d in per_dataset])  # (dataset, split, example)
    x = rng.normal(size=(300, 1, 40, 1))
    losses = np.broadcast_to(x, (300, 6, 40, 1))
    stacked = cvstats.from_arrays(losses, masks, design=per_dataset[0], extra_dims=["dataset"])
    fit = fit_rho(stacked)
    assert float(fit.rho0) == pytest.approx(0.4)
    assert covers(fit.rho_ci.squeeze(), 0.4)
    assert covers(fit.political_ratio_ci.squeeze(), 1.0)


def test_ratio_interval_clips_rho_to_zero():
    rng = np.random.default_rng(9)
    d = designs.resampled(10, 2, J=5, seed=0)
    mu = rng.normal(size=(30, 5))  # independent split means: ρ = 0
    losses = np.broadcast_to(mu[:, :, None, None], (30, 5, 10, 1))
    fit = fit_rho(cvstats.from_arrays(losses, design=d, extra_dims=["dataset"]))
    fit = fit.squeeze("model")
    low = float(fit.rho_ci.sel(ci_bound="lower"))
    assert low < 0
    floor = political_ratio_corrected(5, 0.0, 8, 2)
    assert float(fit.political_ratio_ci.sel(ci_bound="lower")) == pytest.approx(floor)


def test_fit_rho_errors(cube):
    single = cube.isel(dataset=0, drop=True)
    with pytest.raises(CubeError, match="fit_rho needs many independent datasets along `dataset`"):
        fit_rho(single)
    with pytest.raises(DesignError, match="at least 2 independent datasets"):
        fit_rho(cube.isel(dataset=[0]))
    with pytest.raises(ArgumentError, match="core dim"):
        fit_rho(cube, dataset_dim="split")
    with pytest.raises(CubeError, match="pass dataset_dim= one of \\['dataset'\\]"):
        fit_rho(cube, dataset_dim="replicate")
    with pytest.raises(CvstatsTypeError, match="needs a formula"):
        fit_rho(cube.to_dataset())
    with pytest.raises(CvstatsTypeError, match="needs the data"):
        fit_rho("loss ~ model")
    with pytest.raises(DesignError, match="at least 2 splits in the main block"):
        fit_rho(cube.isel(split=[0]))


def test_fit_rho_needs_a_main_block():
    d = designs.five_by_two(20, seed=0)
    losses = np.random.default_rng(0).random((3, 10, 20, 1))
    cube = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])
    with pytest.raises(DesignError, match="needs the 'main' block"):
        fit_rho(cube)


# ---------------------------------------------------------------------------
# fit_r
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cz_cube():
    d = designs.conservative_z(30, 4, J=2, M=3, seed=1)
    rng = np.random.default_rng(7)
    losses = rng.gamma(2.0, 1.0, size=(6, d.sizes["split"], 30, 2))
    losses += rng.normal(size=(6, d.sizes["split"], 1, 1))
    return cvstats.from_arrays(losses, design=d, extra_dims=["dataset"], models=["a", "b"])


def direct_sq_diffs(cube, model):
    """(dataset, M) values (μ̂_(m) - μ̂^c_(m))², looping over datasets and half-splits."""
    half = cube.block.values == "half"
    h, side = cube.half.values, cube.side.values
    M = np.unique(h[half]).size
    out = np.empty((cube.sizes["dataset"], M))
    for t in range(cube.sizes["dataset"]):
        values = cube.isel(dataset=t).sel(model=model).values  # (split, example)
        means = np.array([row[~np.isnan(row)].mean() for row in values])
        for m in range(M):
            a = means[half & (h == m) & (side == 0)].mean()
            b = means[half & (h == m) & (side == 1)].mean()
            out[t, m] = (a - b) ** 2
    return out


def test_fit_r_against_direct_computation(cz_cube):
    fit = fit_r(cz_cube)
    for m in ["a", "b"]:
        T = direct_sq_diffs(cz_cube, m)
        K = T.shape[1]
        beta = T.mean()
        delta = ((T - beta) ** 2).mean()
        v = ((T.mean(1) - beta) ** 2).mean()
        r = (K * v / delta - 1) / (K - 1)
        one = fit.sel(model=m)
        assert float(one.r) == pytest.approx(r, rel=1e-12)
        assert float(one.mean_sq_diff) == pytest.approx(beta, rel=1e-12)
        assert float(one.sigma2_cz) == pytest.approx(beta / 2, rel=1e-12)
        assert float(one.delta) == pytest.approx(delta, rel=1e-12)
        assert float(one.r_se) == pytest.approx(float(lemma1_fit(T).stderr[2]), rel=1e-12)
    assert fit.attrs["M"] == 3 and fit.attrs["J"] == 2
    assert fit.attrs["n2"] == 4 and fit.attrs["n1"] == 15 - 4
    assert fit.r_ci.dims == ("model", "ci_bound")


def test_fit_r_sigma2_cz_is_mean_of_conservative_z(cz_cube):
    per_dataset = cvstats.conservative_z(cz_cube).stderr ** 2  # σ̂²_cz of each dataset
    np.testing.assert_allclose(fit_r(cz_cube).sigma2_cz, per_dataset.mean("dataset"), rtol=1e-12)


def test_fit_r_formula_and_errors(cz_cube):
    xr.testing.assert_identical(
        fit_r("loss ~ model", cz_cube).dataset,
        fit_r(cvstats.contrasts("loss ~ model", cz_cube)).dataset,
    )
    d = designs.resampled(20, 4, J=3, seed=0)
    plain = cvstats.from_arrays(np.ones((3, 3, 20, 1)), design=d, extra_dims=["dataset"])
    with pytest.raises(DesignError, match="needs the 'half' block"):
        fit_r(plain)
    one_m = cz_cube.isel(split=np.flatnonzero(cz_cube.half.values <= 0))
    with pytest.raises(DesignError, match="at least 2 half-splits"):
        fit_r(one_m)
    with pytest.raises(CubeError, match="fit_r needs many independent datasets"):
        fit_r(cz_cube.isel(dataset=0, drop=True))


# ---------------------------------------------------------------------------
# unequal sizes: no median stands in for n1 and n2
# ---------------------------------------------------------------------------


def _unequal_main_cube(n_data=60, sizes=(5, 6, 4, 5, 7), n=20):
    """Random splits of `n` examples whose test sets differ in size, one set per dataset."""
    rng = np.random.default_rng(11)
    S = len(sizes)
    mask = np.zeros((S, n), dtype=bool)
    for j, size in enumerate(sizes):
        mask[j, rng.permutation(n)[:size]] = True
    losses = rng.random((n_data, S, n, 2))
    return cvstats.from_arrays(
        losses,
        mask,
        models=["a", "b"],
        extra_dims=["dataset"],
        n_train=n - mask.sum(axis=1),
        attrs={"design": "user", "n": n, "seed": -1},
    )


def test_fit_rho_refuses_unequal_test_sizes_unless_n1_and_n2_are_given():
    cube = _unequal_main_cube()
    assert cube["n_test"].values.tolist() == [5, 6, 4, 5, 7]
    with pytest.raises(DesignError) as info:
        fit_rho(cube)
    message = str(info.value)
    for words in (
        "fit_rho compares ρ̂ with ρ0 = n2/(n1 + n2)",
        "'main' block's splits test 4 to 7 examples and train on 13 to 16",
        "sqrt(a b)/n",
        "Pass `n1=` and `n2=`",
        "n1=15, n2=5, the block's medians",
    ):
        assert words in message, words
    with pytest.raises(DesignError, match="Pass `n1=` and `n2=`"):
        fit_rho(cube, n1=15)  # both are needed
    fit = fit_rho(cube, n1=14, n2=6)
    assert float(fit.rho0) == pytest.approx(6 / 20)
    assert fit.attrs["n1"] == 14 and fit.attrs["n2"] == 6
    expected = political_ratio_from_rho(fit.rho.values, 5, 14, 6)
    np.testing.assert_allclose(fit.political_ratio, expected, rtol=1e-12)
    # the Lemma-1 fit itself does not use the sizes
    xr.testing.assert_identical(fit.rho, fit_rho(cube, n1=10, n2=3).rho)
    with pytest.raises(ArgumentError, match="exceeds the cube's n = 20"):
        fit_rho(cube, n1=18, n2=6)
    with pytest.raises(ArgumentError, match="`n2` must be a positive int"):
        fit_rho(cube, n1=14, n2=0)


def test_fit_rho_states_sizes_on_an_equal_block_too(cube):
    fit = fit_rho(cube, n1=12, n2=4)
    assert float(fit.rho0) == pytest.approx(4 / 16) and fit.attrs["n1"] == 12
    xr.testing.assert_identical(fit.rho, fit_rho(cube).rho)


def test_fit_rho_refuses_unequal_training_sizes():
    # one test size, several training sizes (an iterable of splits): no single n1 either
    pairs = [(np.arange(5, 15), np.arange(5)), (np.arange(8, 20), np.arange(5))]
    pairs.append((np.arange(6, 20), np.arange(5)))
    d = designs.from_splitter(pairs, n=20)
    assert d.attrs["nested_train"] == 0
    losses = np.random.default_rng(0).random((30, 3, 20, 1))
    cube = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])
    with pytest.raises(DesignError, match="splits train on 10 to 14"):
        fit_rho(cube)
    assert float(fit_rho(cube, n1=12, n2=5).rho0) == pytest.approx(5 / 17)


def test_fit_rho_kfold_folds_differing_by_one_use_1_over_K():
    # 42 examples in 4 folds of 11 and 10: the corrected repeated k-fold t's ρ0 = 1/K and
    # n2/n1 = 1/(K-1), not the median fold's n2/(n1 + n2) = 10/42 (a guess)
    d = designs.kfold(42, 4, repeats=2, seed=0)
    losses = np.random.default_rng(1).random((40, 8, 42, 1))
    cube = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])
    fit = fit_rho(cube)
    assert float(fit.rho0) == 0.25
    expected = political_ratio_from_rho(fit.rho.values, 8, 3, 1)
    np.testing.assert_allclose(fit.political_ratio, expected, rtol=1e-12)
    # folds of one size: the same as n2/(n1 + n2)
    even = cvstats.from_arrays(
        losses[:, :, :40], design=designs.kfold(40, 4, repeats=2, seed=0), extra_dims=["dataset"]
    )
    assert float(fit_rho(even).rho0) == 10 / 40


def test_fit_r_refuses_unequal_half_sizes_unless_stated():
    n, rng = 40, np.random.default_rng(3)
    rows = [("main", -1, -1, rng.permutation(n)[:5]) for _ in range(3)]
    for m in range(2):
        perm = rng.permutation(n)
        for side, pool in enumerate((perm[: n // 2], perm[n // 2 :])):
            for size in (4, 5):
                rows.append(("half", m, side, rng.permutation(pool)[:size]))
    mask = np.zeros((len(rows), n), dtype=bool)
    for j, row in enumerate(rows):
        mask[j, row[3]] = True
    n_train = np.array([n - 5 if r[0] == "main" else n // 2 - len(r[3]) for r in rows])
    cube = cvstats.from_arrays(
        rng.random((20, len(rows), n, 1)),
        mask,
        extra_dims=["dataset"],
        n_train=n_train,
        splits={
            "block": np.array([r[0] for r in rows]),
            "half": np.array([r[1] for r in rows]),
            "side": np.array([r[2] for r in rows]),
        },
        attrs={"design": "user", "n": n, "seed": -1},
    )
    with pytest.raises(DesignError, match="fit_r reports σ̂²_cz .* 'half' block's splits test 4"):
        fit_r(cube)
    fit = fit_r(cube, n1=15, n2=5)
    assert fit.attrs["n1"] == 15 and fit.attrs["n2"] == 5
