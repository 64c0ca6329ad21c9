"""Naive correlation ``ρ0`` and political ratios (docs/theory.md §2–§4).

The political ratio of a variance estimator ``σ̂²`` for ``μ̂`` is
``Var[μ̂] / E[σ̂²]`` (docs/theory.md §2): above 1 the inference is liberal, below
1 conservative. Formulas of the table in docs/theory.md §4, for docs and
calibration tests. All functions broadcast over array arguments.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import ArgumentError, as_float_array, positive_array
from cvstats.kernels.reference import critical_value, survival

__all__ = [
    "rho0",
    "political_ratio_holdout",
    "political_ratio_resampled",
    "political_ratio_bootstrap",
    "political_ratio_corrected",
    "political_ratio_dietterich",
    "predicted_rejection_rate",
]


def _rho_iv(rho: ArrayLike) -> NDArray[np.float64]:
    arr = as_float_array(rho, "rho", min_ndim=0)
    bad = ~((arr >= 0) & (arr < 1))
    if np.any(bad):
        raise ArgumentError(
            f"`rho` must be in [0, 1) (a correlation between split means, docs/theory.md §2), "
            f"got {arr[bad].ravel()[:5].tolist()}."
        )
    return arr


def rho0(n1: ArrayLike, n2: ArrayLike) -> NDArray[np.float64]:
    """Naive correlation ``ρ0 = n2 / (n1 + n2)`` (docs/theory.md §3).

    Parameters
    ----------
    n1, n2 : array_like
        Training and test sizes (> 0).

    Returns
    -------
    ndarray
        ``ρ0``; note ``ρ0 / (1 - ρ0) = n2 / n1``.
    """
    n1 = positive_array(n1, "n1")
    n2 = positive_array(n2, "n2")
    return (n2 / (n1 + n2))[()]


def political_ratio_holdout(
    sigma0: ArrayLike, sigma3: ArrayLike, n2: ArrayLike
) -> NDArray[np.float64]:
    """Political ratio of the hold-out t, ``(n2 σ3 + σ0 - σ3)/(σ0 - σ3)`` (docs/theory.md §4).

    ``Var[μ̂_1] = σ1 = σ3 + (σ0 - σ3)/n2`` over ``E[S_L²/n2] = (σ0 - σ3)/n2``.

    Parameters
    ----------
    sigma0 : array_like
        ``σ0 = Var[L(j, i)]``.
    sigma3 : array_like
        ``σ3 = Cov[L(j, i), L(j, i')]``, ``0 <= σ3 < σ0``.
    n2 : array_like
        Test size.

    Returns
    -------
    ndarray
        The ratio (``>= 1``).
    """
    s0 = as_float_array(sigma0, "sigma0", min_ndim=0)
    s3 = as_float_array(sigma3, "sigma3", min_ndim=0)
    n2 = positive_array(n2, "n2")
    if np.any(~(s3 < s0)):
        raise ArgumentError("`sigma3` must be smaller than `sigma0` (σ3 <= σ1 <= σ0, §2).")
    return ((n2 * s3 + s0 - s3) / (s0 - s3))[()]


def political_ratio_resampled(J: ArrayLike, rho: ArrayLike) -> NDArray[np.float64]:
    """Political ratio of the resampled t, ``1 + Jρ/(1-ρ)`` (docs/theory.md §4, #2).

    From Lemma 1: ``Var[μ̂_J] = σ1 (ρ + (1-ρ)/J)`` and
    ``E[S²/J] = σ1 (1-ρ)/J``. Also the ratio of the bootstrap (#5).

    Parameters
    ----------
    J : array_like
        Number of splits.
    rho : array_like
        ``ρ = Corr[μ̂_j, μ̂_j']`` in ``[0, 1)``.

    Returns
    -------
    ndarray
        The ratio (``>= 1``).
    """
    J = positive_array(J, "J")
    rho = _rho_iv(rho)
    return (1.0 + J * rho / (1.0 - rho))[()]


def political_ratio_bootstrap(J: ArrayLike, rho: ArrayLike) -> NDArray[np.float64]:
    """Political ratio of the bootstrap, ``1 + Jρ/(1-ρ)`` (docs/theory.md §4, #5).

    ``σ̌²`` estimates the within-data variance of ``μ̂_J``,
    ``E[σ̌²] = σ1 (1-ρ)/J``; same ratio as :func:`political_ratio_resampled`.
    """
    return political_ratio_resampled(J, rho)


def political_ratio_corrected(
    J: ArrayLike, rho: ArrayLike, n1: ArrayLike, n2: ArrayLike
) -> NDArray[np.float64]:
    """Ratio of the corrected resampled t / bootstrap (docs/theory.md §4, #6 and #7).

    ``(1 + Jρ/(1-ρ)) / (1 + J n2/n1)``: equal to 1 when ``ρ = ρ0 = n2/(n1+n2)``,
    above 1 (liberal) when ``ρ > ρ0``, below 1 when ``ρ < ρ0``.

    Parameters
    ----------
    J : array_like
        Number of splits.
    rho : array_like
        True correlation of split means, in ``[0, 1)``.
    n1, n2 : array_like
        Training and test sizes.

    Returns
    -------
    ndarray
        The ratio.
    """
    J = positive_array(J, "J")
    n1 = positive_array(n1, "n1")
    n2 = positive_array(n2, "n2")
    return (political_ratio_resampled(J, rho) / (1.0 + J * n2 / n1))[()]


def political_ratio_dietterich(sigma1: ArrayLike, sigma4: ArrayLike) -> NDArray[np.float64]:
    """Political ratio of Dietterich's 5x2cv t, ``σ1 / (σ1 - σ4)`` (docs/theory.md §4, #3).

    ``σ4 = Cov[μ̃_(m), μ̃^c_(m)]`` is the covariance of the two half means of
    one replication (at ``n1 = n2 = n/2``), as Nadeau & Bengio (2003) define it
    after the 5x2 ratio (docs/theory.md §4); the ratio is
    ``Var[μ̃_(1)] / E[σ̂²_Diet]`` since ``E[(μ̃_(m) - μ̃^c_(m))²/2] = σ1 - σ4``.
    (The ``"t5"`` variant, whose numerator averages both halves, has ratio
    ``(σ1 + σ4)/(σ1 - σ4)`` instead.)

    Parameters
    ----------
    sigma1 : array_like
        ``σ1 = Var[μ̃_(m)]``.
    sigma4 : array_like
        ``σ4 = Cov[μ̃_(m), μ̃^c_(m)]``, ``σ4 < σ1``.

    Returns
    -------
    ndarray
        The ratio.
    """
    s1 = as_float_array(sigma1, "sigma1", min_ndim=0)
    s4 = as_float_array(sigma4, "sigma4", min_ndim=0)
    if np.any(~(s4 < s1)):
        raise ArgumentError("`sigma4` must be smaller than `sigma1`.")
    return (s1 / (s1 - s4))[()]


def predicted_rejection_rate(
    ratio: ArrayLike, df: ArrayLike, alpha: float = 0.05, alternative: str = "two-sided"
) -> NDArray[np.float64]:
    """Size of a test whose statistic is ``sqrt(ratio)`` times its reference variate.

    Under Lemma 2 (Gaussian, equicorrelated split means) the resampled and
    corrected resampled t statistics are exactly ``sqrt(PR) · T`` with
    ``T ~ t_{J-1}`` and ``PR`` their political ratio (Lemma 2.2: the
    resampled t is ``sqrt((1 + (J-1)ρ)/(1-ρ)) T`` and
    ``(1 + (J-1)ρ)/(1-ρ) = 1 + Jρ/(1-ρ)``); likewise the (corrected)
    bootstrap with ``T ~ t_{R-1}`` by Lemma 2.1. The actual size is then
    ``P(|T| > c / sqrt(PR))`` (two-sided) or ``P(T > c / sqrt(PR))``
    (one-sided), ``c`` the nominal critical value.

    Parameters
    ----------
    ratio : array_like
        Political ratio (> 0).
    df : array_like
        Degrees of freedom of the reference ``t`` (``inf`` = normal).
    alpha : float, default 0.05
        Nominal level.
    alternative : {"two-sided", "less", "greater"}
        Sidedness of the test.

    Returns
    -------
    ndarray
        The actual rejection rate under H0.
    """
    ratio = positive_array(ratio, "ratio")
    c = critical_value(df, alpha, alternative)
    df = np.broadcast_to(as_float_array(df, "df", min_ndim=0), np.shape(c))
    tail = survival(np.asarray(c / np.sqrt(ratio)), np.asarray(df, dtype=np.float64))
    return (2.0 * tail if alternative == "two-sided" else tail)[()]
