import re

import numpy as np
import pytest
import xarray as xr
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

from cvstats import studies as st
from cvstats.errors import ArgumentError
from cvstats.studies import classification
from cvstats.studies._splits import dataset_rngs, gather_sums
from cvstats.studies.classification import (
    classification_problem,
    monte_carlo_truth,
    ols_classifier_from_sums,
    run_classification,
)

SIZES = {"J": 3, "M": 2, "R": 2, "J_rep": 3}


def test_generator_matches_the_simulation():
    p = classification_problem(2)
    data = p.sample(np.random.default_rng(0), 20_000)
    y = data[:, 2]
    assert abs(y.mean() - 0.5) < 0.02
    np.testing.assert_allclose(data[y == 1, :2].mean(0), [1, 1], atol=0.03)
    np.testing.assert_allclose(data[y == 1, :2].var(0), [1 / 6, 1 / 6], rtol=0.05)
    np.testing.assert_allclose(data[y == 0, :2].var(0), [1, 1], rtol=0.05)


def test_batched_learners_equal_sklearn_split_by_split():
    p = classification_problem(1)
    r_data, r_split = dataset_rngs(0, 1, 0)
    data = p.generate(r_data)
    sp = st.draw_study_splits(r_split, p.n, **SIZES)
    c = "9n/10,n/10"
    te, tr = sp.main_test[c][None], sp.main_train[c][None]
    stats = p.stats(data[None])
    tsum, trsum = gather_sums(stats, te), gather_sums(stats, tr)
    means = p.split_means(data[None], te, tr, tsum, trsum)[0]
    beta = ols_classifier_from_sums(trsum)[0]
    X, y = data[:, :2], data[:, 2]
    for j in range(SIZES["J"]):
        ols = LinearRegression().fit(X[tr[0, j]], y[tr[0, j]])
        np.testing.assert_allclose(beta[j], [ols.intercept_, *ols.coef_], rtol=1e-9, atol=1e-12)
        err_b = np.mean((ols.predict(X[te[0, j]]) > 0.5) != (y[te[0, j]] > 0.5))
        tree = DecisionTreeRegressor(min_samples_split=10, min_samples_leaf=5, random_state=0)
        tree.fit(X[tr[0, j]], y[tr[0, j]])
        err_a = np.mean((tree.predict(X[te[0, j]]) > 0.5) != (y[te[0, j]] > 0.5))
        np.testing.assert_allclose(means[j], [err_a, err_b])
    # per-example losses of one split agree with the split means
    ex = p.example_losses(data[None], te[:, 0], tr[:, 0])[0]
    np.testing.assert_allclose(ex.mean(axis=0), means[0])


def test_run_classification_tiny(tmp_path):
    ds = run_classification(1, 3, tmp_path, n=40, truth_sets=5, **SIZES)
    assert set(ds["quantity"].values) == {"A", "B", "A-B"}
    assert ((ds["main"].sel(quantity=["A", "B"]) >= 0) & (ds["main"] <= 1)).all()
    res = st.method_results(ds, J=3, M=2, R=2)
    rates = st.rejection_rates(res, st.targets(ds, res))
    assert rates.notnull().any()
    assert "truth" in ds and ds["truth"].sel(quantity="B").min() > 0.1


def test_monte_carlo_truth_is_reproducible():
    p = classification_problem(1)
    a = monte_carlo_truth(p, 100, train_sets=5, n_test=2000, seed=1)
    b = monte_carlo_truth(p, 100, train_sets=5, n_test=2000, seed=1)
    assert a == b
    assert 0.15 < a["B"][0] < 0.3  # OLS error is near the linear Bayes error here


def test_monte_carlo_truth_standard_error_counts_the_common_test_sample():
    """The reported se matches the spread of the truth estimate over independent seeds.

    Before, the se was the spread over training sets only, which misses the noise of the
    one test sample shared by all of them: for the OLS classifier it was 2x too small here.
    """
    p = classification_problem(1)
    runs = [monte_carlo_truth(p, 50, train_sets=5, n_test=400, seed=s) for s in range(60)]
    for q in ("A", "B", "A-B"):
        estimates = np.array([r[q][0] for r in runs])
        mean_se = np.sqrt(np.mean([r[q][1] ** 2 for r in runs]))
        # sd over 60 seeds has a relative error of about 1/sqrt(118) ≈ 9 %
        assert 0.75 < estimates.std(ddof=1) / mean_se < 1.3, q


def test_unknown_simulation_is_rejected():
    with pytest.raises(ArgumentError, match="`simulation` must be one of"):
        classification_problem(0)


def test_batched_and_sklearn_trees_give_identical_study_results():
    # both paths of learner A: every split mean of every block equal (issue 31)
    runs = {
        tree: st.compute_batch(classification_problem(2, n=80, tree=tree), 3, [0, 1], **SIZES)
        for tree in ("batched", "sklearn")
    }
    xr.testing.assert_identical(runs["batched"], runs["sklearn"])
    assert float(runs["batched"]["main"].sel(quantity="A").std()) > 0
    # the path is not a parameter of the results: same run signature, resumable either way
    assert classification_problem(1, tree="batched").params() == classification_problem(1).params()
    with pytest.raises(ArgumentError, match="`tree` must be one of"):
        classification_problem(1, tree="numba")


def test_monte_carlo_truth_default_test_sample_is_100000():
    # the default test sample of the truth is 100 000 examples (it was 20 000)
    p = classification_problem(2, n=60)
    default = monte_carlo_truth(p, 30, train_sets=2, seed=4)
    assert default == monte_carlo_truth(p, 30, train_sets=2, n_test=100_000, seed=4)
    assert default != monte_carlo_truth(p, 30, train_sets=2, n_test=20_000, seed=4)
    with pytest.raises(ArgumentError, match=r"`n_test` must be an int >= 2, got 1\.5"):
        monte_carlo_truth(p, 30, train_sets=2, n_test=1.5)


@pytest.mark.parametrize("tree", ["batched", "sklearn"])
def test_monte_carlo_truth_in_chunks_of_training_sets_equals_one_chunk(monkeypatch, tree):
    # the training sets are scored in chunks (memory); the chunks do not change the truth
    p = classification_problem(3, n=300, tree=tree)
    whole = monte_carlo_truth(p, 120, train_sets=7, n_test=1500, seed=2)
    monkeypatch.setattr(classification, "_TRUTH_CHUNK", 3 * (120 + 1500))  # 3 sets a chunk
    assert monte_carlo_truth(p, 120, train_sets=7, n_test=1500, seed=2) == whole
    monkeypatch.setattr(classification, "_TRUTH_CHUNK", 1)  # one set a chunk
    assert monte_carlo_truth(p, 120, train_sets=7, n_test=1500, seed=2) == whole


def test_truth_test_size_reaches_the_truth_of_a_run(tmp_path):
    # run_classification(truth_test_size=) is the n_test of every truth of the run,
    # also when the run is only read (compute=False); default 100 000
    kw = {"n": 40, "truth_sets": 3, **SIZES}
    ds = run_classification(4, 2, tmp_path, truth_test_size=1500, **kw)
    p = classification_problem(4, n=40)
    for n1 in (20, 36):  # n/2 (also truth_half) and 9n/10
        want = monte_carlo_truth(p, n1, train_sets=3, n_test=1500, seed=0)
        got = ds.isel(config=int(np.flatnonzero(ds["n1"].values == n1)[0]))
        for q, (value, se) in want.items():
            assert float(got["truth"].sel(quantity=q)) == value
            assert float(got["truth_se"].sel(quantity=q)) == se
    half = monte_carlo_truth(p, 20, train_sets=3, n_test=1500, seed=0)
    assert float(ds["truth_half_se"].sel(quantity="B")) == half["B"][1]
    read = run_classification(4, 2, tmp_path, compute=False, **kw)  # the default size
    default = monte_carlo_truth(p, 36, train_sets=3, n_test=100_000, seed=0)
    assert float(read["truth"].sel(config="9n/10,n/10", quantity="A")) == default["A"][0]
    truths = ["truth", "truth_se", "truth_half", "truth_half_se"]
    xr.testing.assert_identical(read.drop_vars(truths), ds.drop_vars(truths))


@pytest.mark.parametrize("bad", [999, 0, -5, 1500.0, 1e5, True, "100000", None])
def test_bad_truth_test_size_refused_before_any_batch(tmp_path, bad):
    out = tmp_path / "out"
    message = rf"`truth_test_size` must be an int >= 1000 .*got {re.escape(repr(bad))}; leave"
    with pytest.raises(ArgumentError, match=message):
        run_classification(1, 2, out, n=40, truth_sets=2, truth_test_size=bad, **SIZES)
    assert not out.exists()
