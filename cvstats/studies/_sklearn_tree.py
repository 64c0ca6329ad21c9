"""scikit-learn trees fitted split by split, without the per-call checks.

The studies' ``"sklearn"`` tree path (and the refits of the trees the batched
tree flags) fits one scikit-learn tree per split: about 1,800 fits per
dataset. Each ``fit``/``predict`` call validates its parameters and converts
``X`` to float32 again, which costs as much as growing the tree at the
papers' small sizes (``n = 200``). :func:`sklearn_tree_predict` converts
once per dataset, fits the first split with the plain, checked ``fit``
(parameters and data validated there), and the others with
``fit(..., check_input=False)`` / ``predict(..., check_input=False)`` under
``sklearn.config_context(skip_parameter_validation=True)`` — the route
scikit-learn's own forests take for their trees. The trees are the same:
scikit-learn converts ``X`` to float32 in ``fit`` either way (tested equal
to plain ``fit``/``predict``; speed in docs/benchmarks.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["sklearn_tree_predict"]


def sklearn_tree_predict(
    estimator: Any,
    X: NDArray[Any],
    y: NDArray[Any],
    train_idx: NDArray[Any],
    test_idx: NDArray[Any],
) -> NDArray[Any]:
    """Predictions of one scikit-learn tree per split, fitted split by split.

    Parameters
    ----------
    estimator : DecisionTreeRegressor or DecisionTreeClassifier
        Unfitted tree with its parameters; refitted for every split (its
        ``random_state`` is used as is).
    X : ndarray, shape (n, p)
        Features of one dataset (finite).
    y : ndarray, shape (n,)
        Responses or class labels.
    train_idx, test_idx : ndarray of int, shapes (S, n1), (S, n2)
        Training and test positions of each split.

    Returns
    -------
    ndarray, shape (S, n2)
        ``estimator.fit(X[train_idx[s]], y[train_idx[s]]).predict(X[test_idx[s]])``
        for every split ``s``, equal to the plain calls.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D and finite as float32, or the index arrays do not
        have one row per split.
    """
    import sklearn

    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"`X` must be 2-D (n, p); got shape {X.shape}.")
    with np.errstate(over="ignore"):  # overflow to inf is refused just below
        X32 = np.ascontiguousarray(X, dtype=np.float32)
    if not np.isfinite(X32).all():
        raise ValueError(
            "`X` has values that are NaN or infinite as float32; the trees need finite features."
        )
    y = np.asarray(y)
    train_idx, test_idx = np.asarray(train_idx), np.asarray(test_idx)
    if train_idx.ndim != 2 or test_idx.ndim != 2 or len(train_idx) != len(test_idx):
        raise ValueError(
            "`train_idx` and `test_idx` must be 2-D with one row per split; got shapes "
            f"{train_idx.shape} and {test_idx.shape}."
        )
    if not len(train_idx):
        return np.empty(test_idx.shape)
    # the first split through the checked calls: parameters and data validated once
    out = [estimator.fit(X32[train_idx[0]], y[train_idx[0]]).predict(X32[test_idx[0]])]
    with sklearn.config_context(skip_parameter_validation=True):
        for tr, te in zip(train_idx[1:], test_idx[1:], strict=True):
            estimator.fit(X32[tr], y[tr], check_input=False)
            out.append(estimator.predict(X32[te], check_input=False))
    return np.stack(out)
