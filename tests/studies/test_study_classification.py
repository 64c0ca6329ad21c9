import numpy as np
import pytest
import xarray as xr
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

from cvstats import studies as st
from cvstats.errors import ArgumentError
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
