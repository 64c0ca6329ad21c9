"""The return type of the test kernels and the one place that forms a statistic."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import as_float_array, check_float_range, warn_if_zero
from cvstats.errors import ArgumentError

__all__ = ["StatArrays", "FArrays", "statistic_from_variance"]


class StatArrays(NamedTuple):
    """Plain arrays of a location test, all broadcast to one shape.

    Attributes
    ----------
    estimate : ndarray
        ``μ̂``, the point estimate.
    stderr : ndarray
        ``sqrt(σ̂²)``, its estimated standard error.
    statistic : ndarray
        ``(μ̂ - μ0) / stderr``.
    df : ndarray
        Degrees of freedom of the reference distribution (``inf`` = normal).
    """

    estimate: NDArray[np.float64]
    stderr: NDArray[np.float64]
    statistic: NDArray[np.float64]
    df: NDArray[np.float64]


class FArrays(NamedTuple):
    """Plain arrays of an F test (upper-tail p-value), all of one shape.

    Attributes
    ----------
    statistic : ndarray
        The F statistic.
    dfn, dfd : ndarray
        Numerator and denominator degrees of freedom.
    pvalue : ndarray
        ``P(F(dfn, dfd) >= statistic)``.
    """

    statistic: NDArray[np.float64]
    dfn: NDArray[np.float64]
    dfd: NDArray[np.float64]
    pvalue: NDArray[np.float64]


def check_statistic(
    estimate: NDArray[np.float64],
    stderr: NDArray[np.float64],
    statistic: NDArray[np.float64],
    mu0: ArrayLike,
    method: str,
) -> None:
    """Refuse a statistic ``(μ̂ - μ0) / se`` that overflowed float64 (a ``mu0`` off the scale).

    Where the estimate and a positive standard error are finite, an infinite
    statistic is float64 overflowing, not evidence: ``mu0`` is so far from the
    estimate (e.g. ``1e308`` for losses near 1) that ``μ̂ - μ0`` or its ratio to
    ``se`` exceeds the largest float64, and the p-value would be 0 by overflow.

    Raises
    ------
    ArgumentError
        Naming ``mu0``, an estimate and its standard error.
    """
    mu0 = np.asarray(mu0, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = np.isinf(statistic) & np.isfinite(estimate) & np.isfinite(stderr) & (stderr > 0)
    if not bad.any():
        return
    at = np.unravel_index(int(np.argmax(bad)), bad.shape)
    given = float(np.broadcast_to(mu0, bad.shape)[at])
    raise ArgumentError(
        f"{method}: `mu0` = {given!r} is so far from the estimate ({float(estimate[at]):.6g}, "
        f"standard error {float(stderr[at]):.6g}) that (estimate - mu0) / stderr overflows "
        "float64: the statistic would be infinite and the p-value 0 by overflow, not by "
        "evidence. Pass a mu0 on the scale of the losses (the difference or value the test "
        "is against, e.g. 0 or 0.01)."
    )


def statistic_from_variance(
    estimate: ArrayLike,
    variance: ArrayLike,
    df: ArrayLike,
    mu0: ArrayLike,
    *,
    method: str,
    what: str,
    why: str,
    values: ArrayLike | None = None,
    of: str = "values",
    centred: bool = True,
) -> StatArrays:
    """Form ``(μ̂ - μ0) / sqrt(σ̂²)`` (docs/theory.md §4, the common form of every test).

    Warns with :class:`~cvstats.errors.ZeroVarianceWarning` (message built
    from `method`, `what`, `why`) where ``σ̂² = 0``; the statistic there is
    ``±inf``, or ``nan`` where ``μ̂ = μ0``. No RuntimeWarning leaks.

    With `values` (the numbers ``(..., K)`` whose squares, or squared
    deviations when `centred`, make up ``σ̂²``; `of` names them), a variance
    or estimate that overflowed float64, or a variance that underflowed while
    the values differ, raises a :class:`~cvstats.errors.CubeError` first
    (:func:`~cvstats.checks.check_float_range`), so that neither
    a wrong statistic nor a misleading zero-variance warning comes out.
    """
    estimate = as_float_array(estimate, "estimate", min_ndim=0)
    variance = as_float_array(variance, "variance", min_ndim=0)
    mu0 = as_float_array(mu0, "mu0", min_ndim=0)
    if values is not None:
        check_float_range(
            values, variance, method=method, what=what, of=of, centred=centred, estimate=estimate
        )
    warn_if_zero(variance, method, what, why)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        stderr = np.sqrt(variance)
        statistic = (estimate - mu0) / stderr
    check_statistic(estimate, stderr, statistic, mu0, method)
    df = as_float_array(df, "df", min_ndim=0)
    shape = np.broadcast_shapes(estimate.shape, stderr.shape, statistic.shape, df.shape)
    return StatArrays(
        *(np.array(np.broadcast_to(a, shape)) for a in (estimate, stderr, statistic, df))
    )
