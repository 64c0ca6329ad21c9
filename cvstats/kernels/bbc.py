"""Bootstrap bias-corrected cross-validation (BBC-CV) as a numpy kernel.

Tsamardinos, Greasidou & Borboudakis (2018, Machine Learning 107,
"Bootstrapping the out-of-sample predictions for efficient and accurate
cross-validation", §4, Algorithm 1): from the out-of-sample losses of every
candidate on every example, each bootstrap replication draws units (examples,
or groups of examples) with replacement, selects the candidate with the
smallest mean loss on the in-bag draws (counted with their multiplicity) and
scores that candidate on the out-of-bag examples (those whose unit was not
drawn). The mean of these out-of-bag scores estimates the error of the whole
selection procedure (choose the best candidate by CV, then refit it), and
their percentiles give an interval.

Vectorized over the replications: the in-bag draws are a ``(B, n)`` matrix of
counts, the in-bag means one matrix product with the ``(n, M)`` losses.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["BBCArrays", "bbc_cv", "unit_counts"]


class BBCArrays(NamedTuple):
    """Per-replication output of :func:`bbc_cv`.

    Attributes
    ----------
    oob : numpy.ndarray
        ``(B,)`` mean out-of-bag loss of the replication's winner; NaN for a
        replication that drew every unit (no out-of-bag example).
    winner : numpy.ndarray
        ``(B,)`` index (along the candidates) of the candidate selected on the
        in-bag draws.
    """

    oob: NDArray[np.float64]
    winner: NDArray[np.intp]


def unit_counts(draws: NDArray[np.integer], n_units: int) -> NDArray[np.int64]:
    """How many times each unit is drawn in each replication.

    Parameters
    ----------
    draws : numpy.ndarray
        ``(B, k)`` integer indices in ``[0, n_units)``: the units drawn by each
        replication.
    n_units : int
        The number of units.

    Returns
    -------
    numpy.ndarray
        ``(B, n_units)`` counts (one :func:`numpy.bincount` over all replications).
    """
    draws = np.asarray(draws)
    B = draws.shape[0]
    offset = (np.arange(B) * n_units)[:, None]
    return np.bincount((draws + offset).ravel(), minlength=B * n_units).reshape(B, n_units)


def bbc_cv(
    losses: NDArray[np.floating],
    draws: NDArray[np.integer],
    units: NDArray[np.integer] | None = None,
) -> BBCArrays:
    """BBC-CV's out-of-bag loss of the in-bag winner, for each bootstrap replication.

    Tsamardinos, Greasidou & Borboudakis (2018), Algorithm 1, with the loss
    averaged over examples (a per-example loss, so that the in-bag
    performance of a candidate is the weighted mean of its losses).

    Parameters
    ----------
    losses : numpy.ndarray
        ``(n, M)`` out-of-sample loss of each of ``M`` candidates on each of
        ``n`` examples (for a repeated K-fold, the mean over the repeats).
    draws : numpy.ndarray
        ``(B, G)`` indices in ``[0, G)`` of the units each replication draws
        (``G`` draws with replacement from ``G`` units).
    units : numpy.ndarray, optional
        ``(n,)`` unit (group) index in ``[0, G)`` of each example; default
        every example its own unit (``G = n``).

    Returns
    -------
    BBCArrays
        ``oob`` and ``winner``, each ``(B,)``. Ties on the in-bag means go to
        the first candidate (along ``M``).
    """
    losses = np.asarray(losses, dtype=float)
    n = losses.shape[0]
    codes = np.arange(n) if units is None else np.asarray(units)
    draws = np.asarray(draws)
    weights = unit_counts(draws, draws.shape[1])[:, codes]  # (B, n)
    in_bag = (weights @ losses) / weights.sum(axis=1, keepdims=True)  # (B, M)
    winner = np.argmin(in_bag, axis=1)
    out = weights == 0
    chosen = losses.T[winner]  # (B, n): each replication's winner's losses
    n_out = out.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        oob = np.where(out, chosen, 0.0).sum(axis=1) / n_out
    return BBCArrays(np.where(n_out > 0, oob, np.nan), winner)
