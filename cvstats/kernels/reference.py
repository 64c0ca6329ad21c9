"""Reference distributions: p-values, critical values, intervals (docs/theory.md §4).

Every test of docs/theory.md §4 rejects ``H0: μ = μ0`` when
``|μ̂ - μ0| / sqrt(σ̂²) > c`` and reports the interval ``μ̂ ± c sqrt(σ̂²)``,
where ``c`` is a quantile of ``N(0, 1)`` (``df = inf``) or Student ``t_df``.
``alternative`` follows scipy: ``"less"`` means ``H1: μ < μ0``,
``"greater"`` means ``H1: μ > μ0``; one-sided intervals have an infinite
bound, as in :meth:`scipy.stats._result_classes.TtestResult.confidence_interval`.
"""

from __future__ import annotations

import numpy as np
import scipy
from numpy.typing import ArrayLike, NDArray
from scipy import special

from cvstats.checks import (
    ArgumentError,
    as_float_array,
    validate_alpha,
    validate_alternative,
)

__all__ = ["pvalue", "critical_value", "conf_int", "pvalue_f"]


def _df_iv(df: ArrayLike, name: str = "df") -> NDArray[np.float64]:
    arr = as_float_array(df, name, min_ndim=0)
    bad = arr <= 0
    if np.any(bad):
        raise ArgumentError(
            f"`{name}` must be > 0 (use inf for the normal distribution), got "
            f"{arr[bad].ravel()[:5].tolist()}."
        )
    return arr


def survival(x: NDArray[np.float64], df: NDArray[np.float64]) -> NDArray[np.float64]:
    """Survival function of ``t_df``, normal where ``df`` is infinite.

    scipy's own functions, called as ``scipy.stats.t.sf`` and
    ``scipy.stats.norm.sf`` call them (``stdtr(df, -x)``, ``ndtr(-x)``), without
    the distribution objects' argument handling, which costs far more than the
    function on the few values of a test (equal to them, tested).
    """
    x, df = np.asarray(x, dtype=np.float64), np.asarray(df, dtype=np.float64)
    normal = np.isinf(df)
    return np.where(normal, special.ndtr(-x), special.stdtr(np.where(normal, 1.0, df), -x))


def _isf(q: float, df: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse survival function of ``t_df``, normal where ``df`` is infinite.

    ``-stdtrit(df, q)`` and ``-ndtri(q)``, as ``scipy.stats.t.isf`` and
    ``scipy.stats.norm.isf`` compute them for ``0 < q < 1``; ``+inf`` at
    ``q = 0`` (a level ``alpha`` so small that ``alpha / 2`` underflows) and
    ``-inf`` at ``q = 1``, the bounds of the support, as scipy gives them.
    """
    df = np.asarray(df, dtype=np.float64)
    if q <= 0.0 or q >= 1.0:
        return np.where(np.isnan(df), np.nan, np.inf if q <= 0.0 else -np.inf)
    normal = np.isinf(df)
    return np.where(normal, -special.ndtri(q), -special.stdtrit(np.where(normal, 1.0, df), q))


def pvalue(
    statistic: ArrayLike, df: ArrayLike = np.inf, alternative: str = "two-sided"
) -> NDArray[np.float64]:
    """P-value of a t or z statistic (docs/theory.md §4).

    Parameters
    ----------
    statistic : array_like
        ``(μ̂ - μ0) / sqrt(σ̂²)``.
    df : array_like, default inf
        Degrees of freedom, broadcastable with `statistic`; ``inf`` gives
        the standard normal.
    alternative : {"two-sided", "less", "greater"}
        ``"two-sided"``: ``2 P(T >= |t|)``; ``"less"``: ``P(T <= t)``;
        ``"greater"``: ``P(T >= t)``.

    Returns
    -------
    ndarray
        The p-values (nan where `statistic` or `df` is nan).

    Raises
    ------
    ArgumentError
        If `alternative` is invalid or some ``df <= 0``.
    """
    alternative = validate_alternative(alternative)
    t = as_float_array(statistic, "statistic", min_ndim=0)
    df = _df_iv(df)
    t, df = np.broadcast_arrays(t, df)
    if alternative == "two-sided":
        p = np.minimum(2.0 * survival(np.abs(t), df), 1.0)
    elif alternative == "greater":
        p = survival(t, df)
    else:
        p = survival(-t, df)
    return p[()]


def critical_value(
    df: ArrayLike, alpha: float = 0.05, alternative: str = "two-sided"
) -> NDArray[np.float64]:
    """Critical value ``c`` of a level-`alpha` test (docs/theory.md §4).

    Parameters
    ----------
    df : array_like
        Degrees of freedom (``inf`` = normal).
    alpha : float, default 0.05
        Level, in (0, 1).
    alternative : {"two-sided", "less", "greater"}
        Two-sided: ``t_{df, 1-α/2}``; one-sided: ``t_{df, 1-α}``. Always
        positive: reject when ``|t|`` (two-sided), ``-t`` (less) or ``t``
        (greater) exceeds it.

    Returns
    -------
    ndarray
        ``c``, with the shape of `df`.
    """
    alternative = validate_alternative(alternative)
    alpha = validate_alpha(alpha)
    df = _df_iv(df)
    q = alpha / 2.0 if alternative == "two-sided" else alpha
    return _isf(q, df)[()]


def conf_int(
    estimate: ArrayLike,
    stderr: ArrayLike,
    df: ArrayLike,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Confidence interval ``μ̂ ± c sqrt(σ̂²)`` at level ``1 - alpha`` (docs/theory.md §4).

    Parameters
    ----------
    estimate, stderr, df : array_like
        Broadcastable arrays: ``μ̂``, ``sqrt(σ̂²)`` and the degrees of freedom.
    alpha : float, default 0.05
        One minus the confidence level.
    alternative : {"two-sided", "less", "greater"}
        ``"less"`` gives ``(-inf, μ̂ + t_{1-α} se]``, ``"greater"`` gives
        ``[μ̂ - t_{1-α} se, inf)`` (the intervals that invert the one-sided
        tests, as scipy's ``ttest_1samp(...).confidence_interval()``).

    Returns
    -------
    lower, upper : ndarray
        The bounds, broadcast to one shape.
    """
    alternative = validate_alternative(alternative)
    alpha = validate_alpha(alpha)
    est = as_float_array(estimate, "estimate", min_ndim=0)
    se = as_float_array(stderr, "stderr", min_ndim=0)
    c = critical_value(df, alpha, alternative)
    est, se, c = np.broadcast_arrays(est, se, c)
    with np.errstate(invalid="ignore"):
        half = c * se
    lower = est - half
    upper = est + half
    if alternative == "less":
        lower = np.full_like(est, -np.inf)
    elif alternative == "greater":
        upper = np.full_like(est, np.inf)
    return lower[()], upper[()]


def pvalue_f(statistic: ArrayLike, dfn: ArrayLike, dfd: ArrayLike) -> NDArray[np.float64]:
    """Upper-tail p-value ``P(F(dfn, dfd) >= statistic)`` (docs/theory.md §4, Alpaydın's F).

    Parameters
    ----------
    statistic : array_like
        F statistics (``inf`` gives 0, nan gives nan).
    dfn, dfd : array_like
        Numerator and denominator degrees of freedom (> 0).

    Returns
    -------
    ndarray
        The p-values.
    """
    f = as_float_array(statistic, "statistic", min_ndim=0)
    dfn = _df_iv(dfn, "dfn")
    dfd = _df_iv(dfd, "dfd")
    return np.asarray(scipy.stats.f.sf(f, dfn, dfd))[()]
