"""Tests of cvstats.losses: each loss against an independent per-example computation."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import (
    log_loss,
    mean_absolute_error,
    mean_squared_error,
    zero_one_loss,
)

from cvstats.designs.losses import LOSSES, absolute, get_loss, log, squared, zero_one
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError

RNG = np.random.default_rng(20240601)


def test_zero_one_matches_sklearn_per_example():
    y_true = RNG.integers(0, 3, size=50)
    y_pred = RNG.integers(0, 3, size=50)
    got = zero_one(y_true, y_pred)
    # sklearn.metrics.zero_one_loss on each single example (normalize=False counts errors)
    expected = [
        zero_one_loss([t], [p], normalize=False) for t, p in zip(y_true, y_pred, strict=True)
    ]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)


def test_zero_one_string_labels():
    got = zero_one(np.array(["a", "b", "c"]), ["a", "c", "c"])
    np.testing.assert_array_equal(got, [0.0, 1.0, 0.0])


@pytest.mark.parametrize(
    ("fn", "metric"), [(squared, mean_squared_error), (absolute, mean_absolute_error)]
)
def test_regression_losses_match_sklearn_per_example(fn, metric):
    y_true = RNG.normal(size=40)
    y_pred = RNG.normal(size=40)
    got = fn(y_true, y_pred)
    expected = [metric([t], [p]) for t, p in zip(y_true, y_pred, strict=True)]
    assert got.dtype == np.float64 and got.shape == (40,)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_regression_losses_integer_input():
    # integer targets: computed in float64, no overflow or integer wrap-around
    y_true = np.array([0, 2**40], dtype=np.int64)
    y_pred = np.array([3, 0], dtype=np.int64)
    np.testing.assert_array_equal(squared(y_true, y_pred), [9.0, 2.0**80])
    np.testing.assert_array_equal(absolute(y_true, y_pred), [3.0, 2.0**40])


def test_log_matches_sklearn_per_example():
    classes = np.array([0, 1, 2])
    y_true = RNG.integers(0, 3, size=30)
    proba = RNG.dirichlet(np.ones(3), size=30)
    got = log(y_true, proba, classes)
    expected = [log_loss([t], [p], labels=classes) for t, p in zip(y_true, proba, strict=True)]
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_log_unsorted_string_classes():
    classes = np.array(["spam", "ham"])
    proba = np.array([[0.1, 0.9], [0.9, 0.1], [0.8, 0.2], [0.35, 0.65]])
    y_true = np.array(["ham", "spam", "spam", "ham"])
    # probability of the true class, read off by hand: column 1 is "ham"
    expected = -np.log([0.9, 0.9, 0.8, 0.65])
    np.testing.assert_allclose(log(y_true, proba, classes), expected, rtol=1e-15)


def test_log_clips_zero_probability_to_eps():
    eps = np.finfo(float).eps
    got = log([0, 1], [[0.0, 1.0], [0.0, 1.0]], [0, 1])
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, [-np.log(eps), -np.log(1 - eps)])
    # same convention as sklearn.metrics.log_loss
    np.testing.assert_allclose(got[0], log_loss([0], [[0.0, 1.0]], labels=[0, 1]))


def test_log_errors():
    with pytest.raises(CubeError, match=r"`proba` must have shape \(n_test, n_classes\)"):
        log([0, 1], [[0.5, 0.5]], [0, 1])
    with pytest.raises(CubeError, match=r"labels \[7\] of `y_true` are not in `classes`"):
        log([0, 7], [[0.5, 0.5], [0.5, 0.5]], [0, 1])
    with pytest.raises(CubeError, match="`classes` must be unique"):
        log([0, 1], [[0.5, 0.5], [0.5, 0.5]], [1, 1])
    with pytest.raises(CubeError, match="`y_true` must be 1-D"):
        log([[0, 1]], [[0.5, 0.5]], [0, 1])
    with pytest.raises(CubeError, match="`classes` must be 1-D"):
        log([0], [[0.5, 0.5]], [[0, 1]])


@pytest.mark.parametrize("fn", [zero_one, squared, absolute])
def test_shape_mismatch(fn):
    with pytest.raises(CubeError, match="`y_true` and `y_pred` must have the same shape"):
        fn([0, 1, 2], [[0], [1], [2]])


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_get_loss_builtin(name):
    got_name, fn, needs_proba = get_loss(name)
    assert got_name == name
    assert fn is LOSSES[name]
    assert needs_proba is (name == "log")


def test_get_loss_callable():
    def hinge(y_true, y_pred):
        return np.maximum(0.0, 1.0 - y_true * y_pred)

    assert get_loss(hinge) == ("hinge", hinge, False)


def test_get_loss_callable_without_name():
    class Scaled:
        def __call__(self, y_true, y_pred):
            return 2 * squared(y_true, y_pred)

    loss = Scaled()
    assert get_loss(loss)[0] == "Scaled"


def test_get_loss_unknown_name_lists_valid_names():
    with pytest.raises(
        ArgumentError, match=r"`loss` must be one of \['absolute', 'log', 'squared', 'zero_one'\]"
    ):
        get_loss("hinge")


def test_get_loss_wrong_type():
    with pytest.raises(CvstatsTypeError, match="got an object of type int"):
        get_loss(3)
