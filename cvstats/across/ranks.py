"""Comparing learners across many datasets with ranks (Demšar 2006; García & Herrera 2008).

See docs/beyond.md and docs/theory.md §8. When the datasets come from different
populations their errors are not commensurable, so learners are compared
through their per-dataset ranks. Input: one number per dataset and learner,
in any form :func:`cvstats.across.table.read_table` reads: a
:class:`pandas.DataFrame` with datasets as rows and learners as columns, a
long one (columns ``dataset``, ``model`` and the score), an
:class:`xarray.DataArray` over ``(dataset, model)``, a cube with a
``dataset`` dim (its per-dataset CV means) or a method's per-dataset result
(e.g. ``cvstats.corrected_resampled_t(cube)``: its estimates). Which way is
better is read from the table (:func:`direction_of`): the attrs a cube's
values carry into a method's ``estimate`` (a score cube's
``greater_is_better``; a loss cube's attrs), or a metric name whose
direction is known (a long table's score column, a DataArray's name or the
attr ``metric``: ``accuracy``, ``roc_auc``, ``neg_*``:
larger is better; ``zero_one``, ``log_loss``, ``mse``: smaller is better).
When the table does not say, every function refuses and asks for
``greater_is_better=``: a rank test run the wrong way round names the worst
learner best.

* :func:`friedman_test`: Friedman's ``χ²_F``, Iman–Davenport's ``F_F``, the
  Nemenyi critical difference; :func:`cd_diagram` draws it;
* :func:`wilcoxon_test`: Wilcoxon signed-rank test for two learners;
* :func:`pairwise_wilcoxon`: all pairs, Holm-adjusted;
* :func:`pairwise_matrix`: all pairs as learner × learner matrices (wins, ties and
  losses within a rope, mean differences, Wilcoxon or Nemenyi p-values, adjusted),
  with a heatmap;
* :func:`control_test`: every learner against a control by average ranks
  (Holm, Hochberg or Bonferroni–Dunn);
* :func:`effect_size`: Cohen's d, Akinshin's γ and Cliff's δ of two learners with their
  magnitudes;
* :func:`rank_report`: the rank-based results beside the per-dataset
  corrected tests (counts of significant wins and losses).

The results (:class:`FriedmanResult`, :class:`WilcoxonResult`,
:class:`PairwiseResult`, :class:`ControlResult`, :class:`RankReport`) and
:func:`cd_diagram` live in :mod:`cvstats.results.ranks` and are re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import combinations
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import scipy
import xarray as xr

from cvstats._deprecation import renamed_argument
from cvstats.across.table import DATASET_DIM, read_table, table_record
from cvstats.cube.checks import validate_alpha
from cvstats.cube.score import recorded_direction
from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.inference.docs import fill_docstring
from cvstats.kernels import ranks as kr
from cvstats.results.ranks import (
    ControlResult,
    EffectSizeResult,
    FriedmanResult,
    PairwiseMatrix,
    PairwiseResult,
    RankReport,
    WilcoxonResult,
    cd_diagram,
)

__all__ = [
    "DATASET_DIM",
    "FriedmanResult",
    "WilcoxonResult",
    "PairwiseResult",
    "RankReport",
    "direction_of",
    "rank_table",
    "friedman_test",
    "wilcoxon_test",
    "pairwise_wilcoxon",
    "PairwiseMatrix",
    "pairwise_matrix",
    "ControlResult",
    "control_test",
    "EffectSizeResult",
    "effect_size",
    "cd_diagram",
    "rank_report",
]

_F = TypeVar("_F", bound=Callable[..., object])


#: The direction options of every rank function, documented once.
_DIRECTION_FRAGMENTS = {
    "table": """\
table : pandas.DataFrame or Series, xarray.DataArray, cube or result
    One score or loss per dataset and learner: a wide table (datasets ×
    learners), a long one (columns ``dataset``, ``model`` and the score), a
    DataArray over ``(dataset, model)``, a cube with a ``dataset`` dim (its
    per-dataset CV means) or a method's result over ``(dataset, model)``
    (its estimates); see :func:`~cvstats.across.table.read_table`.""",
    "greater_is_better": """\
greater_is_better : bool, optional
    Whether a larger value is better (it decides the ranks, the wins and which
    learner is called better): read from the table
    (:func:`~cvstats.across.ranks.direction_of`);
    required when the table does not record it, and must agree when it does.""",
    "higher_is_better": """\
higher_is_better : bool, optional
    Old name of ``greater_is_better`` (FutureWarning).""",
}


def _direction_doc(func: _F) -> _F:
    """Fill the ``%(table)s``, ``%(greater_is_better)s`` and ``%(higher_is_better)s`` lines."""
    if func.__doc__:
        func.__doc__ = fill_docstring(func.__doc__, _DIRECTION_FRAGMENTS)
    return func


def _as_frame(table: Any, dataset_dim: Hashable) -> pd.DataFrame:
    """Return the table as a checked DataFrame, datasets × learners (:func:`read_table`)."""
    return read_table(table, dataset_dim)


@_direction_doc
def checked_table(
    table: Any, models: Sequence[str] = (), *, dataset_dim: Hashable = DATASET_DIM
) -> pd.DataFrame:
    """Return ``table`` as a checked DataFrame, datasets × learners, with ``models`` in it.

    The reading every comparison across datasets shares (here and in
    :mod:`cvstats.across.bayes_datasets`).

    Parameters
    ----------
    %(table)s
    models : sequence of str
        Learners that must be columns of the table.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.

    Returns
    -------
    pandas.DataFrame
        Float, finite, at least 2 datasets and 2 learners, string column labels.

    Raises
    ------
    ArgumentError
        If the table is not that, or a learner of ``models`` is not in it.
    """
    frame = _as_frame(table, dataset_dim)
    _check_models(frame, models)
    return frame


def direction_of(
    table: Any,
    greater_is_better: bool | None = None,
    *,
    name: str = "table",
    higher_is_better: bool | None = None,
    func: str = "direction_of",
    dataset_dim: Hashable = DATASET_DIM,
) -> bool:
    """Return whether a larger value of ``table`` is better: as given, or as the data record it.

    The data's own record (:func:`cvstats.cube.score.recorded_direction`): the
    attrs of a DataArray (a score cube's ``greater_is_better``, kept on the
    ``estimate`` of every method run on it; the attrs of a loss cube) or of a
    DataFrame (``DataFrame.attrs``), else the metric's name (the attr
    ``metric``, the DataArray's or Series' name, a long table's score column)
    when its direction is known (:func:`cvstats.across.table.table_record`).

    Parameters
    ----------
    table : xarray.DataArray, pandas.DataFrame or Series, or a result
        The data (a result is read through its ``estimate``).
    greater_is_better : bool, optional
        The direction, when the data do not record it; when they do, it must agree.
    name : str, default "table"
        The argument's name, for messages.
    higher_is_better : bool, optional
        Old name of ``greater_is_better`` (FutureWarning).
    func : str
        The calling function, for messages.
    dataset_dim : hashable, default "dataset"
        The datasets column of a long table.

    Returns
    -------
    bool

    Raises
    ------
    ArgumentError
        If the data do not record their direction and ``greater_is_better`` is
        not given, or if it is not a bool or contradicts what they record.
    CvstatsTypeError
        If ``table`` is neither a DataArray, a DataFrame nor a result.

    Examples
    --------
    >>> import xarray as xr
    >>> acc = xr.DataArray([[0.9, 0.8], [0.7, 0.6]], dims=("dataset", "model"), name="accuracy")
    >>> direction_of(acc)
    True
    """
    greater_is_better = renamed_argument(
        "higher_is_better", "greater_is_better", higher_is_better, greater_is_better, func
    )
    if greater_is_better is not None and not isinstance(greater_is_better, bool | np.bool_):
        raise ArgumentError(
            f"{func}: `greater_is_better` must be True or False, got {greater_is_better!r}."
        )
    try:
        attrs, label = table_record(table, dataset_dim)
    except CvstatsTypeError:
        raise CvstatsTypeError(
            f"{func}: `{name}` must be an xarray.DataArray, a pandas DataFrame or Series or a "
            f"result with an `estimate`, got {type(table).__name__}."
        ) from None
    recorded = recorded_direction(attrs if isinstance(attrs, Mapping) else {}, label)
    if recorded is None:
        if greater_is_better is None:
            named = "no name" if label is None else f"its name {label!r}"
            raise ArgumentError(
                f"{func}: `greater_is_better` is required: `{name}` does not record whether a "
                "larger value is better (no attr greater_is_better, no loss cube's attrs, and "
                f"{named} is not a metric whose direction is known), and a rank run the wrong "
                "way round names the worst learner best. Pass greater_is_better=True "
                "for scores such as accuracies, AUCs, R² or negated losses (neg_*), False for "
                "losses and error rates."
            )
        return bool(greater_is_better)
    known, why = recorded
    if greater_is_better is not None and bool(greater_is_better) != bool(known):
        raise ArgumentError(
            f"{func}: `greater_is_better` is {bool(greater_is_better)}, but `{name}` records "
            f"the opposite ({why}). Drop the argument; or, if the values are no longer what "
            f"the attrs say (attrs survive arithmetic such as 1 - error), set "
            f"{name}.attrs['greater_is_better'] = {int(bool(greater_is_better))} (or clear the "
            "attrs) first."
        )
    return bool(known)


@_direction_doc
def rank_table(
    table: Any,
    *,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
    higher_is_better: bool | None = None,
) -> pd.DataFrame:
    """Per-dataset ranks of the learners (1 = best; ties get average ranks).

    Parameters
    ----------
    %(table)s
    %(greater_is_better)s
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.
    %(higher_is_better)s

    Returns
    -------
    pandas.DataFrame
        Ranks, datasets × learners: 1 is the lowest loss, or the highest score.
    """
    frame = _as_frame(table, dataset_dim)
    greater = direction_of(
        table,
        greater_is_better,
        higher_is_better=higher_is_better,
        func="rank_table",
        dataset_dim=dataset_dim,
    )
    ranks = kr.rank_scores(frame.to_numpy(), greater_is_better=greater)
    return pd.DataFrame(ranks, index=frame.index, columns=frame.columns)


# --------------------------------------------------------------------------
# Friedman, Iman–Davenport, Nemenyi
# --------------------------------------------------------------------------


@_direction_doc
def friedman_test(
    table: Any,
    *,
    greater_is_better: bool | None = None,
    alpha: float = 0.05,
    tie_correction: bool = False,
    dataset_dim: Hashable = DATASET_DIM,
    higher_is_better: bool | None = None,
) -> FriedmanResult:
    """Friedman test over per-dataset ranks, Iman–Davenport's F and the Nemenyi CD.

    With ``R_j`` the average rank of learner ``j`` over ``N`` datasets and ``k``
    learners (Demšar 2006, §3.2.2)::

        χ²_F = 12N / (k(k+1)) [Σ_j R_j² - k(k+1)²/4]     ~ χ²(k - 1)
        F_F  = (N - 1) χ²_F / (N(k - 1) - χ²_F)          ~ F(k - 1, (k - 1)(N - 1))
        CD   = q_α sqrt(k(k+1) / (6N))

    ``q_α`` is the studentized range quantile ``(k, ∞)`` divided by ``sqrt(2)``.

    Parameters
    ----------
    %(table)s
    %(greater_is_better)s
    alpha : float, default 0.05
        Level of the critical difference.
    tie_correction : bool, default False
        Divide ``χ²_F`` by the ties factor as :func:`scipy.stats.friedmanchisquare`.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.
    %(higher_is_better)s

    Returns
    -------
    FriedmanResult

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.3, 0.4], "c": [0.3, 0.1, 0.5]})
    >>> res = friedman_test(t, greater_is_better=False)  # error rates: the lowest ranks 1
    >>> res.average_ranks.round(3).tolist(), float(res.df)
    ([1.333, 2.333, 2.333], 2.0)
    """
    alpha = validate_alpha(alpha)
    frame = _as_frame(table, dataset_dim)
    greater = direction_of(
        table,
        greater_is_better,
        higher_is_better=higher_is_better,
        func="friedman_test",
        dataset_dim=dataset_dim,
    )
    ranks = rank_table(frame, greater_is_better=greater)
    N, k = ranks.shape
    out = kr.friedman(ranks.to_numpy(), tie_correction=tie_correction)
    return FriedmanResult(
        ranks=ranks,
        average_ranks=pd.Series(out.average_ranks, index=ranks.columns, name="average_rank"),
        statistic=float(out.chi2),
        df=float(out.chi2_df),
        pvalue=float(out.chi2_pvalue),
        iman_davenport=float(out.f),
        iman_davenport_df1=float(out.f_df1),
        iman_davenport_df2=float(out.f_df2),
        iman_davenport_pvalue=float(out.f_pvalue),
        critical_difference=kr.nemenyi_critical_difference(k, N, alpha),
        q_alpha=kr.nemenyi_q(k, alpha),
        n_datasets=N,
        n_models=k,
        alpha=alpha,
        greater_is_better=greater,
        tie_correction=bool(tie_correction),
    )


# --------------------------------------------------------------------------
# Wilcoxon signed-rank
# --------------------------------------------------------------------------


def _wilcoxon(
    diff: np.ndarray, greater_is_better: bool, zero_method: str, alternative: str
) -> tuple[float, float, int, int, int, tuple[float, float]]:
    better = diff > 0 if greater_is_better else diff < 0
    worse = diff < 0 if greater_is_better else diff > 0
    wins, losses = int(better.sum()), int(worse.sum())
    ties = diff.size - wins - losses
    if wins + losses == 0:
        return np.nan, 1.0, wins, ties, losses, (0.0, 0.0)
    res = scipy.stats.wilcoxon(diff, zero_method=zero_method, alternative=alternative)
    # Demšar's (2006, §3.1.3) R+ and R-: the ranks of |d| (zeros dropped) summed over the
    # datasets where a is better and where it is worse; the larger says which is ahead
    nonzero = diff != 0
    ranks = scipy.stats.rankdata(np.abs(diff[nonzero]))
    sums = (float(ranks[better[nonzero]].sum()), float(ranks[worse[nonzero]].sum()))
    return float(res.statistic), float(res.pvalue), wins, ties, losses, sums


def _check_models(frame: pd.DataFrame, names: Sequence[str]) -> None:
    unknown = [n for n in names if n not in frame.columns]
    if unknown:
        raise ArgumentError(f"unknown learner(s) {unknown}; the table has {list(frame.columns)}.")


@_direction_doc
def wilcoxon_test(
    table: Any,
    a: str,
    b: str,
    *,
    greater_is_better: bool | None = None,
    zero_method: str = "wilcox",
    alternative: str = "two-sided",
    dataset_dim: Hashable = DATASET_DIM,
    higher_is_better: bool | None = None,
) -> WilcoxonResult:
    """Wilcoxon signed-rank test of learners ``a`` and ``b`` over datasets (Demšar 2006, §3.1.3).

    Runs :func:`scipy.stats.wilcoxon` on the per-dataset differences
    ``score_a - score_b``.

    Parameters
    ----------
    %(table)s
    a, b : str
        The two learners.
    %(greater_is_better)s
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        Treatment of zero differences (scipy's).
    alternative : {"two-sided", "less", "greater"}
        scipy's alternative on ``score_a - score_b``.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.
    %(higher_is_better)s

    Returns
    -------
    WilcoxonResult
    """
    frame = _as_frame(table, dataset_dim)
    _check_models(frame, [a, b])
    greater = direction_of(
        table,
        greater_is_better,
        higher_is_better=higher_is_better,
        func="wilcoxon_test",
        dataset_dim=dataset_dim,
    )
    diff = (frame[a] - frame[b]).to_numpy()
    stat, p, wins, ties, losses, sums = _wilcoxon(diff, greater, zero_method, alternative)
    return WilcoxonResult(
        str(a),
        str(b),
        stat,
        p,
        float(np.median(diff)),
        wins,
        ties,
        losses,
        diff.size,
        alternative,
        rank_sums=sums,
    )


@_direction_doc
def pairwise_wilcoxon(
    table: Any,
    *,
    alpha: float = 0.05,
    correction: str = "holm",
    greater_is_better: bool | None = None,
    zero_method: str = "wilcox",
    dataset_dim: Hashable = DATASET_DIM,
    higher_is_better: bool | None = None,
) -> PairwiseResult:
    """Wilcoxon signed-rank tests of all pairs, Holm-adjusted (García & Herrera 2008).

    Parameters
    ----------
    %(table)s
    alpha : float, default 0.05
        Family-wise level.
    correction : str, default "holm"
        Any method of :func:`statsmodels.stats.multitest.multipletests`.
    %(greater_is_better)s
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        Treatment of zero differences.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.
    %(higher_is_better)s

    Returns
    -------
    PairwiseResult
    """
    from statsmodels.stats.multitest import multipletests

    alpha = validate_alpha(alpha)
    frame = _as_frame(table, dataset_dim)
    greater = direction_of(
        table,
        greater_is_better,
        higher_is_better=higher_is_better,
        func="pairwise_wilcoxon",
        dataset_dim=dataset_dim,
    )
    tests = tuple(
        wilcoxon_test(frame, a, b, greater_is_better=greater, zero_method=zero_method)
        for a, b in combinations(frame.columns, 2)
    )
    try:
        pvalues = [float(t.pvalue) for t in tests]
        reject, adjusted, _, _ = multipletests(pvalues, alpha, correction)
    except ValueError as e:
        raise ArgumentError(f"`correction` {correction!r} is not valid: {e}") from e
    return PairwiseResult(
        tests,
        tuple(float(p) for p in adjusted),
        tuple(bool(r) for r in reject),
        correction,
        alpha,
    )


#: The tests of :func:`pairwise_matrix`.
MATRIX_TESTS = ("wilcoxon", "nemenyi")


def _matrix(values: np.ndarray, models: list[str], name: str) -> xr.DataArray:
    """Return a learner × learner DataArray over ``(model_a, model_b)``."""
    return xr.DataArray(
        values,
        dims=("model_a", "model_b"),
        coords={"model_a": models, "model_b": models},
        name=name,
    )


def _upper(values: Sequence[float], k: int, *, fill: float, antisymmetric: bool) -> np.ndarray:
    """Return a k × k matrix from its upper triangle (pairs in ``combinations`` order)."""
    out = np.full((k, k), fill, dtype=float)
    rows, cols = np.triu_indices(k, 1)
    out[rows, cols] = values
    out[cols, rows] = -np.asarray(values) if antisymmetric else values
    return out


@_direction_doc
def pairwise_matrix(
    table: Any,
    *,
    test: str = "wilcoxon",
    adjust: str | None = None,
    alpha: float = 0.05,
    rope: float = 0.0,
    greater_is_better: bool | None = None,
    zero_method: str = "wilcox",
    dataset_dim: Hashable = DATASET_DIM,
) -> PairwiseMatrix:
    """Every pair of learners over datasets, as learner × learner matrices.

    For each pair ``(a, b)`` on ``N`` datasets: the datasets where ``a`` is
    better than ``b`` by more than ``rope``, within ``rope`` of it, or worse
    (wins, ties, losses), the mean of ``score_a - score_b``, and a two-sided
    p-value adjusted over the ``k(k-1)/2`` pairs:

    * ``test="wilcoxon"`` (default): Wilcoxon's signed-rank test of the
      per-dataset differences (:func:`scipy.stats.wilcoxon`, as
      :func:`pairwise_wilcoxon`), adjusted by ``adjust`` (default Holm's
      step-down) with :func:`statsmodels.stats.multitest.multipletests`
      (García & Herrera 2008; Benavoli, Corani & Mangili 2016 recommend it over
      the rank-based post-hoc tests, whose result for a pair depends on the
      other learners);
    * ``test="nemenyi"``: Nemenyi's test of the average Friedman ranks (Demšar
      2006, §3.2.2), ``q = |R_a - R_b| / sqrt(k(k+1)/(6N))`` referred to the
      studentized range: the pairs it rejects are those whose ranks differ by
      at least the critical difference of :func:`friedman_test`. Its p-values
      are already adjusted for the family (single step): no ``adjust``.

    Shaffer's procedure (García & Herrera 2008, §3) is not offered: neither
    statsmodels nor scikit-posthocs (0.17) implements it; Holm's is valid
    whatever the logical relations between the hypotheses, and Shaffer's only
    gains power from them.

    Parameters
    ----------
    %(table)s
    test : {"wilcoxon", "nemenyi"}, default "wilcoxon"
        The test of each pair.
    adjust : str, optional
        Method of :func:`statsmodels.stats.multitest.multipletests` for the
        Wilcoxon p-values (default ``"holm"``; ``"bonferroni"``,
        ``"simes-hochberg"``, ``"fdr_bh"``...). Not for ``test="nemenyi"``.
    alpha : float, default 0.05
        Family-wise level.
    rope : float, default 0
        Differences within ``±rope`` (table units) count as ties in the
        wins/ties/losses; the tests ignore it.
    %(greater_is_better)s
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        Treatment of zero differences in the Wilcoxon tests (scipy's).
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.

    Returns
    -------
    PairwiseMatrix
        Learner × learner DataArrays; ``to_frame()`` has one row per pair,
        ``plot()`` draws the heatmap.

    Raises
    ------
    ArgumentError
        For an unknown ``test`` or ``adjust``, ``adjust`` with the Nemenyi
        test, a negative or non-finite ``rope``, or a bad table.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"svm": [0.91, 0.85, 0.78, 0.88, 0.70, 0.93],
    ...                   "knn": [0.89, 0.86, 0.74, 0.84, 0.69, 0.90],
    ...                   "nb": [0.80, 0.79, 0.70, 0.81, 0.66, 0.85]})
    >>> res = pairwise_matrix(t, greater_is_better=True, rope=0.015)
    >>> res.wins.sel(model_a="svm").values.tolist()
    [0, 4, 6]
    >>> res.to_frame()[["model_a", "model_b", "wins", "ties", "losses"]].values.tolist()[0]
    ['svm', 'knn', 4, 2, 0]
    """
    alpha = validate_alpha(alpha)
    if test not in MATRIX_TESTS:
        raise ArgumentError(
            f"pairwise_matrix: `test` must be one of {list(MATRIX_TESTS)}, got {test!r}."
        )
    if test == "nemenyi" and adjust is not None:
        raise ArgumentError(
            f"pairwise_matrix: `adjust` ({adjust!r}) is for the Wilcoxon tests; Nemenyi's "
            "p-values are already adjusted for every pair (the studentized range). Drop "
            "`adjust`, or use test='wilcoxon'."
        )
    if isinstance(rope, bool) or not isinstance(rope, int | float | np.floating):
        raise ArgumentError(f"pairwise_matrix: `rope` must be a number >= 0, got {rope!r}.")
    if not np.isfinite(rope) or rope < 0:
        raise ArgumentError(
            f"pairwise_matrix: `rope` must be finite and >= 0, got {rope!r}; it is the "
            "half-width of a tie, in the table's units."
        )
    frame = _as_frame(table, dataset_dim)
    greater = direction_of(
        table, greater_is_better, func="pairwise_matrix", dataset_dim=dataset_dim
    )
    models = list(frame.columns)
    values = frame.to_numpy()
    N, k = values.shape
    diff = values[:, :, None] - values[:, None, :]  # (dataset, a, b): score_a - score_b
    better = diff > rope if greater else diff < -rope
    worse = diff < -rope if greater else diff > rope
    wins, losses = better.sum(0), worse.sum(0)
    ties = N - wins - losses
    if test == "wilcoxon":
        adjust = "holm" if adjust is None else adjust
        pairs = pairwise_wilcoxon(
            frame,
            alpha=alpha,
            correction=adjust,
            greater_is_better=greater,
            zero_method=zero_method,
        )
        p = [float(t.pvalue) for t in pairs.tests]
        p_adj = pairs.pvalue_adjusted.values.astype(float)
        rejected = pairs.reject.values.astype(bool)
        statistic = np.full((k, k), np.nan)
        rows, cols = np.triu_indices(k, 1)
        statistic[rows, cols] = [t.rank_sums[0] for t in pairs.tests]
        statistic[cols, rows] = [t.rank_sums[1] for t in pairs.tests]
    else:
        adjust = "nemenyi"
        average = friedman_test(frame, greater_is_better=greater, alpha=alpha).average_ranks
        r = average.to_numpy()
        rows, cols = np.triu_indices(k, 1)
        rank_diff = r[cols] - r[rows]  # positive: the row (a) ranks better
        z = rank_diff / np.sqrt(k * (k + 1) / (6.0 * N))
        p = np.atleast_1d(kr.nemenyi_pvalue(rank_diff, k, N))
        p_adj, rejected = p, p <= alpha
        statistic = _upper(z, k, fill=np.nan, antisymmetric=True)
    pvalue = _upper(p, k, fill=np.nan, antisymmetric=False)
    adjusted = _upper(p_adj, k, fill=np.nan, antisymmetric=False)
    reject = _upper(rejected.astype(float), k, fill=0.0, antisymmetric=False).astype(bool)
    return PairwiseMatrix(
        wins=_matrix(wins, models, "wins"),
        ties=_matrix(ties, models, "ties"),
        losses=_matrix(losses, models, "losses"),
        mean_difference=_matrix(diff.mean(0), models, "mean_difference"),
        statistic=_matrix(statistic, models, "statistic"),
        pvalue=_matrix(pvalue, models, "pvalue"),
        pvalue_adjusted=_matrix(adjusted, models, "pvalue_adjusted"),
        reject=_matrix(reject, models, "reject"),
        test=test,
        adjust=adjust,
        alpha=alpha,
        rope=float(rope),
        n_datasets=N,
        n_models=k,
        greater_is_better=greater,
    )


#: The adjustments of :func:`control_test`: its name -> statsmodels' ``multipletests`` method.
CONTROL_ADJUSTMENTS = {"holm": "holm", "hochberg": "simes-hochberg", "bonferroni": "bonferroni"}


@_direction_doc
def control_test(
    table: Any,
    control: str,
    *,
    adjust: str = "holm",
    alpha: float = 0.05,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
) -> ControlResult:
    """Compare every learner with a control by average ranks (Demšar 2006, §3.2.2).

    The post-hoc test after a Friedman test when one learner (a new method) is
    compared with the others, not every pair with every pair. With ``R_j`` the
    average rank of learner ``j`` over ``N`` datasets and ``k`` learners::

        z_i = (R_i - R_control) / sqrt(k(k+1) / (6N))

    is referred to the standard normal (two-sided), and the ``k - 1`` p-values
    are adjusted for the family: Holm's step-down (the default, Demšar 2006,
    §3.2.2), Hochberg's step-up (García & Herrera 2008) or Bonferroni–Dunn
    (each p-value times ``k - 1``), all by
    :func:`statsmodels.stats.multitest.multipletests`.

    Parameters
    ----------
    %(table)s
    control : str
        The learner the others are compared with.
    adjust : {"holm", "hochberg", "bonferroni"}, default "holm"
        The adjustment (statsmodels' ``"holm"``, ``"simes-hochberg"`` and
        ``"bonferroni"``; ``"bonferroni"`` is the Bonferroni–Dunn test).
    alpha : float, default 0.05
        Family-wise level.
    %(greater_is_better)s
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.

    Returns
    -------
    ControlResult
        Per other learner: ``R_i - R_control`` (positive: the control ranks
        better), ``z``, the raw and adjusted p-values and the rejections.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"new": [0.9, 0.8, 0.85, 0.7], "old": [0.8, 0.7, 0.8, 0.72],
    ...                   "base": [0.7, 0.6, 0.75, 0.6]})
    >>> res = control_test(t, "new", greater_is_better=True)
    >>> res.rank_difference.values.tolist()
    [0.5, 1.75]
    """
    from statsmodels.stats.multitest import multipletests

    alpha = validate_alpha(alpha)
    if adjust not in CONTROL_ADJUSTMENTS:
        raise ArgumentError(
            f"control_test: `adjust` must be one of {sorted(CONTROL_ADJUSTMENTS)}, got "
            f'{adjust!r} ("bonferroni" is the Bonferroni–Dunn test).'
        )
    frame = _as_frame(table, dataset_dim)
    if not isinstance(control, str) or control not in frame.columns:
        raise ArgumentError(
            f"control_test: `control` {control!r} is not a learner of the table; choose from "
            f"{list(frame.columns)}."
        )
    greater = direction_of(table, greater_is_better, func="control_test", dataset_dim=dataset_dim)
    ranks = rank_table(frame, greater_is_better=greater)
    N, k = ranks.shape
    average = pd.Series(kr.friedman(ranks.to_numpy()).average_ranks, index=ranks.columns)
    others = [m for m in ranks.columns if m != control]
    diff = average[others].to_numpy() - float(average[control])
    z = diff / np.sqrt(k * (k + 1) / (6.0 * N))
    pvalue = 2.0 * scipy.stats.norm.sf(np.abs(z))
    reject, adjusted, _, _ = multipletests(pvalue, alpha, CONTROL_ADJUSTMENTS[adjust])

    def over_models(values: Any, name: str) -> xr.DataArray:
        coords = {"model": others}
        return xr.DataArray(np.asarray(values), dims=("model",), coords=coords, name=name)

    return ControlResult(
        control=control,
        average_ranks=average.rename("average_rank"),
        rank_difference=over_models(diff, "rank_difference"),
        statistic=over_models(z, "statistic"),
        pvalue=over_models(pvalue, "pvalue"),
        pvalue_adjusted=over_models(adjusted, "pvalue_adjusted"),
        reject=over_models(reject.astype(bool), "reject"),
        adjust=adjust,
        alpha=alpha,
        n_datasets=N,
        n_models=k,
        greater_is_better=greater,
    )


#: Upper bounds of |d| for "negligible", "small", "medium" (Cohen 1988); above: "large".
COHEN_D_MAGNITUDES = (0.2, 0.5, 0.8)
#: Upper bounds of |δ| for "negligible", "small", "medium" (Romano et al. 2006); above: "large".
CLIFF_DELTA_MAGNITUDES = (0.147, 0.33, 0.474)
#: Upper bounds of |γ| (Akinshin 2020): Cohen's, since γ estimates d for normal data.
AKINSHIN_GAMMA_MAGNITUDES = COHEN_D_MAGNITUDES


def _magnitude(value: float, bounds: Sequence[float]) -> str:
    """Return the magnitude of ``|value|`` against the upper bounds of the first three levels.

    ``"undefined"`` for NaN (Akinshin's γ of columns without spread).
    """
    if np.isnan(value):
        return "undefined"
    levels = ("negligible", "small", "medium", "large")
    return levels[int(np.searchsorted(np.asarray(bounds), abs(value), side="right"))]


@_direction_doc
def effect_size(
    table: Any,
    a: str,
    b: str,
    *,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
) -> EffectSizeResult:
    """Cohen's d, Akinshin's γ and Cliff's δ of ``a`` and ``b`` over datasets, as autorank reports.

    With ``x`` the scores of ``a`` and ``y`` those of ``b`` on the ``N`` datasets
    (each column taken as a sample, as autorank does)::

        d = (mean(x) - mean(y)) / s_p,       s_p² = ((N-1) s_x² + (N-1) s_y²) / (2N - 2)
        γ = (median(x) - median(y)) / m_p,   m_p² = ((N-1) m_x² + (N-1) m_y²) / (2N - 2)
        δ = P(x_i > y_j) - P(x_i < y_j)   over all N² pairs (i, j)

    ``s_x²``, ``s_y²`` the unbiased variances; ``m_x``, ``m_y`` the median
    absolute deviations scaled to estimate a normal standard deviation
    (:func:`scipy.stats.median_abs_deviation` with ``scale="normal"``, the
    factor 1.4826); ``δ = 2U/N² - 1`` with ``U`` the Mann–Whitney statistic of
    :func:`scipy.stats.mannwhitneyu`. γ is Akinshin's (2020, "Nonparametric
    Cohen's d-consistent effect size") robust Cohen's d, in the form autorank
    computes it (sample medians; Akinshin uses Harrell–Davis quantile
    estimates): it equals d for normal data and is what autorank reports when
    the scores are not normal. Magnitudes: ``|d|`` and ``|γ|`` < 0.2
    negligible, < 0.5 small, < 0.8 medium, else large (Cohen 1988); ``|δ|`` <
    0.147 negligible, < 0.33 small, < 0.474 medium, else large (Romano,
    Kromrey, Coraggio & Skowronek 2006). When both median absolute deviations
    are zero (more than half of each column's values equal), γ is NaN and its
    magnitude ``"undefined"``.

    Parameters
    ----------
    %(table)s
    a, b : str
        The two learners; both effects are signed as ``a - b``.
    %(greater_is_better)s
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray or cube, or column of a long table.

    Returns
    -------
    EffectSizeResult

    Raises
    ------
    ArgumentError
        If a learner is not in the table, or both columns are constant (``d`` undefined).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.9, 0.8, 0.7, 0.6], "b": [0.8, 0.7, 0.6, 0.5]})
    >>> res = effect_size(t, "a", "b", greater_is_better=True)
    >>> round(float(res.cohens_d), 4), float(res.cliffs_delta), res.delta_magnitude
    (0.7746, 0.4375, 'medium')
    >>> round(float(res.akinshin_gamma), 4), res.gamma_magnitude
    (0.6745, 'medium')
    """
    frame = _as_frame(table, dataset_dim)
    _check_models(frame, [a, b])
    greater = direction_of(table, greater_is_better, func="effect_size", dataset_dim=dataset_dim)
    x, y = frame[a].to_numpy(), frame[b].to_numpy()
    N = x.size
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        raise ArgumentError(
            f"effect_size: the scores of {a!r} and of {b!r} are each constant over the "
            "datasets, so Cohen's d (a difference over their pooled standard deviation) is "
            "undefined; report the difference of the means instead."
        )
    pooled = np.sqrt(((N - 1) * x.var(ddof=1) + (N - 1) * y.var(ddof=1)) / (2 * N - 2))
    d = float((x.mean() - y.mean()) / pooled)
    mad = scipy.stats.median_abs_deviation(np.stack([x, y]), axis=1, scale="normal")
    pooled_mad = np.sqrt(((N - 1) * mad[0] ** 2 + (N - 1) * mad[1] ** 2) / (2 * N - 2))
    gamma = float((np.median(x) - np.median(y)) / pooled_mad) if pooled_mad > 0 else math.nan
    u = scipy.stats.mannwhitneyu(x, y, alternative="two-sided").statistic
    delta = float(2.0 * u / (N * N) - 1.0)
    return EffectSizeResult(
        model_a=str(a),
        model_b=str(b),
        cohens_d=d,
        cliffs_delta=delta,
        akinshin_gamma=gamma,
        d_magnitude=_magnitude(d, COHEN_D_MAGNITUDES),
        delta_magnitude=_magnitude(delta, CLIFF_DELTA_MAGNITUDES),
        gamma_magnitude=_magnitude(gamma, AKINSHIN_GAMMA_MAGNITUDES),
        n_datasets=N,
        greater_is_better=greater,
    )


# --------------------------------------------------------------------------
# combined report
# --------------------------------------------------------------------------


def _pair_of(label: str, models: Sequence[str]) -> tuple[str, str, int] | None:
    """Return ``(a, b, sign)``, ``a`` before ``b`` in table order, of a contrast ``"x - y"``."""
    parts = str(label).split(" - ")
    if len(parts) != 2 or parts[0] not in models or parts[1] not in models:
        return None
    x, y = parts
    return (x, y, 1) if models.index(x) < models.index(y) else (y, x, -1)


def _pick(result: Any, method: str | None) -> Any:
    """Return the InferenceResult of a result or of one method of a ComparisonTable.

    A comparison table is recognised by its ``results`` mapping of method names
    to results (reporting sits above this layer, so it is not imported here).
    """
    from cvstats.results import InferenceResult

    if isinstance(getattr(result, "results", None), Mapping):
        names = list(result.results)
        if method is None:
            method = "corrected_resampled_t" if "corrected_resampled_t" in names else names[0]
        if method not in result.results:
            raise ArgumentError(f"`method` {method!r} is not in the table; choose from {names}.")
        return result.results[method]
    if isinstance(result, InferenceResult):
        return result
    raise CvstatsTypeError(
        "`per_dataset` must be an InferenceResult or a ComparisonTable over a dataset dim, or "
        f"a mapping of dataset names to them, got {type(result).__name__}."
    )


def _per_dataset_counts(
    per_dataset: Any,
    method: str | None,
    models: Sequence[str],
    alpha: float,
    dataset_dim: Hashable,
    greater_is_better: bool,
) -> pd.DataFrame:
    results = (
        [_pick(v, method) for v in per_dataset.values()]
        if isinstance(per_dataset, Mapping)
        else [_pick(per_dataset, method)]
    )
    for res in results:  # the per-dataset contrasts must point the way the table's values do
        direction_of(res, greater_is_better, name="per_dataset", func="rank_report")
    if isinstance(per_dataset, Mapping):
        if not results or any(r.estimate.ndim == 0 for r in results):
            raise ArgumentError(
                "`per_dataset` as a mapping needs one result over `contrast` per dataset."
            )
        labels = list(per_dataset)
        est, p = (
            xr.concat([getattr(r, f) for r in results], dim=dataset_dim, coords="minimal")
            .assign_coords({dataset_dim: labels})
            .transpose(dataset_dim, ...)
            for f in ("estimate", "pvalue")
        )
        name = results[0].method
    else:
        res = results[0]
        est, p, name = res.estimate, res.pvalue, res.method
    if dataset_dim not in est.dims or est.ndim != 2:
        raise ArgumentError(
            f"`per_dataset` must be over ({dataset_dim!r}, contrast), got dims {est.dims}; run "
            "the method on cvstats.pairwise(cube) of a cube with a dataset dim, or pass a "
            "mapping of dataset names to per-dataset results."
        )
    unit = next(d for d in est.dims if d != dataset_dim)
    rows = []
    for label in est[unit].values:
        pair = _pair_of(str(label), list(models))
        if pair is None:
            continue
        a, b, sign = pair
        e = sign * est.sel({unit: label}).values
        sig = p.sel({unit: label}).values <= alpha
        better, worse = (e > 0, e < 0) if greater_is_better else (e < 0, e > 0)
        wins, losses = int((sig & better).sum()), int((sig & worse).sum())
        rows.append((a, b, wins, int((~sig).sum()), losses, name))
    if not rows:
        raise ArgumentError(
            f"no contrast of `per_dataset` is a difference 'a - b' of the table's learners "
            f"{list(models)}; use cvstats.pairwise(cube)."
        )
    cols = [
        "model_a",
        "model_b",
        "significant_wins",
        "not_significant",
        "significant_losses",
        "per_dataset_method",
    ]
    return pd.DataFrame(rows, columns=cols)


@_direction_doc
def rank_report(
    table: Any,
    per_dataset: Any = None,
    *,
    method: str | None = None,
    alpha: float = 0.05,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
    higher_is_better: bool | None = None,
) -> RankReport:
    """Rank tests across datasets beside the per-dataset corrected tests.

    Parameters
    ----------
    %(table)s
    per_dataset : InferenceResult, ComparisonTable or mapping, optional
        Per-dataset tests of the pairwise contrasts of the same metric (e.g.
        ``cvstats.corrected_resampled_t(cvstats.pairwise(cube))`` or
        ``cvstats.compare(cvstats.pairwise(cube))``), over ``(dataset, contrast)``
        with contrast labels ``"a - b"``; a negative estimate means ``a`` is better
        for a loss, a positive one for a score. Or a mapping of dataset names to
        such results over ``contrast`` (one cube per dataset, e.g. when the
        datasets differ in size). When their estimates record a direction (the
        attrs of the cube they were run on), it must be the table's; otherwise
        they are read in the table's direction.
    method : str, optional
        Which method of a ComparisonTable (default ``"corrected_resampled_t"``
        when present, else the first).
    alpha : float, default 0.05
        Level of every test and of the critical difference.
    %(greater_is_better)s
    dataset_dim : hashable, default "dataset"
        The datasets dim.
    %(higher_is_better)s

    Returns
    -------
    RankReport
    """
    if method is not None and not isinstance(method, str):
        # one name: `method=` picks one method (as plan's), `methods=[...]` lists (compare's)
        raise CvstatsTypeError(
            f"rank_report: `method` must be one method name (a str), got {method!r}; pick "
            "the method of the ComparisonTable to count wins with, e.g. "
            "method='corrected_resampled_t'."
        )
    if method is not None and per_dataset is None:
        raise ArgumentError(
            f"rank_report: `method` ({method!r}) picks the method of `per_dataset`'s "
            "ComparisonTable, but no `per_dataset` was given; pass per_dataset=compare(...), "
            "or leave `method` out."
        )
    alpha = validate_alpha(alpha)
    frame = _as_frame(table, dataset_dim)
    greater = direction_of(
        table,
        greater_is_better,
        higher_is_better=higher_is_better,
        func="rank_report",
        dataset_dim=dataset_dim,
    )
    fried = friedman_test(frame, greater_is_better=greater, alpha=alpha, dataset_dim=dataset_dim)
    pairs = pairwise_wilcoxon(frame, alpha=alpha, greater_is_better=greater)
    counts = None
    if per_dataset is not None:
        models = list(frame.columns)
        counts = _per_dataset_counts(per_dataset, method, models, alpha, dataset_dim, greater)
    return RankReport(fried, pairs, counts)
