"""The batched trees equal scikit-learn's DecisionTreeRegressor and DecisionTreeClassifier."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from cvstats.errors import ArgumentError
from cvstats.studies.batched_tree import (
    choose_tree_path,
    classification_tree_predict,
    regression_tree_predict,
    regression_tree_predict_exact,
)


def _sklearn(
    X: np.ndarray, y: np.ndarray, train: np.ndarray, split: int, leaf: int, seed: int = 0
) -> np.ndarray:
    return np.array(
        [
            DecisionTreeRegressor(
                min_samples_split=split, min_samples_leaf=leaf, random_state=seed
            )
            .fit(X[tr], y[tr])
            .predict(X)
            for tr in train
        ]
    )


def _subsets(rng: np.random.Generator, n: int, n1: int, S: int) -> np.ndarray:
    return np.array([rng.choice(n, n1, replace=False) for _ in range(S)])


@pytest.mark.parametrize(
    ("n", "n1", "p", "split", "leaf"), [(90, 60, 2, 10, 5), (80, 60, 3, 6, 3)]
)
def test_real_valued_responses_give_sklearns_predictions(
    n: int, n1: int, p: int, split: int, leaf: int
) -> None:
    rng = np.random.default_rng(31 + p)
    X = rng.standard_t(3, size=(n, p))
    y = X[:, 0] * X[:, -1] + rng.normal(size=n)
    train = _subsets(rng, n, n1, 40)
    pred, tied = regression_tree_predict(
        X, y, train, min_samples_split=split, min_samples_leaf=leaf
    )
    ref = _sklearn(X, y, train, split, leaf)
    assert (~tied).sum() >= 3
    # leaf means summed in another order: equal to rounding
    np.testing.assert_allclose(pred[~tied], ref[~tied], rtol=1e-12, atol=1e-12)
    exact = regression_tree_predict_exact(
        X, y, train, min_samples_split=split, min_samples_leaf=leaf
    )
    np.testing.assert_allclose(exact, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("p", "seed"), [(2, 0), (3, 0), (5, 3)])
def test_zero_one_responses_give_sklearns_predictions_exactly(p: int, seed: int) -> None:
    # ties between features are frequent with 0/1 responses: sklearn's visiting order decides
    rng = np.random.default_rng(7 + p)
    n = 120
    X = rng.normal(size=(n, p))
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * X[:, 0] + X[:, 1]))).astype(float)
    train = _subsets(rng, n, 70, 60)
    pred, tied = regression_tree_predict(X, y, train, random_state=seed)
    assert not tied.any()
    np.testing.assert_array_equal(pred, _sklearn(X, y, train, 10, 5, seed))


@pytest.mark.parametrize("levels", [(0, 1, 2, 5), (-3, 4)])
def test_integer_responses_give_sklearns_predictions_exactly(levels: tuple[int, ...]) -> None:
    # integer responses other than 0/1: exact integer sums, children's sums by bincount
    rng = np.random.default_rng(len(levels))
    n, p = 110, 3
    X = rng.standard_t(4, size=(n, p))
    y = rng.choice(np.array(levels, dtype=float), size=n)
    y[X[:, 1] > 0.5] = levels[-1]
    train = _subsets(rng, n, 80, 40)
    pred, tied = regression_tree_predict(X, y, train, random_state=2)
    assert not tied.any()
    np.testing.assert_array_equal(pred, _sklearn(X, y, train, 10, 5, 2))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(12, 90), share=st.floats(0.3, 0.9))
def test_zero_one_trees_equal_sklearn_on_random_subsets(seed: int, n: int, share: float) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * rng.exponential(size=2)
    y = (rng.random(n) < 0.5 + 0.4 * np.sin(3 * X[:, 0] * X[:, 1])).astype(float)
    train = _subsets(rng, n, max(1, int(share * n)), 12)
    pred, tied = regression_tree_predict(X, y, train)
    assert not tied.any()
    np.testing.assert_array_equal(pred, _sklearn(X, y, train, 10, 5))


def test_bad_inputs_are_named() -> None:
    X = np.zeros((5, 2))
    with pytest.raises(ArgumentError, match="`train_idx` must index"):
        regression_tree_predict(X, np.zeros(5), np.array([[0, 5]]))
    with pytest.raises(ArgumentError, match="`X` must have shape"):
        regression_tree_predict(X, np.zeros(4), np.array([[0, 1]]))
    with pytest.raises(ArgumentError, match="`min_samples_split` must be >= 2"):
        regression_tree_predict(X, np.zeros(5), np.array([[0, 1]]), min_samples_split=1)
    with pytest.raises(ArgumentError, match="`train_idx` must hold distinct indices"):
        classification_tree_predict(X, np.zeros(5), np.array([[0, 1], [2, 2]]))
    with pytest.raises(ArgumentError, match="`train_idx` must hold integers"):
        regression_tree_predict(X, np.zeros(5), np.array([[0.0, 1.0]]))
    with pytest.raises(ArgumentError, match="`X` must be finite"):
        regression_tree_predict(np.where(X == 0, np.nan, X), np.zeros(5), np.array([[0, 1]]))
    with pytest.raises(ArgumentError, match="`y` must be finite"):
        regression_tree_predict(X, np.array([0, 1, np.inf, 0, 0]), np.array([[0, 1]]))
    with pytest.raises(ArgumentError, match=r"`X` must have shape \(n, p\)"):
        classification_tree_predict(np.zeros((2, 5, 2)), np.zeros(5), np.array([[0, 1]]))


def test_training_set_smaller_than_min_samples_split_is_one_leaf() -> None:
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    train = _subsets(rng, 30, 9, 4)
    pred, _ = regression_tree_predict(X, y, train)
    np.testing.assert_allclose(pred, np.broadcast_to(y[train].mean(axis=1)[:, None], (4, 30)))


def _sklearn_classifier(
    X: np.ndarray, y: np.ndarray, train: np.ndarray, seed: int = 0
) -> np.ndarray:
    return np.array(
        [
            DecisionTreeClassifier(min_samples_split=10, min_samples_leaf=5, random_state=seed)
            .fit(X[tr], y[tr])
            .predict(X)
            for tr in train
        ]
    )


@pytest.mark.parametrize(("K", "p", "seed"), [(2, 2, 0), (3, 4, 1), (7, 3, 5)])
def test_gini_trees_equal_sklearn_on_continuous_features(K: int, p: int, seed: int) -> None:
    rng = np.random.default_rng(100 + K)
    n = 110
    X = rng.standard_t(4, size=(n, p))
    score = X[:, 0] - X[:, -1] + 0.8 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, K + 1)[1:-1]))
    labels = np.array([f"c{k}" for k in range(K)])[y]  # any sortable labels
    train = _subsets(rng, n, 75, 40)
    pred, tied = classification_tree_predict(X, labels, train, random_state=seed)
    assert not tied.any()
    np.testing.assert_array_equal(pred, _sklearn_classifier(X, labels, train, seed))


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(12, 80), K=st.integers(2, 5))
def test_gini_trees_equal_sklearn_on_random_subsets(seed: int, n: int, K: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * rng.exponential(size=3)
    y = (np.floor(K * rng.random(n) ** (1 + (X[:, 0] > 0)))).astype(int)
    train = _subsets(rng, n, max(1, int(0.7 * n)), 10)
    pred, tied = classification_tree_predict(X, y, train)
    assert not tied.any()
    np.testing.assert_array_equal(pred, _sklearn_classifier(X, y, train))


def test_gini_trees_on_integer_features_follow_the_stated_rule() -> None:
    # letter-like data: integer features tie often and are often constant in a
    # node, so scikit-learn's visiting order (hence a tie's winner) may differ:
    # such trees are flagged, every other tree equals scikit-learn's, and the
    # error rates agree within Monte Carlo error
    rng = np.random.default_rng(2026)
    diffs, flagged = [], 0
    for _ in range(12):
        n = 160
        X = rng.integers(0, 6, size=(n, 6)).astype(float)
        y = (X[:, 0] + X[:, 1] - X[:, 2] + rng.integers(0, 4, size=n)) % 5
        train = _subsets(rng, n, 110, 25)
        test = np.array([np.setdiff1d(np.arange(n), tr) for tr in train])
        pred, tied = classification_tree_predict(X, y, train, test_idx=test)
        ref = np.take_along_axis(_sklearn_classifier(X, y, train), test, axis=1)
        np.testing.assert_array_equal(pred[~tied], ref[~tied])
        flagged += tied.sum()
        diffs.append(((pred != y[test]).mean(axis=1) - (ref != y[test]).mean(axis=1)).mean())
    assert flagged > 0  # the rule is exercised
    d = np.asarray(diffs)
    assert abs(d.mean()) < 3 * d.std(ddof=1) / np.sqrt(len(d)) + 1e-12


def test_regression_on_tied_features_flags_or_equals_sklearn() -> None:
    rng = np.random.default_rng(4)
    n = 100
    X = rng.integers(0, 4, size=(n, 3)).astype(float)
    y = (X[:, 0] + rng.integers(0, 3, size=n) > 3).astype(float)
    train = _subsets(rng, n, 70, 30)
    pred, tied = regression_tree_predict(X, y, train)
    ref = _sklearn(X, y, train, 10, 5)
    np.testing.assert_array_equal(pred[~tied], ref[~tied])
    np.testing.assert_array_equal(regression_tree_predict_exact(X, y, train), ref)


def test_test_idx_picks_the_predictions_of_every_example() -> None:
    rng = np.random.default_rng(8)
    X, y = rng.normal(size=(60, 2)), rng.integers(0, 3, size=60)
    train = _subsets(rng, 60, 40, 6)
    test = np.array([np.setdiff1d(np.arange(60), tr)[:15] for tr in train])
    full, _ = classification_tree_predict(X, y, train)
    part, _ = classification_tree_predict(X, y, train, test_idx=test)
    np.testing.assert_array_equal(part, np.take_along_axis(full, test, axis=1))
    with pytest.raises(ArgumentError, match="`test_idx` must have shape"):
        classification_tree_predict(X, y, train, test_idx=test[:3])
    with pytest.raises(ArgumentError, match="`test_idx` must index"):
        regression_tree_predict(X, y, train, test_idx=test + 60)


def test_one_class_and_small_training_sets_are_single_leaves() -> None:
    rng = np.random.default_rng(9)
    X = rng.normal(size=(40, 2))
    y = np.where(np.arange(40) < 20, 3, 7)
    train = np.array([np.arange(15), np.arange(25, 40), np.arange(10, 25)])  # one class, one, two
    pred, tied = classification_tree_predict(X, y, train)
    assert not tied.any()
    np.testing.assert_array_equal(pred, _sklearn_classifier(X, y, train))
    np.testing.assert_array_equal(pred[0], 3)
    np.testing.assert_array_equal(pred[1], 7)
    small = np.array([np.arange(16, 24), np.arange(18, 26)])  # 8 < min_samples_split
    pred, _ = classification_tree_predict(X, y, small)
    np.testing.assert_array_equal(pred, _sklearn_classifier(X, y, small))
    # 4 of each class: the smaller label; 2 against 6: the majority
    np.testing.assert_array_equal(pred[:, 0], [3, 7])


def test_tree_path_option() -> None:
    assert choose_tree_path("auto", 200, 1000) == "batched"
    assert choose_tree_path("auto", 2000, 1000) == "sklearn"
    assert choose_tree_path("sklearn", 200, 1000) == "sklearn"
    with pytest.raises(ArgumentError, match="`tree` must be one of.*got 'fast'"):
        choose_tree_path("fast", 200, 1000)


@pytest.mark.slow
def test_letter_tree_error_rates_agree_with_sklearn() -> None:
    # the letter study's data (16 integer features, 26 classes), 20 datasets of
    # n = 300 with 60 half splits each: unflagged trees equal, paired error rates
    # agree within Monte Carlo error (the batched tie rule; issue 31)
    from cvstats.studies.letter import load_letter

    features, labels = load_letter()
    rng = np.random.default_rng(31)
    diffs = []
    for _ in range(20):
        rows = rng.choice(len(labels), 300, replace=False)
        X, y = features[rows].astype(float), labels[rows]
        train = _subsets(rng, 300, 150, 60)
        test = np.array([np.setdiff1d(np.arange(300), tr) for tr in train])
        pred, tied = classification_tree_predict(X, y, train, test_idx=test)
        ref = np.take_along_axis(_sklearn_classifier(X, y, train), test, axis=1)
        np.testing.assert_array_equal(pred[~tied], ref[~tied])
        diffs.append(np.mean(pred != y[test]) - np.mean(ref != y[test]))
    d = np.asarray(diffs)
    assert abs(d.mean()) < 3 * d.std(ddof=1) / np.sqrt(len(d))


def test_datasets_grown_together_equal_one_by_one() -> None:
    rng = np.random.default_rng(12)
    B, n = 3, 70
    X = rng.normal(size=(B, n, 3))
    y = rng.integers(0, 4, size=(B, n))
    train = np.stack([_subsets(rng, n, 50, 8) for _ in range(B)])
    test = np.stack([np.array([np.setdiff1d(np.arange(n), tr) for tr in t]) for t in train])
    pred, tied = classification_tree_predict(X, y, train, test_idx=test)
    assert pred.shape == test.shape and tied.shape == (B, 8)
    for b in range(B):
        one, _ = classification_tree_predict(X[b], y[b], train[b], test_idx=test[b])
        np.testing.assert_array_equal(pred[b], one)
    yr = (y > 1).astype(float)
    np.testing.assert_array_equal(
        regression_tree_predict_exact(X, yr, train)[1], _sklearn(X[1], yr[1], train[1], 10, 5)
    )


@pytest.mark.parametrize("entries", [1, 2 * 8 * 50])  # one dataset per chunk, two per chunk
def test_datasets_grown_in_chunks_equal_all_together(
    monkeypatch: pytest.MonkeyPatch, entries: int
) -> None:
    import cvstats.studies.batched_tree as bt

    rng = np.random.default_rng(31)
    B, n = 5, 70
    X = rng.normal(size=(B, n, 2))
    y = (X[..., 0] + rng.normal(size=(B, n)) > 0).astype(float)
    train = np.stack([_subsets(rng, n, 50, 8) for _ in range(B)])
    test = np.stack([np.array([np.setdiff1d(np.arange(n), tr) for tr in t]) for t in train])
    whole = regression_tree_predict(X, y, train, test_idx=test)
    gini = classification_tree_predict(X, y, train)
    monkeypatch.setattr(bt, "_CHUNK_ENTRIES", entries)
    for got, want in zip(
        (
            regression_tree_predict(X, y, train, test_idx=test),
            classification_tree_predict(X, y, train),
        ),
        (whole, gini),
        strict=True,
    ):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert len(np.unique(whole[0])) > 2


def test_values_one_or_two_float32_steps_apart_are_ties_as_in_sklearn() -> None:
    # scikit-learn adds its FEATURE_THRESHOLD (1e-7) in float32: values 1 step apart in
    # [1, 2) (1.19e-7) or 2 steps apart in [0.5, 1) are not split points there, though
    # they differ by more than 1e-7 (Table 3, simulation 3 had such pairs)
    rng = np.random.default_rng(8)
    n = 120
    ulp = np.spacing(np.float32(1.0))
    X = np.stack(
        [
            np.float32(1.0) + ulp * rng.permutation(n // 2 * 3)[:n].astype(np.float32),
            np.float32(0.5) + ulp / 2 * rng.permutation(2 * n)[:n].astype(np.float32),
        ],
        axis=1,
    ).astype(np.float64)
    gaps = np.diff(np.sort(X.astype(np.float32), axis=0), axis=0)
    assert (gaps[:, 0] == ulp).sum() > 10 and (gaps[:, 1] == ulp).sum() > 10  # such pairs
    y = (rng.random(n) < 0.2 + 0.6 * (X[:, 0] > 1 + 90 * ulp)).astype(float)
    train = _subsets(rng, n, 90, 40)
    want = _sklearn(X, y, train, 10, 5)
    np.testing.assert_array_equal(regression_tree_predict_exact(X, y, train), want)
    pred, tied = regression_tree_predict(X, y, train)
    np.testing.assert_array_equal(pred[~tied], want[~tied])
    assert (~tied).sum() > 30
    gini, gtied = classification_tree_predict(X, y, train)
    tree = DecisionTreeClassifier(min_samples_split=10, min_samples_leaf=5, random_state=0)
    want_gini = np.array([tree.fit(X[tr], y[tr]).predict(X) for tr in train])
    np.testing.assert_array_equal(gini[~gtied], want_gini[~gtied])
    assert (~gtied).sum() > 30
