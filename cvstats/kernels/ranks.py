"""Rank tests across many datasets (Demšar 2006; García & Herrera 2008), docs/theory.md §8.

Plain numpy/scipy on a table of scores with datasets on the second-to-last
axis and learners on the last axis (``(..., N, k)``), vectorized over any
leading axes:

* :func:`rank_scores`: per-dataset ranks, 1 = best, ties get average ranks;
* :func:`friedman`: Friedman's ``χ²_F = 12N/(k(k+1)) [Σ_j R_j² - k(k+1)²/4]``
  (``R_j`` the average ranks) and Iman–Davenport's
  ``F_F = (N - 1) χ²_F / (N (k - 1) - χ²_F)`` with their p-values;
* :func:`nemenyi_critical_difference`: ``CD = q_α sqrt(k(k+1)/(6N))`` with
  ``q_α`` the studentized range quantile divided by ``sqrt(2)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy
from numpy.typing import ArrayLike

from cvstats._deprecation import renamed_argument
from cvstats.checks import ArgumentError, as_float_array, validate_alpha

__all__ = [
    "FriedmanArrays",
    "rank_scores",
    "friedman",
    "nemenyi_q",
    "nemenyi_critical_difference",
    "nemenyi_pvalue",
]


class FriedmanArrays(NamedTuple):
    """Friedman and Iman–Davenport statistics, degrees of freedom and p-values."""

    average_ranks: np.ndarray
    chi2: np.ndarray
    chi2_df: np.ndarray
    chi2_pvalue: np.ndarray
    f: np.ndarray
    f_df1: np.ndarray
    f_df2: np.ndarray
    f_pvalue: np.ndarray


def _table_iv(scores: ArrayLike, name: str = "scores") -> np.ndarray:
    arr = as_float_array(scores, name, min_ndim=2)
    if arr.shape[-1] < 2 or arr.shape[-2] < 2:
        raise ArgumentError(
            f"`{name}` needs at least 2 datasets (rows) and 2 learners (columns), got shape "
            f"{arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ArgumentError(f"`{name}` must be finite (no NaN): every learner on every dataset.")
    return arr


def rank_scores(
    scores: ArrayLike, *, greater_is_better: bool = False, higher_is_better: bool | None = None
) -> np.ndarray:
    """Rank learners within each dataset: 1 = best, ties get their average rank.

    Parameters
    ----------
    scores : array_like, shape (..., N, k)
        Scores (losses by default) of ``k`` learners on ``N`` datasets.
    greater_is_better : bool, default False
        ``False``: the lowest score (loss) ranks 1; ``True``: the highest (accuracy).
        The analyses of :mod:`cvstats.across.ranks` read it from their data and
        always pass it.
    higher_is_better : bool, optional
        Old name of ``greater_is_better`` (FutureWarning).

    Returns
    -------
    ndarray, shape (..., N, k)
        Ranks.

    Examples
    --------
    >>> rank_scores([[0.1, 0.3, 0.1], [0.2, 0.1, 0.3]])
    array([[1.5, 3. , 1.5],
           [2. , 1. , 3. ]])
    """
    greater_is_better = renamed_argument(
        "higher_is_better",
        "greater_is_better",
        higher_is_better,
        greater_is_better,
        "rank_scores",
        default=False,
    )
    arr = _table_iv(scores)
    return scipy.stats.rankdata(-arr if greater_is_better else arr, axis=-1)


def _tie_factor(ranks: np.ndarray) -> np.ndarray:
    """``1 - Σ (t³ - t) / (N k (k² - 1))`` over the tie groups of every dataset."""
    N, k = ranks.shape[-2:]
    srt = np.sort(ranks, axis=-1)
    # size of the tie group of each element, summed as Σ_groups (t³ - t) = Σ_elements (t² - 1)
    t = (srt[..., :, None] == srt[..., None, :]).sum(axis=-1)
    return 1.0 - (t**2 - 1).sum(axis=(-1, -2)) / (N * k * (k**2 - 1))


def friedman(ranks: ArrayLike, *, tie_correction: bool = False) -> FriedmanArrays:
    """Friedman's ``χ²_F`` and the Iman–Davenport ``F_F`` from ranks (Demšar 2006, §3.2.2).

    Parameters
    ----------
    ranks : array_like, shape (..., N, k)
        Per-dataset ranks (:func:`rank_scores`).
    tie_correction : bool, default False
        Divide ``χ²_F`` by ``1 - Σ (t³ - t)/(N k (k² - 1))`` (as
        :func:`scipy.stats.friedmanchisquare` does); Demšar's formula has none.

    Returns
    -------
    FriedmanArrays
        Average ranks (..., k); ``χ²_F`` with ``k - 1`` df; ``F_F`` with
        ``(k - 1, (k - 1)(N - 1))`` df; upper-tail p-values.

    Examples
    --------
    >>> r = friedman([[1, 2, 3], [1, 3, 2], [1, 2, 3]])
    >>> round(float(r.chi2), 6), float(r.f_df2)
    (4.666667, 4.0)
    """
    arr = _table_iv(ranks, "ranks")
    N, k = arr.shape[-2:]
    avg = arr.mean(axis=-2)
    chi2 = 12.0 * N / (k * (k + 1)) * ((avg**2).sum(axis=-1) - k * (k + 1) ** 2 / 4.0)
    if tie_correction:
        factor = _tie_factor(arr)
        with np.errstate(divide="ignore", invalid="ignore"):
            chi2 = np.where(factor > 0, chi2 / np.where(factor > 0, factor, 1.0), np.nan)
    chi2 = np.maximum(chi2, 0.0)  # rounding below zero when all ranks are equal
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (N - 1) * chi2 / (N * (k - 1) - chi2)
    f = np.where(N * (k - 1) - chi2 > 0, f, np.inf)
    df1, df2 = float(k - 1), float((k - 1) * (N - 1))
    shape = chi2.shape
    return FriedmanArrays(
        avg,
        np.asarray(chi2)[()],
        np.full(shape, df1)[()],
        np.asarray(scipy.stats.chi2.sf(chi2, df1))[()],
        np.asarray(f)[()],
        np.full(shape, df1)[()],
        np.full(shape, df2)[()],
        np.asarray(scipy.stats.f.sf(f, df1, df2))[()],
    )


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """``q_α`` of the Nemenyi test: studentized range quantile ``(k, ∞)`` over ``sqrt(2)``.

    Examples
    --------
    >>> round(nemenyi_q(4, 0.05), 3)
    2.569
    """
    alpha = validate_alpha(alpha)
    if int(k) != k or k < 2:
        raise ArgumentError(f"`k` (number of learners) must be an int >= 2, got {k!r}.")
    return float(scipy.stats.studentized_range.ppf(1.0 - alpha, int(k), np.inf) / np.sqrt(2.0))


def nemenyi_critical_difference(k: int, N: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference ``CD = q_α sqrt(k(k+1)/(6N))`` of average ranks.

    Examples
    --------
    >>> round(nemenyi_critical_difference(4, 14), 3)
    1.254
    """
    if int(N) != N or N < 1:
        raise ArgumentError(f"`N` (number of datasets) must be an int >= 1, got {N!r}.")
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * N)))


def nemenyi_pvalue(rank_difference: ArrayLike, k: int, N: int) -> np.ndarray:
    """Nemenyi p-value of a difference of average ranks (Demšar 2006, §3.2.2).

    ``q = |R_a - R_b| / sqrt(k(k+1)/(6N))`` is referred to the studentized range
    of ``k`` means with infinite degrees of freedom, as the critical difference
    is: ``p = P(Q_{k,∞} >= q sqrt(2))``, so ``p <= α`` exactly when
    ``|R_a - R_b| >= CD`` (:func:`nemenyi_critical_difference`). The p-value is
    already adjusted for the ``k(k-1)/2`` pairs (single step).

    Examples
    --------
    >>> round(float(nemenyi_pvalue(1.254, 4, 14)), 3)
    0.05
    """
    if int(k) != k or k < 2:
        raise ArgumentError(f"`k` (number of learners) must be an int >= 2, got {k!r}.")
    if int(N) != N or N < 1:
        raise ArgumentError(f"`N` (number of datasets) must be an int >= 1, got {N!r}.")
    q = np.abs(np.asarray(rank_difference, dtype=float)) / np.sqrt(k * (k + 1) / (6.0 * N))
    return np.asarray(scipy.stats.studentized_range.sf(q * np.sqrt(2.0), int(k), np.inf))[()]
