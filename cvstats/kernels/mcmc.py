"""Convergence diagnostics of Markov chains: rank-normalized split-R̂ and effective sample size.

Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization,
folding, and localization: an improved R̂ for assessing convergence of MCMC",
Bayesian Analysis 16(2): the split-R̂ (§3.1), rank normalization (§3, eq. 14),
folding for the tails (§4.1), bulk and tail effective sample sizes (§4.3), and
the ESS of a mean (§3.2, Geyer's initial monotone sequence on the autocorrelations
estimated over all chains, Gelman et al. 2013 BDA3 §11.5). Plain numpy/scipy:
``draws`` is ``(chain, draw)``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

__all__ = ["RHAT_MAX", "ESS_MIN", "ess", "ess_bulk", "ess_tail", "rhat", "mcse_mean"]

#: Largest R̂ taken as converged (Vehtari et al. 2021, §5).
RHAT_MAX = 1.01
#: Smallest bulk and tail ESS taken as enough (Vehtari et al. 2021, §5: 100 per chain, 4 chains).
ESS_MIN = 400


def _split(draws: np.ndarray) -> np.ndarray:
    """Return each chain cut in two halves (the middle draw of an odd chain dropped)."""
    draws = np.asarray(draws, dtype=float)
    half = draws.shape[1] // 2
    return np.concatenate([draws[:, :half], draws[:, draws.shape[1] - half :]], axis=0)


def _z_scale(draws: np.ndarray) -> np.ndarray:
    """Rank-normalize all draws together: ``Φ⁻¹((r - 3/8) / (S + 1/4))`` (eq. 14)."""
    ranks = rankdata(draws, method="average").reshape(draws.shape)
    return ndtri((ranks - 0.375) / (draws.size + 0.25))


def _rhat(draws: np.ndarray) -> float:
    """Return the classic R̂ of chains (BDA3 §11.4): sqrt of pooled over within-chain variance."""
    n = draws.shape[1]
    within = np.mean(np.var(draws, axis=1, ddof=1))
    between = n * np.var(np.mean(draws, axis=1), ddof=1)
    if within == 0:
        return np.nan
    return float(np.sqrt(((n - 1) / n * within + between / n) / within))


def rhat(draws: np.ndarray) -> float:
    """Rank-normalized split-R̂: the larger of the bulk and the folded (tail) R̂.

    Parameters
    ----------
    draws : numpy.ndarray
        ``(chain, draw)``, at least 4 draws per chain.

    Returns
    -------
    float
        NaN when every draw is equal.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> bool(rhat(rng.normal(size=(4, 1000))) < 1.01)
    True
    >>> bool(rhat(rng.normal(size=(4, 1000)) + np.arange(4)[:, None]) > 1.1)
    True
    """
    split = _split(draws)
    bulk = _rhat(_z_scale(split))
    folded = np.abs(split - np.median(split))
    tail = _rhat(_z_scale(folded))
    return float(max(bulk, tail))


def ess(draws: np.ndarray) -> float:
    """Effective sample size of the mean of ``draws`` over all chains (BDA3 §11.5).

    The autocorrelations ``ρ_t`` are combined over chains (Vehtari et al. 2021,
    eq. 10) and summed with Geyer's initial positive and monotone sequences,
    ``ESS = C·N / τ``, as Stan and ArviZ compute it (the last positive even lag
    included, ``τ >= 1/log10(C·N)``).

    Parameters
    ----------
    draws : numpy.ndarray
        ``(chain, draw)`` (as they are; :func:`ess_bulk` splits and rank-normalizes).

    Returns
    -------
    float
        ``C·N`` when every draw is equal.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> 3200 < ess(rng.normal(size=(4, 1000))) < 4800
    True
    """
    draws = np.asarray(draws, dtype=float)
    chains, n = draws.shape
    if np.ptp(draws) < np.finfo(float).resolution:
        return float(draws.size)
    centred = draws - draws.mean(axis=1, keepdims=True)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    spectrum = np.fft.rfft(centred, size, axis=1)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), size, axis=1)[:, :n] / n
    within = acov[:, 0].mean() * n / (n - 1)
    var_plus = within * (n - 1) / n
    if chains > 1:
        var_plus += np.var(draws.mean(axis=1), ddof=1)
    rho = 1.0 - (within - acov.mean(axis=0)) / var_plus
    kept = np.zeros(n)
    kept[0], kept[1] = 1.0, rho[1]
    even, odd = 1.0, rho[1]
    t = 1
    while t < n - 3 and even + odd > 0:  # Geyer's initial positive sequence
        even, odd = rho[t + 1], rho[t + 2]
        if even + odd >= 0:
            kept[t + 1], kept[t + 2] = even, odd
        t += 2
    last = t - 2
    if even > 0:
        kept[last + 1] = even
    t = 1
    while t <= last - 2:  # Geyer's initial monotone sequence
        if kept[t + 1] + kept[t + 2] > kept[t - 1] + kept[t]:
            kept[t + 1] = kept[t + 2] = (kept[t - 1] + kept[t]) / 2
        t += 2
    total = chains * n
    tau = -1.0 + 2.0 * kept[: last + 1].sum() + kept[last + 1 : last + 2].sum()
    return float(total / max(tau, 1.0 / np.log10(total)))


def ess_bulk(draws: np.ndarray) -> float:
    """Bulk ESS: :func:`ess` of the rank-normalized split chains (Vehtari et al. 2021, §4.3).

    Parameters
    ----------
    draws : numpy.ndarray
        ``(chain, draw)``.

    Returns
    -------
    float
    """
    return ess(_z_scale(_split(draws)))


def ess_tail(draws: np.ndarray) -> float:
    """Tail ESS: the smaller ESS of the 5% and 95% quantile indicators (Vehtari et al. 2021, §4.3).

    Parameters
    ----------
    draws : numpy.ndarray
        ``(chain, draw)``.

    Returns
    -------
    float
    """
    split = _split(draws)
    low, high = np.quantile(split, [0.05, 0.95])
    return float(min(ess((split <= low).astype(float)), ess((split <= high).astype(float))))


def mcse_mean(draws: np.ndarray) -> float:
    """Return the Monte Carlo standard error of the mean of ``draws``: ``sd / sqrt(ESS)``.

    The ESS is that of the split chains (as ArviZ's ``mcse(method="mean")``).

    Parameters
    ----------
    draws : numpy.ndarray
        ``(chain, draw)``; e.g. the indicator of an event, whose mean is its probability.

    Returns
    -------
    float
        ``0`` when every draw is equal.

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> round(mcse_mean(rng.normal(size=(4, 2500))), 2)
    0.01
    """
    draws = np.asarray(draws, dtype=float)
    if np.all(draws == draws.flat[0]):
        return 0.0
    return float(np.std(draws, ddof=1) / np.sqrt(ess(_split(draws))))
