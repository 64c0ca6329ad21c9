"""The one reader of the tables the comparisons across datasets take.

Every function of :mod:`cvstats.across.ranks` and
:mod:`cvstats.across.bayes_datasets` takes one number per learner and dataset
(Demšar 2006, §3: datasets × learners). People hold those numbers in several
forms; :func:`read_table` turns each into the checked wide
:class:`pandas.DataFrame` (datasets as rows, learners as columns) and
:func:`table_record` says what the input records about its metric (its attrs
and name), from which the direction is read (:func:`cvstats.cube.score.recorded_direction`):

* a **wide** :class:`~pandas.DataFrame`, datasets × learners;
* a **long** :class:`~pandas.DataFrame` with one row per (dataset, learner):
  a column named as the datasets dim (``dataset``), a column ``model`` and
  one score column (its name is the metric's, e.g. ``accuracy``), or a
  :class:`~pandas.Series` with a ``(dataset, model)`` MultiIndex (what
  ``frame.groupby(["dataset", "model"])["accuracy"].mean()`` gives);
* a 2-d :class:`~xarray.DataArray` over ``(dataset, model)``;
* a **cube** with a ``dataset`` dim (a loss cube, a compact cube or its
  Dataset, a score cube: :func:`cvstats.from_arrays`, :func:`cvstats.to_compact`,
  :func:`cvstats.from_scores` ...): reduced to
  the per-dataset cross-validation mean, the mean of the main block's split
  means (the ``estimate`` of every main-block method, e.g.
  :func:`cvstats.corrected_resampled_t`); the other blocks are not used;
* the **per-dataset result** of a cvstats method: an
  :class:`~cvstats.results.InferenceResult` whose ``estimate`` is over
  ``(dataset, model)`` (e.g. ``cvstats.corrected_resampled_t(cube)``), or an
  :class:`~cvstats.results.EstimatesResult` holding one such estimate. Only
  the estimates are used: the tests across datasets take one number per cell
  (their variances answer the per-dataset question, :func:`~cvstats.across.ranks.rank_report`).

Bad inputs are refused with the cell that is wrong: a (dataset, model) pair
given twice in a long table (no averaging is guessed), a learner without a
score on a dataset, a NaN or infinite score, fewer than 2 datasets or
learners, and scores of a metric bounded in ``[0, 1]`` (by its name: an
accuracy, AUC, F1, ...) that mix fractions with percentages. A table wholly in
percent is accepted as it is: ranks do not see the scale, and a rope is read
in the table's units.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.schema import CONTRAST, MODEL, SPLIT
from cvstats.cube.score import metric_range
from cvstats.errors import ArgumentError, CvstatsTypeError

__all__ = ["DATASET_DIM", "MODEL_COLUMN", "read_table", "table_record"]

#: Default name of the datasets dim of a DataArray table and column of a long table.
DATASET_DIM = "dataset"
#: Column of a long table holding the learners' names (the cube's ``model`` dim).
MODEL_COLUMN = MODEL
#: The attrs that say which metric the values are and which way is better
#: (:func:`cvstats.cube.score.recorded_direction`): a wide table built from a
#: cube or result keeps these, nothing else.
_RECORD_ATTRS = ("greater_is_better", "loss", "metric", "design", "n", "seed")
#: How many bad cells an error message lists.
_SHOWN = 5

_FORMS = (
    "a wide pandas DataFrame (datasets x learners), a long one (columns '{d}', 'model' "
    "and one score column), a Series over a ('{d}', 'model') MultiIndex, an xarray "
    "DataArray over ('{d}', model), a cube with a '{d}' dim, or a cvstats result whose "
    "estimate is over ('{d}', model)"
)


def _forms(dataset_dim: Hashable) -> str:
    return _FORMS.format(d=dataset_dim)


def _cells(pairs: Any) -> str:
    """Return the first (dataset, model) pairs of ``pairs`` as text, with the count."""
    pairs = [(str(d), str(m)) for d, m in pairs]
    shown = ", ".join(f"({d!r}, {m!r})" for d, m in pairs[:_SHOWN])
    more = f" and {len(pairs) - _SHOWN} more" if len(pairs) > _SHOWN else ""
    return f"{shown}{more}"


# --------------------------------------------------------------------------
# what the input records about its metric
# --------------------------------------------------------------------------


def _is_long(frame: pd.DataFrame, dataset_dim: Hashable) -> bool:
    """Tell whether ``frame`` is a long table: a column named as the datasets dim."""
    return dataset_dim in frame.columns


def _score_column(frame: pd.DataFrame, dataset_dim: Hashable) -> Hashable:
    """Return the one score column of a long table (checked)."""
    if MODEL_COLUMN not in frame.columns:
        raise ArgumentError(
            f"`table` has a column {dataset_dim!r} but no column {MODEL_COLUMN!r}: for a wide "
            f"table (datasets x learners) make the datasets its index "
            f"(table.set_index({dataset_dim!r})); for a long one (one row per dataset and "
            f"learner) name the learners' column {MODEL_COLUMN!r}. Columns: "
            f"{list(frame.columns)}."
        )
    scores = [c for c in frame.columns if c not in (dataset_dim, MODEL_COLUMN)]
    if len(scores) != 1:
        raise ArgumentError(
            f"a long `table` needs exactly one score column besides {dataset_dim!r} and "
            f"{MODEL_COLUMN!r}, got {scores}; select it, e.g. "
            f"table[[{dataset_dim!r}, {MODEL_COLUMN!r}, 'accuracy']]."
        )
    return scores[0]


def _source(table: Any) -> Any:
    """Return the DataArray behind a result or a compact Dataset, else ``table`` itself."""
    from cvstats.cube.compact import compact_cube, is_compact

    if isinstance(table, xr.Dataset) and is_compact(table):
        return compact_cube(table)
    estimate = _single_estimate(table)
    return table if estimate is None else estimate


def _single_estimate(result: Any) -> xr.DataArray | None:
    """Return the estimate of a cvstats result, or None for anything else."""
    from cvstats.results.base import Result
    from cvstats.results.estimates import EstimatesResult

    if isinstance(result, EstimatesResult):
        quantities = list(result.quantities)
        if len(quantities) != 1:
            raise ArgumentError(
                f"`table` is an EstimatesResult with the quantities {quantities}; pick one "
                f"(e.g. table[{quantities[0]!r}]) to compare the learners by."
            )
        return result[quantities[0]]
    estimate = getattr(result, "estimate", None)
    if isinstance(result, Result) and isinstance(estimate, xr.DataArray):
        return estimate
    return None


def table_record(table: Any, dataset_dim: Hashable = DATASET_DIM) -> tuple[Mapping, Any]:
    """Return ``(attrs, name)`` of what ``table`` records about its metric.

    The attrs of a DataArray, a cube or a result's estimate (a score cube's
    ``greater_is_better`` and ``metric``, a loss cube's ``design``, ``n``,
    ``seed``) with its name; the ``attrs`` of a pandas table with, for a long
    table, the name of its score column (for a Series, its name). Read by
    :func:`cvstats.cube.score.recorded_direction` and the range check.

    Parameters
    ----------
    table : any form :func:`read_table` takes
        The table.
    dataset_dim : hashable, default "dataset"
        The datasets dim, or column of a long table.

    Returns
    -------
    (mapping, object)
        The attrs (empty when none) and the name (None when none).

    Raises
    ------
    CvstatsTypeError
        If ``table`` is not one of the forms of :func:`read_table`.
    """
    table = _source(table)
    if isinstance(table, xr.DataArray):
        return dict(table.attrs), table.name
    if isinstance(table, pd.Series):
        return dict(table.attrs), table.name
    if isinstance(table, pd.DataFrame):
        attrs = table.attrs if isinstance(table.attrs, Mapping) else {}
        name = None
        if _is_long(table, dataset_dim) and MODEL_COLUMN in table.columns:
            scores = [c for c in table.columns if c not in (dataset_dim, MODEL_COLUMN)]
            name = scores[0] if len(scores) == 1 else None
        return dict(attrs), name
    hint = ""
    if isinstance(getattr(table, "results", None), Mapping):  # a ComparisonTable
        hint = (
            " A comparison table holds several methods: pass one of its results, e.g. "
            "table.results['corrected_resampled_t']."
        )
    raise CvstatsTypeError(
        f"`table` must be {_forms(dataset_dim)}; got {type(table).__name__}.{hint}"
    )


# --------------------------------------------------------------------------
# each form to the wide frame
# --------------------------------------------------------------------------


def _from_long(frame: pd.DataFrame, dataset_dim: Hashable) -> pd.DataFrame:
    """Pivot a long table to datasets × learners, in order of first appearance."""
    score = _score_column(frame, dataset_dim)
    keys = [dataset_dim, MODEL_COLUMN]
    dup = frame.duplicated(keys, keep="first")
    if dup.any():
        pairs = frame.loc[dup, keys].drop_duplicates().itertuples(index=False)
        raise ArgumentError(
            f"a long `table` must hold one score per (dataset, model), but "
            f"{_cells(pairs)} appear more than once (fold scores, or a run pasted twice?). "
            f"Average what belongs together first, e.g. "
            f"table.groupby([{dataset_dim!r}, {MODEL_COLUMN!r}], sort=False, "
            f"as_index=False)[{score!r}].mean(), or drop the duplicates."
        )
    values = pd.to_numeric(frame[score], errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=float))
    if bad.any():
        pairs = frame.loc[bad, keys].itertuples(index=False)
        raise ArgumentError(
            f"the score column {score!r} of `table` must hold finite numbers, but it does not "
            f"at {_cells(pairs)}; fix those scores or drop those rows (and the dataset or "
            "learner with them: every learner needs a score on every dataset)."
        )
    datasets = pd.unique(frame[dataset_dim])
    models = pd.unique(frame[MODEL_COLUMN])
    frame = frame.copy()
    frame[score] = values
    wide = frame.pivot(index=dataset_dim, columns=MODEL_COLUMN, values=score).reindex(
        index=datasets, columns=models
    )
    missing = wide.isna().to_numpy()
    if missing.any():
        pairs = [
            (wide.index[i], wide.columns[j]) for i, j in zip(*np.nonzero(missing), strict=True)
        ]
        raise ArgumentError(
            f"every learner needs a score on every dataset, but the long `table` has none for "
            f"{_cells(pairs)}; add them, or drop those datasets (or learners) from every "
            "learner's rows."
        )
    wide.columns.name = None
    wide.index.name = dataset_dim
    return wide


def _from_series(series: pd.Series, dataset_dim: Hashable) -> pd.DataFrame:
    """Return a long Series over a ``(dataset, model)`` MultiIndex as a wide frame."""
    names = list(series.index.names)
    if series.index.nlevels != 2 or set(names) != {dataset_dim, MODEL_COLUMN}:
        raise ArgumentError(
            f"a Series `table` must have a MultiIndex with the levels ({dataset_dim!r}, "
            f"{MODEL_COLUMN!r}), got {names}; e.g. "
            f"frame.groupby([{dataset_dim!r}, {MODEL_COLUMN!r}])['accuracy'].mean()."
        )
    name = series.name if series.name is not None else "score"
    frame = series.rename(name).reset_index()
    return _from_long(frame[[dataset_dim, MODEL_COLUMN, name]], dataset_dim)


def _cube_means(cube: xr.DataArray, dataset_dim: Hashable) -> xr.DataArray:
    """Return the per-dataset CV mean of a cube: the mean of its main block's split means."""
    from cvstats.cube import validate
    from cvstats.inference.blocks import split_means

    validate(cube)
    if CONTRAST in cube.dims:
        raise ArgumentError(
            "`table` is a contrast cube (differences of learners); the comparisons across "
            "datasets rank the learners themselves: pass the cube of the learners (before "
            "cvstats.pairwise or cvstats.contrasts)."
        )
    means = split_means(cube, ["main"], method="the comparisons across datasets")
    out = means.mean(SPLIT)
    out.attrs = dict(cube.attrs)
    return out.rename(cube.name)


def _from_dataarray(array: xr.DataArray, dataset_dim: Hashable) -> pd.DataFrame:
    """Return a 2-d DataArray, or a cube's per-dataset means, as a wide frame."""
    if SPLIT in array.dims:
        if dataset_dim not in array.dims:
            raise ArgumentError(
                f"`table` is a cube without a {dataset_dim!r} dim (dims {tuple(array.dims)}): "
                "one dataset cannot be compared across datasets; use cvstats.compare(cube), or "
                f"build the cube over datasets (from_arrays(..., extra_dims=[{dataset_dim!r}]))."
            )
        array = _cube_means(array, dataset_dim)
    if array.ndim != 2 or dataset_dim not in array.dims:
        raise ArgumentError(
            f"`table` must be a 2-d DataArray over ({dataset_dim!r}, <learners>) or a cube "
            f"with a {dataset_dim!r} dim, got dims {tuple(array.dims)}; select one element of "
            "the other dims (table.sel(...)), or pass `dataset_dim`."
        )
    other = next(d for d in array.dims if d != dataset_dim)
    if other == CONTRAST:
        raise ArgumentError(
            f"`table` is over ({dataset_dim!r}, 'contrast'): differences of learners, not the "
            "learners' own values; run the method on the cube of the learners (before "
            "cvstats.pairwise), e.g. cvstats.corrected_resampled_t(cube)."
        )
    array = array.drop_vars([c for c in array.coords if c not in array.dims])
    return array.transpose(dataset_dim, other).to_pandas()


def _check_percent(frame: pd.DataFrame, metric: Any) -> None:
    """Refuse fractions mixed with percentages of a metric bounded in ``[0, 1]``."""
    if not isinstance(metric, str) or metric_range(metric.strip().lower()) != (0.0, 1.0):
        return
    values = frame.to_numpy()
    outside = (values < 0) | (values > 100)
    percent = values > 1
    where = (
        outside if outside.any() else (percent if (percent.any() and (~percent).any()) else None)
    )
    if where is None:
        return
    pairs = [(frame.index[i], frame.columns[j]) for i, j in zip(*np.nonzero(where), strict=True)]
    if outside.any():
        raise ArgumentError(
            f"`table` holds {metric!r} scores, which lie in [0, 1] (or [0, 100] in percent), "
            f"but not at {_cells(pairs)}; fix those scores, or clear the metric name if the "
            "values are another metric."
        )
    raise ArgumentError(
        f"`table` holds {metric!r} scores that mix fractions (at most 1) with percentages "
        f"(above 1) at {_cells(pairs)}: a learner at 85 and another at 0.86 would be ranked "
        "the wrong way round. Put every score on one scale (divide the percentages by 100)."
    )


def read_table(table: Any, dataset_dim: Hashable = DATASET_DIM) -> pd.DataFrame:
    """Return ``table`` as the checked wide DataFrame, datasets × learners.

    Parameters
    ----------
    table : DataFrame, Series, DataArray, cube or result
        Any form of the module docstring: wide or long pandas table, DataArray
        over ``(dataset, model)``, a cube with a ``dataset`` dim (reduced to the
        mean of its main block's split means per dataset), or a cvstats result
        whose estimate is over ``(dataset, model)``.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.

    Returns
    -------
    pandas.DataFrame
        Float, finite, at least 2 datasets and 2 learners, string column
        labels, in the order the input has them; its ``attrs`` hold what the
        input records about its metric (``greater_is_better``, ``metric``, a
        loss cube's ``design``, ``n``, ``seed``; a long table's score column as
        ``metric``).

    Raises
    ------
    ArgumentError
        For a duplicated (dataset, model) pair, a missing, NaN or infinite
        score, fewer than 2 datasets or learners, duplicate learner names,
        values that are not numbers, or fractions mixed with percentages of a
        ``[0, 1]`` metric.
    CvstatsTypeError
        If ``table`` is none of these forms.
    """
    attrs, name = table_record(table, dataset_dim)
    source = _source(table)
    if isinstance(source, xr.DataArray):
        frame = _from_dataarray(source, dataset_dim)
        if SPLIT in source.dims:  # a cube: the reduction says what it recorded
            attrs = dict(source.attrs)
    elif isinstance(source, pd.Series):
        frame = _from_series(source, dataset_dim)
    elif _is_long(source, dataset_dim):
        frame = _from_long(source, dataset_dim)
    else:
        frame = source.copy()
    frame.columns = [str(c) for c in frame.columns]
    if frame.columns.duplicated().any():
        raise ArgumentError(f"`table` has duplicate learner names: {list(frame.columns)}.")
    try:
        frame = frame.astype(float)
    except (TypeError, ValueError) as e:
        raise ArgumentError(
            f"`table` must hold numbers: {e}. A long table needs columns {dataset_dim!r} and "
            f"{MODEL_COLUMN!r}; a wide one, the datasets as its index."
        ) from e
    if frame.shape[0] < 2 or frame.shape[1] < 2:
        raise ArgumentError(
            f"`table` needs at least 2 datasets and 2 learners, got shape {frame.shape} "
            f"({frame.shape[0]} dataset(s) x {frame.shape[1]} learner(s)): a comparison across "
            "datasets needs several; for one dataset compare the learners on its cube "
            "(cvstats.compare)."
        )
    bad = ~np.isfinite(frame.to_numpy())
    if bad.any():
        pairs = [(frame.index[i], frame.columns[j]) for i, j in zip(*np.nonzero(bad), strict=True)]
        raise ArgumentError(
            f"`table` must be finite: every learner needs a score on every dataset, but "
            f"(dataset, model) {_cells(pairs)} is NaN or infinite; fix those scores, or drop "
            "those datasets or learners first."
        )
    record = {k: attrs[k] for k in _RECORD_ATTRS if k in attrs}
    if "metric" not in record and isinstance(name, str):
        record["metric"] = name
    _check_percent(frame, record.get("metric"))
    frame.attrs = record
    return frame
