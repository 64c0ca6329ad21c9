"""Per-example loss functions for :func:`cvstats.collect`.

Every function here maps the targets and predictions of one test set to one
loss per test example, vectorized with numpy (no Python loop over examples):

* :func:`zero_one` -- misclassification indicator;
* :func:`squared` -- squared error;
* :func:`absolute` -- absolute error;
* :func:`log` -- negative log probability of the true class.

:func:`get_loss` resolves the ``loss=`` argument of :func:`cvstats.collect`
(one of the names above, or a user callable) to a ``(name, function,
needs_proba)`` triple.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError

__all__ = ["LOSSES", "absolute", "get_loss", "log", "squared", "zero_one"]


def zero_one(y_true: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Misclassification indicator ``1{y_pred != y_true}`` per example.

    Parameters
    ----------
    y_true : array-like of shape (n_test,)
        True labels.
    y_pred : array-like of shape (n_test,)
        Predicted labels.

    Returns
    -------
    numpy.ndarray of shape (n_test,)
        ``1.0`` where the prediction is wrong, ``0.0`` where it is right.

    Examples
    --------
    >>> zero_one([0, 1, 1], [0, 0, 1])
    array([0., 1., 0.])
    """
    y_true, y_pred = _pair(y_true, y_pred, "zero_one")
    return np.not_equal(y_true, y_pred).astype(np.float64)


def squared(y_true: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Squared error ``(y_pred - y_true)**2`` per example.

    Parameters
    ----------
    y_true : array-like of shape (n_test,)
        True targets.
    y_pred : array-like of shape (n_test,)
        Predicted targets.

    Returns
    -------
    numpy.ndarray of shape (n_test,)
        The squared errors, as float64.

    Examples
    --------
    >>> squared([0.0, 1.0], [0.5, 3.0])
    array([0.25, 4.  ])
    """
    y_true, y_pred = _pair(y_true, y_pred, "squared")
    diff = np.subtract(y_pred, y_true, dtype=np.float64)
    return np.square(diff)


def absolute(y_true: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Absolute error ``|y_pred - y_true|`` per example.

    Parameters
    ----------
    y_true : array-like of shape (n_test,)
        True targets.
    y_pred : array-like of shape (n_test,)
        Predicted targets.

    Returns
    -------
    numpy.ndarray of shape (n_test,)
        The absolute errors, as float64.

    Examples
    --------
    >>> absolute([0.0, 1.0], [0.5, -1.0])
    array([0.5, 2. ])
    """
    y_true, y_pred = _pair(y_true, y_pred, "absolute")
    return np.abs(np.subtract(y_pred, y_true, dtype=np.float64))


def log(y_true: ArrayLike, proba: ArrayLike, classes: ArrayLike) -> NDArray[np.float64]:
    """Negative log probability of the true class per example (log loss).

    Probabilities are clipped to ``[eps, 1 - eps]`` with
    ``eps = numpy.finfo(float).eps`` before taking the logarithm, as
    :func:`sklearn.metrics.log_loss` does, so a probability of exactly 0 for
    the true class gives the large but finite loss ``-log(eps) ≈ 36.04``
    instead of ``inf`` (which a loss cube cannot hold). Rows are not
    renormalized.

    Parameters
    ----------
    y_true : array-like of shape (n_test,)
        True labels; each must be one of `classes`.
    proba : array-like of shape (n_test, n_classes)
        Predicted class probabilities, column ``k`` for ``classes[k]``.
    classes : array-like of shape (n_classes,)
        The class labels, in the column order of `proba` (unique).

    Returns
    -------
    numpy.ndarray of shape (n_test,)
        ``-log(clip(proba[i, k_i]))`` where ``classes[k_i] == y_true[i]``.

    Raises
    ------
    CubeError
        If the shapes do not agree, `classes` has duplicates or a label of
        `y_true` is not in `classes`.

    Examples
    --------
    >>> log(["a", "b"], [[0.5, 0.5], [0.2, 0.8]], classes=["a", "b"]).round(4)
    array([0.6931, 0.2231])
    """
    y_true = np.asarray(y_true)
    proba = np.asarray(proba, dtype=np.float64)
    classes = np.asarray(classes)
    if y_true.ndim != 1:
        raise CubeError(
            f"log loss: `y_true` must be 1-D, got shape {y_true.shape}; pass one label per "
            "example."
        )
    if classes.ndim != 1:
        raise CubeError(
            f"log loss: `classes` must be 1-D, got shape {classes.shape}; pass the class labels "
            "in the column order of `proba` (e.g. numpy.unique(y))."
        )
    if proba.shape != (y_true.shape[0], classes.shape[0]):
        raise CubeError(
            f"log loss: `proba` must have shape (n_test, n_classes) = "
            f"{(y_true.shape[0], classes.shape[0])}, got {proba.shape}; return one column of "
            "probabilities per class, ordered as `classes`."
        )
    order = np.argsort(classes, kind="stable")
    sorted_classes = classes[order]
    if sorted_classes.size > 1 and np.any(sorted_classes[1:] == sorted_classes[:-1]):
        raise CubeError(f"log loss: `classes` must be unique, got {classes.tolist()!r}.")
    pos = np.searchsorted(sorted_classes, y_true)
    pos_clipped = np.minimum(pos, sorted_classes.size - 1)
    found = (pos < sorted_classes.size) & (sorted_classes[pos_clipped] == y_true)
    if not np.all(found):
        missing = np.unique(y_true[~found]).tolist()
        raise CubeError(
            f"log loss: labels {missing!r} of `y_true` are not in `classes` "
            f"{classes.tolist()!r}; pass every class label (e.g. numpy.unique(y) of the full "
            "data set)."
        )
    column = order[pos_clipped]
    p = proba[np.arange(y_true.shape[0]), column]
    eps = np.finfo(np.float64).eps
    return -np.log(np.clip(p, eps, 1.0 - eps))


#: The built-in losses by name, as accepted by :func:`get_loss`.
LOSSES: dict[str, Callable[..., NDArray[np.float64]]] = {
    "zero_one": zero_one,
    "squared": squared,
    "absolute": absolute,
    "log": log,
}

LossFunction = Callable[..., Any]


def get_loss(loss: str | LossFunction) -> tuple[str, LossFunction, bool]:
    """Resolve a loss given by name or as a callable.

    Parameters
    ----------
    loss : {"zero_one", "squared", "absolute", "log"} or callable
        A built-in loss name, or a callable ``fn(y_true, y_pred)`` returning
        an array of shape ``(n_test,)`` with one loss per test example. The
        shape a callable returns is checked by :func:`cvstats.collect` on
        every split.

    Returns
    -------
    name : str
        The loss name (``fn.__name__`` for a callable); it becomes the cube's
        name and its ``loss`` attr.
    fn : callable
        The loss function. For ``"log"`` it is :func:`log`, called as
        ``fn(y_true, proba, classes)``; otherwise ``fn(y_true, y_pred)``.
    needs_proba : bool
        Whether `fn` takes predicted class probabilities (only ``"log"``).

    Raises
    ------
    CubeError
        If `loss` is a string that names no built-in loss.
    CvstatsTypeError
        If `loss` is neither a string nor a callable.

    Examples
    --------
    >>> name, fn, needs_proba = get_loss("squared")
    >>> name, needs_proba
    ('squared', False)
    """
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise ArgumentError(
                f"`loss` must be one of {sorted(LOSSES)!r} or a callable "
                f"fn(y_true, y_pred) -> array of shape (n_test,), got {loss!r}."
            )
        return loss, LOSSES[loss], loss == "log"
    if callable(loss):
        name = getattr(loss, "__name__", None)
        if not isinstance(name, str) or not name:
            name = type(loss).__name__
        return name, loss, False
    raise CvstatsTypeError(
        f"`loss` must be one of {sorted(LOSSES)!r} or a callable fn(y_true, y_pred) -> array "
        f"of shape (n_test,), got an object of type {type(loss).__name__}."
    )


def _pair(y_true: ArrayLike, y_pred: ArrayLike, name: str) -> tuple[NDArray, NDArray]:
    """Convert targets and predictions to arrays and check they have the same shape."""
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise CubeError(
            f"{name} loss: `y_true` and `y_pred` must have the same shape, got {y_true.shape} "
            f"and {y_pred.shape}; predict one value per test example."
        )
    return y_true, y_pred
