"""Cross-validation with confidence (Lei, 2020) as a numpy kernel.

Lei (2020, JASA 115, "Cross-validation with confidence", §3, Algorithm 1):
candidate ``m`` is tested against the hypothesis that it is the best, ``H0:
E[ξ_mj] <= 0`` for every other candidate ``j``, with ``ξ_mj`` the per-example
loss differences of a V-fold CV. The statistic is the largest standardized
mean difference ``T = max_j sqrt(n) μ̂_mj / σ̂_mj``; its null distribution is
approximated by the Gaussian multiplier bootstrap ``T* = max_j n^{-1/2} Σ_i ζ_i
(ξ_mj,i - μ̂_mj,v(i)) / σ̂_mj``, the differences centred within their fold
``v(i)`` and ``ζ_i`` iid standard normal (one per group, shared by its
examples, on grouped data). The p-value is the share of ``T*`` above ``T``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["cvc_pvalues"]


def cvc_pvalues(
    losses: NDArray[np.floating], fold: NDArray[np.integer], multipliers: NDArray[np.floating]
) -> NDArray[np.float64]:
    """Lei's (2020) p-value of "candidate ``m`` is the best", for every candidate.

    Parameters
    ----------
    losses : numpy.ndarray
        ``(n, M)`` out-of-sample loss of each candidate on each example (one
        V-fold CV).
    fold : numpy.ndarray
        ``(n,)`` fold of each example.
    multipliers : numpy.ndarray
        ``(B, n)`` Gaussian multipliers of the examples (equal within a group).

    Returns
    -------
    numpy.ndarray
        ``(M,)`` p-values. A difference with no variance within the folds
        counts as certain: a candidate always worse than another gets 0, a
        candidate always better ignores that one.
    """
    losses = np.asarray(losses, dtype=float)
    n, M = losses.shape
    codes = np.unique(np.asarray(fold), return_inverse=True)[1].ravel()
    counts = np.bincount(codes)
    zeta = np.asarray(multipliers, dtype=float)
    # each fold's mean of every column in one product (folds one-hot, scaled by 1/size)
    fold_avg = np.zeros((counts.size, n))
    fold_avg[codes, np.arange(n)] = 1.0 / counts[codes]
    out = np.empty(M)
    for m in range(M):
        xi = losses[:, [m]] - np.delete(losses, m, axis=1)  # (n, M - 1)
        mu = xi.mean(axis=0)
        centred = xi - (fold_avg @ xi)[codes]
        sd = np.sqrt((centred**2).mean(axis=0))
        ok = sd > 0
        certain = np.where(mu > 0, np.inf, -np.inf)
        stat = np.where(ok, np.sqrt(n) * mu / np.where(ok, sd, 1.0), certain).max()
        if not ok.any():
            out[m] = 0.0 if stat > 0 else 1.0
            continue
        simulated = (zeta @ (centred[:, ok] / sd[ok])).max(axis=1) / np.sqrt(n)
        out[m] = float((simulated > stat).mean())
    return out
