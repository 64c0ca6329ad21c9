"""Pearson correlation across datasets and its Fisher-z interval (docs/theory.md §1).

:func:`cvstats.across.conditional.cv_bias` correlates the cross-validation
estimate ``E_π[ε̂]_t`` of each dataset ``t`` with its conditional error
``εc_t`` (the survey seed, ``conditional-vs-unconditional.txt``): a correlation
near zero says that CV tracks the learner's unconditional error rather than the
error of the model at hand. These are the two formulas behind it.

No xarray here: the sample axis (the datasets) is the last one, every leading
axis is a batch axis.

References
----------
R. A. Fisher (1915). Frequency distribution of the values of the correlation
coefficient in samples from an indefinitely large population. *Biometrika*
10(4), 507–521.

R. A. Fisher (1921). On the "probable error" of a coefficient of correlation
deduced from a small sample. *Metron* 1, 3–32.
"""

from __future__ import annotations

import numpy as np
import scipy
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import check_int, validate_alpha

__all__ = ["pearson_r", "fisher_z_interval"]


def pearson_r(x: ArrayLike, y: ArrayLike) -> NDArray[np.floating]:
    """Pearson correlation of `x` and `y` along the last axis.

    ``r = Σ (x_i - x̄)(y_i - ȳ) / sqrt(Σ (x_i - x̄)² Σ (y_i - ȳ)²)``, the
    sample correlation coefficient (Fisher 1915), computed in the dtype of the
    inputs.

    Parameters
    ----------
    x, y : array_like, shape (..., N)
        The paired samples, the ``N`` pairs on the last axis; leading axes
        broadcast against each other and are batch axes.

    Returns
    -------
    ndarray, shape (...)
        ``r`` of each batch element; NaN where ``x`` or ``y`` has zero variance
        (the correlation is undefined there), or holds NaN.

    See Also
    --------
    scipy.stats.pearsonr : The same statistic, one pair of samples at a time
        (with a p-value and a confidence interval).

    Examples
    --------
    >>> from cvstats.kernels.correlation import pearson_r
    >>> pearson_r([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[2.0, 4.0, 7.0], [5.0, 5.0, 5.0]])
    array([0.99339927,        nan])
    """
    x = np.asarray(x)
    y = np.asarray(y)
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    den = np.sqrt(np.sum(xc**2, axis=-1) * np.sum(yc**2, axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, np.sum(xc * yc, axis=-1) / den, np.nan)


def fisher_z_interval(
    r: ArrayLike, n: int, alpha: float = 0.05
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """Fisher-z confidence interval of a Pearson correlation from ``n`` pairs.

    ``z = arctanh(r)`` is approximately normal with standard error
    ``1/sqrt(n - 3)`` (Fisher 1915, 1921), so the level ``1 - alpha`` interval
    is ``tanh(z ∓ z_{1-α/2} / sqrt(n - 3))``. ``r`` is clipped to ``[-1, 1]``
    first (a rounding error beyond it would give NaN); ``r = ±1`` gives the
    degenerate interval ``(±1, ±1)``.

    This is the two-sided interval of
    ``scipy.stats.pearsonr(x, y).confidence_interval(1 - alpha)``, except that
    ``n <= 3`` gives NaN here where scipy returns ``(-1, 1)``.

    Parameters
    ----------
    r : array_like
        Correlations, e.g. from :func:`pearson_r`; any shape.
    n : int
        Number of pairs each correlation was computed from (``>= 1``).
    alpha : float, default 0.05
        One minus the confidence level, in (0, 1).

    Returns
    -------
    lower, upper : ndarray
        The bounds, with the shape of `r`; NaN where `r` is NaN, and everywhere
        when ``n <= 3`` (no standard error).

    Raises
    ------
    ArgumentError
        If `n` is not an int ``>= 1`` or `alpha` is not in (0, 1).

    Examples
    --------
    >>> from cvstats.kernels.correlation import fisher_z_interval
    >>> lo, hi = fisher_z_interval(0.5, 28)  # z ± 1.96/5
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.156, 0.7358)
    """
    n = check_int("n", n, 1)
    alpha = validate_alpha(alpha)
    r = np.asarray(r)
    if not np.issubdtype(r.dtype, np.floating):
        r = r.astype(np.float64)
    if n <= 3:
        nan = np.full_like(r, np.nan)
        return nan, nan
    half = scipy.stats.norm.isf(alpha / 2) / np.sqrt(n - 3)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.arctanh(np.clip(r, -1.0, 1.0))
    return np.tanh(z - half), np.tanh(z + half)
