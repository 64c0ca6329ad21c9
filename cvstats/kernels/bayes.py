"""Bayesian correlated t test of Benavoli, Corani, Demšar & Zaffalon (2017) (docs/beyond.md).

From ``J`` split-mean differences ``x_1..x_J`` (a contrast's test means) with
correlation ``ρ`` between splits, the posterior of the mean difference ``μ``
under the correlated Gaussian model and the non-informative prior is

    μ | x ~ t_{J-1}(x̄, (1/J + ρ/(1 - ρ)) S²)                          (Benavoli 2017, eq. 8)

(location ``x̄``, squared scale ``(1/J + ρ/(1-ρ)) S²``, ``S²`` the sample
variance), the Nadeau–Bengio corrected variance read as a posterior.
Plain numpy: the last axis indexes splits; every leading axis is a batch.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy
from numpy.typing import ArrayLike

from cvstats.checks import (
    ArgumentError,
    as_float_array,
    check_core_length,
    check_float_range,
    validate_alpha,
)
from cvstats.kernels.moments import sample_variance

__all__ = [
    "Posterior",
    "validate_rope",
    "validate_rho",
    "correlated_t_posterior",
    "posterior_probabilities",
    "credible_interval",
]


class Posterior(NamedTuple):
    """Student-t posterior of the mean difference: location, scale and df."""

    mean: np.ndarray
    scale: np.ndarray
    df: np.ndarray


def validate_rope(rope: float | tuple[float, float]) -> tuple[float, float]:
    """Return the region of practical equivalence as ``(low, high)``.

    A number ``r >= 0`` means ``(-r, r)``; a pair must have ``low <= high``.
    """
    if isinstance(rope, tuple | list):
        if len(rope) != 2:
            raise ArgumentError(f"`rope` must be a number or a pair (low, high), got {rope!r}.")
        low, high = (float(v) for v in rope)
    else:
        try:
            r = float(rope)
        except (TypeError, ValueError) as e:
            raise ArgumentError(f"`rope` must be a number or a pair, got {rope!r}.") from e
        if not np.isfinite(r):
            raise ArgumentError(f"`rope` must be a finite half-width >= 0, got {rope!r}.")
        if r < 0:
            raise ArgumentError(f"`rope` must be >= 0 (the half-width), got {rope!r}.")
        low, high = (-r, r) if r > 0 else (0.0, 0.0)
    if not (np.isfinite(low) and np.isfinite(high) and low <= high):
        raise ArgumentError(f"`rope` must be finite with low <= high, got {rope!r}.")
    return low, high


def validate_rho(rho: float) -> float:
    """Return `rho` as a float in [0, 1), else raise."""
    try:
        value = float(rho)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"`rho` must be a number in [0, 1), got {rho!r}.") from e
    if isinstance(rho, bool) or not 0.0 <= value < 1.0:
        raise ArgumentError(f"`rho` must be a number in [0, 1), got {rho!r}.")
    return value


def correlated_t_posterior(x: ArrayLike, *, rho: float) -> Posterior:
    """Posterior ``t_{J-1}(x̄, sqrt((1/J + ρ/(1-ρ)) S²))`` of the mean difference.

    Parameters
    ----------
    x : array_like
        Split-mean differences, splits on the last axis (``J >= 2``).
    rho : float
        Correlation between splits, in ``[0, 1)`` (``n2/n``, or ``1/K`` for k-fold).

    Returns
    -------
    Posterior
        ``(mean, scale, df)`` over the batch axes.

    Examples
    --------
    >>> post = correlated_t_posterior([0.1, 0.3, 0.2, 0.2], rho=0.25)
    >>> round(float(post.mean), 6), float(post.df)
    (0.2, 3.0)
    """
    arr = as_float_array(x, "x")
    check_core_length(arr.shape[-1], "x", "split means (J)", 2, "the Bayesian correlated t")
    rho = validate_rho(rho)
    J = arr.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):
        s2 = sample_variance(arr, name="x", what="split means (J)")
        scale = np.sqrt((1.0 / J + rho / (1.0 - rho)) * s2)
        mean = arr.mean(axis=-1)
    check_float_range(
        arr,
        s2,
        method="the Bayesian correlated t",
        what=f"the sample variance of the J = {J} split means",
        of="split means",
        estimate=mean,
    )
    df = np.full(mean.shape, J - 1.0)
    return Posterior(np.asarray(mean), np.asarray(scale), df)


def _tail(x: float, post: Posterior, upper: bool) -> np.ndarray:
    """``P(μ < x)`` (or ``P(μ > x)``); a point mass at the mean where the scale is zero."""
    mean, scale, df = (np.asarray(a, dtype=float) for a in post)
    point = scale == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (x - mean) / np.where(point, 1.0, scale)
    if upper:
        return np.where(point, (mean > x).astype(float), scipy.stats.t.sf(z, df))
    return np.where(point, (mean < x).astype(float), scipy.stats.t.cdf(z, df))


def posterior_probabilities(
    post: Posterior, rope: float | tuple[float, float] = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``P(μ < low)``, ``P(low <= μ <= high)``, ``P(μ > high)`` of the posterior.

    With a zero scale the posterior is a point mass at its mean; a point mass
    exactly on a bound of the rope counts as inside it.
    """
    low, high = validate_rope(rope)
    left = _tail(low, post, upper=False)
    right = _tail(high, post, upper=True)
    rope_p = np.clip(1.0 - left - right, 0.0, 1.0)
    return np.asarray(left)[()], np.asarray(rope_p)[()], np.asarray(right)[()]


def credible_interval(post: Posterior, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed ``1 - alpha`` credible interval of the posterior."""
    alpha = validate_alpha(alpha)
    q = scipy.stats.t.ppf(1.0 - alpha / 2.0, post.df)
    return (post.mean - q * post.scale)[()], (post.mean + q * post.scale)[()]
