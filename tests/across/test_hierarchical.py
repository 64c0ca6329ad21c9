"""Hierarchical correlated t test across datasets (Corani et al. 2017, Machine Learning 106).

Agreement with baycomp's ``HierarchicalTest`` on its documented example data
(recorded numbers), with an independent random-walk Metropolis sampler of the
same joint density, concentration on the truth with much data, the inputs
(cube, DataArray, long frame, array), the direction, the posterior's layout,
the diagnostics, the verdict, the plots and the errors on bad inputs.

Tolerance of the agreement with baycomp: each probability is the share of
posterior draws in which a region is the most probable one for a new dataset.
Its Monte Carlo standard error is ``sd / sqrt(ESS)`` of that region's indicator
over the draws, the ESS of the split chains (Vehtari et al. 2021;
:func:`cvstats.kernels.mcmc.mcse_mean`), for baycomp's chains (recorded below)
and ours (``res.mcse``). The two runs are independent, so their difference has
standard error ``sqrt(se_ours² + se_baycomp²)``; we allow 4 of those.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats
from scipy.special import gammaln

import cvstats
from cvstats import ArgumentError, CvstatsTypeError
from cvstats.across.hierarchical import bayesian_hierarchical_test
from cvstats.kernels import hierarchical as kh
from cvstats.kernels import mcmc

#: Short chains (fast tests of what is not about convergence) may warn that they did not converge.
SHORT = pytest.mark.filterwarnings("ignore:bayesian_hierarchical_test. the chains have not")

DATA = Path(__file__).parent / "data" / "baycomp_nbc_aode.txt"


def _baycomp_example() -> tuple[np.ndarray, np.ndarray, list[str]]:
    """nbc and aode: accuracies (%) of 10 runs of 10-fold CV on 10 datasets."""
    rows = [line.split() for line in DATA.read_text().splitlines() if not line.startswith("#")]
    nbc = np.array([[float(v) for v in r[2:]] for r in rows if r[0] == "nbc"])
    aode = np.array([[float(v) for v in r[2:]] for r in rows if r[0] == "aode"])
    names = [r[1] for r in rows if r[0] == "nbc"]
    return nbc, aode, names


#: baycomp 1.0.3 + pystan 3.10 (httpstan 4.13), in a separate venv:
#: ``baycomp.HierarchicalTest.sample(nbc, aode, 1.0, runs=10, chains=4, nsamples=10000,
#: random_state=42)`` (ρ = runs/n_scores = 0.1, rope = 1 point of accuracy, 1000 warm-up
#: iterations per chain; baycomp passes no seed to Stan, so each run differs), three runs.
#: ``probs``: the shares of the 40 000 draws in which left (nbc), rope, right (aode) is the
#: most probable region (baycomp's ``Posterior.probs``); ``mcse``: their Monte Carlo standard
#: errors, ``cvstats.kernels.mcmc.mcse_mean`` of the indicators over baycomp's 4 chains
#: (draw ``k`` of chain ``c`` is row ``4 k + c`` of the samples pystan returns). In the
#: first run one chain stayed in the rope (its share of rope wins was 0.989, the others'
#: 0.76–0.77: R̂ 1.04), which its large standard errors record.
BAYCOMP_RUNS = [
    {"probs": (0.005025, 0.820075, 0.1749), "mcse": (0.000516, 0.04704, 0.04558)},
    {"probs": (0.005, 0.759625, 0.235375), "mcse": (0.000475, 0.003599, 0.003443)},
    {"probs": (0.005075, 0.76155, 0.233375), "mcse": (0.000536, 0.003677, 0.003581)},
]


def _probs(res) -> np.ndarray:
    return np.array([float(res.p_left), float(res.p_rope), float(res.p_right)])


def _agrees(res, run) -> None:
    tol = 4 * np.sqrt(np.asarray(res.mcse) ** 2 + np.asarray(run["mcse"]) ** 2)
    assert np.all(np.abs(_probs(res) - np.asarray(run["probs"])) <= tol), (
        _probs(res),
        run["probs"],
        tol,
    )


@SHORT
def test_agrees_with_recorded_baycomp_numbers_short_run():
    nbc, aode, _ = _baycomp_example()
    res = bayesian_hierarchical_test(
        aode - nbc,
        "nbc",
        "aode",
        rho=0.1,
        rope=1.0,
        draws=1500,
        warmup=500,
        seed=4,
        greater_is_better=True,
    )
    for run in BAYCOMP_RUNS:
        _agrees(res, run)


@pytest.mark.slow
def test_agrees_with_recorded_baycomp_numbers():
    nbc, aode, _ = _baycomp_example()
    res = bayesian_hierarchical_test(
        aode - nbc, "nbc", "aode", rho=0.1, rope=1.0, seed=5, greater_is_better=True
    )
    assert res.converged
    for run in BAYCOMP_RUNS:
        _agrees(res, run)


def _log_density(theta: np.ndarray, x: np.ndarray, rho: float, st: kh.Scaled) -> np.ndarray:
    """The joint log density of baycomp's Stan model, written independently of the kernel.

    ``theta`` is ``(chains, 5 + 2q)``: μ0, log σ0, log(ν - 1), α, β, δ_1..q, log σ_1..q (the
    Jacobians of the logs added); the likelihood is scipy's multivariate normal with the
    explicit correlation matrix. ``x`` are the scaled differences.
    """
    q, n = x.shape
    mu0, ls0, lm, a, b = theta[:, :5].T
    delta, lsig = theta[:, 5 : 5 + q], theta[:, 5 + q :]
    s0, m, sig = np.exp(ls0), np.exp(lm), np.exp(lsig)
    inside = (
        (np.abs(mu0) < st.max_abs)
        & (s0 < st.sigma0_hi)
        & (a > 1)
        & (a < 2)
        & (b > 0.01)
        & (b < 0.1)
        & np.all(sig < st.sigma_hi, axis=1)
    )
    nu = 1 + m
    out = ls0 + lm + lsig.sum(axis=1)
    out += a * np.log(np.clip(b, 1e-12, None)) - gammaln(np.clip(a, 1e-12, None))
    out += (a - 1) * lm - b * m
    out += stats.t.logpdf(delta, nu[:, None], mu0[:, None], s0[:, None]).sum(axis=1)
    corr = (1 - rho) * np.eye(n) + rho * np.ones((n, n))
    for i in range(q):
        dev = x[i][None, :] - delta[:, i : i + 1]
        out += stats.multivariate_normal.logpdf(dev / sig[:, i : i + 1], cov=corr) - n * lsig[:, i]
    return np.where(inside, out, -np.inf)


@pytest.mark.slow
def test_matches_an_independent_random_walk_metropolis():
    # 3 datasets × 6 folds: 300 independent chains of coordinate-wise random-walk Metropolis
    rng = np.random.default_rng(11)
    diff = rng.normal(0.4, 1.0, (3, 6)) + rng.normal(0, 0.6, (3, 1))
    rho, rope = 0.2, 0.3
    st = kh.scaled_statistics(diff)
    x = diff / st.scale
    q, chains, sweeps = 3, 300, 3000
    theta = np.tile(
        np.concatenate([[x.mean(), 0.0, np.log(10.0), 1.5, 0.05], x.mean(1), np.log(x.std(1))]),
        (chains, 1),
    )
    theta[:, 0] += 0.3 * rng.normal(size=chains)
    steps = np.array([0.5, 0.8, 1.5, 0.4, 0.04] + [0.6] * q + [0.3] * q)
    lp = _log_density(theta, x, rho, st)
    kept = []
    for sweep in range(sweeps):
        for j in range(theta.shape[1]):
            prop = theta.copy()
            prop[:, j] += steps[j] * rng.normal(size=chains)
            new = _log_density(prop, x, rho, st)
            acc = np.log(rng.random(chains)) < new - lp
            theta[acc], lp[acc] = prop[acc], new[acc]
        if sweep >= sweeps // 2:
            kept.append(theta[:, :3].copy())
    draws = np.stack(kept, axis=1)  # (chain, draw, 3)
    mu0 = draws[..., 0] * st.scale
    s0 = np.exp(draws[..., 1]) * st.scale
    nu = 1 + np.exp(draws[..., 2])
    # per-chain summaries: the chains are independent, so their spread gives the error
    rwm = np.stack(
        [
            mu0.mean(axis=1),
            np.mean(s0 < np.median(s0), axis=1),
            np.mean(np.argmax(kh.region_probabilities(mu0, s0, nu, rope), -1) == 1, axis=1),
            np.mean(mu0 > rope, axis=1),
        ]
    )
    threshold = np.median(s0)
    res = bayesian_hierarchical_test(
        diff, rho=rho, rope=rope, draws=20_000, seed=2, greater_is_better=True
    )
    post = res.posterior
    series = [
        post["mu0"].values,
        (post["sigma0"] < threshold).values.astype(float),
        (post["theta"].argmax("region") == 1).values.astype(float),
        (post["mu0"] > rope).values.astype(float),
    ]
    ours = np.array([s.mean() for s in series])
    assert ours[2] == pytest.approx(float(res.p_rope)) and ours[3] == pytest.approx(
        float(res.mean_right)
    )
    se = rwm.std(axis=1, ddof=1) / math.sqrt(chains)  # independent chains
    ours_se = np.array([mcmc.mcse_mean(s) for s in series])
    np.testing.assert_array_less(np.abs(ours - rwm.mean(axis=1)), 4 * np.hypot(se, ours_se))


@SHORT
def test_concentrates_at_the_data_with_many_precise_folds():
    rng = np.random.default_rng(3)
    truth = np.array([0.10, 0.20, 0.30, 0.25, 0.15])
    diff = truth[:, None] + rng.normal(0, 1e-3, (5, 60))
    res = bayesian_hierarchical_test(
        diff,
        "p",
        "q",
        rho=0.0,
        rope=0.01,
        draws=600,
        warmup=300,
        seed=0,
        greater_is_better=True,
    )
    shrunk = res.shrunk_differences()
    np.testing.assert_allclose(shrunk["mean"], diff.mean(axis=1), atol=2e-4)
    assert (shrunk["upper"] - shrunk["lower"]).max() < 2e-3
    assert float(res.mean_right) > 0.95  # μ0 near 0.2, far above the rope
    assert float(res.posterior["mu0"].mean()) == pytest.approx(truth.mean(), abs=0.05)


def test_sufficient_statistics_give_the_quadratic_form_of_the_correlated_likelihood():
    # (x - δ1)' M⁻¹ (x - δ1) = S/(1 - ρ) + (x̄ - δ)²/c, c = (1 + (n - 1)ρ)/n; by numpy's inverse
    rng = np.random.default_rng(0)
    x, rho, delta = rng.normal(size=7), 0.3, 0.4
    corr = (1 - rho) * np.eye(7) + rho * np.ones((7, 7))
    direct = (x - delta) @ np.linalg.inv(corr) @ (x - delta)
    st = kh.scaled_statistics(x[None, :])
    xs = x / st.scale
    c = (1 + 6 * rho) / 7
    d = delta / st.scale
    closed = st.ss[0] / (1 - rho) + (st.mean[0] - d) ** 2 / c
    assert closed * st.scale**2 == pytest.approx(direct, rel=1e-12)
    assert st.mean[0] == pytest.approx(xs.mean())


def test_region_probabilities_are_student_t_areas():
    theta = kh.region_probabilities(np.array([0.3]), np.array([0.5]), np.array([4.0]), 0.2)
    t = stats.t(4, loc=0.3, scale=0.5)
    np.testing.assert_allclose(theta[0], [t.cdf(-0.2), t.cdf(0.2) - t.cdf(-0.2), t.sf(0.2)])


def _cube(seed: int = 0) -> xr.DataArray:
    d = cvstats.designs.kfold(30, 5, repeats=2, seed=0)
    rng = np.random.default_rng(seed)
    losses = rng.random((6, 10, 30, 2)) + np.array([0.0, 0.04]) + rng.normal(0, 0.02, (6, 1, 1, 1))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], extra_dims=["dataset"])


@SHORT
def test_cube_uses_split_means_and_the_design_rho():
    cube = _cube()
    res = bayesian_hierarchical_test(cube, "a", "b", rope=0.01, draws=300, warmup=200, seed=1)
    assert res.rho == pytest.approx(1 / 5)
    assert res.n_folds == 10 and res.n_datasets == 6
    assert not res.greater_is_better  # a loss cube
    means = cube.mean("example")  # every example is tested once per split (k-fold)
    diff = -(means.sel(model="b") - means.sel(model="a")).transpose("dataset", "split").values
    again = bayesian_hierarchical_test(
        diff, "a", "b", rho=0.2, rope=0.01, draws=300, warmup=200, seed=1, greater_is_better=True
    )
    assert _probs(res).tolist() == _probs(again).tolist()
    np.testing.assert_allclose(res.posterior["mu0"], again.posterior["mu0"])


@SHORT
def test_losses_mirror_scores_and_inputs_agree():
    rng = np.random.default_rng(4)
    scores = xr.DataArray(
        rng.normal(0.8, 0.03, (5, 2, 8)) + np.array([0.0, 0.01])[None, :, None],
        dims=("dataset", "model", "fold"),
        coords={"dataset": list("vwxyz"), "model": ["a", "b"]},
    )
    kw = dict(rho=0.125, rope=0.005, draws=300, warmup=200, seed=3)
    up = bayesian_hierarchical_test(scores, "a", "b", greater_is_better=True, **kw)
    down = bayesian_hierarchical_test(-scores, "a", "b", greater_is_better=False, **kw)
    assert _probs(up).tolist() == _probs(down).tolist()
    long = scores.to_dataframe(name="accuracy").reset_index()  # direction from the name
    framed = bayesian_hierarchical_test(long, "a", "b", **kw)
    assert _probs(framed).tolist() == _probs(up).tolist()
    assert framed.greater_is_better
    named = scores.rename("zero_one")  # a loss by its name: b's higher value is worse
    flipped = bayesian_hierarchical_test(named, "a", "b", **kw)
    assert not flipped.greater_is_better
    assert float(flipped.posterior["mu0"].mean()) < 0 < float(up.posterior["mu0"].mean())


@SHORT
def test_posterior_is_labelled_for_arviz():
    rng = np.random.default_rng(5)
    diff = rng.normal(0.01, 0.02, (4, 10))
    res = bayesian_hierarchical_test(
        diff,
        rho=0.1,
        rope=0.005,
        chains=3,
        draws=200,
        warmup=100,
        seed=0,
        greater_is_better=True,
    )
    post = res.posterior
    assert isinstance(post, xr.Dataset)
    for name in ("mu0", "sigma0", "nu", "delta_new"):
        assert post[name].dims == ("chain", "draw")
    assert post["delta"].dims == ("chain", "draw", "dataset")
    assert post["theta"].dims == ("chain", "draw", "region")
    assert post.sizes == {"chain": 3, "draw": 200, "dataset": 4, "region": 3}
    theta = post["theta"].values.reshape(-1, 3)
    winners = np.bincount(np.argmax(theta, axis=1), minlength=3) / theta.shape[0]
    np.testing.assert_allclose(winners, _probs(res))
    assert float(res.mean_right) == pytest.approx(float((post["mu0"] > 0.005).mean()))
    assert list(res.diagnostics.columns) == ["rhat", "ess_bulk", "ess_tail"]
    assert list(res.diagnostics.index[:3]) == ["mu0", "sigma0", "nu"]


def test_short_chains_warn_with_the_fix():
    rng = np.random.default_rng(6)
    diff = rng.normal(0.0, 1.0, (4, 10))
    with pytest.warns(UserWarning, match="not converged.*more `draws`"):
        res = bayesian_hierarchical_test(
            diff, rho=0.1, draws=20, warmup=5, seed=0, greater_is_better=True
        )
    assert not res.converged
    assert "have not converged" in res.verdict()


@SHORT
def test_verdict_and_reporting():
    rng = np.random.default_rng(7)
    diff = rng.normal(0.02, 0.02, (8, 10)) + rng.normal(0, 0.005, (8, 1))
    res = bayesian_hierarchical_test(
        diff,
        "nb",
        "j48",
        rho=0.1,
        rope=0.005,
        draws=500,
        warmup=300,
        seed=1,
        greater_is_better=True,
    )
    text = res.verdict()
    p = res.probabilities()
    assert f"probability {p['right']:.2f} that j48 is practically better on a new dataset" in text
    assert f"{p['rope']:.2f} practically equivalent" in text
    assert "On the mean difference" in text
    frame = res.to_frame()
    assert frame.loc[0, "p_right"] == pytest.approx(p["right"])
    assert frame.loc[0, "max_rhat"] == pytest.approx(res.diagnostics["rhat"].max())
    assert "Converged:" in str(res.summary())
    assert res.probabilities("mean")["right"] == pytest.approx(float(res.mean_right))


@SHORT
def test_plots():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(8)
    diff = rng.normal(0.01, 0.02, (5, 10))
    res = bayesian_hierarchical_test(
        diff,
        "a",
        "b",
        rho=0.1,
        rope=0.01,
        draws=200,
        warmup=100,
        seed=0,
        greater_is_better=True,
    )
    ax = res.plot()
    points = ax.collections[0].get_offsets()
    theta = res.posterior["theta"].values.reshape(-1, 3)
    corners = np.array([[0.0, 0.0], [0.5, np.sqrt(3) / 2], [1.0, 0.0]])
    np.testing.assert_allclose(points, theta @ corners)
    for kind in ("new", "mean"):
        ax = res.plot(kind)
        assert "rope" in ax.get_legend().get_texts()[0].get_text()
    with pytest.raises(ArgumentError, match="`kind`"):
        res.plot("violin")
    plt.close("all")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d[:1], "at least 2 datasets"),
        (lambda d: d[:, :2], "at least 3 fold scores"),
        (lambda d: np.where(np.arange(10) == 3, np.nan, d), r"finite.*\['0', '1', '2'\]"),
        (lambda d: np.vstack([d[:2], np.full((1, 10), 0.01)]), r"datasets \['2'\] do not vary"),
    ],
)
def test_bad_data(change, match):
    diff = np.random.default_rng(9).normal(0.0, 1.0, (3, 10))
    with pytest.raises(ArgumentError, match=match):
        bayesian_hierarchical_test(change(diff), rho=0.1, greater_is_better=True)


def test_bad_options():
    diff = np.random.default_rng(10).normal(0.0, 1.0, (3, 10))
    with pytest.raises(ArgumentError, match="`greater_is_better` is required"):
        bayesian_hierarchical_test(diff, rho=0.1)
    with pytest.raises(ArgumentError, match="`rho` is required"):
        bayesian_hierarchical_test(diff, greater_is_better=True)
    for rho in (1.0, -0.1, 1.5):
        with pytest.raises(ArgumentError, match="`rho` must be"):
            bayesian_hierarchical_test(diff, rho=rho, greater_is_better=True)
    with pytest.raises(ArgumentError, match="`rope` must be"):
        bayesian_hierarchical_test(diff, rho=0.1, rope=-1, greater_is_better=True)
    with pytest.raises(ArgumentError, match="`draws` must be"):
        bayesian_hierarchical_test(diff, rho=0.1, draws=0, greater_is_better=True)
    with pytest.raises(CvstatsTypeError, match="`data` must be"):
        bayesian_hierarchical_test([[1, 2, 3], [2, 3, 4]], rho=0.1, greater_is_better=True)
    scores = xr.DataArray(
        np.zeros((3, 2, 4)), dims=("dataset", "model", "fold"), coords={"model": ["a", "b"]}
    )
    with pytest.raises(ArgumentError, match="`b` = 'c' is not a learner"):
        bayesian_hierarchical_test(scores, "a", "c", rho=0.1, greater_is_better=True)
    with pytest.raises(ArgumentError, match="`a` and `b`"):
        bayesian_hierarchical_test(scores, rho=0.1, greater_is_better=True)
    with pytest.raises(ArgumentError, match="long DataFrame needs"):
        bayesian_hierarchical_test(pd.DataFrame({"dataset": [1]}), "a", "b", rho=0.1)


@SHORT
def test_score_cube_reads_direction_and_rho():
    d = cvstats.designs.kfold(40, 4, repeats=2, seed=0)
    rng = np.random.default_rng(12)
    scores = rng.normal(0.8, 0.02, (5, 8, 2)) + np.array([0.0, 0.02])
    cube = cvstats.from_scores(
        scores, design=d, models=["a", "b"], extra_dims=["dataset"], greater_is_better=True
    )
    res = bayesian_hierarchical_test(cube, "a", "b", rope=0.005, draws=400, warmup=200, seed=0)
    assert res.rho == pytest.approx(0.25) and res.greater_is_better
    assert float(res.p_right) > float(res.p_left)


@SHORT
def test_without_rope_left_and_right_share_the_draws():
    rng = np.random.default_rng(13)
    diff = rng.normal(0.0, 0.02, (6, 10))
    res = bayesian_hierarchical_test(
        diff, rho=0.1, draws=300, warmup=100, seed=0, greater_is_better=True
    )
    assert float(res.p_rope) == 0.0 and float(res.mean_rope) == 0.0
    assert float(res.p_left) + float(res.p_right) == pytest.approx(1.0)
    assert "(no rope)" in res.verdict()


@SHORT
def test_seed_reproduces_and_none_is_recorded():
    diff = np.random.default_rng(14).normal(0.0, 1.0, (3, 6))
    kw = dict(rho=0.1, rope=0.1, draws=100, warmup=50, greater_is_better=True)
    first = bayesian_hierarchical_test(diff, seed=7, **kw)
    again = bayesian_hierarchical_test(diff, seed=7, **kw)
    xr.testing.assert_identical(first.posterior, again.posterior)
    fresh = bayesian_hierarchical_test(diff, seed=None, **kw)
    assert isinstance(fresh.seed, int)
    replay = bayesian_hierarchical_test(diff, seed=fresh.seed, **kw)
    xr.testing.assert_identical(fresh.posterior, replay.posterior)
