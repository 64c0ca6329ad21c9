"""Bayesian correlated t test vs. baycomp's CorrelatedTTest and hand computations."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import scipy.stats as st  # noqa: E402
import xarray as xr  # noqa: E402

import cvstats  # noqa: E402
from cvstats import ArgumentError, designs  # noqa: E402
from cvstats.inference.bayes import BAYES_FRAME_COLUMNS, BayesianResult, bayesian_correlated_t  # noqa: E402
from cvstats.kernels import bayes as kb  # noqa: E402

baycomp = pytest.importorskip("baycomp")

N, K = 60, 10


@pytest.fixture(scope="module")
def cube():
    d = designs.kfold(N, K, repeats=3, seed=4)
    rng = np.random.default_rng(8)
    losses = rng.gamma(2.0, 1.0, size=(d.sizes["split"], N, 3))
    losses[..., 1] += 0.2
    return cvstats.from_arrays(losses, design=d, models=["a", "b", "c"], name="sq")


def fold_means(cube, model):
    return np.array(
        [np.nanmean(cube.sel(model=model).values[j]) for j in range(cube.sizes["split"])]
    )


@pytest.mark.parametrize("rope", [0.0, 0.05])
def test_equals_baycomp(cube, rope):
    # baycomp works on y - x and uses rho = 1/K through `runs`: our contrast a - b
    # corresponds to x = b, y = a
    res = bayesian_correlated_t(cvstats.pairwise(cube), rope=rope)
    assert res.rho == pytest.approx(1 / K)
    for a, b in [("a", "b"), ("a", "c"), ("b", "c")]:
        x, y = fold_means(cube, b), fold_means(cube, a)
        post = baycomp.CorrelatedTTest(x, y, rope=rope, runs=3)
        probs = post.probs()
        sel = {"contrast": f"{a} - {b}"}
        np.testing.assert_allclose(res.mean.sel(sel), post.mean, rtol=1e-12)
        np.testing.assert_allclose(res.scale.sel(sel), np.sqrt(post.var), rtol=1e-12)
        assert float(res.df.sel(sel)) == post.df
        if rope == 0:
            np.testing.assert_allclose(res.p_left.sel(sel), probs[0], rtol=1e-10, atol=1e-13)
            np.testing.assert_allclose(res.p_right.sel(sel), probs[1], rtol=1e-10, atol=1e-13)
            assert float(res.p_rope.sel(sel)) == 0.0
        else:
            np.testing.assert_allclose(
                [res.p_left.sel(sel), res.p_rope.sel(sel), res.p_right.sel(sel)],
                probs,
                rtol=1e-10,
                atol=1e-13,
            )


def test_rho_from_design_and_override():
    d = designs.resampled(50, 10, J=8, seed=1)
    losses = np.random.default_rng(1).random((8, 50, 2))
    c = cvstats.from_arrays(losses, design=d, models=["a", "b"])
    res = bayesian_correlated_t(c)
    assert res.rho == pytest.approx(10 / 50)  # n2 / (n1 + n2)
    mu = np.array([[np.nanmean(c.values[j, :, m]) for j in range(8)] for m in range(2)])
    scale = np.sqrt((1 / 8 + 0.2 / 0.8) * mu.var(axis=1, ddof=1))
    np.testing.assert_allclose(res.scale.values, scale)
    # a smaller training size cut: rho still from the block's sizes
    d2 = designs.resampled(50, 10, J=8, n_train=20, seed=1)
    c2 = cvstats.from_arrays(losses, design=d2, models=["a", "b"])
    assert bayesian_correlated_t(c2).rho == pytest.approx(10 / 30)
    res3 = bayesian_correlated_t(c, rho=0.5, rope=(-0.01, 0.02), alpha=0.1)
    assert res3.rho == 0.5 and res3.rope == (-0.01, 0.02)
    scale3 = np.sqrt((1 / 8 + 1.0) * mu.var(axis=1, ddof=1))
    np.testing.assert_allclose(res3.scale.values, scale3)
    t = st.t(7, mu.mean(1), scale3)
    np.testing.assert_allclose(res3.p_left.values, t.cdf(-0.01))
    np.testing.assert_allclose(res3.p_right.values, t.sf(0.02))
    lo, hi = res3.credible_interval()
    np.testing.assert_allclose(lo.values, t.ppf(0.05))
    np.testing.assert_allclose(hi.values, t.ppf(0.95))


def test_vectorized_over_extra_dims(cube):
    stacked = xr.concat([cube, cube * 0.5 + 0.1], dim="dataset").transpose("dataset", ...)
    res = bayesian_correlated_t(stacked, rope=0.02)
    for i in range(2):
        one = bayesian_correlated_t(stacked.isel(dataset=i), rope=0.02)
        for name in ("mean", "scale", "p_left", "p_rope", "p_right"):
            np.testing.assert_allclose(getattr(res, name).isel(dataset=i), getattr(one, name))
    frame = res.to_frame()
    assert list(frame.columns) == ["dataset", "model", *BAYES_FRAME_COLUMNS]
    assert len(frame) == 6
    np.testing.assert_allclose(frame[["p_left", "p_rope", "p_right"]].sum(axis=1), 1.0)


def test_scalar_result_frame_str_and_plot(cube):
    res = bayesian_correlated_t(cube.sel(model=["a"]))
    assert isinstance(res, BayesianResult)
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert "Bayesian correlated t" in str(res)
    ax = bayesian_correlated_t(cvstats.pairwise(cube), rope=0.05).plot()
    assert len(ax.lines) == 3 and len(ax.patches) == 1  # three densities, the rope
    plt.close("all")


def test_zero_scale_is_a_point_mass():
    post = kb.correlated_t_posterior([0.2, 0.2, 0.2], rho=0.1)
    assert float(post.scale) == 0.0
    assert kb.posterior_probabilities(post, 0.3) == (0.0, 1.0, 0.0)
    assert kb.posterior_probabilities(post, (-0.5, 0.1)) == (0.0, 0.0, 1.0)
    assert kb.posterior_probabilities(post, 0.0) == (0.0, 0.0, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rope": -0.1}, r"`rope` must be >= 0"),
        ({"rope": (0.2, 0.1)}, r"low <= high"),
        ({"rope": (0.1, 0.2, 0.3)}, r"a pair"),
        ({"rho": 1.0}, r"`rho` must be a number in \[0, 1\)"),
        ({"rho": "x"}, r"`rho` must be a number"),
        ({"alpha": 2}, r"`alpha` must be in the open interval"),
    ],
)
def test_errors(cube, kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        bayesian_correlated_t(cube, **kwargs)
