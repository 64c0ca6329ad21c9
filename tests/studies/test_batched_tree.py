"""The batched regression tree equals scikit-learn's DecisionTreeRegressor (issue 31)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

from cvstats.errors import ArgumentError
from cvstats.studies.batched_tree import regression_tree_predict, regression_tree_predict_exact


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


def test_training_set_smaller_than_min_samples_split_is_one_leaf() -> None:
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    train = _subsets(rng, 30, 9, 4)
    pred, _ = regression_tree_predict(X, y, train)
    np.testing.assert_allclose(pred, np.broadcast_to(y[train].mean(axis=1)[:, None], (4, 30)))
