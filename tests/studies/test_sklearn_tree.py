"""The studies' scikit-learn tree path without per-call checks equals the plain calls."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from cvstats.studies._sklearn_tree import sklearn_tree_predict

TREE = {"min_samples_split": 10, "min_samples_leaf": 5, "random_state": 0}


def _splits(rng: np.random.Generator, n: int, n1: int, S: int) -> tuple[np.ndarray, np.ndarray]:
    perm = np.stack([rng.permutation(n) for _ in range(S)])
    return perm[:, :n1], perm[:, n1:]


def _plain(est, X, y, train, test):  # noqa: ANN001, ANN202
    return np.stack(
        [est.fit(X[tr], y[tr]).predict(X[te]) for tr, te in zip(train, test, strict=True)]
    )


@pytest.mark.parametrize("seed", [3, 11])
def test_regressor_equals_plain_calls_on_continuous_data(seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(160, 3))
    y = (X[:, 0] + rng.normal(size=160) > 0).astype(float)
    train, test = _splits(rng, 160, 110, 12)
    got = sklearn_tree_predict(DecisionTreeRegressor(**TREE), X, y, train, test)
    want = _plain(DecisionTreeRegressor(**TREE), X, y, train, test)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 2  # real trees, not constant predictions


def test_classifier_equals_plain_calls_on_tied_integer_features() -> None:
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, size=(200, 8)).astype(float)  # many ties, constant features in nodes
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 3, 200)) % 7
    train, test = _splits(rng, 200, 150, 15)
    got = sklearn_tree_predict(DecisionTreeClassifier(**TREE), X, y, train, test)
    want = _plain(DecisionTreeClassifier(**TREE), X, y, train, test)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 3


def test_bad_parameters_and_data_are_still_refused() -> None:
    from sklearn.utils._param_validation import InvalidParameterError  # noqa: PLC2701

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(float)
    train, test = _splits(rng, 40, 30, 3)
    with pytest.raises(InvalidParameterError, match="min_samples_leaf"):
        sklearn_tree_predict(DecisionTreeRegressor(min_samples_leaf=0), X, y, train, test)
    X[7, 1] = np.nan
    with pytest.raises(ValueError, match="`X` has values that are NaN or infinite"):
        sklearn_tree_predict(DecisionTreeRegressor(), X, y, train, test)
    X[7, 1] = 1e39  # finite in float64, infinite in float32
    with pytest.raises(ValueError, match="infinite as float32"):
        sklearn_tree_predict(DecisionTreeRegressor(), X, y, train, test)
    with pytest.raises(ValueError, match="one row per split"):
        sklearn_tree_predict(DecisionTreeRegressor(), X[:, :1] * 0 + 1, y, train, test[:2])
    with pytest.raises(ValueError, match="must be 2-D"):
        sklearn_tree_predict(DecisionTreeRegressor(), X[:, 0], y, train, test)
