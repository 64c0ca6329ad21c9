"""Score cubes from what scikit-learn users already have: search results and CV scores.

:func:`from_cv_results` reads the per-split test scores that scikit-learn's
model selection returns (Pedregosa et al., 2011) and turns them into a score
cube (:mod:`cvstats.cube.score`): one value per (split, model), on a design
holding exactly the splits that produced the scores.

* the ``cv_results_`` of ``GridSearchCV``, ``RandomizedSearchCV``,
  ``HalvingGridSearchCV`` and ``HalvingRandomSearchCV`` (or the fitted search
  itself): one model per candidate, its ``split{k}_test_{metric}`` columns;
* the dict of ``cross_validate(..., return_indices=True)`` (one model), or a
  mapping name -> such dict (several models): its ``test_{metric}`` arrays,
  the design from its ``indices``;
* ``cross_val_score`` arrays (one per model), with the ``cv`` that made them.

The design comes from the returned indices when there are some, else from
the splitter through :func:`cvstats.designs.from_splitter`, which must see the
splits the search saw: the same splitter with an int ``random_state`` and the
same ``X``, ``y`` and ``groups``.
"""

from __future__ import annotations

import ast
import numbers
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike

from cvstats.cube.schema import MODEL, SPLIT
from cvstats.cube.score import from_scores, is_sklearn_scorer, metric_direction
from cvstats.designs.splitters import from_splitter
from cvstats.errors import (
    ArgumentError,
    CubeError,
    CvstatsTypeError,
    CvstatsWarning,
    DesignError,
)

__all__ = ["candidate_labels", "from_cv_results"]

#: ``split{k}_test_{metric}``: a column of per-split test scores in ``cv_results_``.
_SPLIT_COLUMN = re.compile(r"^split(\d+)_test_(.+)$")

#: The scorer of a metric is a callable the search was given (its direction is unknown).
_CUSTOM = "<custom scorer>"
#: ``scoring=None`` and the candidates' own ``score`` methods are not one known metric.
_OWN_SCORE = "<the estimators' score methods>"
#: The scorer of a metric is a scorer object of ``make_scorer`` (greater-is-better values).
_MADE = "<a make_scorer scorer>"
_UNNAMED = (_CUSTOM, _OWN_SCORE, _MADE)

_MAKE_SCORER_NOTE = (
    "(values of a scorer made by sklearn.metrics.make_scorer are greater-is-better whatever "
    "its own greater_is_better: make_scorer(..., greater_is_better=False) returns the negated "
    "loss, so pass True for it; pass False only for a plain callable that returns a loss)"
)


@dataclass
class _Table:
    """Per-split scores read from one kind of results, before the metric and design."""

    source: str
    #: metric key -> scores, shape (rows, splits)
    values: dict[str, np.ndarray]
    labels: list[str]
    #: where each key's score of row ``i``, split ``k`` came from, for messages
    column: Callable[[str, int, int], str]
    #: the kind of row, for messages: "candidate" or "model"
    what: str = "model"
    #: rows of ``cv_results_`` (candidates), or None
    rows: np.ndarray | None = None
    #: metric key -> scikit-learn scorer name, _CUSTOM, or absent (unknown)
    scorers: dict[str, str] = field(default_factory=dict)
    #: the direction of a key missing from ``scorers``: _CUSTOM for a search's keys
    default_scorer: str | None = None
    #: the splits as (train, test) index pairs, when the results returned them
    indices: list[tuple[np.ndarray, np.ndarray]] | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def n_splits(self) -> int:
        return next(iter(self.values.values())).shape[1]


# --------------------------------------------------------------------------
# scikit-learn
# --------------------------------------------------------------------------


def _default_score(estimator: Any, params: Sequence[Mapping[str, Any]]) -> str:
    """Name the metric of ``estimator.score`` (``scoring=None``): accuracy, R², or _OWN_SCORE."""
    from sklearn.base import ClassifierMixin, RegressorMixin
    from sklearn.pipeline import Pipeline

    final = estimator
    if isinstance(estimator, Pipeline):
        final = estimator[-1]
        step = estimator.steps[-1][0]
        if any(step in p for p in params):  # the grid replaces the final estimator: the
            # metric is known when every candidate's final estimator scores the same way
            names = {_default_score(p.get(step, final), []) for p in params}
            return names.pop() if len(names) == 1 else _OWN_SCORE
    score = getattr(type(final), "score", None)
    if score is ClassifierMixin.score:
        return "accuracy"
    if score is RegressorMixin.score:
        return "r2"
    return _OWN_SCORE


def _search_scorers(search: Any) -> dict[str, str]:
    """Metric key -> scorer name (or _CUSTOM) of a fitted search, from its ``scoring``."""
    scoring = search.scoring
    if scoring is None:
        return {"score": _default_score(search.estimator, search.cv_results_.get("params", []))}
    if isinstance(scoring, str):
        return {"score": scoring}
    if isinstance(scoring, Mapping):
        return {str(k): v if isinstance(v, str) else _custom(v) for k, v in scoring.items()}
    if isinstance(scoring, list | tuple | set | frozenset):
        return {str(s): str(s) for s in scoring}
    return {} if getattr(search, "multimetric_", False) else {"score": _custom(scoring)}


def _custom(scorer: Any) -> str:
    """Mark a scorer object: one of ``make_scorer`` (its values greater-is-better), or not."""
    return _MADE if is_sklearn_scorer(scorer) else _CUSTOM


def _is_search(obj: Any) -> bool:
    """Tell a scikit-learn search object (fitted or not), by its public attributes."""
    return hasattr(obj, "cv_results_") or (
        hasattr(obj, "estimator")
        and hasattr(obj, "fit")
        and hasattr(obj, "cv")
        and (hasattr(obj, "param_grid") or hasattr(obj, "param_distributions"))
    )


# --------------------------------------------------------------------------
# reading the results
# --------------------------------------------------------------------------


def _format_value(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return f"{float(value):.6g}"
    if isinstance(value, type):
        return value.__name__
    return " ".join(str(value).split())


#: The longest ``params`` string of a saved ``cv_results_`` that is read back as a dict.
_PARAMS_MAX = 10_000


def _saved_params(res: Mapping[str, Any], row: int, text: str) -> Mapping[str, Any]:
    """Read back the ``params`` of a row of a ``cv_results_`` saved as text (e.g. a CSV).

    ``DataFrame.to_csv`` writes each dict as its repr (``"{'C': 0.1}"``), read back
    with :func:`ast.literal_eval` (literals only, nothing is evaluated); a dict
    holding what a literal cannot spell (an estimator) is rebuilt from the row's
    ``param_*`` columns, and failing those the text itself is the label.
    """
    if len(text) <= _PARAMS_MAX:
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = None
        if isinstance(value, Mapping):
            return value
    columns = {
        str(k)[len("param_") :]: np.asarray(v, dtype=object)[row]
        for k, v in res.items()
        if str(k).startswith("param_")
    }
    found = {k: v for k, v in columns.items() if not (isinstance(v, float) and np.isnan(v))}
    return found or {"params": text}


def _params(res: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Return the ``params`` of every row of a ``cv_results_``, as dicts (see _saved_params)."""
    return [
        p if isinstance(p, Mapping) else _saved_params(res, i, str(p))
        for i, p in enumerate(res["params"])
    ]


def _numbers(values: Any, where: str) -> np.ndarray:
    """Return per-split scores as float64; refuse anything but numbers (as from_scores does)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iuf":
        return arr.astype(np.float64)
    flat = arr.ravel()
    bad = next(
        (
            v
            for v in flat
            if isinstance(v, str | bytes | bool | np.bool_) or not isinstance(v, numbers.Real)
        ),
        None,
    )
    held = (
        f"holding {bad!r} of type {type(bad).__name__}"
        if bad is not None
        else "(numbers stored as Python objects)"
    )
    raise ArgumentError(
        f"{where} must hold numbers (per-split scores), got dtype {arr.dtype} {held}; scores "
        "are never converted from text or objects: convert the column first (e.g. "
        "pd.to_numeric, or np.asarray(..., dtype=float) for numbers), as "
        "cvstats.from_scores requires too."
    )


def candidate_labels(params: Sequence[Mapping[str, Any]], rows: np.ndarray) -> list[str]:
    """Readable, unique labels ``"C=0.1, penalty=l2"``; a repeated one gets its row."""
    labels = [
        ", ".join(f"{k}={_format_value(v)}" for k, v in params[int(r)].items())
        or "default parameters"
        for r in rows
    ]
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return [
        f"{label} [candidate {int(r)}]" if counts[label] > 1 else label
        for label, r in zip(labels, rows, strict=True)
    ]


def _resolve_rows(
    res: Mapping[str, Any], n_rows: int, iteration: Any, candidates: Any, source: str
) -> tuple[np.ndarray, dict[str, Any]]:
    """Return the rows (candidates) to read, and attrs saying which (halving iteration)."""
    rows: np.ndarray | None = None
    if candidates is not None:
        if isinstance(candidates, str) or not isinstance(candidates, Sequence | np.ndarray):
            raise CvstatsTypeError(
                f"`candidates` must be a sequence of ints (rows of cv_results_), got "
                f"{candidates!r}."
            )
        values = list(candidates)
        if not values or not all(
            isinstance(c, numbers.Integral) and not isinstance(c, bool) for c in values
        ):
            raise ArgumentError(
                f"`candidates` must hold at least one int (a row of cv_results_), got "
                f"{candidates!r}."
            )
        rows = np.asarray(values, dtype=np.int64)
        bad = (rows < 0) | (rows >= n_rows)
        if bad.any() or np.unique(rows).size != rows.size:
            raise ArgumentError(
                f"`candidates` must name distinct rows 0..{n_rows - 1} of cv_results_ "
                f"({n_rows} candidates), got {values}."
            )
    if "iter" not in res:
        if iteration is not None:
            raise ArgumentError(
                f"`iteration` is for the results of a halving search (HalvingGridSearchCV, "
                f"HalvingRandomSearchCV), which have an 'iter' column; {source} has none: "
                "drop `iteration`."
            )
        return (np.arange(n_rows) if rows is None else rows), {}
    iters = np.asarray(res["iter"], dtype=np.int64)
    levels = np.unique(iters)
    chosen: int | None = None
    if iteration is not None:
        if isinstance(iteration, bool) or not isinstance(iteration, numbers.Integral):
            raise ArgumentError(f"`iteration` must be an int, got {iteration!r}.")
        if not -levels.size <= int(iteration) < levels.size:
            raise ArgumentError(
                f"`iteration` = {iteration} is out of range: the search ran iterations "
                f"{levels.tolist()} (negative values count from the last)."
            )
        chosen = int(levels[int(iteration)])
    if rows is not None:
        found = np.unique(iters[rows])
        if found.size > 1 or (chosen is not None and int(found[0]) != chosen):
            raise ArgumentError(
                f"`candidates` {rows.tolist()} come from iterations {found.tolist()}"
                + ("" if chosen is None else f", not all from `iteration` = {iteration}")
                + ": only the candidates of one iteration of a halving search share splits "
                "(each iteration subsamples the data anew); pick candidates of one iteration."
            )
        chosen = int(found[0])
    elif chosen is None:
        chosen = int(levels[-1])
        if levels.size > 1:
            warnings.warn(
                f"{source} holds {levels.size} iterations of a halving search, each on its "
                "own subsample: only the candidates of one iteration share splits, so the "
                f"cube holds those of the last, iteration {chosen} "
                f"({int((iters == chosen).sum())} candidates). Pass iteration=k to choose one "
                "(iteration=-1 for the last, which also silences this warning).",
                CvstatsWarning,
                stacklevel=3,
            )
    if rows is None:
        rows = np.flatnonzero(iters == chosen)
    attrs: dict[str, Any] = {"iteration": chosen}
    if "n_resources" in res:
        attrs["n_resources"] = int(np.asarray(res["n_resources"])[rows[0]])
    return rows, attrs


def _read_search_table(
    res: Mapping[str, Any], source: str, iteration: Any, candidates: Any
) -> _Table:
    """Read the ``split{k}_test_{metric}`` columns of a ``cv_results_`` mapping."""
    found: dict[str, dict[int, str]] = {}
    for col in res:
        match = _SPLIT_COLUMN.match(str(col))
        if match:
            found.setdefault(match[2], {})[int(match[1])] = str(col)
    if not found:
        raise ArgumentError(
            f"{source} holds no per-split test scores (columns 'split0_test_score', ..., or "
            "'split0_test_<metric>' for several metrics); its columns are "
            f"{list(res)[:12]}. Pass the search's whole cv_results_ (not only its mean_test_ "
            "columns), or the fitted search object."
        )
    n_splits = {key: len(cols) for key, cols in found.items()}
    for key, cols in found.items():
        if sorted(cols) != list(range(len(cols))) or len(set(n_splits.values())) > 1:
            raise ArgumentError(
                f"{source}'s split columns are incomplete: metric {key!r} has splits "
                f"{sorted(cols)} (and the metrics have {n_splits} splits); every metric needs "
                "split0_test_<metric> .. split{K-1}_test_<metric>."
            )
    S = next(iter(n_splits.values()))
    first = found[next(iter(found))][0]
    n_rows = len(res["params"]) if "params" in res else len(np.asarray(res[first]))
    rows, attrs = _resolve_rows(res, n_rows, iteration, candidates, source)
    values = {
        key: np.column_stack(
            [_numbers(res[cols[k]], f"{source}'s column {cols[k]!r}")[rows] for k in range(S)]
        )
        for key, cols in found.items()
    }
    if "params" in res:
        labels = candidate_labels(_params(res), rows)
    else:
        labels = [f"candidate {int(r)}" for r in rows]

    def column(key: str, i: int, k: int) -> str:
        return f"'split{k}_test_{key}'"

    return _Table(
        source=source,
        values=values,
        labels=labels,
        column=column,
        what="candidate",
        rows=rows,
        attrs=attrs,
    )


def _cross_validate_keys(d: Mapping[str, Any], name: str) -> dict[str, np.ndarray]:
    keys = {str(k)[5:]: k for k in d if str(k).startswith("test_")}
    if not keys:
        raise ArgumentError(
            f"{name} holds no per-split test scores (keys 'test_score' or 'test_<metric>'); "
            f"its keys are {list(d)}. Pass the dict that cross_validate returned, with "
            "return_indices=True."
        )
    out = {}
    for key, k in keys.items():
        arr = _numbers(d[k], f"{name}[{k!r}]")
        if arr.ndim != 1:
            raise ArgumentError(
                f"{name}[{k!r}] must be 1-D (one score per split), got {arr.shape}."
            )
        out[key] = arr
    if len({a.size for a in out.values()}) > 1:
        raise ArgumentError(f"{name}'s test_ arrays have different lengths.")
    return out


def _read_indices(d: Mapping[str, Any], name: str) -> list[tuple[np.ndarray, np.ndarray]] | None:
    idx = d.get("indices")
    if idx is None:
        return None
    if not isinstance(idx, Mapping) or "train" not in idx or "test" not in idx:
        raise ArgumentError(
            f"{name}['indices'] must be the mapping {{'train': [...], 'test': [...]}} that "
            "cross_validate(..., return_indices=True) returns."
        )
    train, test = list(idx["train"]), list(idx["test"])
    if len(train) != len(test):
        raise ArgumentError(
            f"{name}['indices'] has {len(train)} training and {len(test)} test sets."
        )
    return [(np.asarray(a), np.asarray(b)) for a, b in zip(train, test, strict=True)]


def _same_indices(
    a: list[tuple[np.ndarray, np.ndarray]] | None, b: list[tuple[np.ndarray, np.ndarray]] | None
) -> int | None:
    """Return the first split where two index lists differ (-1: their counts), or None."""
    if a is None or b is None:
        return None if a is b else -1
    if len(a) != len(b):
        return -1
    for k, ((tr_a, te_a), (tr_b, te_b)) in enumerate(zip(a, b, strict=True)):
        if not (
            np.array_equal(np.sort(tr_a), np.sort(tr_b))
            and np.array_equal(np.sort(te_a), np.sort(te_b))
        ):
            return k
    return None


def _read_cross_validate(dicts: Mapping[str, Mapping[str, Any]], single: bool) -> _Table:
    """Read one or several ``cross_validate`` dicts (one model each), sharing their splits."""
    names = [str(m) for m in dicts]
    where = {m: "results" if single else f"results[{m!r}]" for m in names}
    per_model = {
        m: _cross_validate_keys(d, where[m]) for m, d in zip(names, dicts.values(), strict=True)
    }
    indices = {m: _read_indices(d, where[m]) for m, d in zip(names, dicts.values(), strict=True)}
    first = names[0]
    for m in names[1:]:
        if set(per_model[m]) != set(per_model[first]):
            raise ArgumentError(
                f"models {first!r} and {m!r} hold different metrics ({sorted(per_model[first])} "
                f"and {sorted(per_model[m])}); run cross_validate with the same scoring for "
                "every model."
            )
        sizes = (
            next(iter(per_model[first].values())).size,
            next(iter(per_model[m].values())).size,
        )
        differ = _same_indices(indices[first], indices[m])
        if sizes[0] != sizes[1] or differ is not None:
            detail = (
                f"{sizes[0]} and {sizes[1]} splits"
                if sizes[0] != sizes[1]
                else "indices for one only"
                if indices[first] is None or indices[m] is None
                else f"different splits (first at split {differ})"
                if differ >= 0
                else "different numbers of splits"
            )
            raise DesignError(
                f"models {first!r} and {m!r} were cross-validated on {detail}; a comparison "
                "needs every model on the same splits: run cross_validate with the same cv "
                "(an int random_state), the same X, y, groups and return_indices=True for "
                "every model."
            )
    keys = list(per_model[first])
    values = {k: np.stack([per_model[m][k] for m in names]) for k in keys}

    def column(key: str, i: int, k: int) -> str:
        return f"test_{key}[{k}]" if single else f"results[{names[i]!r}]['test_{key}'][{k}]"

    return _Table(
        source="cross_validate results",
        values=values,
        labels=names if not single else ["model0"],
        column=column,
        indices=indices[first],
    )


def _read_arrays(arrays: Mapping[str, Any], single: bool) -> _Table:
    """Read ``cross_val_score`` arrays: one 1-D array of per-split scores per model."""
    names = [str(m) for m in arrays]
    values = []
    for m, a in zip(names, arrays.values(), strict=True):
        arr = np.asarray(a)
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or arr.ndim != 1:
            what = "results" if single else f"results[{m!r}]"
            raise ArgumentError(
                f"{what} must be a 1-D array of per-split scores (what cross_val_score "
                f"returns), got shape {arr.shape} and dtype {arr.dtype}; for a (split, model) "
                "array use cvstats.cube.from_scores."
            )
        values.append(arr.astype(np.float64))
    sizes = {m: v.size for m, v in zip(names, values, strict=True)}
    if len(set(sizes.values())) > 1:
        raise DesignError(
            f"the models have different numbers of splits {sizes}; a comparison needs every "
            "model scored on the same splits: run cross_val_score with the same cv (an int "
            "random_state) and the same X, y, groups for every model."
        )

    def column(key: str, i: int, k: int) -> str:
        return f"split {k} of the array" if single else f"split {k} of results[{names[i]!r}]"

    return _Table(
        source="cross_val_score arrays",
        values={"score": np.stack(values)},
        labels=names if not single else ["model0"],
        column=column,
    )


def _is_1d_numbers(value: Any) -> bool:
    if isinstance(value, str | bytes | Mapping):
        return False
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return False
    return arr.ndim == 1 and arr.dtype != object


def _read(results: Any, iteration: Any, candidates: Any) -> tuple[_Table, Any]:
    """Read any supported results; return the table and the search object (or None)."""
    search = None
    if _is_search(results):
        if not hasattr(results, "cv_results_"):
            raise ArgumentError(
                f"the {type(results).__name__} is not fitted (it has no cv_results_); call "
                "search.fit(X, y) first."
            )
        search = results
        source = f"{type(search).__name__}.cv_results_"
        table = _read_search_table(search.cv_results_, source, iteration, candidates)
        table.scorers = _search_scorers(search)
        table.default_scorer = _CUSTOM
        return table, search
    given = type(results).__name__
    frame = hasattr(results, "columns") and hasattr(results, "to_numpy")
    if frame:  # a DataFrame: cv_results_, or one column of fold scores per model
        results = {str(c): results[c].to_numpy() for c in results.columns}
    extra = [
        name for name, v in (("iteration", iteration), ("candidates", candidates)) if v is not None
    ]
    if isinstance(results, Mapping):
        keys = [str(k) for k in results]
        if (
            "params" in results
            or any(_SPLIT_COLUMN.match(k) for k in keys)
            or any(k.startswith(("mean_test_", "rank_test_")) for k in keys)
        ):
            return _read_search_table(results, "cv_results_", iteration, candidates), None
        if extra:
            raise ArgumentError(
                f"{extra} select candidates of a search's cv_results_; cross_validate and "
                "cross_val_score results have none: drop them (select models with "
                "cube.sel(model=[...]) afterwards)."
            )
        if "fit_time" in results or any(k.startswith("test_") for k in keys):
            return _read_cross_validate({"model0": results}, single=True), None
        if results and all(isinstance(v, Mapping) for v in results.values()):
            return _read_cross_validate(results, single=False), None
        _check_score_columns(results, given)
        if results and all(_is_1d_numbers(v) for v in results.values()):
            return _read_arrays(results, single=False), None
    elif extra:
        raise ArgumentError(f"{extra} select candidates of a search's cv_results_: drop them.")
    elif _is_1d_numbers(results):
        return _read_arrays({"model0": results}, single=True), None
    raise CvstatsTypeError(
        "`results` must be a fitted GridSearchCV/RandomizedSearchCV/HalvingGridSearchCV/"
        "HalvingRandomSearchCV or its cv_results_ (a dict or DataFrame), the dict of "
        "cross_validate(..., return_indices=True) or a mapping name -> such dicts, or "
        "cross_val_score arrays (one 1-D array, or a mapping name -> array); got "
        f"{given}.{_FROM_SCORES if frame else ''}"
    )


#: columns that label the rows of a table of fold scores (when their values are labels)
_LABEL_COLUMNS = frozenset({"fold", "split", "repeat", "model", "metric", "dataset", "index"})
_FROM_SCORES = (
    " For a table of fold scores in rows (columns 'split', 'model' and the score), use "
    "cvstats.from_scores(frame, ...); or move the labels to the index "
    "(frame.set_index('fold')) so that each column is one model's scores."
)


def _is_label_column(key: str, values: Any) -> bool:
    """Tell a column of row labels (a fold number, a saved index) from a model's scores."""
    name = key.lower()
    if name.startswith("unnamed:") or name in ("level_0", "index"):  # a saved index
        return True
    if name not in _LABEL_COLUMNS:
        return False
    arr = np.asarray(values)
    if arr.dtype.kind not in "fiub":  # names, not scores
        return True
    finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
    return bool(finite.size) and bool((finite == np.round(finite)).all() and finite.max() > 1)


def _check_score_columns(results: Mapping[str, Any], given: str) -> None:
    """Refuse scores by model with a column of row labels (it would become a model)."""
    labels = [str(k) for k, v in results.items() if _is_label_column(str(k), v)]
    if labels:
        raise CvstatsTypeError(
            f"`results` (a {given}) has the column(s) {labels}, which label rows: read as "
            f"one array of fold scores per model, they would become models.{_FROM_SCORES}"
        )


# --------------------------------------------------------------------------
# metrics and their direction
# --------------------------------------------------------------------------


def _direction_given(greater_is_better: Any, name: str, key: str) -> bool | None:
    value = greater_is_better
    if isinstance(greater_is_better, Mapping):
        value = greater_is_better.get(name, greater_is_better.get(key))
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise ArgumentError(
        f"`greater_is_better` must be True, False, or a mapping metric -> bool, got "
        f"{value!r} for metric {name!r}."
    )


def _select(
    table: _Table, metric: Any, greater_is_better: Any
) -> tuple[list[tuple[str, str, str, int]], bool]:
    """Pick the metrics: ``(key, cube name, metric attr, direction)``; many -> a Dataset."""
    keys = list(table.values)
    rename: str | None = None
    if metric is None:
        chosen, many = keys, len(keys) > 1
    elif isinstance(metric, str):
        if metric in keys:
            chosen = [metric]
        elif keys == ["score"]:
            chosen, rename = ["score"], metric
        else:
            raise ArgumentError(
                f"`metric` = {metric!r} is not among the metrics of the {table.source}: "
                f"{keys}; pass one of them, a list of them, or None for all."
            )
        many = False
    elif isinstance(metric, Sequence) and all(isinstance(m, str) for m in metric) and metric:
        unknown = [m for m in metric if m not in keys]
        if unknown or len(set(metric)) != len(metric):
            what = f"names {unknown}, not among" if unknown else "repeats one of"
            raise ArgumentError(
                f"`metric` = {list(metric)} {what} the metrics of the {table.source}: {keys}; "
                "pass distinct metrics of these."
            )
        chosen, many = list(metric), True
    else:
        raise CvstatsTypeError(
            f"`metric` must be a metric name (str), a list of them, or None, got {metric!r}."
        )
    if isinstance(greater_is_better, Mapping):
        names = set(chosen) | ({rename} if rename else set())
        for key in chosen:
            scorer = table.scorers.get(key)
            if scorer and scorer not in _UNNAMED:
                names.add(scorer)
        unknown = [k for k in greater_is_better if k not in names]
        if unknown:
            raise ArgumentError(
                f"`greater_is_better` names metric(s) {unknown} that are not read; the "
                f"metrics are {sorted(names)}."
            )
    out = []
    for key in chosen:
        scorer = table.scorers.get(key, table.default_scorer)
        known_scorer = scorer if scorer is not None and scorer not in _UNNAMED else None
        if rename is not None:
            if known_scorer is not None and rename != known_scorer:
                raise ArgumentError(
                    f"`metric` = {rename!r}, but the search scored with {known_scorer!r}; drop "
                    "`metric` or pass that name."
                )
            name = rename
        elif key == "score" and known_scorer is not None:
            name = known_scorer
        else:
            name = key
        label = known_scorer or name
        # a scorer the search names or made by make_scorer (greater-is-better values by
        # construction), or (nothing known of the scorer) a scorer's name
        sklearn = scorer == _MADE or (
            is_sklearn_scorer(known_scorer)
            if known_scorer is not None
            else (scorer is None and is_sklearn_scorer(name))
        )
        if scorer == _CUSTOM:
            why = f"the search scored {name!r} with a custom scorer (a callable)"
        elif scorer == _OWN_SCORE:
            why = (
                f"the search scored {name!r} with each candidate's own `score` method "
                "(scoring=None), and these are not all a classifier's accuracy or all a "
                "regressor's R²"
            )
        else:
            why = f"{name!r} is not the name of a scikit-learn scorer"
        hint = "" if scorer in _UNNAMED else ", or name its scorer with metric= (e.g. 'roc_auc')"
        direction = metric_direction(
            label,
            _direction_given(greater_is_better, name, key),
            sklearn_scorer=sklearn,
            unknown=why,
            hint=f"{hint} {_MAKE_SCORER_NOTE}",
        )
        out.append((key, name, label, direction))
    return out, many


# --------------------------------------------------------------------------
# the design
# --------------------------------------------------------------------------


def _check_reproducible(cv: Any) -> None:
    """Refuse a splitter that draws new splits at every call (no int random_state)."""
    if not hasattr(cv, "random_state") or not callable(getattr(cv, "split", None)):
        return
    state = cv.random_state
    if isinstance(state, numbers.Integral) and not isinstance(state, bool):
        return
    if not getattr(cv, "shuffle", True):  # KFold(shuffle=False) and the like: deterministic
        return
    raise DesignError(
        f"`cv` = {cv!r} has random_state = {state!r}, so it draws new splits at every call and "
        "the splits that made the scores cannot be rebuilt (their sizes would match, their "
        "examples not). Rerun the search (or cross_validate) with an int random_state, e.g. "
        f"{type(cv).__name__}(..., random_state=0), and pass that cv; or use "
        "cross_validate(..., return_indices=True), whose indices need no cv."
    )


def _check_sizes_known(cv: Any, X: Any, y: Any, groups: Any, n: Any, source: str) -> None:
    if X is None and y is None and groups is None and n is None:
        if getattr(cv, "test_fold", None) is None:  # a PredefinedSplit knows its n
            raise ArgumentError(
                f"the number of examples is unknown, so the splits of the {source} cannot be "
                "rebuilt: pass the data the scores were computed on, X= (and y=, groups= as "
                "the search or cross-validation got them), or their number n=; or pass "
                "cross_validate results made with return_indices=True."
            )


def _resolve_cv(cv: Any, search: Any, y: Any, source: str) -> Any:
    """Return the splitter: ``cv``, else the search's (an int through sklearn's check_cv)."""
    origin = "`cv`"
    if cv is None and search is not None:
        cv, origin = search.cv, f"the {type(search).__name__}'s cv"
        if cv is None:
            cv = 5  # scikit-learn's default
    if cv is None:
        raise ArgumentError(
            f"the {source} hold no indices, so the splits that made them are unknown: pass "
            "cv= the splitter that made them (with an int random_state if it shuffles) and "
            "X=, y=, groups= as it got them (or n=); or use cross_validate(..., "
            "return_indices=True)."
        )
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if search is None:
            raise ArgumentError(
                f"`cv` = {cv} does not say which splitter made the scores: scikit-learn uses "
                f"StratifiedKFold({cv}) for a classifier with binary or multiclass y and "
                f"KFold({cv}) otherwise; pass that splitter, e.g. cv=StratifiedKFold({cv})."
            )
        from sklearn.base import is_classifier
        from sklearn.model_selection import check_cv

        classifier = is_classifier(search.estimator)
        if classifier and y is None:
            raise ArgumentError(
                f"{origin} = {cv} splits a classifier's data with StratifiedKFold({cv}) on the "
                "class labels (sklearn's check_cv); pass y= (and X=) as the search got them."
            )
        cv = check_cv(cv, y, classifier=classifier)
    return cv


def _splitter_design(cv: Any, X: Any, y: Any, groups: Any, n: Any, source: str) -> xr.Dataset:
    try:
        return from_splitter(cv, X, y, groups, n=n)
    except DesignError as e:
        raise DesignError(f"cannot rebuild the splits of the {source}: {e}") from e


def _halving_design(
    base: xr.Dataset, cv: Any, search: Any, table: _Table, X: Any, y: Any, groups: Any
) -> xr.Dataset:
    """Return the splits of one halving iteration: the base splits, maybe subsampled."""
    n_ex = int(base.attrs["n"])
    n_res = table.attrs.get("n_resources")
    resource = getattr(search, "resource", "n_samples") if search is not None else None
    if search is not None and resource == "n_samples":
        max_res = getattr(search, "max_resources_", None)
        if search.max_resources == "auto" and max_res is not None and int(max_res) != n_ex:
            raise DesignError(
                f"the {type(search).__name__} was fitted on {max_res} examples (its "
                f"max_resources_), but X/y/n give {n_ex}; pass the X, y, groups the search was "
                "fitted on."
            )
    if n_res is None or n_res == n_ex or (search is not None and resource != "n_samples"):
        return base  # every iteration on the base splits (subsampling all is a permutation)
    if search is None:
        raise DesignError(
            f"iteration {table.attrs['iteration']} of the halving search used n_resources = "
            f"{n_res} of {n_ex} examples, a subsample drawn with the search's random_state; "
            "pass the fitted search object instead of its cv_results_, or choose an iteration "
            f"on all {n_ex} examples with iteration=."
        )
    state = search.random_state
    if not isinstance(state, numbers.Integral) or isinstance(state, bool):
        raise DesignError(
            f"iteration {table.attrs['iteration']} of the {type(search).__name__} ran on a "
            f"subsample of {n_res} of {n_ex} examples drawn with random_state = {state!r}, "
            "which cannot be drawn again; refit the search with an int random_state, or "
            f"choose an iteration on all {n_ex} examples with iteration=."
        )
    from sklearn.utils import resample

    # what the halving search does for resource="n_samples" (scikit-learn >= 0.24): the
    # base splits, each training and test set subsampled without replacement to the
    # fraction n_resources / n with the search's random_state
    fraction = n_res / n_ex
    data = X if X is not None else np.zeros((n_ex, 1))
    pairs = []
    for train, test in cv.split(data, y, groups):
        pairs.append(
            (
                resample(
                    train, replace=False, random_state=state, n_samples=int(fraction * len(train))
                ),
                resample(
                    test, replace=False, random_state=state, n_samples=int(fraction * len(test))
                ),
            )
        )
    design = from_splitter(pairs, n=n_ex, seed=int(base.attrs["seed"]))
    design.attrs["splitter"] = f"{base.attrs['splitter']} subsampled to {n_res} of {n_ex} examples"
    return design


def _n_from_indices(pairs: list[tuple[np.ndarray, np.ndarray]], source: str) -> int:
    """Return the number of examples the indices use, when they use every one of 0..max.

    Without ``X``/``y``/``groups``/``n`` the number of examples is read off the
    indices only when every example from 0 to the largest index is in a training or a
    test set (as with every K-fold splitter): an index beyond the data cannot be told
    from a large data set otherwise, and would make every ``n``-based correction wrong.
    """
    used = np.unique(np.concatenate([np.concatenate([tr, te]).ravel() for tr, te in pairs]))
    if used.size and used.dtype.kind in "iu" and used[0] >= 0 and used[-1] == used.size - 1:
        return int(used.size)
    top = used[-1].item() if used.size else None
    raise ArgumentError(
        f"the indices of the {source} do not use every example from 0 to their largest index "
        f"{top!r} ({used.size} distinct indices), so the number of examples cannot be read "
        "off them (an index beyond the data looks like a larger data set): pass n= the number "
        "of examples (or X= the data) the cross-validation ran on."
    )


def _indices_design(table: _Table, cv: Any, X: Any, y: Any, groups: Any, n: Any) -> xr.Dataset:
    """Return the design of the returned indices; a ``cv`` given must make the same splits."""
    pairs = table.indices
    assert pairs is not None
    if X is None and y is None and groups is None and n is None:
        n = _n_from_indices(pairs, table.source)
    design = from_splitter(pairs, X, y, groups, n=n)
    if cv is not None:
        _check_reproducible(cv)
        other = _splitter_design(cv, X, y, groups, int(design.attrs["n"]), table.source)
        same = other.sizes[SPLIT] == design.sizes[SPLIT] and bool(
            (other["test"].values == design["test"].values).all()
            and (other["train"].values == design["train"].values).all()
        )
        if not same:
            raise DesignError(
                f"`cv` = {cv!r} does not make the splits of the returned indices; drop `cv` "
                "(the indices are the splits) or pass the cv that made them."
            )
    return design


def _splitter_repr(cv: Any) -> str:
    """Spell a splitter by its class and parameters (scikit-learn's repr lists them all)."""
    return " ".join(repr(cv).split())


def _as_splitters(cv: Any, classifier: bool, y: Any) -> list[Any] | None:
    """Return the splitters a ``cv`` stands for: itself, or what check_cv makes of an int.

    An int ``k`` is what :func:`sklearn.model_selection.check_cv` makes of it with
    ``y``; without ``y``, ``KFold(k)`` or (for a classifier) ``StratifiedKFold(k)``.
    None for an iterable of splits, which is not compared by its parameters.
    """
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        from sklearn.model_selection import KFold, StratifiedKFold, check_cv

        if y is not None:
            return [check_cv(int(cv), y, classifier=classifier)]
        return [KFold(int(cv)), *([StratifiedKFold(int(cv))] if classifier else [])]
    return [cv] if callable(getattr(cv, "split", None)) else None


def _check_search_cv(cv: Any, search: Any, y: Any) -> None:
    """Refuse a ``cv`` that is not the search's own splitter (class, parameters, seed).

    Another splitter with the same number of splits rebuilds other splits (other
    test sizes, other examples) and every interval would be wrong without an error.
    Splitters are compared by class and by scikit-learn's repr, which lists every
    parameter (``n_splits``, ``n_repeats``, ``shuffle``, ``random_state``...); an int
    as :func:`sklearn.model_selection.check_cv` reads it (``cv`` is resolved so already).
    """
    from sklearn.base import is_classifier

    classifier = is_classifier(search.estimator)
    given = _as_splitters(cv, classifier, y)
    own = _as_splitters(search.cv if search.cv is not None else 5, classifier, y)
    if given is None or own is None:
        return
    if not any(
        type(a) is type(b) and _splitter_repr(a) == _splitter_repr(b) for a in given for b in own
    ):
        wanted = " or ".join(_splitter_repr(c) for c in own)
        raise DesignError(
            f"`cv` = {_splitter_repr(cv)} is not the {type(search).__name__}'s own splitter "
            f"{wanted}: its splits would be other splits (other sizes, other examples) than "
            "the ones that made the scores. Drop `cv` (the search's own is used), or pass the "
            "search whose cv made the scores."
        )


def _design(
    table: _Table, search: Any, cv: Any, X: Any, y: Any, groups: Any, n: Any
) -> xr.Dataset:
    if table.indices is not None:
        design = _indices_design(table, cv, X, y, groups, n)
    else:
        given = cv
        cv = _resolve_cv(cv, search, y, table.source)
        if given is not None and search is not None:
            _check_search_cv(cv, search, y)
        _check_reproducible(cv)
        _check_sizes_known(cv, X, y, groups, n, table.source)
        design = _splitter_design(cv, X, y, groups, n, table.source)
        if "iteration" in table.attrs:
            design = _halving_design(design, cv, search, table, X, y, groups)
    S = table.n_splits
    got = design.sizes[SPLIT]
    ran = getattr(search, "n_splits_", None) if search is not None else None
    if got != S or (ran is not None and int(ran) != S):
        raise DesignError(
            f"the splitter makes {got} splits but the {table.source} hold {S}"
            + ("" if ran is None else f" (the search's n_splits_ = {ran})")
            + ": pass the cv that made the scores (same class, n_splits, n_repeats, int "
            "random_state) and the same X, y, groups."
        )
    return design


# --------------------------------------------------------------------------
# public
# --------------------------------------------------------------------------


def _check_finite(table: _Table, key: str) -> None:
    values = table.values[key]
    bad = np.isnan(values)
    if not bad.any():
        return
    i, k = (int(v) for v in np.argwhere(bad)[0])
    label = table.labels[i]
    fine = ~bad.any(axis=1)
    if table.rows is not None:
        row = int(table.rows[i])
        keep = table.rows[fine].tolist()
        who = f"candidate {row} ({label!r})"
        fix = (
            "Refit the search with error_score='raise' to see why, or leave the failed "
            f"candidate(s) out with candidates={keep}."
        )
    else:
        who = f"model {label!r}"
        fix = (
            "Rerun it with error_score='raise' to see why, or leave the model out (and "
            "compare the others)."
        )
    raise CubeError(
        f"{who} has a NaN score in split {k} ({table.column(key, i, k)}; {int(bad.sum())} NaN "
        f"score(s) in all): its fit or scoring failed (error_score=nan), or the metric is "
        "undefined on that split's test set (scikit-learn then warns and scores NaN, e.g. a "
        "ROC AUC on a test set of one class, as leave-one-out gives); a score cube needs "
        f"every split's score of every model. {fix} For a metric undefined on small test "
        "sets, use test sets holding every class (e.g. StratifiedKFold) or another metric."
    )


def from_cv_results(
    results: Any,
    *,
    cv: Any = None,
    X: ArrayLike | None = None,
    y: ArrayLike | None = None,
    groups: ArrayLike | None = None,
    n: int | None = None,
    metric: str | Sequence[str] | None = None,
    greater_is_better: bool | Mapping[str, bool] | None = None,
    iteration: int | None = None,
    candidates: Sequence[int] | None = None,
) -> xr.DataArray | xr.Dataset:
    """Score cube of scikit-learn cross-validation results: searches, cross_validate, arrays.

    Reads the per-split test scores that scikit-learn's model selection
    returns (Pedregosa et al., 2011) and puts them, unchanged, in a score cube
    (``docs/cube-schema.md``, "Score cubes") on a design holding exactly the
    splits that made them, ready for the split-mean methods
    (:func:`cvstats.corrected_repeated_kfold_t`, :func:`cvstats.corrected_resampled_t`,
    ...).

    What each input gives:

    * a fitted ``GridSearchCV``, ``RandomizedSearchCV``, ``HalvingGridSearchCV``
      or ``HalvingRandomSearchCV`` (or its ``cv_results_``, a dict or a
      DataFrame): one model per candidate, labelled by its parameters
      (``"C=0.1, penalty=l2"``; floats to 6 significant digits, a label that
      repeats gets ``" [candidate i]"``), with the row of ``cv_results_`` as the
      ``candidate`` coordinate; the scores are the ``split{k}_test_{metric}``
      columns (``split{k}_test_score`` for one metric). The splits are rebuilt
      from ``cv``, by default the search's ``cv`` (an int goes through
      :func:`sklearn.model_selection.check_cv`, as in the search:
      ``StratifiedKFold`` for a classifier, so ``y`` is needed). From the search
      object the metric's direction is read off its ``scoring``.
    * a halving search: each iteration runs its candidates on its own
      resources, so only the candidates of one iteration share splits; the
      last is taken by default (with a :class:`~cvstats.errors.CvstatsWarning`
      saying so), ``iteration=`` chooses. With ``resource="n_samples"`` an
      iteration on fewer than all examples subsamples every training and test
      set with the search's ``random_state`` (an int is needed), as scikit-learn
      does; the design holds those subsamples.
    * the dict of ``cross_validate(..., return_indices=True)``, one model
      (``"model0"``), or a mapping name -> such dict, several models: the
      ``test_{metric}`` arrays; the design from the returned ``indices`` (no
      ``cv`` needed; every model must have the same). Without indices, ``cv``
      and the data are needed as for arrays.
    * ``cross_val_score`` arrays: one 1-D array (``"model0"``) or a mapping
      name -> array, with ``cv`` (the splitter instance) and ``X``/``y``/``groups``
      (or ``n``) that made them.

    Parameters
    ----------
    results : search, mapping, DataFrame or array-like
        One of the inputs above.
    cv : splitter, optional
        The splitter that made the scores: the same class, parameters and int
        ``random_state`` (a shuffling splitter without one draws new splits at
        every call, so it is refused). Default: the search's ``cv``; with a
        search object, a ``cv`` given must be the search's own (same class and
        parameters, ``n_splits``, ``n_repeats``, ``shuffle`` and ``random_state``
        included; an int ``cv`` of the search as ``check_cv`` reads it). Not needed
        with ``cross_validate`` indices (if given, it must make the same splits).
    X, y, groups : array-like, optional
        The data the scores were computed on (only their rows are counted; ``y``
        and ``groups`` are passed to ``cv.split`` as the search passed them).
    n : int, optional
        The number of examples, when ``X``/``y``/``groups`` are not given. With
        indices and neither, ``n`` is read off the indices only when they use
        every example from 0 to the largest index (any K-fold splitter does);
        otherwise ``n`` (or ``X``) is required: an index beyond the data cannot
        be told from a larger data set.
    metric : str or list of str, optional
        The metric(s) to read, by their key in the results
        (``split{k}_test_{metric}``, ``test_{metric}``); default all. For
        single-metric results (key ``score``), the name of the scorer that made
        them (e.g. ``"roc_auc"``), which also gives the direction; with a search
        object it defaults to the search's ``scoring``.
    greater_is_better : bool or mapping of str to bool, optional
        Whether a larger score is better, for all metrics or per metric name.
        Not needed, and must not contradict, when the metric is a scikit-learn
        scorer (by name, or the search's ``scoring``, a
        :func:`sklearn.metrics.make_scorer` scorer included; every scikit-learn
        scorer is greater-is-better, losses are negated: ``neg_log_loss``), nor
        for ``scoring=None`` with scikit-learn classifiers (accuracy) or
        regressors (R²). Required otherwise (plain callables, bare
        ``test_score``, the keys of ``cross_validate`` results): never guessed.
        A ``make_scorer`` scorer returns greater-is-better values whatever its
        own ``greater_is_better`` (it negates losses), so pass ``True`` for it.
        ``False`` for scores that are all <= 0 (a loss negated, as a rule) is
        refused for a metric named ``neg_*`` and warned of otherwise.
    iteration : int, optional
        Halving searches: the iteration whose candidates to read (negative
        values count from the last); default the last.
    candidates : sequence of int, optional
        Searches: the rows of ``cv_results_`` to read (of one iteration for a
        halving search); default all (of the iteration).

    Returns
    -------
    xarray.DataArray or xarray.Dataset
        A score cube ``(split, model)`` named after its metric, with attrs
        ``greater_is_better``, ``metric``, the design's attrs and ``source``
        (plus ``iteration`` and ``n_resources`` for a halving search); for
        several metrics (``metric=None`` with several, or a list), a Dataset
        with one score cube per metric, sharing the coordinates.

    Raises
    ------
    ArgumentError
        If the results hold no per-split scores, the number of examples is
        unknown (no ``cv`` data, ``n``, nor indices that use every example up to
        the largest), a score is not a number (text is never converted), the
        direction of a metric
        is unknown or contradicts a scikit-learn scorer, or ``metric``,
        ``iteration``, ``candidates`` name nothing in the results.
    DesignError
        If ``cv`` is not the search's own splitter, or if the splitter cannot
        make the splits of the results: no int
        ``random_state`` while shuffling, another number of splits, data of
        another size (halving searches), indices it does not make; or if the
        models were cross-validated on different splits.
    CubeError
        If a score is NaN (a failed fit: the candidate or model and the split
        are named) or the cube breaks the score-cube schema.
    CvstatsTypeError
        If ``results`` is none of the supported inputs.

    See Also
    --------
    cvstats.designs.from_splitter : the design of a splitter's splits.
    cvstats.cube.from_scores : a score cube from any array or table of scores.

    References
    ----------
    .. [1] Pedregosa, F. et al. (2011). Scikit-learn: Machine Learning in
       Python. *Journal of Machine Learning Research* 12, 2825-2830.
    .. [2] scikit-learn user guide, 3.2 "Tuning the hyper-parameters of an
       estimator" and 3.4.1 "The scoring parameter" (every scorer is
       greater-is-better).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import (GridSearchCV, RepeatedStratifiedKFold,
    ...                                      cross_validate)
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    >>> cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0)
    >>> search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, cv=cv,
    ...                       scoring="roc_auc").fit(X, y)
    >>> cube = cvstats.designs.from_cv_results(search, X=X, y=y)
    >>> cube.name, cube.model.values.tolist(), cube.attrs["greater_is_better"]
    ('roc_auc', ['C=0.01', 'C=1'], 1)
    >>> np.array_equal(cube.values, [search.cv_results_[f"split{k}_test_score"]
    ...                              for k in range(6)])  # (split, candidate), unchanged
    True
    >>> res = cvstats.corrected_repeated_kfold_t(cvstats.pairwise(cube))
    >>> res.statistic.contrast.values.tolist(), res.df.values.tolist()
    (['C=0.01 - C=1'], [5.0])

    ``cross_validate`` with ``return_indices=True`` needs no ``cv``; its scores
    are ``test_score`` for one scorer, so ``metric=`` names it (which gives the
    direction of a scikit-learn scorer):

    >>> runs = {f"C={c}": cross_validate(LogisticRegression(C=c), X, y, cv=cv,
    ...                                  scoring="accuracy", return_indices=True)
    ...         for c in (0.01, 1.0)}
    >>> acc = cvstats.designs.from_cv_results(runs, metric="accuracy")
    >>> acc.name, acc.model.values.tolist(), acc.sizes["split"]
    ('accuracy', ['C=0.01', 'C=1.0'], 6)

    ``cross_val_score`` arrays need the ``cv`` and data that made them, and
    the direction is never guessed:

    >>> arrays = {name: r["test_score"] for name, r in runs.items()}
    >>> cvstats.designs.from_cv_results(arrays, cv=cv, X=X, y=y)
    Traceback (most recent call last):
    ...
    cvstats.errors.ArgumentError: `greater_is_better` is required for the metric 'score': ...
    >>> cvstats.designs.from_cv_results(arrays, cv=cv, X=X, y=y, metric="accuracy").name
    'accuracy'
    """
    table, search = _read(results, iteration, candidates)
    chosen, many = _select(table, metric, greater_is_better)
    for key, *_ in chosen:
        _check_finite(table, key)
    design = _design(table, search, cv, X, y, groups, n)
    attrs = {"source": table.source, **table.attrs}
    extra = {} if table.rows is None else {"candidate": (MODEL, table.rows.astype(np.int64))}
    cubes = {}
    for key, name, label, direction in chosen:
        cubes[name] = from_scores(
            table.values[key].T,
            design=design,
            models=table.labels,
            name=name,
            metric=label,
            greater_is_better=bool(direction),
            attrs=attrs,
            extra_coords=extra,
        )
    if not many:
        return next(iter(cubes.values()))
    return xr.Dataset(cubes, attrs={**design.attrs, **attrs})
