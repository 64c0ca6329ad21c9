"""Score cubes: one value per split and model, for metrics that are not per-example losses.

A loss cube (:mod:`cvstats.cube.dense`) holds the loss of every test example of
every split. Many metrics are not means of per-example losses: the ROC AUC, an
F1 score, an R², a calibration error are defined on a whole test set. Yet
every method of cvstats that only needs the split means ``μ̂_j`` (docs/theory.md §1;
Nadeau & Bengio, 2003: the resampled and corrected resampled t, the
conservative Z, the bootstraps, the k-fold t's, Dietterich's 5x2cv t and
Alpaydın's F, the Bayesian correlated t) uses nothing else of the cube than
these means, the split coordinates and the sizes ``n1`` and ``n2``: with a
score ``μ̂_j`` per split in place of the mean loss, they run unchanged. The
**score cube** is that input:

* an ``xarray.DataArray`` ``(*extra, split, model)`` (or ``contrast``) named after
  its metric, with no ``example`` dim: one finite value per (split, model) —
  the split's score, never NaN (a score cube has no NaN pattern: a split's
  score must exist);
* the split coordinates of the loss cube (``block``, ``half``, ``side``,
  ``replicate``, ``repeat``, ``fold``, ``n_train``) with their per-block rules,
  plus the int coordinate ``n_test`` on ``split``: the test-set size ``n2`` of
  the split, which a loss cube reads off its NaN pattern;
* the attrs of a loss cube (``design``, ``n``, ``seed``) plus
  ``greater_is_better`` (int 1 if a larger score is better, as for an
  accuracy or a ROC AUC, 0 if it is a loss; stored as an int because netCDF
  refuses bool attrs, read as a bool by :func:`is_greater_better`) and
  ``metric`` (the metric's name).

The methods that need per-example losses — the hold-out t and McNemar's test
(their variance is over the test examples of the one split), Bayle et al.'s
interval (over the out-of-fold losses of every example) and nested
cross-validation (over the per-example losses of the pair fits) — refuse a
score cube (:func:`examples_refusal` words why); :func:`cvstats.compare`
leaves them out and says so in its notes.

:func:`from_scores` builds a score cube from an array or a tidy table;
:func:`scores_from_losses` reduces a loss cube to its score cube (the split means
of the losses), on which every split-mean method gives the same result as on
the loss cube; :func:`validate_score` checks the schema (``docs/cube-schema.md``,
"Score cubes"), and :func:`cvstats.validate` dispatches to it for a cube with a
``split`` dim and neither ``example`` nor ``slot``.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike

from cvstats.cube.compact import (
    EXAMPLE_INDEX,
    N_EXAMPLES,
    SLOT,
    compact_cube,
    is_compact,
    validate_compact,
)
from cvstats.cube.dense import (
    check_attrs,
    check_core_dims,
    check_labels,
    check_name,
    check_sizes,
    check_split_coords,
    dtype_problem,
    plain_value,
    split_table,
    stated_test_sizes,
    unit_dim,
    validate_dense,
)
from cvstats.cube.schema import (
    CONTRAST,
    EXAMPLE,
    GREATER_IS_BETTER,
    METRIC,
    MODEL,
    N_TEST,
    REQUIRED_ATTRS,
    SPLIT,
    SPLIT_COORDS,
    UNKNOWN_SEED,
)
from cvstats.errors import ArgumentError, CubeError, CvstatsWarning

__all__ = [
    "is_score",
    "is_greater_better",
    "validate_score",
    "from_scores",
    "scores_from_losses",
    "examples_refusal",
    "FIX_SCORES",
    "SKLEARN_SCORER_RULE",
    "is_sklearn_scorer",
    "metric_direction",
    "check_not_negated",
    "metric_range",
    "name_direction",
    "recorded_direction",
    "LOSS_RANGES",
    "value_range",
]

#: How to build a score cube, for messages.
FIX_SCORES = "Build score cubes with cvstats.cube.from_scores or cvstats.cube.scores_from_losses."

#: Said when a cube without an ``example`` dim breaks a rule a loss cube would not have.
_READ_AS_SCORE = (
    "(A cube with a `split` dim and no `example` dim is read as a score cube, one value per "
    "split and model; a loss cube needs its per-example dim named `example`.)"
)

_DIRECTION_FIX = (
    "pass greater_is_better=True for a score where larger is better (accuracy, ROC AUC, R², "
    "F1) or greater_is_better=False for a loss or an error (mean squared error, log loss, "
    "error rate)"
)


def is_score(obj: Any) -> bool:
    """Tell whether ``obj`` is a score cube: a DataArray with ``split``, no ``example``/``slot``.

    Only the form is looked at (as :func:`cvstats.cube.compact.is_compact` does);
    :func:`validate_score` checks the rest.
    """
    return (
        isinstance(obj, xr.DataArray)
        and SPLIT in obj.dims
        and EXAMPLE not in obj.dims
        and SLOT not in obj.dims
    )


def _direction(value: Any) -> bool:
    """Read a ``greater_is_better`` value (bool, or int 0/1) as a bool; CubeError otherwise."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and int(value) in (0, 1):
        return bool(int(value))
    raise CubeError(
        f"attr `{GREATER_IS_BETTER}` must be 1 (a larger score is better) or 0 (a smaller "
        f"one is), or a bool, got {plain_value(value)!r}; {_DIRECTION_FIX} to "
        "cvstats.cube.from_scores, or set cube.attrs['greater_is_better'] = 1 (or 0)."
    )


def is_greater_better(cube: xr.DataArray) -> bool:
    """Return the ``greater_is_better`` attr of a score cube as a bool.

    The attr is stored as an int (1 or 0) because netCDF refuses bool attrs.

    Raises
    ------
    CubeError
        If the attr is missing (``cube`` is not a score cube, or lost its attrs)
        or is not 0, 1 or a bool.
    """
    if GREATER_IS_BETTER not in cube.attrs:
        raise CubeError(
            f"the cube has no attr `{GREATER_IS_BETTER}`, so whether a larger score is better "
            f"is unknown; {_DIRECTION_FIX} to cvstats.cube.from_scores, or set "
            "cube.attrs['greater_is_better'] = 1 (or 0)."
        )
    return _direction(cube.attrs[GREATER_IS_BETTER])


# --------------------------------------------------------------------------
# the direction of a metric: one rule for every reader of scikit-learn's results
# --------------------------------------------------------------------------

#: What every scikit-learn scorer returns, for messages.
SKLEARN_SCORER_RULE = (
    "scikit-learn's scorers (the names sklearn.metrics.get_scorer_names() lists, such as "
    "'roc_auc' or 'neg_log_loss', and the objects sklearn.metrics.make_scorer makes) return "
    "values where larger is better -- losses come negated, as 'neg_log_loss' or "
    "make_scorer(log_loss, greater_is_better=False)"
)


@functools.cache
def _sklearn_scorer_names() -> frozenset[str]:
    from sklearn.metrics import get_scorer_names

    return frozenset(get_scorer_names())


@functools.cache
def _sklearn_scorer_types() -> tuple[type, ...]:
    """Return the classes of scikit-learn's scorer objects, found through public functions.

    Every scorer :func:`sklearn.metrics.get_scorer` returns for a name and every
    :func:`sklearn.metrics.make_scorer` object returns ``sign * metric`` (scikit-learn
    user guide, "The scoring parameter": "all scorer objects follow the convention
    that higher return values are better").
    """
    from sklearn.metrics import accuracy_score, get_scorer, make_scorer

    found = {type(get_scorer(n)) for n in _sklearn_scorer_names()}
    found.add(type(make_scorer(accuracy_score)))
    return tuple(sorted(found, key=lambda t: t.__qualname__))


def is_sklearn_scorer(scorer: Any) -> bool:
    """Tell whether ``scorer`` is a scikit-learn scorer, whose values are greater-is-better.

    A name that :func:`sklearn.metrics.get_scorer_names` lists (``"roc_auc"``,
    ``"neg_log_loss"``), or a scorer object of :func:`sklearn.metrics.get_scorer`
    or :func:`sklearn.metrics.make_scorer`. Anything else -- a plain callable, a
    name scikit-learn does not know -- is not.
    """
    if isinstance(scorer, str):
        return scorer in _sklearn_scorer_names()
    return isinstance(scorer, _sklearn_scorer_types())


def metric_direction(
    metric: str,
    given: bool | None,
    *,
    sklearn_scorer: bool,
    unknown: str = "",
    hint: str = "",
) -> int:
    """Return ``greater_is_better`` (1 or 0) of a metric: the one rule, never a guess.

    Used by :func:`cvstats.collect` (``scoring=``) and
    :func:`cvstats.from_cv_results`, each reading its own form of the
    ``greater_is_better`` argument into ``given``:

    * a scikit-learn scorer (``sklearn_scorer``, see :func:`is_sklearn_scorer`)
      gives values where larger is better, so its direction is 1; ``given=False``
      contradicts it and is an error;
    * any other metric (a plain callable, a custom scorer, a name scikit-learn
      does not know) has the direction ``given``, which is required: it decides
      which way a difference of models points, and a metric's name does not
      tell it.

    Parameters
    ----------
    metric : str
        The metric's name, for messages.
    given : bool or None
        The direction the caller was given for this metric (None: none).
    sklearn_scorer : bool
        Whether the metric's values come from a scikit-learn scorer.
    unknown : str, optional
        Why the direction is unknown (e.g. "it is a plain callable"), for the
        message when ``given`` is None.
    hint : str, optional
        A further way to give the direction, appended to that message.

    Returns
    -------
    int
        1 if a larger value is better, 0 otherwise.

    Raises
    ------
    ArgumentError
        If ``given`` is False for a scikit-learn scorer, or None for another metric.

    Examples
    --------
    >>> metric_direction("neg_log_loss", None, sklearn_scorer=True)
    1
    >>> metric_direction("error_rate", False, sklearn_scorer=False)
    0
    """
    if sklearn_scorer:
        if given is False:
            raise ArgumentError(
                f"`greater_is_better` is False for the metric {metric!r}, but its values come "
                "from a scikit-learn scorer, and every scikit-learn scorer is "
                f"greater-is-better: {SKLEARN_SCORER_RULE}. Drop `greater_is_better` for it "
                "(it is for metrics whose direction cvstats cannot know: plain callables, "
                "custom scorers), or collect the loss itself as a loss cube with "
                "cvstats.collect(..., loss=...)."
            )
        return 1
    if given is None:
        why = unknown or f"{metric!r} is not the name of a scikit-learn scorer"
        raise ArgumentError(
            f"`greater_is_better` is required for the metric {metric!r}: {why}, so whether a "
            "larger value is better is unknown, and cvstats never guesses it (it decides which "
            "way a difference of models points). Pass greater_is_better=True if a larger "
            "value is better (an accuracy, a ROC AUC, R², and the values of every "
            "scikit-learn scorer, the negated losses such as neg_mean_squared_error "
            "included) or False if a smaller value is better (a loss or an error, not "
            f"negated){hint}."
        )
    return int(bool(given))


def check_not_negated(
    values: ArrayLike,
    metric: str,
    greater_is_better: bool | int,
    *,
    names: Sequence[str] = (),
    stacklevel: int = 3,
) -> int:
    """Check a metric's direction against its values; return it (1 or 0).

    The one check of :func:`from_scores`, hence of :func:`cvstats.collect` and
    :func:`cvstats.from_cv_results`, which build their score cubes with it. First
    :func:`metric_direction`: ``False`` for a scikit-learn scorer's name
    (``"neg_mean_squared_error"``) is refused. Then the values: every scikit-learn
    scorer gives greater-is-better values, a loss negated (``neg_*``, any
    ``make_scorer(..., greater_is_better=False)``); a user who reads "False for a
    loss" would pass ``False`` for them and reverse every verdict. Scores that are all
    <= 0, some < 0, are usually such negated losses, but a plain callable may return a
    loss that is negative (a log density): with ``False``, a name ``neg_*``
    (``metric`` or one of ``names``) is refused, anything else warned of. Lazy (dask)
    values are not read.

    Parameters
    ----------
    values : array-like
        The scores.
    metric : str
        The metric's name (the attr ``metric``).
    greater_is_better : bool or int
        The direction given.
    names : sequence of str, optional
        Other names of the metric (the cube's name, a results key).
    stacklevel : int, default 3
        Of the warning: 3 points at the caller of the function calling this one.

    Returns
    -------
    int
        1 if a larger value is better, 0 otherwise.

    Raises
    ------
    ArgumentError
        If ``greater_is_better`` is False for a scikit-learn scorer's name, or for a
        ``neg_*`` name whose scores are all <= 0.

    Warns
    -----
    CvstatsWarning
        If ``greater_is_better`` is False for scores that are all <= 0, some < 0.
    """
    direction = metric_direction(
        metric, bool(greater_is_better), sklearn_scorer=is_sklearn_scorer(metric)
    )
    if direction or not isinstance(values, np.ndarray | Sequence):
        return direction
    array = np.asarray(values, dtype=np.float64)
    finite = array[np.isfinite(array)]
    if not finite.size or finite.max() > 0 or not (finite < 0).any():
        return direction
    problem = (
        f"`greater_is_better` is False for the metric {metric!r}, but its scores are "
        f"all <= 0 (from {finite.min():.4g} to {finite.max():.4g}): they look like a "
        "scikit-learn loss negated (neg_mean_squared_error, neg_log_loss, any "
        "make_scorer(..., greater_is_better=False)), whose values are greater-is-better, and "
        "for them that False would reverse every verdict: pass greater_is_better=True"
    )
    if any(str(n).startswith("neg_") for n in (metric, *names)):
        raise ArgumentError(f"{problem}.")
    warnings.warn(
        f"{problem}. Ignore this only if the scorer is a plain callable that returns a loss "
        "that is negative (e.g. a negative log density), where False is right.",
        CvstatsWarning,
        stacklevel=stacklevel,
    )
    return direction


#: The values a scikit-learn scorer can return, by name: ``(low, high)`` (``±inf``: no bound).
_METRIC_RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys(
        (
            "accuracy", "balanced_accuracy", "top_k_accuracy", "average_precision",
            "roc_auc", "roc_auc_ovr", "roc_auc_ovo", "roc_auc_ovr_weighted",
            "roc_auc_ovo_weighted", "f1", "f1_macro", "f1_micro", "f1_samples",
            "f1_weighted", "precision", "precision_macro", "precision_micro",
            "precision_samples", "precision_weighted", "recall", "recall_macro",
            "recall_micro", "recall_samples", "recall_weighted", "jaccard",
            "jaccard_macro", "jaccard_micro", "jaccard_samples", "jaccard_weighted",
            "rand_score", "homogeneity_score", "completeness_score", "v_measure_score",
            "normalized_mutual_info_score", "fowlkes_mallows_score",
        ),
        (0.0, 1.0),
    ),
    "matthews_corrcoef": (-1.0, 1.0),
    "adjusted_rand_score": (-1.0, 1.0),
    **dict.fromkeys(
        (
            "r2", "explained_variance", "d2_absolute_error_score", "d2_brier_score",
            "d2_log_loss_score", "adjusted_mutual_info_score",
        ),
        (-math.inf, 1.0),
    ),
    "mutual_info_score": (0.0, math.inf),
    "positive_likelihood_ratio": (0.0, math.inf),
}  # fmt: skip

#: Slack on a range's bounds, for the rounding of averaged metrics (e.g. a weighted F1).
_RANGE_TOLERANCE = 1e-9


def metric_range(metric: str) -> tuple[float, float] | None:
    """Return the range ``(low, high)`` of a scikit-learn scorer's values, or None if unknown.

    Known for the bounded scorers of :func:`sklearn.metrics.get_scorer_names`: ``[0,
    1]`` for accuracies, ROC AUCs, average precision, F1, precision, recall,
    Jaccard and the clustering indices in ``[0, 1]``; ``[-1, 1]`` for Matthews'
    correlation and the adjusted Rand index; ``(-inf, 1]`` for R², the explained
    variance, the D² scores and the adjusted mutual information; ``[0, inf)`` for
    the mutual information and the positive likelihood ratio; ``(-inf, 0]`` for
    every negated loss (``neg_*``). A score cube whose ``metric`` names one of
    them must hold values in it (:func:`validate_score`).
    """
    if metric.startswith("neg_") and metric in _sklearn_scorer_names():
        return (-math.inf, 0.0)
    return _METRIC_RANGES.get(metric)


#: Metric names whose direction is known besides scikit-learn's scorer names (which are all
#: greater-is-better, :data:`SKLEARN_SCORER_RULE`): scikit-learn's metric functions and the
#: usual short names. Looked up in lower case.
_GREATER_NAMES = frozenset(
    {
        "auc", "r²", "r2_score", "accuracy_score", "balanced_accuracy_score", "roc_auc_score",
        "average_precision_score", "f1_score", "precision_score", "recall_score",
    }
)  # fmt: skip
#: Names of losses and errors (smaller is better): cvstats' losses (:mod:`cvstats.designs.losses`),
#: scikit-learn's loss and error functions (not negated) and the usual short names.
_SMALLER_NAMES = frozenset(
    {
        "loss", "zero_one", "squared", "absolute", "error", "error_rate", "mse", "rmse", "mae",
        "zero_one_loss", "log_loss", "brier_score_loss", "hinge_loss", "hamming_loss",
        "mean_squared_error", "root_mean_squared_error", "mean_absolute_error",
        "median_absolute_error", "mean_absolute_percentage_error",
    }
)  # fmt: skip


def name_direction(name: Any) -> int | None:
    """Return ``greater_is_better`` (1 or 0) of a metric known by its name, None otherwise.

    Greater is better for every scikit-learn scorer name (accuracy, roc_auc, f1,
    r2, balanced_accuracy, precision, recall, and the negated losses ``neg_*``:
    :data:`SKLEARN_SCORER_RULE`), for scikit-learn's metric functions of them
    (``accuracy_score``, ``f1_score``, ``roc_auc_score``, ...) and for ``auc`` and
    ``R²``; smaller is better for cvstats' losses (``zero_one``, ``squared``,
    ``absolute``), scikit-learn's loss and error functions (``log_loss``,
    ``zero_one_loss``, ``mean_squared_error``, ...) and ``loss``, ``error``,
    ``error_rate``, ``mse``, ``rmse``, ``mae``. Any other name says nothing (the
    name is looked up in lower case).

    Examples
    --------
    >>> name_direction("roc_auc"), name_direction("neg_log_loss"), name_direction("mse")
    (1, 1, 0)
    >>> name_direction("my_metric") is None
    True
    """
    if not isinstance(name, str) or not name.strip():
        return None
    key = name.strip().lower()
    if is_sklearn_scorer(key) or key in _GREATER_NAMES:
        return 1
    if key in _SMALLER_NAMES:
        return 0
    return None


def recorded_direction(attrs: Mapping[Hashable, Any], name: Any = None) -> tuple[int, str] | None:
    """Return ``(greater_is_better, why)`` that data records about itself, or None.

    What a cube, a result's ``estimate`` (methods keep the cube's attrs) or a
    table of them says about its direction, first match wins:

    1. the attr ``greater_is_better`` of a score cube (0/1 or a bool);
    2. the attr ``loss`` of a collected loss cube: smaller is better;
    3. the attrs every cube carries (``design``, ``n``, ``seed``) without
       ``greater_is_better``: the values of a loss cube, smaller is better (a
       score cube always records its direction);
    4. the attr ``metric``, else ``name``, when :func:`name_direction` knows it.

    Attrs survive xarray's arithmetic: values transformed into another metric
    (``1 - error``) keep the attrs of the old one, so set or clear them.

    Parameters
    ----------
    attrs : mapping
        The attrs of the data.
    name : str, optional
        The data's name (a DataArray's ``name``).

    Returns
    -------
    (int, str) or None
        ``1`` if a larger value is better, ``0`` otherwise, and the reason in
        words; None when the data say nothing.

    Raises
    ------
    CubeError
        If the attr ``greater_is_better`` is neither 0/1 nor a bool.

    Examples
    --------
    >>> recorded_direction({"greater_is_better": 1, "metric": "roc_auc"})
    (1, 'its attr greater_is_better = 1')
    >>> recorded_direction({"design": "kfold", "n": 50, "seed": 0})[0]
    0
    >>> recorded_direction({}, "accuracy")
    (1, "its name 'accuracy' (a larger accuracy is better)")
    """
    if GREATER_IS_BETTER in attrs:
        value = int(_direction(attrs[GREATER_IS_BETTER]))
        return value, f"its attr {GREATER_IS_BETTER} = {value}"
    if "loss" in attrs:
        return 0, f"its attr loss = {plain_value(attrs['loss'])!r} (a loss cube's values)"
    if all(a in attrs for a in REQUIRED_ATTRS):
        return 0, (
            f"its attrs {', '.join(REQUIRED_ATTRS)} without {GREATER_IS_BETTER} (a loss cube's "
            "values)"
        )
    for source, value in (("attr metric", attrs.get(METRIC)), ("name", name)):
        known = name_direction(value)
        if known is not None:
            way = "larger" if known else "smaller"
            return known, f"its {source} {value!r} (a {way} {value} is better)"
    return None


#: The values of the per-example losses of :mod:`cvstats.designs.losses` (and so of their means),
#: by the name a collected cube keeps in its attr ``loss``: ``(low, high)`` (``inf``: no bound).
LOSS_RANGES: dict[str, tuple[float, float]] = {
    "zero_one": (0.0, 1.0),
    "squared": (0.0, math.inf),
    "absolute": (0.0, math.inf),
    "log": (0.0, math.inf),
}


def value_range(attrs: Mapping[str, Any], name: Any) -> tuple[float, float] | None:
    """Return the range ``(low, high)`` of a cube's values (one model's), or None if unknown.

    The one reading of what a cube's metric can take, for the intervals shown of
    its results (:mod:`cvstats.results.ranges`): a score cube (attr
    ``greater_is_better``) by its ``metric`` (default its name) through
    :func:`metric_range`; a loss cube by its attr ``loss`` (default its name)
    through :data:`LOSS_RANGES`, e.g. ``[0, 1]`` for ``"zero_one"``. The
    metric's name is read as :func:`cvstats.results.verdict.quantity_of` reads
    it. Unknown metrics (a loss named ``"loss"``, a custom score) have no range.

    Examples
    --------
    >>> value_range({"greater_is_better": 1, "metric": "roc_auc"}, "auc")
    (0.0, 1.0)
    >>> value_range({"loss": "zero_one"}, "error")
    (0.0, 1.0)
    >>> value_range({}, "loss") is None
    True
    """
    if GREATER_IS_BETTER in attrs:
        return metric_range(str(attrs.get(METRIC, name)))
    return LOSS_RANGES.get(str(attrs.get("loss", name)))


def examples_refusal(method: str, why: str | None = None) -> str:
    """Why ``method`` (a method needing per-example losses) cannot take a score cube, and the fix.

    The message of the :class:`~cvstats.errors.CubeError` such a method raises on a
    score cube (:func:`cvstats.inference.common.check_options`), and of the note
    :func:`cvstats.compare` adds when it leaves the method out. ``why`` says what the
    method does with the single examples (default: it estimates its variance from
    their losses).
    """
    why = why or "its variance is estimated from the losses of the single test examples"
    return (
        f"{method} needs per-example losses, but got a score cube (one value per split and "
        f"model, no `example` dim): {why}, which a score does not keep. Collect a loss cube "
        "instead, with cvstats.collect(..., loss=...) or cvstats.from_arrays(losses, "
        "design=...), or use a method that needs split means only "
        "(cvstats.inference.registry.applicable_methods lists those that apply to the cube)."
    )


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------


def _label(cube: xr.DataArray, dim: Hashable, i: int) -> str:
    label = plain_value(cube[dim].values[i]) if dim in cube.coords else int(i)
    return f"{dim} {label!r}" if isinstance(label, str) else f"{dim} {label}"


def _check_dtype(dtype: np.dtype) -> None:
    """Scores are float32 or float64."""
    if dtype == np.float16:
        raise CubeError(
            "scores of dtype float16 are not supported: float16 keeps about 3 significant "
            "digits, too few for the differences between models and the variances over "
            "splits that every method computes; convert with cube.astype('float32') "
            "(lossless)."
        )
    problem = dtype_problem(dtype, "scores", "cube")
    if problem is not None:
        raise CubeError(problem)
    if not np.issubdtype(dtype, np.floating):
        kind = "numeric" if np.issubdtype(dtype, np.number) else "non-numeric"
        raise CubeError(
            f"scores must be floating point, got {kind} dtype {dtype}; convert with "
            "cube.astype(float)"
            + ("" if kind == "numeric" else " after mapping them to numbers")
            + "."
        )


def _check_structure(cube: Any) -> str:
    """Name, dims ``(*extra, split, model|contrast)``, sizes, dtype, labels; return the unit."""
    if not isinstance(cube, xr.DataArray):
        raise CubeError(
            f"a score cube must be an xarray.DataArray, got {type(cube).__name__}. {FIX_SCORES}"
        )
    if EXAMPLE in cube.dims or SLOT in cube.dims:
        raise CubeError(
            f"a score cube has no `{EXAMPLE}` or `{SLOT}` dim (one value per split and model), "
            f"but this one has dims {list(cube.dims)}; validate a loss cube with "
            "cvstats.validate, or reduce it to its score cube with "
            "cvstats.cube.scores_from_losses."
        )
    check_name(cube, "metric", "roc_auc")
    unit = CONTRAST if CONTRAST in cube.dims else MODEL
    core = (SPLIT, unit)
    check_core_dims(
        cube,
        core,
        what="score cube",
        needs=f"(*extra, {SPLIT}, {MODEL}) (or {CONTRAST} last)",
        after_missing=f". {_READ_AS_SCORE}",
        after_order=f" {_READ_AS_SCORE}",
    )
    check_sizes(cube)
    _check_dtype(cube.dtype)
    check_labels(cube, core)
    return unit


def _check_score_attrs(cube: xr.DataArray) -> None:
    """``greater_is_better`` (0/1 or bool) and ``metric`` (a non-empty str)."""
    if GREATER_IS_BETTER not in cube.attrs:
        raise CubeError(
            f"the score cube lacks the attr `{GREATER_IS_BETTER}`: whether a larger score is "
            "better (1: accuracy, ROC AUC, R²) or worse (0: a mean loss, an error rate). It "
            "decides which way a difference of models points and is never guessed; "
            f"{_DIRECTION_FIX} to cvstats.cube.from_scores, or set "
            f"cube.attrs['greater_is_better'] = 1 (or 0). {_READ_AS_SCORE}"
        )
    _direction(cube.attrs[GREATER_IS_BETTER])
    metric = cube.attrs.get(METRIC)
    if not isinstance(metric, str) or not metric.strip():
        raise CubeError(
            f"the score cube's attr `{METRIC}` must name its metric (a non-empty str, e.g. "
            f"'roc_auc'), got {metric!r}; set it with cube.attrs['metric'] = 'roc_auc', or "
            "pass metric= to cvstats.cube.from_scores."
        )


def _check_n_test(cube: xr.DataArray) -> np.ndarray:
    """Check ``n_test``: ints on ``split``, ``>= 1``, ``n_train + n_test <= n``; return it."""
    if N_TEST not in cube.coords:
        raise CubeError(
            f"the score cube lacks the coordinate `{N_TEST}`: the test-set size n2 of each "
            "split (the number of examples its score was computed on), which the corrected "
            "tests need (n2/n1). Add it with cube.assign_coords(n_test=('split', sizes)), or "
            f"build the cube with cvstats.cube.from_scores(..., n_test=...) or design=. "
            f"{_READ_AS_SCORE}"
        )
    # present (checked above); its dims and dtype are checked as for a loss cube
    n_test = np.asarray(stated_test_sizes(cube))
    n_train = np.asarray(cube["n_train"].values)
    splits = cube[SPLIT].values.tolist()
    block = np.asarray(cube["block"].values.tolist(), dtype=object)
    n = int(cube.attrs["n"])
    bad = n_test < 1
    if bad.any():
        i = int(np.argmax(bad))
        raise CubeError(
            f"split {splits[i]} in block {block[i]!r} has n_test = {n_test[i]} < 1; a split's "
            "score is computed on at least one test example."
        )
    bad = n_train + n_test > n
    if bad.any():
        i = int(np.argmax(bad))
        raise CubeError(
            f"split {splits[i]} in block {block[i]!r} has n_train + n_test = {n_train[i]} + "
            f"{n_test[i]} = {n_train[i] + n_test[i]} > n = {n}; fix `n_test`, `n_train` or "
            "the attr `n`."
        )
    return n_test


def _check_block_sizes(cube: xr.DataArray, n_test: np.ndarray) -> None:
    """Check the per-block rules on test sizes that a loss cube reads off its NaN pattern."""
    c = {k: np.asarray(cube[k].values) for k in ("half", "side", "repeat", "fold", "n_train")}
    block = np.asarray(cube["block"].values.tolist(), dtype=object)
    splits = cube[SPLIT].values.tolist()
    n = int(cube.attrs["n"])
    main_kfold = (block == "main") & (c["fold"] >= 0)
    # a score cube states its test sizes (`n_test`), so the splits of a block may differ in
    # size (a 2-fold split of an odd n, groups of unequal size): nothing can be lost unseen.
    # The methods whose formula uses one n2 refuse unequal sizes themselves
    # (cvstats.inference.blocks.block_sizes).
    half = block == "half"
    if (n_test[half] + c["n_train"][half] > n // 2).any():
        raise CubeError(
            f"block 'half' has n_train + n_test above floor(n/2) = {n // 2}; inner splits "
            "must fit inside a half of the data."
        )
    folds: dict[int, dict[int, int]] = {}
    for i in np.flatnonzero(main_kfold):
        r, f = int(c["repeat"][i]), int(c["fold"][i])
        if f in folds.setdefault(r, {}):
            raise CubeError(
                f"split {splits[i]} repeats fold {f} of repeat {r} of the k-fold main block; "
                "each fold of a repeat is one split."
            )
        folds[r][f] = int(n_test[i])
    totals = {r: sum(sizes.values()) for r, sizes in folds.items()}
    if len(set(totals.values())) > 1:
        raise CubeError(
            "the repeats of the k-fold main block test different numbers of examples (sum of "
            f"n_test per repeat: {totals}); every repeat partitions the same examples."
        )
    if totals and max(totals.values()) > n:
        raise CubeError(
            f"the folds of a k-fold repeat test {max(totals.values())} examples in all, more "
            f"than n = {n}; a k-fold repeat partitions the examples, so its n_test add up to "
            "at most n."
        )
    for i in np.flatnonzero(block == "nested"):
        r, a = int(c["repeat"][i]), int(c["fold"][i])
        sizes = folds.get(r, {})
        if a not in sizes or not any(
            sizes[a] + size == n_test[i] for b, size in sizes.items() if b != a
        ):
            raise CubeError(
                f"split {splits[i]} in block 'nested' has n_test = {n_test[i]}, which is not "
                f"the size of fold {a} of repeat {r} of the main block plus that of another "
                "fold; a 'nested' split tests two whole folds (a fit leaving out a pair)."
            )
    for kind in ("half", "5x2"):
        sel = block == kind
        for m in np.unique(c["half"][sel]):
            both = sel & (c["half"] == m)
            # the largest test set of each side: sizes may differ within a side
            total = int(n_test[both & (c["side"] == 0)].max(initial=0)) + int(
                n_test[both & (c["side"] == 1)].max(initial=0)
            )
            if total > n:
                raise CubeError(
                    f"block {kind!r}: the two sides of half-split {int(m)} test {total} > n = "
                    f"{n} examples; the halves D_m and D_m^c must be disjoint."
                )


def _check_values(cube: xr.DataArray, unit: str) -> None:
    """Every score finite, and in its metric's range when known (:func:`metric_range`).

    One pass over a dask cube; the first bad value located by labels. The range is
    checked on a cube of models only: a contrast of scores (a difference of two
    AUCs) has its own range.
    """
    others = [d for d in cube.dims if d != SPLIT]
    metric = cube.attrs.get(METRIC)
    bounds = metric_range(metric) if unit == MODEL and isinstance(metric, str) else None
    outside = xr.zeros_like(cube, dtype=bool)
    if bounds is not None:
        low, high = bounds
        tol = _RANGE_TOLERANCE
        outside = (cube < low - tol * max(1.0, abs(low))) | (
            cube > high + tol * max(1.0, abs(high))
        )
    stats = xr.Dataset(
        {
            "nan_split": cube.isnull().any(others),
            "inf_split": np.isinf(cube).any(others),
            "range_split": outside.any(others),
            "n_nan": cube.isnull().sum(),
            "n_inf": np.isinf(cube).sum(),
            "n_range": outside.sum(),
        }
    ).compute()
    for kind in ("nan", "inf", "range"):
        count = int(stats[f"n_{kind}"])
        if not count:
            continue
        s = int(np.argmax(stats[f"{kind}_split"].values))
        row = cube.isel({SPLIT: s})
        values = np.asarray(row.values)
        if kind == "nan":
            bad = np.isnan(values)
        elif kind == "inf":
            bad = np.isinf(values)
        else:
            bad = np.asarray(outside.isel({SPLIT: s}).values)
        idx = np.argwhere(bad)[0]
        where = ", ".join(
            [_label(cube, SPLIT, s)]
            + [_label(row, d, int(k)) for d, k in zip(row.dims, idx, strict=True)]
        )
        if kind == "range":
            raise CubeError(_range_message(str(metric), bounds, count, values[tuple(idx)], where))
        if kind == "nan":
            raise CubeError(
                f"the score cube holds {count} NaN score(s) (first at {where}); every split "
                f"needs a score for every {unit}: a score cube has no NaN pattern (a split's "
                "score must exist). Compute the missing scores, or drop the split for every "
                f"{unit} with cube.drop_sel(split=[...]) keeping the design's blocks whole."
            )
        raise CubeError(
            f"the score cube holds {count} infinite score(s) (first at {where}); scores must "
            "be finite. Fix the metric (e.g. a log loss of a probability 0) or clip it."
        )


def _range_message(
    metric: str, bounds: tuple[float, float] | None, count: int, value: float, where: str
) -> str:
    """Return the error for a score outside the range of its metric (a scikit-learn scorer)."""
    low, high = bounds if bounds is not None else (-math.inf, math.inf)
    shown = f"[{low:g}, {high:g}]".replace("[-inf", "(-inf").replace("inf]", "inf)")
    if high == 0.0:
        why = (
            "scikit-learn negates losses in its 'neg_' scorers; if these are the losses "
            "themselves, negate them, or name the metric after the loss (e.g. 'log_loss') "
            "with greater_is_better=False"
        )
    elif high == 1.0 and value > 1.0:
        why = "if these are percentages, divide them by 100"
    else:
        why = "check how the values were computed"
    return (
        f"the score cube's metric is {metric!r}, a scikit-learn scorer whose values lie in "
        f"{shown}, but it holds {count} value(s) outside that range (first {float(value):g} "
        f"at {where}): {why}; if the metric is another one, name it: "
        "cube.attrs['metric'] = '...' (or metric=... to cvstats.cube.from_scores)."
    )


def validate_score(cube: xr.DataArray) -> None:
    """Check that ``cube`` follows the score-cube schema (``docs/cube-schema.md``, "Score cubes").

    Checks the name (a non-empty str: the metric name formulas use on their
    left side), the dims ``(*extra, split, model|contrast)`` in that order with
    no ``example`` or ``slot`` dim (none of length 0), the dtype (float32 or
    float64), unique ``split`` (int) and model (str) labels; the attrs
    ``design``, ``n``, ``seed`` (as a loss cube), ``greater_is_better`` (0, 1 or a
    bool) and ``metric`` (a non-empty str); the split coordinates and their
    per-block rules (shared with the loss cube); the int coordinate ``n_test`` on
    ``split``, ``>= 1`` with ``n_train + n_test <= n``; the test sizes the
    loss cube reads off its NaN pattern (the splits of a block may differ in
    size: a score cube states them), ``n_train + n_test <= ⌊n/2⌋`` in the
    ``"half"`` block, each fold once per k-fold repeat and the same total per
    repeat (at most ``n``), a ``"nested"`` split as large as two folds of its
    repeat, the two sides of a half-split at most ``n``; every score
    finite — NaN is refused: a score cube has no NaN pattern, a split's score
    must exist; and, on a cube of models whose ``metric`` names a bounded
    scikit-learn scorer (:func:`metric_range`), every score in its range (a
    ROC AUC in ``[0, 1]``, a ``neg_*`` loss ``<= 0``). A dask-backed cube is
    read once. :func:`cvstats.validate`
    dispatches here for a cube with a ``split`` dim and no ``example`` or
    ``slot`` dim.

    Parameters
    ----------
    cube : xarray.DataArray
        The score cube to check.

    Raises
    ------
    CubeError
        Naming the first problem found and how to fix it.

    Examples
    --------
    >>> import numpy as np
    >>> from cvstats.cube.score import from_scores, validate_score
    >>> cube = from_scores(np.array([[0.8, 0.7], [0.9, 0.75]]), n_test=10, n_train=40,
    ...                    greater_is_better=True, name="roc_auc")
    >>> validate_score(cube)
    >>> validate_score(cube.drop_attrs())
    Traceback (most recent call last):
    ...
    cvstats.errors.CubeError: the cube lacks the attr(s) ['design', 'n', 'seed']; ...
    """
    unit = _check_structure(cube)
    check_attrs(cube)
    _check_score_attrs(cube)
    check_split_coords(cube)
    n_test = _check_n_test(cube)
    _check_block_sizes(cube, n_test)
    _check_values(cube, unit)


# --------------------------------------------------------------------------
# construction
# --------------------------------------------------------------------------


def _check_direction_argument(value: Any) -> int:
    if value is None:
        raise ArgumentError(
            "`greater_is_better` is required: a score cube records whether a larger score is "
            "better, since it decides which way a difference of models points, and cvstats "
            f"does not guess it from the metric's name; {_DIRECTION_FIX}."
        )
    if isinstance(value, bool | np.bool_) or (
        isinstance(value, int | np.integer) and int(value) in (0, 1)
    ):
        return int(bool(value))
    raise ArgumentError(f"`greater_is_better` must be True or False, got {value!r}.")


def _stack_models(scores: Mapping[Any, Any], models: Any) -> tuple[np.ndarray, list[str]]:
    """Stack a mapping model name -> per-split scores into ``(*extra, split, model)``."""
    if models is not None:
        raise CubeError(
            "`models` names the columns of an array of scores; a mapping names the models by "
            "its keys: drop `models`."
        )
    if not scores:
        raise CubeError("`scores` is an empty mapping; map each model's name to its scores.")
    names = [str(m) for m in scores]
    if len(set(names)) != len(names):
        raise CubeError(f"the keys of `scores` {list(scores)} do not give distinct names.")
    arrays = [np.asarray(v) for v in scores.values()]
    shapes = {m: a.shape for m, a in zip(names, arrays, strict=True)}
    if len(set(shapes.values())) > 1 or arrays[0].ndim == 0:
        raise CubeError(
            "a mapping `scores` maps each model's name to its scores, one per split (with "
            f"`extra_dims`, shape (*extra, split)), all of one shape; got the shapes {shapes}. "
            "E.g. from_scores({'a': [0.81, 0.85, 0.79], 'b': [0.78, 0.80, 0.79]}, ...)."
        )
    return np.stack(arrays, axis=-1), names


def _sizes(name: str, value: ArrayLike, S: int) -> np.ndarray:
    """One int per split from an int or a sequence."""
    values = np.asarray(value)
    if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
        raise CubeError(
            f"`{name}` must be an int or one int per split, got {plain_value(value)!r} (dtype "
            f"{values.dtype})."
        )
    if values.ndim > 1 or (values.ndim == 1 and values.shape != (S,)):
        raise CubeError(
            f"`{name}` must be an int or hold one value per split ({S}), got shape {values.shape}."
        )
    return np.broadcast_to(values, (S,)).astype(np.int64)


def _frame_values(
    df: pd.DataFrame, value: str, extra_dims: Sequence[str]
) -> tuple[np.ndarray, list[pd.Index], dict[str, np.ndarray]]:
    """Return values ``(*extra, split, model)``, labels per dim, per-split columns of a table."""
    keys = [*extra_dims, SPLIT, MODEL]
    if len(set(keys)) != len(keys):
        raise CubeError(f"`extra_dims` must not name the columns 'split' or 'model', got {keys}.")
    missing = [col for col in [*keys, value] if col not in df.columns]
    if missing:
        raise CubeError(
            f"`scores` lacks the column(s) {missing}; it has {list(df.columns)}. A table of "
            f"scores has one row per (split, model) with columns 'split', 'model' and "
            f"{value!r} (the score; name it with value=), plus optional per-split columns "
            f"{[*SPLIT_COORDS, N_TEST]}; rename yours with df.rename(columns=...)."
        )
    if len(df) == 0:
        raise CubeError("`scores` has no rows; it needs one row per (split, model) score.")
    for col in keys:
        absent = df[col].isna().to_numpy()
        if absent.any():
            raise CubeError(
                f"column {col!r} has {int(absent.sum())} row(s) without a label (NaN or None); "
                f"every score belongs to one {col}. Drop them with df.dropna(subset=[{col!r}])."
            )
    dtype = df[value].dtype
    if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_complex_dtype(dtype):
        raise CubeError(f"column {value!r} must hold real numbers, got dtype {dtype}.")
    codes, uniques = [], []
    for col in keys:
        code, unique = pd.factorize(df[col], sort=False)
        codes.append(code)
        uniques.append(pd.Index(unique))
    shape = tuple(len(u) for u in uniques)
    cell = pd.Index(np.ravel_multi_index(codes, shape))
    if cell.has_duplicates:
        first = int(np.argmax(cell.duplicated()))
        row = {k: plain_value(v) for k, v in df.iloc[first][keys].items()}
        raise CubeError(
            f"`scores` has more than one score for {row}; keep one row per "
            f"{tuple(keys)}, e.g. df.drop_duplicates(subset={keys})."
        )
    values = np.full(shape, np.nan)
    values[tuple(codes)] = df[value].to_numpy(dtype=float, na_value=np.nan)
    if not np.isfinite(values[tuple(codes)]).all():
        raise CubeError(
            f"column {value!r} holds NaN or infinite scores; every row's score must be finite "
            "(drop the rows of splits that have no score, for every model)."
        )
    absent = np.isnan(values)
    if absent.any():
        idx = np.argwhere(absent)[0]
        where = {k: plain_value(u[i]) for k, u, i in zip(keys, uniques, idx, strict=True)}
        raise CubeError(
            f"`scores` has no row for {where} ({int(absent.sum())} (split, model) cell(s) "
            "missing); every split needs a score for every model. Add the missing rows, or "
            "drop the split from the table for every model."
        )
    split_code = codes[len(extra_dims)]
    per_split: dict[str, np.ndarray] = {}
    for col in (*SPLIT_COORDS, N_TEST):
        if col not in df.columns:
            continue
        grouped = df.groupby(split_code, sort=True)[col]
        varies = grouped.nunique() > 1
        if varies.any():
            s = plain_value(uniques[len(extra_dims)][int(np.argmax(varies.to_numpy()))])
            raise CubeError(f"column {col!r} varies within split {s!r}; it must be constant.")
        per_split[col] = grouped.first().to_numpy()
    return values, uniques, per_split


def _table_scores(
    scores: pd.DataFrame, value: str, extra: tuple[str, ...]
) -> tuple[np.ndarray, list[str], np.ndarray, dict[str, np.ndarray], dict[str, Any]]:
    """Read a tidy table of scores: values, models, split labels, split columns, extra coords."""
    values, uniques, per_split = _frame_values(scores, value, extra)
    labels = np.asarray(uniques[len(extra)])
    try:
        split_labels = labels.astype(np.int64)
        exact = bool(np.all(split_labels == labels))
    except (TypeError, ValueError):
        exact = False
    if not exact:
        raise CubeError(f"the 'split' column must hold int split labels, got {labels[:5]}.")
    models = [str(m) for m in uniques[-1]]
    if len(set(models)) != len(models):
        raise CubeError(f"the 'model' labels {list(uniques[-1])} do not give distinct names.")
    coords = {d: np.asarray(u) for d, u in zip(extra, uniques[: len(extra)], strict=True)}
    return values, models, split_labels, per_split, coords


def _table_sizes(
    per_split: dict[str, np.ndarray], n_test: Any, n_train: Any, splits: Any
) -> tuple[Any, Any, Any]:
    """Take a table's ``n_test``/``n_train`` and other split columns (without a design)."""
    for col, given in (("n_test", n_test), ("n_train", n_train)):
        if col in per_split and given is not None:
            raise CubeError(f"`scores` has an {col!r} column; do not pass `{col}` too.")
    n_test = per_split.pop("n_test", n_test)
    n_train = per_split.pop("n_train", n_train)
    if per_split:
        if splits is not None:
            raise CubeError(
                f"`scores` has the split column(s) {list(per_split)}; do not pass `splits` too."
            )
        splits = per_split
    return n_test, n_train, splits


def _in_design_order(
    data: Any, split_labels: np.ndarray, per_split: dict[str, np.ndarray], design: xr.Dataset
) -> Any:
    """Put a table's splits in the design's order, checking its split columns against it."""
    design_labels = np.asarray(design[SPLIT].values)
    unknown = np.setdiff1d(split_labels, design_labels)
    if unknown.size:
        raise CubeError(
            f"`scores` has split(s) {unknown[:5].tolist()} that the design does not "
            f"have (its splits: {design_labels[:5].tolist()}...)."
        )
    order = pd.Index(split_labels).get_indexer(design_labels)
    if (order < 0).any():
        absent = design_labels[order < 0]
        raise CubeError(
            f"`scores` has no row for the design's split(s) {absent[:5].tolist()}; "
            "every split needs a score for every model."
        )
    design_sizes = {
        **{c: np.asarray(design[c].values) for c in SPLIT_COORDS},
        N_TEST: np.asarray(design["test"].sum(EXAMPLE).values),
    }
    for col, column in per_split.items():  # the table's split columns: the design's?
        column = np.asarray(column)[order]
        differs = column.astype(str) != design_sizes[col].astype(str)
        if differs.any():
            i = int(np.argmax(differs))
            raise CubeError(
                f"column {col!r} gives split {design_labels[i]} the value "
                f"{plain_value(column[i])!r} but the design "
                f"{plain_value(design_sizes[col][i])!r}; drop the column (the design "
                "gives it) or fix it."
            )
    return np.take(data, order, axis=-2)


def from_scores(
    scores: ArrayLike | pd.DataFrame,
    *,
    greater_is_better: bool | None = None,
    design: xr.Dataset | None = None,
    models: Sequence[str] | None = None,
    name: str = "score",
    metric: str | None = None,
    n_test: int | ArrayLike | None = None,
    n_train: int | ArrayLike | None = None,
    n: int | None = None,
    splits: pd.DataFrame | Mapping[str, ArrayLike] | None = None,
    extra_dims: Sequence[str] = (),
    extra_coords: Mapping[str, ArrayLike] | None = None,
    value: str = "score",
    attrs: Mapping[str, Any] | None = None,
) -> xr.DataArray:
    """Build a validated score cube from per-split scores (an array or a tidy table).

    A score cube holds one value per split and model — a metric computed on the
    split's whole test set, e.g. a ROC AUC — instead of per-example losses. Every
    method that uses only the split means ``μ̂_j`` (Nadeau & Bengio, 2003; docs/theory.md
    §1, §4) runs on it unchanged; see ``docs/cube-schema.md``, "Score cubes".

    Parameters
    ----------
    scores : array-like, mapping or pandas.DataFrame
        Either an array ``(*extra, split, model)`` (a DataArray's values are
        used as they are, dask arrays stay lazy), a mapping model name -> that
        model's scores ``(*extra, split)`` (the keys name the models, in order;
        no ``models``), or a tidy table with one row
        per (extra..., split, model) and the columns ``split`` (int labels),
        ``model``, the score (``value``) and, optionally, per-split columns
        ``block``, ``half``, ``side``, ``replicate``, ``repeat``, ``fold``,
        ``n_train``, ``n_test`` (constant within a split), plus the
        ``extra_dims`` columns. Splits and models keep their order of first
        appearance; with a ``design`` the splits are put in the design's order.
    greater_is_better : bool
        Required: ``True`` when a larger score is better (accuracy, ROC AUC,
        R², and every scikit-learn scorer, the negated losses ``neg_*``
        included), ``False`` for a loss or an error. Stored as the int attr
        ``greater_is_better`` (netCDF refuses bool attrs); never guessed.
        Checked as :func:`cvstats.collect` and :func:`cvstats.from_cv_results`
        check it (``cvstats.cube.score.check_not_negated``): ``False`` is refused for a
        scikit-learn scorer's name and, for scores all <= 0 (a loss negated,
        as a rule), for a name ``neg_*``, and warned of otherwise.
    design : xarray.Dataset, optional
        A design of :mod:`cvstats.designs` whose splits the scores are on (the
        split dim in the design's order): its split coordinates, ``n_train``
        and ``n_test`` (from its ``train``/``test`` masks) and its attrs
        (``design``, ``n``, ``seed``, parameters). Excludes ``n_test``,
        ``n_train``, ``n`` and ``splits``.
    models : sequence of str, optional
        Model names (array input); default ``model0``, ``model1``, ...
    name : str, default "score"
        Name of the cube, the left side of formulas (``"roc_auc ~ model"``).
    metric : str, optional
        The attr ``metric``; default ``name``.
    n_test, n_train : int or sequence of int, optional
        Without a design: the test and training sizes of each split (one int
        for all, or one per split), needed by the corrected tests (``n2/n1``);
        columns of a table give them too.
    n : int, optional
        Without a design: the number of examples of the design (attr ``n``);
        default the largest ``n_train + n_test``.
    splits : mapping or DataFrame, optional
        Without a design: the other split coordinates (``block``, ``half``,
        ``side``, ``replicate``, ``repeat``, ``fold``), one value per split;
        missing ones default to ``block = "main"`` and -1.
    extra_dims : sequence of str, default ()
        Names of the leading dims of an array, or columns of a table turned
        into leading dims (e.g. ``["dataset"]``).
    extra_coords : mapping, optional
        Coordinates of the extra dims (array input).
    value : str, default "score"
        The table's column holding the scores.
    attrs : mapping, optional
        More attrs (they override the design's; default ``design="user"``,
        ``seed=-1``).

    Returns
    -------
    xarray.DataArray
        A score cube ``(*extra, split, model)`` that passes :func:`validate_score`.

    Raises
    ------
    ArgumentError
        If ``greater_is_better`` is not given, or not a bool, or False for a
        scikit-learn scorer or for negated losses named ``neg_*``.
    CubeError
        For shapes that do not fit, a missing or non-finite score, sizes that
        do not fit the design, or any other schema violation.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.cube import from_scores
    >>> d = cvstats.designs.kfold(30, K=3, seed=0)
    >>> auc = np.array([[0.81, 0.78], [0.85, 0.80], [0.79, 0.79]])  # (split, model)
    >>> cube = from_scores(auc, design=d, models=["gbm", "logreg"], name="roc_auc",
    ...                    greater_is_better=True)
    >>> cube.dims, cube.n_test.values.tolist(), cube.attrs["greater_is_better"]
    (('split', 'model'), [10, 10, 10], 1)
    >>> import pandas as pd
    >>> df = pd.DataFrame({"split": [0, 0, 1, 1], "model": ["a", "b"] * 2,
    ...                    "score": [0.9, 0.8, 0.85, 0.7], "n_test": 5, "n_train": 20})
    >>> from_scores(df, greater_is_better=True, name="accuracy").sizes["split"]
    2
    """
    direction = _check_direction_argument(greater_is_better)
    split_labels: np.ndarray | None = None
    per_split: dict[str, np.ndarray] = {}
    extra = tuple(extra_dims)
    coords_extra: dict[str, Any] = dict(extra_coords or {})
    if isinstance(scores, pd.DataFrame):
        if models is not None:
            raise CubeError("`models` is for an array of scores; a table names them in 'model'.")
        data, models, split_labels, per_split, found = _table_scores(scores, value, extra)
        coords_extra.update(found)
        if design is None:
            n_test, n_train, splits = _table_sizes(per_split, n_test, n_train, splits)
    else:
        if isinstance(scores, Mapping):
            scores, models = _stack_models(scores, models)
        if isinstance(scores, xr.DataArray):
            scores = scores.data
        data = (
            scores if hasattr(scores, "chunks") and hasattr(scores, "dask") else np.asarray(scores)
        )
    dims = (*extra, SPLIT, MODEL)
    if data.ndim != len(dims):
        raise CubeError(
            f"`scores` has {data.ndim} dims but {len(dims)} are expected {dims}; name leading "
            "dims with `extra_dims`."
        )
    if data.dtype != np.float16:
        problem = dtype_problem(data.dtype, "`scores`", "scores")
        if problem is not None:
            raise CubeError(problem)
    if data.dtype == bool or not np.issubdtype(data.dtype, np.number):
        raise CubeError(f"`scores` must be real numbers, got dtype {data.dtype}.")
    if data.dtype not in (np.float32, np.float64):  # ints, float16: exact in float64
        data = data.astype(np.float64)
    S, n_models = data.shape[-2:]

    if design is not None:
        if not isinstance(design, xr.Dataset) or "test" not in design or "train" not in design:
            raise CubeError("`design` must be a design of cvstats.designs (train/test masks).")
        pairs = (("n_test", n_test), ("n_train", n_train), ("n", n))
        given = [k for k, v in pairs if v is not None]
        if splits is not None:
            given.append("splits")
        if given:
            raise CubeError(
                f"pass either `design` or {given}, not both: the design gives the split "
                "coordinates and sizes."
            )
        if split_labels is not None:  # a table: put its splits in the design's order
            data = _in_design_order(data, split_labels, per_split, design)
            S = data.shape[-2]
        if design.sizes[SPLIT] != S:
            raise CubeError(f"`scores` has {S} splits but the design has {design.sizes[SPLIT]}.")
        table = {c: np.asarray(design[c].values) for c in SPLIT_COORDS}
        sizes = np.asarray(design["test"].sum(EXAMPLE).values, dtype=np.int64)
        split_labels = np.asarray(design[SPLIT].values)
        base_attrs: dict[str, Any] = dict(design.attrs)
    else:
        if n_test is None:
            raise CubeError(
                "the test-set size of each split is needed (the number of examples its score "
                "was computed on; the corrected tests use n2/n1): pass `n_test` (an int, or one "
                "per split), or an 'n_test' column, or `design=` a cvstats design."
            )
        sizes = _sizes("n_test", n_test, S)
        split_map = dict(splits) if splits is not None else {}
        if n_train is not None:
            if "n_train" in split_map:
                raise CubeError("`splits` has `n_train`; do not pass `n_train` as well.")
            split_map["n_train"] = _sizes("n_train", n_train, S)
        table = split_table(S, split_map)
        if split_labels is None:
            split_labels = np.arange(S, dtype=np.int64)
        if n is None:
            n = int((table["n_train"] + sizes).max())
        if isinstance(n, bool) or not isinstance(n, int | np.integer):
            raise CubeError(f"`n` must be an int (the number of examples), got {n!r}.")
        base_attrs = {"design": "user", "n": int(n), "seed": UNKNOWN_SEED}
    base_attrs.update(attrs or {})
    label = name if metric is None else metric
    base_attrs[GREATER_IS_BETTER] = check_not_negated(
        data, str(label), direction, names=(name,), stacklevel=3
    )
    base_attrs[METRIC] = label

    if models is None:
        models = [f"model{i}" for i in range(n_models)]
    if isinstance(models, str) or len(models) != n_models:
        raise CubeError(
            f"`models` must name the {n_models} models of `scores` (a sequence of str), got "
            f"{models!r}."
        )
    coords: dict[str, Any] = {
        SPLIT: split_labels,
        MODEL: np.asarray([str(m) for m in models], dtype=object),
    }
    coords.update({c: (SPLIT, table[c]) for c in SPLIT_COORDS})
    coords[N_TEST] = (SPLIT, sizes)
    coords.update(coords_extra)
    cube = xr.DataArray(data, dims=dims, coords=coords, name=name, attrs=base_attrs)
    validate_score(cube)
    return cube


def scores_from_losses(
    cube: xr.DataArray | xr.Dataset, *, name: str | None = None
) -> xr.DataArray:
    """Return the score cube of a loss cube: the split means of its losses.

    The score of a split is its mean test loss ``μ̂_j`` (docs/theory.md §1; Nadeau &
    Bengio, 2003), computed as :func:`cvstats.inference.blocks.split_means`
    computes it, so every method that needs split means only gives exactly the
    same result on the score cube as on the loss cube. ``greater_is_better`` is
    0 (a loss), ``metric`` is ``"mean <name>"``, and ``n_test`` is read off the
    NaN pattern of the first model and the first element of the extra dims, as
    :func:`cvstats.inference.blocks.block_sizes` reads it (validation
    guarantees it is the same everywhere, but for k-fold test sizes, which may
    differ by one example between data sets). The split coordinates and the
    other coordinates not on ``example`` (``in_train`` and ``example_index``
    are dropped), and the attrs, are kept (``n_examples`` of a compact cube
    aside).

    Parameters
    ----------
    cube : xarray.DataArray or xarray.Dataset
        A loss cube or contrast cube, dense or compact (a compact Dataset too).
    name : str, optional
        Name of the score cube; default the loss cube's (so the same formulas
        apply to both).

    Returns
    -------
    xarray.DataArray
        The score cube ``(*extra, split, model|contrast)``; dask-backed (lazy)
        when the cube is.

    Raises
    ------
    CubeError
        If ``cube`` is not a valid loss cube (or is a score cube already).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.cube import scores_from_losses
    >>> d = cvstats.designs.resampled(20, 5, J=3, seed=0)
    >>> cube = cvstats.from_arrays(np.arange(120.0).reshape(3, 20, 2) % 7, design=d)
    >>> scores = scores_from_losses(cube)
    >>> scores.dims, scores.n_test.values.tolist(), scores.attrs["greater_is_better"]
    (('split', 'model'), [5, 5, 5], 0)
    """
    if isinstance(cube, xr.Dataset):
        cube = compact_cube(cube)
    if is_score(cube):
        raise CubeError("`cube` is a score cube already; scores_from_losses takes a loss cube.")
    compact = is_compact(cube)
    if compact:
        validate_compact(cube)
    else:
        validate_dense(cube)
    over = SLOT if compact else EXAMPLE
    with xr.set_options(use_bottleneck=True):  # exactly as split_means reduces a loss cube
        means = cube.mean(over, skipna=True)
    means = means.drop_vars(EXAMPLE_INDEX, errors="ignore")
    if compact:
        mask = cube[EXAMPLE_INDEX] >= 0
    else:
        mask = cube.isel({unit_dim(cube): 0}, drop=True).notnull()
    first = mask.isel({d: 0 for d in mask.dims if d not in (SPLIT, over)})
    first = first.drop_vars([c for c in first.coords if c != SPLIT])
    sizes = np.asarray(first.sum(over).values, dtype=np.int64)
    out = means.assign_coords({N_TEST: (SPLIT, sizes)})
    out.name = cube.name if name is None else name
    out.attrs = {k: v for k, v in cube.attrs.items() if k != N_EXAMPLES}
    out.attrs[GREATER_IS_BETTER] = 0
    out.attrs[METRIC] = f"mean {cube.name}"
    validate_score(out)
    return out
