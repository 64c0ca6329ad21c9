"""A parameter grid as the ``learners`` of :func:`cvstats.collect`.

:func:`grid_models` turns a scikit-learn parameter grid into a dict of
unfitted estimators, one per candidate, labelled as
:func:`cvstats.from_cv_results` labels the candidates of a search
(``"alpha=0.1, fit_intercept=True"``), so that a search run through
:func:`cvstats.collect` keeps the per-example losses that the model
confidence set, cross-validation with confidence and BBC-CV need
(docs/after-a-search.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cvstats.designs.cv_results import candidate_labels
from cvstats.errors import ArgumentError, CvstatsTypeError

__all__ = ["grid_models"]


def grid_models(
    estimator: Any, param_grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]]
) -> dict[str, Any]:
    """Turn a parameter grid into the ``learners`` of :func:`cvstats.collect`.

    Parameters
    ----------
    estimator : scikit-learn estimator
        The estimator (or pipeline) of the search; each candidate is a
        :func:`sklearn.base.clone` of it with the candidate's parameters set.
    param_grid : dict or list of dicts
        The grid, as :class:`sklearn.model_selection.GridSearchCV` takes it
        (a dict of parameter names to lists of values, or a list of such
        dicts); the candidates are enumerated by
        :class:`sklearn.model_selection.ParameterGrid`, in the order of
        ``GridSearchCV.cv_results_``'s rows.

    Returns
    -------
    dict
        Label to unfitted estimator, one per candidate, in the grid's order.
        The labels are those of :func:`cvstats.from_cv_results`: ``"name=value"``
        pairs joined by ``", "`` (floats to 6 significant digits), a label
        repeated by two candidates followed by ``" [candidate i]"``.

    Raises
    ------
    CvstatsTypeError
        ``estimator`` has no ``get_params`` (not a scikit-learn estimator), or
        ``param_grid`` is not a dict or a list of dicts of lists.
    ArgumentError
        An empty grid or list of values, or a parameter the estimator does not have.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from cvstats.designs import grid_models
    >>> models = grid_models(Ridge(), {"alpha": [0.1, 1.0], "fit_intercept": [True]})
    >>> list(models)
    ['alpha=0.1, fit_intercept=True', 'alpha=1, fit_intercept=True']
    >>> models["alpha=1, fit_intercept=True"].alpha
    1.0
    """
    from sklearn.base import clone
    from sklearn.model_selection import ParameterGrid

    if not hasattr(estimator, "get_params"):
        raise CvstatsTypeError(
            f"`estimator` must be a scikit-learn estimator (with get_params), got "
            f"{type(estimator).__name__}; pass the estimator of the search, e.g. Ridge()."
        )
    try:
        grid = list(ParameterGrid(param_grid))
    except ValueError as err:
        raise ArgumentError(
            f"`param_grid` {param_grid!r} cannot be enumerated: {err}; give every parameter "
            "a non-empty list of values."
        ) from err
    except TypeError as err:
        raise CvstatsTypeError(
            f"`param_grid` must be a dict of parameter names to lists of values, or a list of "
            f"such dicts (as GridSearchCV takes it), got {param_grid!r}: {err}"
        ) from err
    if not grid:
        raise ArgumentError(
            f"`param_grid` {param_grid!r} has no candidate (an empty list of values); give "
            "at least one value per parameter."
        )
    valid = set(estimator.get_params(deep=True))
    unknown = sorted({k for params in grid for k in params} - valid)
    if unknown:
        raise ArgumentError(
            f"`param_grid` names {unknown}, which {type(estimator).__name__} does not have; "
            f"its parameters are {sorted(valid)}."
        )
    labels = candidate_labels(grid, np.arange(len(grid)))
    return {
        label: clone(estimator).set_params(**params)
        for label, params in zip(labels, grid, strict=True)
    }
