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

:func:`oob_scale` is cvstats's own calibration of the interval (not in
Tsamardinos et al. 2018): the factor that turns the spread of one out-of-bag
mean into the spread of the estimate (docs/after-a-search.md).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["BBCArrays", "bbc_cv", "oob_scale", "rescaled_percentiles", "unit_counts"]


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


def oob_scale(n_units: int) -> float:
    """Ratio of the estimate's standard deviation to that of one out-of-bag mean.

    A bootstrap replication leaves each of ``G`` units out with probability
    ``f = (1 - 1/G)^G`` (``→ e^{-1} ≈ 0.368``; ``1 - f`` is the ``.632`` of
    Efron 1983, JASA 78), so it scores the winner on about ``fG`` units. Given that number
    ``k``, the out-of-bag units are a simple random sample without replacement
    of ``k`` of the ``G`` (the unit's out-of-bag status does not depend on its
    loss), and the mean of a candidate's losses over them varies across
    replications with variance ``(s²/k)(1 - k/G)`` (Cochran 1977, *Sampling
    Techniques*, Theorem 2.2: the finite-population correction), about
    ``s² (1 - f) / (f G)``. The estimate, the mean over the replications, is
    close to the candidate's mean over all ``G`` units, of sampling variance
    ``σ²/G``. The ratio of the two standard deviations is
    ``sqrt(f / (1 - f))`` (``→ (e - 1)^{-1/2} ≈ 0.763``); it ignores the
    variation of the winner across replications and assumes independent
    per-unit losses.

    Parameters
    ----------
    n_units : int
        ``G``, the number of bootstrap units (at least 2).

    Returns
    -------
    float
        ``sqrt(f / (1 - f))`` with ``f = (1 - 1/G)^G``.

    Examples
    --------
    >>> from cvstats.kernels.bbc import oob_scale
    >>> round(oob_scale(2), 4)  # f = 1/4: sqrt(1/3)
    0.5774
    """
    f = (1.0 - 1.0 / n_units) ** n_units
    return float(np.sqrt(f / (1.0 - f)))


def rescaled_percentiles(
    replicates: NDArray[np.floating], alpha: float, scale: float
) -> tuple[float, float]:
    """Return the percentile interval of ``replicates`` shrunk (or widened) about their mean.

    Parameters
    ----------
    replicates : numpy.ndarray
        ``(B,)`` out-of-bag losses (no NaN).
    alpha : float
        Level ``1 - alpha``.
    scale : float
        Factor applied to the distances of the ``alpha/2`` and ``1 - alpha/2``
        percentiles from the mean (:func:`oob_scale`); 1 gives the percentiles.

    Returns
    -------
    tuple of float
        ``(mean + scale (q_{alpha/2} - mean), mean + scale (q_{1-alpha/2} - mean))``,
        which keeps the percentiles' asymmetry.
    """
    centre = float(np.mean(replicates))
    low, high = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
    return centre + scale * (float(low) - centre), centre + scale * (float(high) - centre)
