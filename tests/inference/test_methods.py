"""Inference methods on cubes vs. independent computations written from docs/theory.md §4.

The reference functions below loop over splits with plain numpy masks and the
formulas of docs/theory.md §4; they share no code with cvstats.
"""

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

import cvstats
from cvstats import ArgumentError, CubeError, DesignError, designs

N = 120
N2 = 12


@pytest.fixture(scope="module")
def design():
    return designs.nadeau_bengio(N, N2, J=6, M=4, R=5, seed=11)


@pytest.fixture(scope="module")
def cube(design):
    rng = np.random.default_rng(3)
    # losses with a split effect so split means vary, three models
    base = rng.gamma(2.0, 1.0, size=(design.sizes["split"], N, 3))
    base += rng.normal(0, 0.3, size=(design.sizes["split"], 1, 1))
    return cvstats.from_arrays(base, design=design, models=["a", "b", "c"], name="squared")


# ---------------------------------------------------------------------------
# independent references (loops over splits, the formulas of docs/theory.md §4)
# ---------------------------------------------------------------------------


def ref_split_mean(cube, split_label, model):
    row = cube.sel(split=split_label, model=model).values
    return row[~np.isnan(row)].mean()


def ref_block(cube, block):
    return cube.split.values[cube.block.values == block]


def ref_main_means(cube, model):
    return np.array([ref_split_mean(cube, s, model) for s in ref_block(cube, "main")])


def ref_resampled(cube, model, mu0, corrected):
    mu = ref_main_means(cube, model)
    J = mu.size
    s2 = np.sum((mu - mu.mean()) ** 2) / (J - 1)
    n1 = N - N2
    var = (1 / J + N2 / n1) * s2 if corrected else s2 / J
    t = (mu.mean() - mu0) / np.sqrt(var)
    return mu.mean(), np.sqrt(var), t, J - 1


def ref_cz(cube, model, mu0):
    mu_hat = ref_main_means(cube, model).mean()
    halves = cube.split.values[cube.block.values == "half"]
    h = cube.half.values[cube.block.values == "half"]
    sd = cube.side.values[cube.block.values == "half"]
    total = 0.0
    M = np.unique(h).size
    for m in range(M):
        a = np.mean([ref_split_mean(cube, s, model) for s in halves[(h == m) & (sd == 0)]])
        b = np.mean([ref_split_mean(cube, s, model) for s in halves[(h == m) & (sd == 1)]])
        total += (a - b) ** 2
    var = total / (2 * M)
    return mu_hat, np.sqrt(var), (mu_hat - mu0) / np.sqrt(var)


def ref_bootstrap(cube, model, mu0, corrected):
    mu = ref_main_means(cube, model)
    J = mu.size
    reps = cube.split.values[cube.block.values == "replicate"]
    r = cube.replicate.values[cube.block.values == "replicate"]
    R = np.unique(r).size
    check = np.array(
        [np.mean([ref_split_mean(cube, s, model) for s in reps[r == k]]) for k in range(R)]
    )
    var = check.var(ddof=1)
    if corrected:
        var *= 1 + J * N2 / (N - N2)
    return mu.mean(), np.sqrt(var), (mu.mean() - mu0) / np.sqrt(var), R - 1


def ref_5x2(cube, model):
    sel = cube.block.values == "5x2"
    out = np.empty((5, 2))
    for s, m, side in zip(
        cube.split.values[sel], cube.half.values[sel], cube.side.values[sel], strict=True
    ):
        out[m, side] = ref_split_mean(cube, s, model)
    return out


# ---------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["a", "b", "c"])
@pytest.mark.parametrize("corrected", [False, True])
def test_resampled_t_against_reference(cube, model, corrected):
    f = cvstats.corrected_resampled_t if corrected else cvstats.resampled_t
    res = f(cube, mu0=2.0)
    est, se, t, df = ref_resampled(cube, model, 2.0, corrected)
    r = {k: float(getattr(res, k).sel(model=model)) for k in ("estimate", "stderr", "statistic")}
    np.testing.assert_allclose(
        [r["estimate"], r["stderr"], r["statistic"]], [est, se, t], rtol=1e-12
    )
    assert float(res.df.sel(model=model)) == df
    np.testing.assert_allclose(
        float(res.pvalue.sel(model=model)), 2 * st.t.sf(abs(t), df), rtol=1e-10
    )
    assert res.n1 == N - N2 and res.n2 == N2 and res.n_splits == 6 and res.n_fits == 6


def test_resampled_t_matches_scipy(cube):
    mu = ref_main_means(cube, "b")
    for alternative in ("two-sided", "less", "greater"):
        res = cvstats.resampled_t(cube, mu0=1.9, alternative=alternative, alpha=0.1)
        sc = st.ttest_1samp(mu, 1.9, alternative=alternative)
        np.testing.assert_allclose(float(res.statistic.sel(model="b")), sc.statistic, rtol=1e-12)
        np.testing.assert_allclose(float(res.pvalue.sel(model="b")), sc.pvalue, rtol=1e-10)
        lo, hi = res.conf_int()
        ci = sc.confidence_interval(0.9)
        np.testing.assert_allclose(
            [float(lo.sel(model="b")), float(hi.sel(model="b"))], [ci.low, ci.high], rtol=1e-12
        )


@pytest.mark.parametrize("model", ["a", "c"])
def test_conservative_z_against_reference(cube, model):
    res = cvstats.conservative_z(cube, mu0=2.1)
    est, se, z = ref_cz(cube, model, 2.1)
    got = [float(getattr(res, k).sel(model=model)) for k in ("estimate", "stderr", "statistic")]
    np.testing.assert_allclose(got, [est, se, z], rtol=1e-12)
    assert np.isinf(res.df.sel(model=model))
    np.testing.assert_allclose(
        float(res.pvalue.sel(model=model)), 2 * st.norm.sf(abs(z)), rtol=1e-10
    )
    assert res.n_fits == 6 * (1 + 2 * 4)
    assert res.estimand == "n1μ" and res.target == "learner"


@pytest.mark.parametrize("corrected", [False, True])
def test_bootstrap_against_reference(cube, corrected):
    f = cvstats.corrected_bootstrap_t if corrected else cvstats.bootstrap_t
    res = f(cube, mu0=2.0)
    est, se, t, df = ref_bootstrap(cube, "b", 2.0, corrected)
    got = [float(getattr(res, k).sel(model="b")) for k in ("estimate", "stderr", "statistic")]
    np.testing.assert_allclose(got, [est, se, t], rtol=1e-12)
    assert float(res.df.sel(model="b")) == df == 4
    assert res.n_fits == (5 + 1) * 6


@pytest.mark.parametrize("variant", ["original", "t4", "t5"])
def test_dietterich_against_reference(cube, variant):
    p = ref_5x2(cube, "a")
    d2 = (p[:, 0] - p[:, 1]) ** 2
    if variant == "original":
        est, var, df = p[0, 0], d2.sum() / 10, 5
    elif variant == "t4":
        est, var, df = p[0, 0], d2[1:].sum() / 8, 4
    else:  # sqrt(2) ((a + b)/2 - mu0) / sigma_Diet: estimate (a+b)/2, stderr sigma/sqrt 2
        est, var, df = p[0].mean(), d2.sum() / 10 / 2, 5
    res = cvstats.dietterich_5x2cv(cube, variant=variant, mu0=1.5)
    got = [
        float(getattr(res, k).sel(model="a")) for k in ("estimate", "stderr", "statistic", "df")
    ]
    np.testing.assert_allclose(
        got, [est, np.sqrt(var), (est - 1.5) / np.sqrt(var), df], rtol=1e-12
    )
    assert res.estimand == "n/2 μ" and res.n1 == N // 2 and res.n2 == N // 2


def test_alpaydin_against_reference(cube):
    p = ref_5x2(cube, "c") - 1.0
    pbar = p.mean(axis=1, keepdims=True)
    s2 = ((p - pbar) ** 2).sum(axis=1)
    f = (p**2).sum() / (2 * s2.sum())
    res = cvstats.combined_5x2cv_f(cube, mu0=1.0)
    np.testing.assert_allclose(float(res.statistic.sel(model="c")), f, rtol=1e-12)
    np.testing.assert_allclose(float(res.pvalue.sel(model="c")), st.f.sf(f, 10, 5), rtol=1e-10)
    lo, hi = res.conf_int()
    assert np.isnan(lo).all() and np.isnan(hi).all()
    assert res.reference == "F(10, 5)"


def test_kfold_t_and_corrected_repeated():
    d = designs.kfold(50, 5, repeats=3, seed=0)
    rng = np.random.default_rng(0)
    cube = cvstats.from_arrays(rng.normal(1, 1, (15, 50, 2)), design=d, models=["x", "y"])
    means = np.array([ref_split_mean(cube, s, "x") for s in cube.split.values])
    # corrected repeated k-fold: (1/(rk) + 1/(k-1)) S², t_{rk-1}
    res = cvstats.corrected_repeated_kfold_t(cube)
    var = (1 / 15 + 1 / 4) * means.var(ddof=1)
    np.testing.assert_allclose(float(res.stderr.sel(model="x")), np.sqrt(var), rtol=1e-12)
    assert float(res.df.sel(model="x")) == 14 and res.n1 == 40 and res.n2 == 10
    # naive k-fold t on one repeat
    one = cube.isel(split=(cube.repeat == 0).values)
    res1 = cvstats.kfold_t(one)
    sc = st.ttest_1samp(means[:5], 0.0)
    np.testing.assert_allclose(float(res1.statistic.sel(model="x")), sc.statistic, rtol=1e-12)
    with pytest.raises(DesignError, match="3 repeats; use corrected_repeated_kfold_t"):
        cvstats.kfold_t(cube)


def test_holdout_t_reference_and_scipy():
    d = designs.holdout(80, 30, seed=1)
    rng = np.random.default_rng(1)
    cube = cvstats.from_arrays(rng.normal(0.3, 1, (1, 80, 2)), design=d, models=["a", "b"])
    x = cube.sel(model="a").values[0]
    x = x[~np.isnan(x)]
    res = cvstats.holdout_t(cube)
    z = x.mean() / (x.std(ddof=1) / np.sqrt(x.size))
    np.testing.assert_allclose(float(res.statistic.sel(model="a")), z, rtol=1e-12)
    np.testing.assert_allclose(
        float(res.pvalue.sel(model="a")), 2 * st.norm.sf(abs(z)), rtol=1e-10
    )
    rt = cvstats.holdout_t(cube, variant="t")
    sc = st.ttest_1samp(x, 0.0)
    np.testing.assert_allclose(float(rt.pvalue.sel(model="a")), sc.pvalue, rtol=1e-10)
    assert rt.n2 == 30 and rt.n1 == 50 and rt.estimand == "conditional"


@pytest.fixture(scope="module")
def zero_one_cube():
    d = designs.holdout(200, 60, seed=2)
    rng = np.random.default_rng(5)
    a = (rng.random((1, 200)) < 0.3).astype(float)
    b = (rng.random((1, 200)) < 0.2).astype(float)
    return cvstats.from_arrays(
        np.stack([a, b], axis=-1), design=d, models=["a", "b"], name="zero_one"
    )


@pytest.mark.parametrize(
    ("variant", "exact", "correction"),
    [("z", False, False), ("corrected", False, True), ("exact", True, False)],
)
def test_mcnemar_matches_statsmodels(zero_one_cube, variant, exact, correction):
    a = zero_one_cube.sel(model="a").values[0]
    b = zero_one_cube.sel(model="b").values[0]
    t = ~np.isnan(a)
    table = [
        [np.sum((a[t] == 0) & (b[t] == 0)), np.sum((a[t] == 0) & (b[t] == 1))],
        [np.sum((a[t] == 1) & (b[t] == 0)), np.sum((a[t] == 1) & (b[t] == 1))],
    ]
    sm = sm_mcnemar(table, exact=exact, correction=correction)
    res = cvstats.mcnemar(zero_one_cube, variant=variant)
    np.testing.assert_allclose(res.pvalue, sm.pvalue, rtol=1e-10)
    n10, n01 = table[1][0], table[0][1]
    assert res.estimate == pytest.approx((n10 - n01) / 60)
    assert res.stderr == pytest.approx(np.sqrt(n10 + n01) / 60)
    if variant != "exact":
        stat = res.statistic**2 if variant == "z" else res.statistic
        np.testing.assert_allclose(stat, sm.statistic, rtol=1e-12)


def test_mcnemar_rejects_non_binary_losses(cube):
    one = cube.isel(split=[0])
    with pytest.raises(CubeError, match="needs zero-one losses"):
        cvstats.mcnemar(one, models=["a", "b"])
    with pytest.raises(ArgumentError, match="compares two classifiers, but the cube has 3"):
        cvstats.mcnemar(one)


def test_mcnemar_on_a_pairwise_contrast(zero_one_cube):
    diff = cvstats.pairwise(zero_one_cube)
    res = cvstats.mcnemar(diff, variant="exact")
    direct = cvstats.mcnemar(zero_one_cube, variant="exact")
    np.testing.assert_allclose(float(res.pvalue.squeeze()), direct.pvalue)


# ---------------------------------------------------------------------------
# contracts: vectorization over extra dims, contrasts, dask, errors
# ---------------------------------------------------------------------------

METHODS = [
    cvstats.resampled_t,
    cvstats.corrected_resampled_t,
    cvstats.conservative_z,
    cvstats.bootstrap_t,
    cvstats.corrected_bootstrap_t,
    cvstats.dietterich_5x2cv,
    cvstats.combined_5x2cv_f,
]


@pytest.fixture(scope="module")
def stacked():
    # 3 datasets, each with its own splits: the vectorized call must equal a loop
    cubes = []
    for k in range(3):
        d = designs.nadeau_bengio(60, 6, J=4, M=2, R=3, seed=100 + k)
        losses = np.random.default_rng(k).random((d.sizes["split"], 60, 2))
        cubes.append(
            cvstats.from_arrays(losses, design=d, models=["u", "v"]).drop_vars("in_train")
        )
    return xr.concat(cubes, dim="dataset").assign_coords(dataset=[7, 8, 9]), cubes


@pytest.mark.parametrize("method", METHODS, ids=lambda f: f.__name__)
def test_vectorized_equals_loop_over_datasets(stacked, method):
    big, cubes = stacked
    res = method(big, mu0=0.4)
    assert res.estimate.dims == ("dataset", "model")
    np.testing.assert_array_equal(res.estimate.dataset, [7, 8, 9])
    for k, one in enumerate(cubes):
        r1 = method(one, mu0=0.4)
        for field in ("estimate", "stderr", "statistic", "df", "pvalue"):
            np.testing.assert_allclose(
                getattr(res, field).isel(dataset=k).values, getattr(r1, field).values, rtol=1e-12
            )


@pytest.mark.parametrize("method", METHODS, ids=lambda f: f.__name__)
def test_dask_backed_cube_gives_same_lazy_result(cube, method):
    eager = method(cube, mu0=2.0)
    lazy = method(cube.chunk({"split": 17, "example": 50}), mu0=2.0)
    assert lazy.estimate.chunks is not None  # still lazy
    for field in ("estimate", "stderr", "statistic", "pvalue"):
        np.testing.assert_allclose(
            getattr(lazy, field).compute(), getattr(eager, field), rtol=1e-12
        )


def test_contrast_antisymmetry(cube):
    ab = cvstats.contrasts("squared ~ C(model, contr.treatment('a'))", cube).sel(
        contrast="C(model, contr.treatment('a'))[T.b]"
    )
    ba = cvstats.contrasts("squared ~ C(model, contr.treatment('b'))", cube).sel(
        contrast="C(model, contr.treatment('b'))[T.a]"
    )
    for method in METHODS:
        r1 = method(ab.expand_dims(contrast=["b-a"], axis=-1))
        r2 = method(ba.expand_dims(contrast=["a-b"], axis=-1))
        np.testing.assert_allclose(r1.estimate.values, -r2.estimate.values, rtol=1e-12)
        np.testing.assert_allclose(r1.pvalue.values, r2.pvalue.values, rtol=1e-10)
        if method is not cvstats.combined_5x2cv_f:
            np.testing.assert_allclose(r1.statistic.values, -r2.statistic.values, rtol=1e-12)


def test_contrast_equals_difference_of_models(cube):
    diff = (cube.sel(model="b") - cube.sel(model="a")).expand_dims(model=["b-a"], axis=-1)
    c = cvstats.contrasts("squared ~ model", cube).sel(contrast=["model[T.b]"])
    r1 = cvstats.corrected_resampled_t(diff)
    r2 = cvstats.corrected_resampled_t(c)
    np.testing.assert_allclose(
        r1.statistic.values.ravel(), r2.statistic.values.ravel(), rtol=1e-12
    )


def test_missing_blocks_name_the_design_function():
    d = designs.resampled(40, 4, J=5, seed=0)
    cube = cvstats.from_arrays(np.ones((5, 40, 1)) + np.arange(5)[:, None, None], design=d)
    with pytest.raises(DesignError, match="'half' block.*conservative_z or nadeau_bengio"):
        cvstats.conservative_z(cube)
    with pytest.raises(DesignError, match="'replicate' block.*bootstrap or nadeau_bengio"):
        cvstats.bootstrap_t(cube)
    with pytest.raises(DesignError, match="'5x2' block.*five_by_two or nadeau_bengio"):
        cvstats.dietterich_5x2cv(cube)
    with pytest.raises(DesignError, match="needs a k-fold main block"):
        cvstats.kfold_t(cube)
    with pytest.raises(DesignError, match="main block has 5; pick one with `split=`"):
        cvstats.holdout_t(cube)


def test_too_few_splits():
    d = designs.holdout(40, 4, seed=0)
    cube = cvstats.from_arrays(np.ones((1, 40, 1)), design=d)
    with pytest.raises(DesignError, match=r"at least 2 splits in the main block.*J >= 2"):
        cvstats.resampled_t(cube)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alpha": 1.5}, "`alpha`"),
        ({"alternative": "both"}, "`alternative` must be one of"),
        ({"mu0": float("nan")}, "`mu0` must be a finite"),
        ({"n1": 0}, "`n1` must be a positive int"),
    ],
)
def test_bad_options(cube, kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        cvstats.corrected_resampled_t(cube, **kwargs)


def test_zero_variance_warns(design):
    cube = cvstats.from_arrays(np.ones((design.sizes["split"], N, 1)), design=design)
    with pytest.warns(cvstats.ZeroVarianceWarning, match="split means"):
        res = cvstats.corrected_resampled_t(cube, mu0=0.0)
    assert np.isinf(res.statistic).all()


def test_result_frame_and_summary(cube):
    res = cvstats.corrected_resampled_t(cube, mu0=2.0)
    frame = res.to_frame()
    assert list(frame.columns) == ["model", *cvstats.results.FRAME_COLUMNS]
    assert len(frame) == 3 and (frame["estimand"] == f"n1μ (n1 = {N - N2})").all()
    lo, hi = res.conf_int(alpha=0.1)
    np.testing.assert_allclose(frame["ci_lower"], res.conf_int().low.values)
    assert (lo > frame["ci_lower"].values).all() and (hi < frame["ci_upper"].values).all()
    text = res.summary().as_text()
    assert "Corrected resampled t" in text and "n1μ (n1 = 108)" in text
    assert "\\begin{" in res.summary().as_latex()
    assert "<table" in res.summary().as_html()


def test_inputs_not_mutated(cube):
    before = cube.copy(deep=True)
    for method in METHODS:
        method(cube, mu0=1.0)
    xr.testing.assert_identical(before, cube)


# ---------------------------------------------------------------------------
# Monte Carlo through the public API (Lemma 2): exact size when ρ = ρ0
# ---------------------------------------------------------------------------


def _lemma2_cube(n_datasets, J, n1, n2, rho, rng):
    """Cube whose split means are equicorrelated Gaussians with correlation rho.

    Every test example of split j carries the loss μ_j, so μ̂_j = μ_j exactly.
    """
    n = n1 + n2
    cov = np.full((J, J), rho) + (1 - rho) * np.eye(J)
    mu = rng.multivariate_normal(np.zeros(J), cov, size=n_datasets)  # (D, J)
    d = designs.resampled(n, n2, J=J, seed=1)
    losses = np.broadcast_to(mu[:, :, None, None], (n_datasets, J, n, 1))
    return cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])


@pytest.mark.slow
def test_corrected_t_exact_size_and_resampled_t_liberal():
    rng = np.random.default_rng(2024)
    J, n1, n2, D, alpha = 15, 90, 10, 4000, 0.1
    rho0 = n2 / (n1 + n2)
    cube = _lemma2_cube(D, J, n1, n2, rho0, rng)
    rej = float((cvstats.corrected_resampled_t(cube, alpha=alpha).pvalue < alpha).mean())
    se = np.sqrt(alpha * (1 - alpha) / D)
    assert abs(rej - alpha) < 4 * se, rej
    # resampled t with rho = rho0 > 0: liberal as its political ratio 1 + J rho/(1 - rho) says
    ratio = cvstats.kernels.political_ratio_resampled(J, rho0)
    predicted = float(cvstats.kernels.predicted_rejection_rate(ratio, J - 1, alpha))
    rej_naive = float((cvstats.resampled_t(cube, alpha=alpha).pvalue < alpha).mean())
    assert predicted > 2.5 * alpha  # clearly liberal
    assert abs(rej_naive - predicted) < 4 * np.sqrt(predicted * (1 - predicted) / D)
