"""Evaluations of fixed models: the long table people export, read into a cube.

An evaluation of already-trained models (an LLM benchmark) is one row per
(question, model[, generation]) with a score — correctness, a grade — and,
when questions share a passage or document, a cluster column. Miller (2024,
"Adding error bars to evals", arXiv:2411.00640) treats such a table as a
sample of questions, each answered by every model, possibly several times.
:func:`from_evals` reads it into a loss cube with ``split`` = generation,
``example`` = question and ``model``, the cluster as the ``group`` coordinate
on ``example``; :mod:`cvstats.inference.evals` analyses it.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.construct import from_arrays
from cvstats.cube.schema import EXAMPLE, FIXED_MODELS_DESIGN, SPLIT, UNKNOWN_SEED
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError

__all__ = [
    "EVAL_DESIGN",
    "GENERATION",
    "GROUP",
    "SCORE_ATTR",
    "SCORE_DIRECTION_ATTR",
    "fixed_models_refusal",
    "from_evals",
    "is_eval_cube",
]

#: The ``design`` attr of a cube of fixed models' evaluations.
EVAL_DESIGN = FIXED_MODELS_DESIGN
#: Coordinate on ``example``: the cluster (passage, document) of each question.
GROUP = "group"
#: Coordinate on ``split``: the generation (seed, sample) label of the table.
GENERATION = "generation"
#: Attr: the name of the score column the cube was read from.
SCORE_ATTR = "eval_score"
#: Attr: 1 if a larger score is better (the cube then holds the score negated).
SCORE_DIRECTION_ATTR = "eval_greater_is_better"


def is_eval_cube(cube: xr.DataArray) -> bool:
    """Return whether ``cube`` was read by :func:`from_evals` (its ``design`` attr)."""
    return bool(cube.attrs.get("design") == EVAL_DESIGN and SCORE_ATTR in cube.attrs)


#: What a method about learners points to instead on a cube of fixed models' answers.
_EVAL_ROUTE = (
    "cvstats.eval_mean or cvstats.eval_difference, or cvstats.compare, which runs them on such "
    "a cube"
)


def fixed_models_refusal(
    cube: xr.DataArray, method: str, *, instead: str = _EVAL_ROUTE
) -> str | None:
    """Return why a method about learners refuses a cube of fixed models' answers, or None.

    Every method of the registry (and :func:`cvstats.plan`) is about learners
    retrained on resampled training sets; in a cube read by
    :func:`from_evals` a split is a generation of the same models on the same
    questions, with no training set (``n_train = 0``), so their corrections
    and targets do not apply (:func:`cvstats.compare` runs the evals analysis
    on such a cube instead). ``instead`` names what to use.
    """
    if not is_eval_cube(cube):
        return None
    return (
        f"{method} is about learners retrained on resampled training sets, but this cube holds "
        "fixed models' answers (design 'fixed_models', from cvstats.from_evals: its splits are "
        f"generations of the same models on the same questions). Use {instead} "
        "(docs/evaluating-fixed-models.md)."
    )


def _columns(table: pd.DataFrame, given: dict[str, str | None]) -> dict[str, str]:
    """Return the named columns, refusing a name that is not a column of the table."""
    used = {arg: col for arg, col in given.items() if col is not None}
    for arg, col in used.items():
        if not isinstance(col, str):
            raise CvstatsTypeError(
                f"`{arg}` must be a column name (str), got {col!r} of type {type(col).__name__}."
            )
        if col not in table.columns:
            raise ArgumentError(
                f"`{arg}` = {col!r} is not a column of the table; its columns are "
                f"{[str(c) for c in table.columns]}."
            )
    cols = list(used.values())
    if len(set(cols)) < len(cols):
        raise ArgumentError(f"the columns {used} must differ: one column per role.")
    return used


def _check_values(table: pd.DataFrame, used: dict[str, str]) -> np.ndarray:
    """Refuse missing labels and scores that are not finite numbers; return the scores."""
    for arg, col in used.items():
        missing = table[col].isna().to_numpy()
        if missing.any():
            row = table.index[int(np.argmax(missing))]
            raise CubeError(
                f"column {col!r} (`{arg}`) has {int(missing.sum())} missing value(s) (first at "
                f"row {row!r}); every row needs a {arg}: drop or fill those rows first."
            )
    scores = table[used["score"]]
    if not (pd.api.types.is_numeric_dtype(scores) or pd.api.types.is_bool_dtype(scores)):
        raise CubeError(
            f"column {used['score']!r} (`score`) must hold numbers, got dtype {scores.dtype}; "
            "map the grades to numbers first (e.g. correct -> 1, wrong -> 0)."
        )
    values = scores.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        row = table.index[int(np.argmax(bad))]
        raise CubeError(
            f"column {used['score']!r} (`score`) has {int(bad.sum())} infinite value(s) "
            f"(first at row {row!r}); every score must be a finite number."
        )
    return values


def _check_keys(table: pd.DataFrame, keys: list[str], generation: str | None) -> None:
    """Refuse a repeated (question, model[, generation]) row, naming it."""
    repeated = table.duplicated(keys, keep=False).to_numpy()
    if repeated.any():
        positions = np.flatnonzero(repeated)
        rows = table.index[positions].tolist()
        first = table.iloc[positions[0]][keys].tolist()
        fix = (
            "drop the duplicates"
            if generation is not None
            else "pass `generation=` the column that tells repeated answers apart, or drop them"
        )
        raise CubeError(
            f"{len(rows)} rows repeat a key {keys} (first {dict(zip(keys, first, strict=True))}, "
            f"rows {rows[:5]}{'...' if len(rows) > 5 else ''}): each model answers each question "
            f"once per generation; {fix}."
        )


def _check_balanced(
    table: pd.DataFrame, question: str, model: str, generation: str | None
) -> None:
    """Refuse a model missing answers, or questions answered a different number of times."""
    counts = table.groupby([question, model], sort=False).size()
    grid = counts.unstack(model)
    if grid.isna().to_numpy().any():
        q, m = next((q, m) for (q, m), v in grid.stack(future_stack=True).items() if pd.isna(v))
        raise CubeError(
            f"model {m!r} has no answer to question {q!r}: every model must answer every "
            "question (paired comparisons need the same questions); drop the question for "
            "every model, or add the missing answers."
        )
    if counts.nunique() > 1:
        low, high = counts.idxmin(), counts.idxmax()
        raise CubeError(
            f"generations of unequal count: (question, model) {low} has {counts[low]} answer(s) "
            f"but {high} has {counts[high]}; every model must answer every question the same "
            "number of generations (drop the extra generations, or the question)."
        )
    if generation is not None:
        labels = table.groupby([question, model], sort=False)[generation].agg(frozenset)
        if labels.nunique() > 1:
            (q, m), seen = next(iter(labels.items()))
            other = next(k for k, v in labels.items() if v != seen)
            raise CubeError(
                f"(question, model) ({q!r}, {m!r}) has the generations {sorted(map(str, seen))} "
                f"but {other} has {sorted(map(str, labels[other]))}: every answer needs the "
                "same generation labels; relabel the generations 0..G-1 in each "
                "(question, model)."
            )


def _question_groups(
    table: pd.DataFrame, question: str, cluster: str, questions: pd.Index
) -> np.ndarray:
    """Return each question's cluster, refusing a question in more than one cluster."""
    per_question = table.groupby(question, sort=False)[cluster]
    spread = per_question.nunique()
    if (spread > 1).any():
        q = spread.index[int(np.argmax(spread.to_numpy() > 1))]
        seen = pd.unique(table.loc[table[question] == q, cluster]).tolist()
        raise CubeError(
            f"question {q!r} is in {len(seen)} clusters ({seen[:5]}) of column {cluster!r} "
            "(`cluster`): a question belongs to one cluster (passage, document); fix the "
            "cluster column."
        )
    return np.asarray(per_question.first().reindex(questions).to_numpy())


def from_evals(
    table: pd.DataFrame,
    *,
    question: str,
    model: str,
    score: str,
    greater_is_better: bool,
    generation: str | None = None,
    cluster: str | None = None,
) -> xr.DataArray:
    """Read a fixed models' evaluation table into a cube (Miller, 2024).

    The target is the models themselves — already trained, evaluated on a
    benchmark of questions drawn from a population of questions — not
    learners: each row is one answer of one model to one question
    (Miller, 2024, "Adding error bars to evals", arXiv:2411.00640: questions drawn
    from a super-population of questions).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per (question, model[, generation]) answer, in any order.
    question, model, score : str
        Columns: question label (int or str), model name, score of the answer
        (correctness 0/1, a grade; bool or numbers).
    greater_is_better : bool
        Whether a larger score is better (True for correctness, accuracy).
    generation : str, optional
        Column of the generation (seed, sample) label when a model answers
        each question several times; every (question, model) needs the same
        generation labels. None: one answer per (question, model).
    cluster : str, optional
        Column of the cluster (passage, document) of each question: questions
        of one cluster are not independent (Miller, 2024, clustered standard
        errors). Each question
        is in one cluster.

    Returns
    -------
    xarray.DataArray
        A loss cube ``(split, example, model)`` that passes :func:`cvstats.validate`:
        ``split`` = generation (``0..G-1``; the table's labels, sorted, in the
        coordinate ``generation`` on ``split``), ``example`` = question and
        ``model`` in their order of first appearance, every question tested in
        every generation. It holds losses, lower is better: the score itself
        when ``greater_is_better`` is False, the score negated otherwise (cube
        named ``"minus_<score>"``). The clusters are the coordinate ``group``
        on ``example``. Attrs: ``design="fixed_models"``, ``eval_score`` (the
        score column) and ``eval_greater_is_better`` (0/1). The models were
        trained elsewhere: ``n_train`` is 0 on every split (the one design
        the schema allows without a training set) and ``n`` is the number
        of questions.

    Raises
    ------
    ArgumentError
        A named column not in the table; the same column for two roles.
    CvstatsTypeError
        ``table`` not a DataFrame, a column name not a str, ``greater_is_better``
        not a bool.
    CubeError
        A missing value; a score that is not a finite number; a repeated
        (question, model[, generation]); a model missing answers; generations
        of unequal count or labels; a question in two clusters; a single question.

    Examples
    --------
    >>> import pandas as pd, cvstats
    >>> table = pd.DataFrame({"q": [1, 1, 2, 2, 3, 3], "llm": ["a", "b"] * 3,
    ...                       "correct": [1, 0, 1, 1, 0, 0]})
    >>> cube = cvstats.from_evals(table, question="q", model="llm", score="correct",
    ...                           greater_is_better=True)
    >>> cube.sizes["example"], cube.name
    (3, 'minus_correct')
    """
    if not isinstance(table, pd.DataFrame):
        raise CvstatsTypeError(
            f"`table` must be a pandas.DataFrame, got {type(table).__name__}; build one with "
            "pandas.DataFrame(records) or pandas.read_csv/read_json."
        )
    if not isinstance(greater_is_better, bool | np.bool_):
        raise CvstatsTypeError(
            f"`greater_is_better` must be True or False, got {greater_is_better!r}."
        )
    roles = {"question": question, "model": model, "score": score}
    used = _columns(table, {**roles, "generation": generation, "cluster": cluster})
    if len(table) == 0:
        raise CubeError("the table has no rows.")
    values = _check_values(table, used)
    keys = [question, model, *([generation] if generation is not None else [])]
    _check_keys(table, keys, generation)
    _check_balanced(table, question, model, generation)
    questions = pd.Index(pd.unique(table[question]))
    if len(questions) < 2:
        raise CubeError(
            f"the table has 1 question ({str(questions[0])!r} in column {question!r}); a "
            "benchmark needs at least 2 questions: its standard errors are computed over them."
        )
    models = pd.Index(pd.unique(table[model]))
    if generation is None:
        gens: list[Hashable] = [0]
        gen_codes = np.zeros(len(table), dtype=np.int64)
    else:
        gens = sorted(pd.unique(table[generation]), key=_sort_key)
        gen_codes = pd.Index(gens).get_indexer(table[generation])
    losses = np.empty((len(gens), len(questions), len(models)))
    where = (gen_codes, questions.get_indexer(table[question]), models.get_indexer(table[model]))
    losses[where] = 0.0 - values if greater_is_better else values  # 0.0 - 0.0 is +0.0
    n_questions = len(questions)
    attrs: dict[str, Any] = {
        "design": EVAL_DESIGN,
        "n": n_questions,
        "seed": UNKNOWN_SEED,
        SCORE_ATTR: score,
        SCORE_DIRECTION_ATTR: int(bool(greater_is_better)),
    }
    cube = from_arrays(
        losses,
        np.ones(losses.shape[:2], dtype=bool),
        models=[str(m) for m in models],
        examples=questions.to_numpy(),
        name=f"minus_{score}" if greater_is_better else score,
        n_train=0,
        attrs=attrs,
    )
    cube = cube.assign_coords({GENERATION: (SPLIT, np.asarray(gens))})
    if cluster is not None:
        groups = _question_groups(table, question, cluster, questions)
        cube = cube.assign_coords({GROUP: (EXAMPLE, groups)})
    return cube


def _sort_key(label: Any) -> tuple[int, Any]:
    """Sort generation labels: numbers by value, then the others by their text."""
    if isinstance(label, int | float | np.integer | np.floating):
        return (0, float(label))
    return (1, str(label))
