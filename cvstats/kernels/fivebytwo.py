"""Dietterich's 5x2cv t test, two variants and Alpaydın's combined F (docs/theory.md §4, method 3).

Input: half means ``p`` of shape ``(..., 5, 2)``; ``p[..., m, 0] = μ̃_(m)``,
the mean loss on ``D_m^c`` of the model trained on ``D_m``, and
``p[..., m, 1] = μ̃^c_(m)``, the mean loss on ``D_m`` of the model trained on
``D_m^c``. Replication ``m = 1`` of docs/theory.md §4 is index 0.

Floating-point range: a variance is a sum of squares, so half means beyond
about ``1e154`` (or below about ``1e-154``) in absolute value overflow (or
underflow) float64. Every test raises a :class:`~cvstats.errors.CubeError`
saying how to rescale the losses instead of returning an infinite or zero
standard error (:func:`~cvstats.checks.check_float_range`).

Agreement with Dietterich (1998). Dietterich writes, for replication ``m``,
``p̄_m = (p_m^(1) + p_m^(2))/2``, ``s_m² = (p_m^(1) - p̄_m)² + (p_m^(2) - p̄_m)²``
and ``t = p_1^(1) / sqrt((1/5) Σ_m s_m²)``. With ``a = p_m^(1)``,
``b = p_m^(2)``: ``a - p̄_m = (a - b)/2 = -(b - p̄_m)``, so
``s_m² = 2 (a - b)²/4 = (a - b)²/2`` and
``(1/5) Σ_m s_m² = (1/10) Σ_m (a - b)² = σ̂²_Diet`` of docs/theory.md §4: that
formula *is* Dietterich's (checked numerically in the tests). Its
``μ0`` only shifts the numerator: ``s_m²`` is invariant to subtracting
``μ0`` from both halves.

Sign convention of mlxtend (``paired_ttest_5x2cv``, ``combined_ftest_5x2cv``):
it uses *score* differences ``score_A - score_B`` (accuracy scale), i.e.
``-(L_A - L_B)`` for zero-one loss, with ``μ0 = 0``; its t is minus ours for
the loss contrast ``A - B``, its F equals ours.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cvstats.checks import (
    ArgumentError,
    as_float_array,
    check_float_range,
    difference,
    warn_if_zero,
)
from cvstats.errors import DesignError
from cvstats.kernels._core import FArrays, StatArrays, statistic_from_variance
from cvstats.kernels.reference import pvalue_f

__all__ = ["FIVE_BY_TWO_VARIANTS", "dietterich_variance", "dietterich_5x2_t", "alpaydin_f"]

#: Variants of the 5x2cv t test (docs/theory.md §4, method 3).
FIVE_BY_TWO_VARIANTS: tuple[str, ...] = ("dietterich", "t4", "t5")
_DIFFERENCES = "differences μ̃_(m) - μ̃^c_(m)"


def _p_iv(p: ArrayLike, method: str) -> np.ndarray:
    arr = as_float_array(p, "p", min_ndim=2)
    if arr.shape[-2:] != (5, 2):
        raise DesignError(
            f"{method} needs the 5x2cv half means as an array of shape (..., 5, 2) "
            "(five replications m, two sides: μ̃_(m) and μ̃^c_(m)), got shape "
            f"{arr.shape}."
        )
    return arr


def dietterich_variance(p: ArrayLike, *, drop_first: bool = False) -> np.ndarray:
    """``σ̂²_Diet = (1/10) Σ_{m=1..5} (μ̃_(m) - μ̃^c_(m))²`` (docs/theory.md §4, method 3).

    Parameters
    ----------
    p : array_like, shape (..., 5, 2)
        5x2cv half means.
    drop_first : bool, default False
        Drop ``m = 1`` and divide by 8 instead (variant (a), ``t_4``).

    Returns
    -------
    ndarray, shape (...)
        The variance estimate (equal to Dietterich's ``(1/5) Σ_m s_m²``).
    """
    arr = _p_iv(p, "dietterich_variance")
    d2 = (arr[..., 0] - arr[..., 1]) ** 2  # (..., 5) = 2 s_m²
    if drop_first:
        return np.sum(d2[..., 1:], axis=-1) / 8.0
    return np.sum(d2, axis=-1) / 10.0


def dietterich_5x2_t(
    p: ArrayLike, *, mu0: ArrayLike = 0.0, variant: str = "dietterich"
) -> StatArrays:
    """Dietterich's 5x2cv paired t test and two variants (docs/theory.md §4, method 3).

    * ``"dietterich"``: ``(μ̃_(1) - μ0) / σ̂_Diet`` against ``t_5``
      (Dietterich 1998; not truly ``t_5``: the numerator and the ``m = 1``
      term of ``σ̂²_Diet`` are dependent).
    * ``"t4"``: variant (a), same numerator, ``σ̂² = (1/8) Σ_{m=2..5} (μ̃_(m) -
      μ̃^c_(m))²``, ``t_4``.
    * ``"t5"``: variant (b), ``sqrt(2) ((μ̃_(1) + μ̃^c_(1))/2 - μ0) / σ̂_Diet``
      against ``t_5``. It is reported as ``estimate = (μ̃_(1) + μ̃^c_(1))/2``
      with ``stderr = σ̂_Diet / sqrt(2)`` so that ``statistic = (estimate -
      μ0) / stderr`` and ``estimate ± c·stderr`` is the matching interval.

    All target ``n/2 μ``.

    Parameters
    ----------
    p : array_like, shape (..., 5, 2)
        5x2cv half means (module docstring).
    mu0 : array_like, default 0
        Null value.
    variant : {"dietterich", "t4", "t5"}
        Which statistic.

    Returns
    -------
    StatArrays
        ``estimate``, ``stderr``, ``statistic``, ``df`` (5 or 4).

    Raises
    ------
    DesignError
        If `p` is not of shape ``(..., 5, 2)``.
    ArgumentError
        If `variant` is unknown.

    Warns
    -----
    ZeroVarianceWarning
        Where every used ``μ̃_(m) - μ̃^c_(m)`` is zero.
    """
    if variant not in FIVE_BY_TWO_VARIANTS:
        raise ArgumentError(
            f"`variant` must be one of {list(FIVE_BY_TWO_VARIANTS)}, got {variant!r}."
        )
    arr = _p_iv(p, "5x2cv t")
    # float64 overflow gives inf, turned into an error with advice below
    with np.errstate(over="ignore", invalid="ignore"):
        diff = difference(arr[..., 0], arr[..., 1])  # (..., 5): μ̃_(m) - μ̃^c_(m)
        used = diff
        if variant == "t4":
            var = dietterich_variance(arr, drop_first=True)
            estimate, df = arr[..., 0, 0], 4
            which = "m = 2..5"
            used = diff[..., 1:]
        elif variant == "t5":
            var = dietterich_variance(arr) / 2.0
            estimate, df = (arr[..., 0, 0] + arr[..., 0, 1]) / 2.0, 5
            which = "m = 1..5"
        else:
            var = dietterich_variance(arr)
            estimate, df = arr[..., 0, 0], 5
            which = "m = 1..5"
    return statistic_from_variance(
        estimate,
        var,
        df,
        mu0,
        method=f"5x2cv t ({variant})",
        what="the 5x2cv variance σ̂²_Diet",
        why=f"μ̃_(m) equals μ̃^c_(m) for every {which}",
        values=used,
        of=_DIFFERENCES,
        centred=False,
    )


def alpaydin_f(p: ArrayLike, *, mu0: ArrayLike = 0.0) -> FArrays:
    """Alpaydın's (1999) combined 5x2cv F test (docs/theory.md §4, method 3).

    With ``p_m^(1) = μ̃_(m) - μ0``, ``p_m^(2) = μ̃^c_(m) - μ0``,
    ``s_m² = (p_m^(1) - p̄_m)² + (p_m^(2) - p̄_m)²``:
    ``F = Σ_m Σ_k (p_m^(k))² / (2 Σ_m s_m²)`` against ``F(10, 5)``, rejecting
    for large ``F`` (upper-tail p-value). Two-sided by nature; no estimate,
    standard error or interval of its own.

    Parameters
    ----------
    p : array_like, shape (..., 5, 2)
        5x2cv half means.
    mu0 : array_like, default 0
        Null value, subtracted from every half mean.

    Returns
    -------
    FArrays
        ``statistic``, ``dfn = 10``, ``dfd = 5``, ``pvalue``.

    Warns
    -----
    ZeroVarianceWarning
        Where ``Σ_m s_m² = 0``.
    """
    arr = _p_iv(p, "Alpaydın's F")
    mu0 = as_float_array(mu0, "mu0", min_ndim=0)
    # float64 overflow gives inf, turned into an error with advice below
    with np.errstate(over="ignore", invalid="ignore"):
        centred = arr - mu0[..., None, None]
        pbar = np.mean(centred, axis=-1, keepdims=True)
        s2 = np.sum((centred - pbar) ** 2, axis=-1)  # (..., 5)
        denom = 2.0 * np.sum(s2, axis=-1)
        numerator = np.sum(centred**2, axis=(-2, -1))
        diff = difference(arr[..., 0], arr[..., 1])
    # exact zero when the two halves agree in every replication
    denom = np.where(np.all(arr[..., 0] == arr[..., 1], axis=-1), 0.0, denom)
    what = "the denominator 2 Σ_m s_m²"
    check_float_range(
        diff, denom, method="Alpaydın's F", what=what, of=_DIFFERENCES, centred=False
    )
    check_float_range(
        centred.reshape(*centred.shape[:-2], 10),
        numerator,
        method="Alpaydın's F",
        what="the numerator Σ_m Σ_k (p_m^(k))²",
        of="half means minus mu0",
        centred=False,
    )
    warn_if_zero(
        denom,
        "Alpaydın's F",
        "the denominator 2 Σ_m s_m²",
        "μ̃_(m) equals μ̃^c_(m) for every m",
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        f = numerator / denom
    shape = f.shape
    dfn = np.full(shape, 10.0)
    dfd = np.full(shape, 5.0)
    return FArrays(f, dfn, dfd, np.asarray(pvalue_f(f, dfn, dfd)).reshape(shape))
