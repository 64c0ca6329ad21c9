"""Comparing learners across many datasets with ranks (Demšar 2006; García & Herrera 2008).

See docs/beyond.md and docs/theory.md §8. When the datasets come from different
populations their errors are not commensurable, so learners are compared
through their per-dataset ranks. Input: a table of per-dataset estimates,
an :class:`xarray.DataArray` over ``(dataset, model)`` (e.g.
``cvstats.corrected_resampled_t(cube).estimate`` for a cube with a
``dataset`` dim) or a :class:`pandas.DataFrame` with datasets as rows and
learners as columns. Lower is better (losses) unless ``higher_is_better``.

* :func:`friedman_test`: Friedman's ``χ²_F``, Iman–Davenport's ``F_F``, the
  Nemenyi critical difference; :func:`cd_diagram` draws it;
* :func:`wilcoxon_test`: Wilcoxon signed-rank test for two learners;
* :func:`pairwise_wilcoxon`: all pairs, Holm-adjusted;
* :func:`rank_report`: the rank-based results beside the per-dataset
  corrected tests (counts of significant wins and losses).

The results (:class:`FriedmanResult`, :class:`WilcoxonResult`,
:class:`PairwiseResult`, :class:`RankReport`) and :func:`cd_diagram` live in
:mod:`cvstats.results.ranks` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import scipy
import xarray as xr

from cvstats.cube.checks import validate_alpha
from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.kernels import ranks as kr
from cvstats.results.ranks import (
    FriedmanResult,
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
    "rank_table",
    "friedman_test",
    "wilcoxon_test",
    "pairwise_wilcoxon",
    "cd_diagram",
    "rank_report",
]

#: Default name of the datasets dim of a DataArray table.
DATASET_DIM = "dataset"


def _as_frame(table: Any, dataset_dim: Hashable) -> pd.DataFrame:
    """Return the table as a checked DataFrame, datasets × learners (string labels)."""
    if isinstance(table, pd.DataFrame):
        frame = table.copy()
    elif isinstance(table, xr.DataArray):
        if table.ndim != 2 or dataset_dim not in table.dims:
            raise ArgumentError(
                f"`table` must be a 2-d DataArray over ({dataset_dim!r}, <learners>), got dims "
                f"{tuple(table.dims)}; select one element of the other dims, or pass "
                "`dataset_dim`."
            )
        other = next(d for d in table.dims if d != dataset_dim)
        table = table.drop_vars([c for c in table.coords if c not in table.dims])
        frame = table.transpose(dataset_dim, other).to_pandas()
    else:
        raise CvstatsTypeError(
            "`table` must be an xarray.DataArray over (dataset, model) or a pandas DataFrame "
            f"(datasets x learners), got {type(table).__name__}."
        )
    frame.columns = [str(c) for c in frame.columns]
    if frame.columns.duplicated().any():
        raise ArgumentError(f"`table` has duplicate learner names: {list(frame.columns)}.")
    try:
        frame = frame.astype(float)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"`table` must hold numbers: {e}") from e
    if frame.shape[0] < 2 or frame.shape[1] < 2:
        raise ArgumentError(
            f"`table` needs at least 2 datasets and 2 learners, got shape {frame.shape}."
        )
    if not np.isfinite(frame.to_numpy()).all():
        raise ArgumentError(
            "`table` must be finite: every learner needs a score on every dataset (drop "
            "the datasets or learners with NaN first)."
        )
    return frame


def rank_table(
    table: Any, *, higher_is_better: bool = False, dataset_dim: Hashable = DATASET_DIM
) -> pd.DataFrame:
    """Per-dataset ranks of the learners (1 = best; ties get average ranks).

    Parameters
    ----------
    table : xarray.DataArray or pandas.DataFrame
        Per-dataset scores, datasets × learners.
    higher_is_better : bool, default False
        ``False`` for losses (lowest ranks 1), ``True`` for accuracies.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray table.

    Returns
    -------
    pandas.DataFrame
        Ranks, datasets × learners.
    """
    frame = _as_frame(table, dataset_dim)
    ranks = kr.rank_scores(frame.to_numpy(), higher_is_better=higher_is_better)
    return pd.DataFrame(ranks, index=frame.index, columns=frame.columns)


# --------------------------------------------------------------------------
# Friedman, Iman–Davenport, Nemenyi
# --------------------------------------------------------------------------


def friedman_test(
    table: Any,
    *,
    higher_is_better: bool = False,
    alpha: float = 0.05,
    tie_correction: bool = False,
    dataset_dim: Hashable = DATASET_DIM,
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
    table : xarray.DataArray or pandas.DataFrame
        Per-dataset estimates, datasets × learners.
    higher_is_better : bool, default False
        ``False`` for losses, ``True`` for accuracies.
    alpha : float, default 0.05
        Level of the critical difference.
    tie_correction : bool, default False
        Divide ``χ²_F`` by the ties factor as :func:`scipy.stats.friedmanchisquare`.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray table.

    Returns
    -------
    FriedmanResult

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.3, 0.4], "c": [0.3, 0.1, 0.5]})
    >>> res = friedman_test(t)
    >>> res.average_ranks.round(3).tolist(), float(res.df)
    ([1.333, 2.333, 2.333], 2.0)
    """
    alpha = validate_alpha(alpha)
    ranks = rank_table(table, higher_is_better=higher_is_better, dataset_dim=dataset_dim)
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
        higher_is_better=bool(higher_is_better),
        tie_correction=bool(tie_correction),
    )


# --------------------------------------------------------------------------
# Wilcoxon signed-rank
# --------------------------------------------------------------------------


def _wilcoxon(
    diff: np.ndarray, higher_is_better: bool, zero_method: str, alternative: str
) -> tuple[float, float, int, int, int]:
    better = diff > 0 if higher_is_better else diff < 0
    worse = diff < 0 if higher_is_better else diff > 0
    wins, losses = int(better.sum()), int(worse.sum())
    ties = diff.size - wins - losses
    if wins + losses == 0:
        return np.nan, 1.0, wins, ties, losses
    res = scipy.stats.wilcoxon(diff, zero_method=zero_method, alternative=alternative)
    return float(res.statistic), float(res.pvalue), wins, ties, losses


def _check_models(frame: pd.DataFrame, names: Sequence[str]) -> None:
    unknown = [n for n in names if n not in frame.columns]
    if unknown:
        raise ArgumentError(f"unknown learner(s) {unknown}; the table has {list(frame.columns)}.")


def wilcoxon_test(
    table: Any,
    a: str,
    b: str,
    *,
    higher_is_better: bool = False,
    zero_method: str = "wilcox",
    alternative: str = "two-sided",
    dataset_dim: Hashable = DATASET_DIM,
) -> WilcoxonResult:
    """Wilcoxon signed-rank test of learners ``a`` and ``b`` over datasets (Demšar 2006, §3.1.3).

    Runs :func:`scipy.stats.wilcoxon` on the per-dataset differences
    ``score_a - score_b``.

    Parameters
    ----------
    table : xarray.DataArray or pandas.DataFrame
        Per-dataset estimates, datasets × learners.
    a, b : str
        The two learners.
    higher_is_better : bool, default False
        Direction of "better" for the win/tie/loss counts.
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        Treatment of zero differences (scipy's).
    alternative : {"two-sided", "less", "greater"}
        scipy's alternative on ``score_a - score_b``.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray table.

    Returns
    -------
    WilcoxonResult
    """
    frame = _as_frame(table, dataset_dim)
    _check_models(frame, [a, b])
    diff = (frame[a] - frame[b]).to_numpy()
    stat, p, wins, ties, losses = _wilcoxon(diff, higher_is_better, zero_method, alternative)
    return WilcoxonResult(
        str(a), str(b), stat, p, float(np.median(diff)), wins, ties, losses, diff.size, alternative
    )


def pairwise_wilcoxon(
    table: Any,
    *,
    alpha: float = 0.05,
    correction: str = "holm",
    higher_is_better: bool = False,
    zero_method: str = "wilcox",
    dataset_dim: Hashable = DATASET_DIM,
) -> PairwiseResult:
    """Wilcoxon signed-rank tests of all pairs, Holm-adjusted (García & Herrera 2008).

    Parameters
    ----------
    table : xarray.DataArray or pandas.DataFrame
        Per-dataset estimates, datasets × learners.
    alpha : float, default 0.05
        Family-wise level.
    correction : str, default "holm"
        Any method of :func:`statsmodels.stats.multitest.multipletests`.
    higher_is_better : bool, default False
        Direction of "better" for the win/tie/loss counts.
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        Treatment of zero differences.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray table.

    Returns
    -------
    PairwiseResult
    """
    from statsmodels.stats.multitest import multipletests

    alpha = validate_alpha(alpha)
    frame = _as_frame(table, dataset_dim)
    tests = tuple(
        wilcoxon_test(frame, a, b, higher_is_better=higher_is_better, zero_method=zero_method)
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
) -> pd.DataFrame:
    if isinstance(per_dataset, Mapping):
        results = [_pick(v, method) for v in per_dataset.values()]
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
        res = _pick(per_dataset, method)
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
        wins, losses = int((sig & (e < 0)).sum()), int((sig & (e > 0)).sum())
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


def rank_report(
    table: Any,
    per_dataset: Any = None,
    *,
    method: str | None = None,
    alpha: float = 0.05,
    higher_is_better: bool = False,
    dataset_dim: Hashable = DATASET_DIM,
) -> RankReport:
    """Rank tests across datasets beside the per-dataset corrected tests.

    Parameters
    ----------
    table : xarray.DataArray or pandas.DataFrame
        Per-dataset estimates, datasets × learners (e.g.
        ``cvstats.corrected_resampled_t(cube).estimate``).
    per_dataset : InferenceResult, ComparisonTable or mapping, optional
        Per-dataset tests of the pairwise contrasts of *losses* (e.g.
        ``cvstats.corrected_resampled_t(cvstats.pairwise(cube))`` or
        ``cvstats.compare(cvstats.pairwise(cube))``), over ``(dataset, contrast)``
        with contrast labels ``"a - b"``; a negative estimate means ``a`` is better.
        Or a mapping of dataset names to such results over ``contrast`` (one cube
        per dataset, e.g. when the datasets differ in size).
    method : str, optional
        Which method of a ComparisonTable (default ``"corrected_resampled_t"``
        when present, else the first).
    alpha : float, default 0.05
        Level of every test and of the critical difference.
    higher_is_better : bool, default False
        Direction of the scores in ``table``.
    dataset_dim : hashable, default "dataset"
        The datasets dim.

    Returns
    -------
    RankReport
    """
    alpha = validate_alpha(alpha)
    frame = _as_frame(table, dataset_dim)
    fried = friedman_test(
        frame, higher_is_better=higher_is_better, alpha=alpha, dataset_dim=dataset_dim
    )
    pairs = pairwise_wilcoxon(frame, alpha=alpha, higher_is_better=higher_is_better)
    counts = None
    if per_dataset is not None:
        counts = _per_dataset_counts(per_dataset, method, list(frame.columns), alpha, dataset_dim)
    return RankReport(fried, pairs, counts)
