"""Bayesian sign and signed-rank tests across datasets (Benavoli, Corani, Demšar & Zaffalon 2017).

Agreement with baycomp's ``SignTest`` and ``SignedRankTest`` within Monte Carlo
error, answers known exactly, the direction of the table, the posterior's
layout, the verdict and the errors on bad inputs.

Tolerance of the agreement with baycomp: each probability is the share of
``N`` independent posterior draws in which a region is the most probable, so
its Monte Carlo standard error is ``sqrt(p (1 - p) / N) <= sqrt(0.25 / N)``
(0.0022 for ``N = 50 000``). cvstats and baycomp draw independently, so the
difference of their estimates has standard error ``<= sqrt(2 · 0.25 / N)``
(0.0032); we allow 4.5 of those (0.0142): a false failure has probability
below 1e-5 per comparison.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import cvstats
from cvstats import ArgumentError, CvstatsTypeError
from cvstats.across.bayes_datasets import bayesian_sign_test, bayesian_signed_rank_test
from cvstats.kernels import bayes_datasets as kbd

N = 50_000
#: 4.5 standard errors of the difference of two independent estimates (module docstring).
TOL = 4.5 * math.sqrt(2 * 0.25 / N)
TESTS = {"signed_rank": bayesian_signed_rank_test, "sign": bayesian_sign_test}


def _probs(res):
    return np.array([float(res.p_left), float(res.p_rope), float(res.p_right)])


def _baycomp_probs(baycomp, kind, x, y, rope):
    test = baycomp.SignedRankTest if kind == "signed_rank" else baycomp.SignTest
    probs = test.probs(x, y, rope, nsamples=N, random_state=11)
    return np.array([probs[0], 0.0, probs[1]]) if rope == 0 else np.array(probs)


def _tables():
    """``{name: (DataFrame of accuracies, rope)}``: random tables with probabilities away
    from 0 and 1 (where the Monte Carlo comparison has power)."""
    rng = np.random.default_rng(2024)
    # baycomp-style: 53 datasets of accuracies, two learners close to each other
    acc = rng.uniform(0.6, 0.95, 53)
    style = pd.DataFrame({"nbc": acc, "aode": acc + rng.normal(0.006, 0.02, 53)})
    # few datasets, rope comparable to the differences
    small = pd.DataFrame({"p": rng.normal(0.8, 0.05, 12)})
    small["q"] = small["p"] + rng.normal(0.01, 0.03, 12)
    # ties included (equal scores on some datasets)
    tied = pd.DataFrame({"u": np.round(rng.uniform(0.7, 0.8, 25), 2)})
    tied["v"] = np.round(tied["u"] + rng.normal(0.002, 0.01, 25), 2)
    return {
        "baycomp_style": (style, 0.01),
        "small": (small, 0.01),
        "tied": (tied, 0.005),
    }


TABLES = _tables()


@pytest.mark.parametrize("kind", ["signed_rank", "sign"])
@pytest.mark.parametrize("with_rope", [True, False])
@pytest.mark.parametrize("name", list(TABLES))
def test_agrees_with_baycomp(name, with_rope, kind):
    baycomp = pytest.importorskip("baycomp")
    frame, rope = TABLES[name]
    rope = rope if with_rope else 0.0
    a, b = frame.columns
    res = TESTS[kind](frame, a, b, rope=rope, n_samples=N, seed=3, greater_is_better=True)
    expected = _baycomp_probs(baycomp, kind, frame[a].to_numpy(), frame[b].to_numpy(), rope)
    np.testing.assert_allclose(_probs(res), expected, atol=TOL, rtol=0)


#: baycomp 1.0.3's ``SignedRankTest.probs`` and ``SignTest.probs`` on :data:`TABLES`
#: (``nsamples=50000, random_state=123``), recorded so that the agreement is checked
#: where baycomp is not installed: ``{(table, rope): (signed-rank, sign)}``, rope-less
#: answers as ``(p_left, 0, p_right)``.
BAYCOMP_RECORDED = {
    ("baycomp_style", 0.01): ((0.0, 0.865, 0.135), (2e-05, 0.80962, 0.19036)),
    ("baycomp_style", 0.0): ((0.0007, 0.0, 0.9993), (0.00376, 0.0, 0.99624)),
    ("tied", 0.005): ((0.0042, 0.00334, 0.99246), (0.00106, 0.26106, 0.73788)),
    ("tied", 0.0): ((0.00408, 0.0, 0.99592), (0.00143, 0.0, 0.99857)),
}


@pytest.mark.parametrize("key", list(BAYCOMP_RECORDED), ids=str)
def test_agrees_with_recorded_baycomp_numbers(key):
    name, rope = key
    frame, _ = TABLES[name]
    a, b = frame.columns
    for test, expected in zip(TESTS.values(), BAYCOMP_RECORDED[key], strict=True):
        res = test(frame, a, b, rope=rope, n_samples=N, seed=12, greater_is_better=True)
        np.testing.assert_allclose(_probs(res), expected, atol=TOL, rtol=0)


def test_losses_agree_with_baycomp_on_negated_losses():
    """baycomp takes scores; a loss table (greater_is_better=False) is its negation."""
    baycomp = pytest.importorskip("baycomp")
    frame, rope = TABLES["small"]
    losses = 1.0 - frame
    res = bayesian_signed_rank_test(
        losses, "p", "q", rope=rope, n_samples=N, seed=4, greater_is_better=False
    )
    expected = _baycomp_probs(baycomp, "signed_rank", -losses["p"], -losses["q"], rope)
    np.testing.assert_allclose(_probs(res), expected, atol=TOL, rtol=0)


def test_probabilities_are_away_from_the_ends_where_compared():
    """The agreement test has power: some compared probabilities lie inside (0.05, 0.95)."""
    inner = []
    for kind, test in TESTS.items():
        for frame, rope in TABLES.values():
            a, b = frame.columns
            p = _probs(test(frame, a, b, rope=rope, seed=0, greater_is_better=True))
            inner.append(((p > 0.05) & (p < 0.95)).any())
            assert p.sum() == pytest.approx(1.0), kind
    assert sum(inner) >= 4


# --- answers known exactly -----------------------------------------------------------


@pytest.mark.parametrize("test", list(TESTS.values()))
def test_differences_far_above_the_rope_give_p_right_one(test):
    frame = pd.DataFrame({"a": np.linspace(0.5, 0.7, 10)})
    frame["b"] = frame["a"] + np.linspace(0.1, 0.2, 10)
    res = test(frame, "a", "b", rope=0.01, n_samples=20_000, seed=1, greater_is_better=True)
    assert float(res.p_right) > 0.999
    assert (res.wins, res.ties, res.losses) == (0, 0, 10)


@pytest.mark.parametrize("test", list(TESTS.values()))
def test_symmetric_differences_give_equal_left_and_right(test):
    d = np.array([0.03, 0.05, 0.08, 0.002, 0.12])
    frame = pd.DataFrame({"a": np.full(10, 0.7), "b": 0.7 + np.concatenate([d, -d])})
    res = test(frame, "a", "b", rope=0.01, n_samples=N, seed=2, greater_is_better=True)
    # the posterior is symmetric: both estimate the same probability (TOL as above)
    assert float(res.p_left) == pytest.approx(float(res.p_right), abs=TOL)
    assert 0.05 < float(res.p_left) < 0.95


def test_sign_test_without_prior_is_a_beta_tail():
    """prior = 0, no rope, no ties: θ_left ~ Beta(n_left, n_right) up to baycomp's 1e-4
    pseudo-counts, and P(left) = P(θ_left > 1/2) (scipy's beta survival function)."""
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"a": rng.uniform(0.6, 0.9, 17)})
    frame["b"] = frame["a"] + np.where(np.arange(17) < 7, -1, 1) * rng.uniform(0.01, 0.05, 17)
    res = bayesian_sign_test(frame, "a", "b", prior=0, n_samples=N, seed=5, greater_is_better=True)
    exact = stats.beta.sf(0.5, 7 + kbd.STABILITY, 10 + 2 * kbd.STABILITY)
    assert float(res.p_left) == pytest.approx(exact, abs=4.5 * math.sqrt(0.25 / N))


def test_signed_rank_draws_are_the_walsh_sums():
    """The vectorized draws equal the double sum over pairs, written out for a few draws."""
    diff = np.array([0.02, -0.01, 0.05, 0.0, 0.015])
    rope = 0.01
    draws = kbd.signed_rank_posterior(
        diff, rope, prior=0.5, n_samples=5, rng=np.random.default_rng(7)
    )
    weights = np.random.default_rng(7).dirichlet([0.5, 1, 1, 1, 1, 1], 5)
    z = np.concatenate([[0.0], diff])
    for w, got in zip(weights, draws, strict=True):
        left = right = 0.0
        for i in range(z.size):
            for j in range(z.size):
                s = z[i] + z[j]
                right += w[i] * w[j] * (1.0 if s > 2 * rope else 0.5 if s == 2 * rope else 0.0)
                left += w[i] * w[j] * (1.0 if -s > 2 * rope else 0.5 if -s == 2 * rope else 0.0)
        np.testing.assert_allclose(got, [left, 1 - left - right, right], atol=1e-12)


# --- direction ---------------------------------------------------------------------------


@pytest.mark.parametrize("test", list(TESTS.values()))
def test_losses_mirror_scores(test):
    frame, rope = TABLES["small"]
    scores = test(frame, "p", "q", rope=rope, seed=6, greater_is_better=True)
    as_losses = test(frame, "p", "q", rope=rope, seed=6, greater_is_better=False)
    negated = test(-frame, "p", "q", rope=rope, seed=6, greater_is_better=False)
    np.testing.assert_array_equal(_probs(negated), _probs(scores))
    if test is bayesian_signed_rank_test:  # the same weights, left and right swapped
        np.testing.assert_array_equal(_probs(as_losses), _probs(scores)[::-1])
    else:  # Dirichlet draws of the reversed parameters: equal within Monte Carlo error
        np.testing.assert_allclose(_probs(as_losses), _probs(scores)[::-1], atol=TOL, rtol=0)
    assert (as_losses.wins, as_losses.losses) == (scores.losses, scores.wins)


def test_direction_read_from_a_dataarray():
    frame, rope = TABLES["small"]
    da = xr.DataArray(
        frame.to_numpy(),
        dims=("dataset", "model"),
        coords={"model": list(frame.columns)},
        name="accuracy",
    )
    res = bayesian_signed_rank_test(da, "p", "q", rope=rope, seed=6)
    ref = bayesian_signed_rank_test(frame, "p", "q", rope=rope, seed=6, greater_is_better=True)
    np.testing.assert_array_equal(_probs(res), _probs(ref))
    renamed = da.rename(dataset="task")
    res = bayesian_signed_rank_test(renamed, "p", "q", rope=rope, seed=6, dataset_dim="task")
    np.testing.assert_array_equal(_probs(res), _probs(ref))


# --- the result ----------------------------------------------------------------------------


def test_posterior_is_labelled_and_gives_the_probabilities():
    frame, rope = TABLES["baycomp_style"]
    res = bayesian_signed_rank_test(
        frame, "nbc", "aode", rope=rope, n_samples=1000, seed=9, greater_is_better=True
    )
    post = res.posterior
    assert post.dims == ("chain", "draw", "region")
    assert post.shape == (1, 1000, 3)
    assert list(post.region.values) == ["left", "rope", "right"]
    np.testing.assert_allclose(post.sum("region"), 1.0)
    regions = xr.DataArray(np.arange(3), dims="region")
    share = (post.argmax("region") == regions).mean(("chain", "draw"))
    np.testing.assert_allclose(_probs(res), share.values)
    assert res.seed == 9 and res.n_samples == 1000 and res.n_datasets == 53


def test_seed_reproduces_and_none_is_recorded():
    frame, rope = TABLES["small"]
    one = bayesian_sign_test(frame, "p", "q", rope=rope, n_samples=500, greater_is_better=True)
    again = bayesian_sign_test(
        frame, "p", "q", rope=rope, n_samples=500, seed=one.seed, greater_is_better=True
    )
    np.testing.assert_array_equal(one.posterior, again.posterior)
    gen = bayesian_sign_test(
        frame,
        "p",
        "q",
        rope=rope,
        n_samples=500,
        seed=np.random.default_rng(one.seed),
        greater_is_better=True,
    )
    np.testing.assert_array_equal(gen.posterior, one.posterior)
    assert gen.seed is None


def test_verdict_names_the_learners_in_the_table_direction():
    frame = pd.DataFrame({"j48": np.linspace(0.7, 0.9, 15)})
    frame["nb"] = frame["j48"] - np.linspace(0.0, 0.03, 15)
    res = bayesian_signed_rank_test(frame, "nb", "j48", rope=0.01, seed=1, greater_is_better=True)
    p = _probs(res)
    text = str(res.verdict())
    assert f"probability {p[2]:.2f} that j48 is practically better on a new dataset" in text
    assert f"{p[1]:.2f} practically equivalent" in text
    errors = bayesian_signed_rank_test(
        1 - frame, "nb", "j48", rope=0.01, seed=1, greater_is_better=False
    )
    assert "that j48 is practically better" in str(errors.verdict())


def test_verdict_decides_at_095():
    frame = pd.DataFrame({"a": np.linspace(0.5, 0.7, 10)})
    frame["b"] = frame["a"] + 0.1
    res = bayesian_sign_test(frame, "a", "b", rope=0.01, seed=1, greater_is_better=True)
    assert "Decision: b is practically better." in str(res.verdict())
    same = frame.assign(b=frame["a"] + 0.001)
    res = bayesian_sign_test(same, "a", "b", rope=0.01, seed=1, greater_is_better=True)
    assert "Decision: a and b are practically equivalent." in str(res.verdict())


def test_reporting_protocol():
    frame, rope = TABLES["small"]
    res = cvstats.bayesian_signed_rank_test(
        frame, "p", "q", rope=rope, n_samples=2000, seed=1, greater_is_better=True
    )
    out = res.to_frame()
    assert list(out.columns) == list(cvstats.results.BAYES_DATASETS_FRAME_COLUMNS)
    assert out["p_left"].iloc[0] == float(res.p_left)
    assert "Bayesian signed-rank test, p vs q" in res.to_markdown()
    assert "p\\_left" in res.to_latex()
    assert "<table" in res.to_html()
    assert "Verdict" in str(res)
    assert repr(res).startswith("BayesianDatasetsResult")


# --- bad inputs ----------------------------------------------------------------------------


@pytest.mark.parametrize("test", list(TESTS.values()))
def test_bad_inputs(test):
    frame, _ = TABLES["small"]
    with pytest.raises(ArgumentError, match="at least 2 datasets"):
        test(frame.iloc[:1], "p", "q", greater_is_better=True)
    with pytest.raises(ArgumentError, match="must be finite"):
        test(frame.mask(frame > frame.median()), "p", "q", greater_is_better=True)
    with pytest.raises(ArgumentError, match=r"unknown learner\(s\) \['r'\]"):
        test(frame, "p", "r", greater_is_better=True)
    with pytest.raises(ArgumentError, match="two different learners"):
        test(frame, "p", "p", greater_is_better=True)
    with pytest.raises(ArgumentError, match="`greater_is_better` is required"):
        test(frame, "p", "q")
    with pytest.raises(ArgumentError, match=r"`rope` must be finite and >= 0, got -0\.01"):
        test(frame, "p", "q", rope=-0.01, greater_is_better=True)
    with pytest.raises(ArgumentError, match="`rope` must be a real number"):
        test(frame, "p", "q", rope=(-0.01, 0.01), greater_is_better=True)
    with pytest.raises(ArgumentError, match="`n_samples` must be a positive int, got 0"):
        test(frame, "p", "q", n_samples=0, greater_is_better=True)
    with pytest.raises(CvstatsTypeError, match="`seed` must be"):
        test(frame, "p", "q", seed=1.5, greater_is_better=True)
    tied = frame.assign(q=frame["p"])
    with pytest.raises(ArgumentError, match="same score on every dataset and `rope` = 0"):
        test(tied, "p", "q", greater_is_better=True)
    # with a rope, identical learners are practically equivalent
    res = test(tied, "p", "q", rope=0.01, seed=0, n_samples=2000, greater_is_better=True)
    assert float(res.p_rope) > 0.99


def test_bad_prior():
    frame, _ = TABLES["small"]
    with pytest.raises(ArgumentError, match=r"`prior` must be finite and > 0, got 0\.0"):
        bayesian_signed_rank_test(frame, "p", "q", prior=0, greater_is_better=True)
    with pytest.raises(ArgumentError, match=r"`prior` must be finite and >= 0, got -1\.0"):
        bayesian_sign_test(frame, "p", "q", prior=-1, greater_is_better=True)
    with pytest.raises(ArgumentError, match="`prior_region` must be one of"):
        bayesian_sign_test(frame, "p", "q", prior_region="middle", greater_is_better=True)


def test_simplex_plot_places_each_draw_at_its_probabilities():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frame, rope = TABLES["tied"]
    res = bayesian_sign_test(
        frame, "u", "v", rope=rope, n_samples=800, seed=2, greater_is_better=True
    )
    ax = res.plot()
    xy = np.asarray(ax.collections[0].get_offsets())
    # barycentric coordinates of the corners left (0, 0), rope (1/2, √3/2), right (1, 0)
    rope_share = xy[:, 1] / (math.sqrt(3) / 2)
    right = xy[:, 0] - rope_share / 2
    back = np.column_stack([1 - rope_share - right, rope_share, right])
    np.testing.assert_allclose(back, res.posterior.isel(chain=0).values, atol=1e-12)
    texts = [t.get_text() for t in ax.texts]
    assert texts[0].startswith("u better") and texts[2].startswith("v better")
    assert f"{float(res.p_rope):.3f}" in texts[1]
    plt.close("all")
