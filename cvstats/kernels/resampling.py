"""Tests built from split means: methods 2, 4, 5, 6, 7 and the k-fold tests (docs/theory.md §4).

Every function takes arrays whose *last* axes are the core dims and is
vectorized over any leading batch dims. ``n1``, ``n2`` and ``mu0`` may be
scalars or arrays broadcastable to the batch shape. Each returns a
:class:`~cvstats.kernels.StatArrays` ``(estimate, stderr, statistic, df)``;
p-values and intervals come from :mod:`cvstats.kernels.reference`.

Floating-point range: a variance is a sum of squares, so split means beyond
about ``1e154`` (or below about ``1e-154``) in absolute value overflow (or
underflow) float64. Every test raises a :class:`~cvstats.errors.CubeError`
saying how to rescale the losses instead of returning an infinite or zero
standard error (:func:`~cvstats.checks.check_float_range`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cvstats.checks import (
    ArgumentError,
    as_float_array,
    check_core_length,
    difference,
    positive_array,
)
from cvstats.errors import DesignError
from cvstats.kernels._core import StatArrays, statistic_from_variance
from cvstats.kernels.moments import sample_variance

__all__ = [
    "resampled_t",
    "corrected_resampled_t",
    "bootstrap_t",
    "corrected_bootstrap_t",
    "conservative_z",
    "kfold_t",
    "corrected_repeated_kfold_t",
]


def _split_means_iv(mu: ArrayLike, name: str, method: str) -> np.ndarray:
    arr = as_float_array(mu, name)
    check_core_length(arr.shape[-1], name, "split means (J)", 2, method)
    return arr


def _resampled(arr: np.ndarray, factor: ArrayLike, mu0: ArrayLike, method: str) -> StatArrays:
    """``μ̂_J`` and ``factor · S²_{μ̂_j}`` with ``t_{J-1}`` from validated split means."""
    J = arr.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        s2 = sample_variance(arr, name="mu", what="split means (J)")
        estimate = np.mean(arr, axis=-1)
        variance = factor * s2
    return statistic_from_variance(
        estimate,
        variance,
        J - 1,
        mu0,
        method=method,
        what=f"the sample variance of the J = {J} split means",
        why="all J split means are equal",
        values=arr,
        of="split means",
    )


def resampled_t(mu: ArrayLike, *, mu0: ArrayLike = 0.0) -> StatArrays:
    """Resampled t test (docs/theory.md §4, method 2).

    ``μ̂ = μ̂_J = (1/J) Σ_j μ̂_j``, ``σ̂² = S²_{μ̂_j} / J``, reference ``t_{J-1}``.
    Valid only for the conditional quantity ``E[μ̂_J | Z_1^n]``: for ``n1μ``
    its political ratio is ``1 + Jρ/(1-ρ) > 1`` (liberal). Numerically
    identical to ``scipy.stats.ttest_1samp(mu, mu0, axis=-1)``.

    Parameters
    ----------
    mu : array_like, shape (..., J)
        Split means ``μ̂_j``, ``J >= 2``.
    mu0 : array_like, default 0
        Null value, broadcastable to the batch shape ``(...)``.

    Returns
    -------
    StatArrays
        ``estimate = μ̂_J``, ``stderr = sqrt(S²/J)``, ``statistic``, ``df = J - 1``.

    Warns
    -----
    ZeroVarianceWarning
        Where all ``J`` split means are equal.

    Examples
    --------
    >>> from cvstats.kernels import resampled_t, pvalue
    >>> r = resampled_t([0.1, 0.2, 0.3, 0.4])
    >>> round(float(r.statistic), 6), float(r.df)  # sqrt(15), J - 1
    (3.872983, 3.0)
    >>> round(float(pvalue(r.statistic, r.df)), 4)
    0.0305
    """
    arr = _split_means_iv(mu, "mu", "resampled t")
    return _resampled(arr, 1.0 / arr.shape[-1], mu0, "resampled t")


def corrected_resampled_t(
    mu: ArrayLike, n1: ArrayLike, n2: ArrayLike, *, mu0: ArrayLike = 0.0
) -> StatArrays:
    """Corrected resampled t test of Nadeau & Bengio (docs/theory.md §4, method 6).

    ``μ̂ = μ̂_J``, ``σ̂² = (1/J + n2/n1) S²_{μ̂_j}`` (the unbiased
    ``(1/J + ρ/(1-ρ)) S²`` with ``ρ0 = n2/(n1 + n2)`` plugged in, §3),
    reference ``t_{J-1}``; exact under Lemma 2 when ``ρ = ρ0``.

    Parameters
    ----------
    mu : array_like, shape (..., J)
        Split means ``μ̂_j``, ``J >= 2``.
    n1, n2 : array_like
        Training and test sizes (> 0), broadcastable to the batch shape.
    mu0 : array_like, default 0
        Null value.

    Returns
    -------
    StatArrays
        ``estimate = μ̂_J``, ``stderr = sqrt((1/J + n2/n1) S²)``,
        ``statistic``, ``df = J - 1``.

    Warns
    -----
    ZeroVarianceWarning
        Where all ``J`` split means are equal.

    Examples
    --------
    >>> import numpy as np
    >>> from cvstats.kernels import corrected_resampled_t, conf_int
    >>> mu = np.array([[0.1, 0.2, 0.3, 0.4], [0.2, 0.2, 0.3, 0.3]])  # 2 datasets, J = 4
    >>> r = corrected_resampled_t(mu, n1=90, n2=10)
    >>> r.statistic.round(4)
    array([3.2225, 7.2058])
    >>> lower, upper = conf_int(r.estimate, r.stderr, r.df, alpha=0.05)
    >>> lower.round(4), upper.round(4)
    (array([0.0031, 0.1396]), array([0.4969, 0.3604]))
    """
    n1 = positive_array(n1, "n1")
    n2 = positive_array(n2, "n2")
    arr = _split_means_iv(mu, "mu", "corrected resampled t")
    return _resampled(arr, 1.0 / arr.shape[-1] + n2 / n1, mu0, "corrected resampled t")


def _bootstrap_iv(
    mu_main: ArrayLike, mu_rep: ArrayLike, method: str
) -> tuple[np.ndarray, np.ndarray]:
    main = as_float_array(mu_main, "mu_main")
    rep = as_float_array(mu_rep, "mu_rep", min_ndim=2)
    check_core_length(rep.shape[-2], "mu_rep", "replicates (R) on axis -2", 2, method)
    if rep.shape[-1] != main.shape[-1]:
        raise DesignError(
            f"{method}: every replicate must recompute μ̂_J with the same J as the main "
            f"resampling; `mu_main` has J = {main.shape[-1]} split means but `mu_rep` has "
            f"{rep.shape[-1]} per replicate (shape {rep.shape})."
        )
    return main, rep


def _bootstrap(
    mu_main: ArrayLike,
    mu_rep: ArrayLike,
    n1: ArrayLike | None,
    n2: ArrayLike | None,
    mu0: ArrayLike,
    method: str,
) -> StatArrays:
    main, rep = _bootstrap_iv(mu_main, mu_rep, method)
    J = main.shape[-1]
    R = rep.shape[-2]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        replicate_means = np.mean(rep, axis=-1)  # μ̌_r, shape (..., R)
        var = sample_variance(replicate_means, name="mu_rep", what="replicates (R)")
        if n1 is not None and n2 is not None:
            var = (1.0 + J * positive_array(n2, "n2") / positive_array(n1, "n1")) * var
        estimate = np.mean(main, axis=-1)
    return statistic_from_variance(
        estimate,
        var,
        R - 1,
        mu0,
        method=method,
        what=f"the sample variance σ̌² of the R = {R} replicate estimates",
        why="all R replicate means μ̌_r are equal",
        values=replicate_means,
        of="replicate means μ̌_r",
    )


def bootstrap_t(mu_main: ArrayLike, mu_rep: ArrayLike, *, mu0: ArrayLike = 0.0) -> StatArrays:
    """Bootstrap (resampling-replicates) test (docs/theory.md §4, method 5).

    ``μ̂ = μ̂_J`` from the main resampling; ``σ̌²`` = sample variance of the
    ``R`` replicate estimates ``μ̌_r`` (each the mean of ``J`` fresh split
    means); reference ``t_{R-1}``. Political ratio ``1 + Jρ/(1-ρ)``.

    Parameters
    ----------
    mu_main : array_like, shape (..., J)
        Split means of the main resampling.
    mu_rep : array_like, shape (..., R, J)
        Split means of the ``R >= 2`` replicate resamplings (same ``J``).
    mu0 : array_like, default 0
        Null value.

    Returns
    -------
    StatArrays
        ``estimate = μ̂_J``, ``stderr = σ̌``, ``statistic``, ``df = R - 1``.

    Raises
    ------
    DesignError
        If ``R < 2`` or the replicates do not have ``J`` split means each.

    Warns
    -----
    ZeroVarianceWarning
        Where all ``R`` replicate estimates are equal.
    """
    return _bootstrap(mu_main, mu_rep, None, None, mu0, "bootstrap")


def corrected_bootstrap_t(
    mu_main: ArrayLike,
    mu_rep: ArrayLike,
    n1: ArrayLike,
    n2: ArrayLike,
    *,
    mu0: ArrayLike = 0.0,
) -> StatArrays:
    """Corrected bootstrap test (docs/theory.md §4, method 7).

    As :func:`bootstrap_t` with ``σ̂² = (1 + J n2/n1) σ̌²``
    (``(1 + Jρ/(1-ρ)) σ̌²`` with ``ρ0``), reference ``t_{R-1}``. Exact by
    Lemma 2.1 when the ``R + 1`` estimates are jointly Gaussian and ``ρ = ρ0``
    (their pairwise correlation is then ``π`` with ``1/(1-π) = 1 + Jρ/(1-ρ)``).

    Parameters
    ----------
    mu_main : array_like, shape (..., J)
        Split means of the main resampling.
    mu_rep : array_like, shape (..., R, J)
        Split means of the replicate resamplings.
    n1, n2 : array_like
        Training and test sizes (> 0), broadcastable to the batch shape.
    mu0 : array_like, default 0
        Null value.

    Returns
    -------
    StatArrays
        ``estimate = μ̂_J``, ``stderr = sqrt((1 + J n2/n1) σ̌²)``,
        ``statistic``, ``df = R - 1``.
    """
    return _bootstrap(mu_main, mu_rep, n1, n2, mu0, "corrected bootstrap")


def conservative_z(mu_main: ArrayLike, mu_half: ArrayLike, *, mu0: ArrayLike = 0.0) -> StatArrays:
    """Conservative Z test (docs/theory.md §4, method 4, eq. 11).

    ``μ̂ = μ̂_J`` from the main resampling. For each of the ``M`` half-splits,
    ``μ̂_(m)`` and ``μ̂^c_(m)`` are the means of the ``J`` inner split means
    computed inside ``D_m`` and ``D_m^c``;
    ``σ̂²_cz = (1/2M) Σ_m (μ̂_(m) - μ̂^c_(m))²``; reference ``N(0, 1)``.

    Parameters
    ----------
    mu_main : array_like, shape (..., J)
        Split means of the main resampling.
    mu_half : array_like, shape (..., M, 2, J')
        Inner split means: ``mu_half[..., m, 0, :]`` inside ``D_m`` (giving
        ``μ̂_(m)``), ``mu_half[..., m, 1, :]`` inside ``D_m^c`` (``μ̂^c_(m)``).
        ``J'`` is normally ``J``; it is not required to be.
    mu0 : array_like, default 0
        Null value.

    Returns
    -------
    StatArrays
        ``estimate = μ̂_J``, ``stderr = σ̂_cz``, ``statistic``, ``df = inf``.

    Raises
    ------
    DesignError
        If axis -2 of `mu_half` does not have length 2.

    Warns
    -----
    ZeroVarianceWarning
        Where ``μ̂_(m) = μ̂^c_(m)`` for every ``m``.
    """
    main = as_float_array(mu_main, "mu_main")
    half = as_float_array(mu_half, "mu_half", min_ndim=3)
    if half.shape[-2] != 2:
        raise DesignError(
            "conservative Z: `mu_half` must have shape (..., M, 2, J) with the two sides "
            f"(D_m, D_m^c) on axis -2, got shape {half.shape}."
        )
    M = half.shape[-3]
    check_core_length(M, "mu_half", "half-splits (M) on axis -3", 1, "conservative Z")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        side_means = np.mean(half, axis=-1)  # (..., M, 2)
        diff = difference(side_means[..., 0], side_means[..., 1])
        var = np.sum(diff**2, axis=-1) / (2 * M)
        estimate = np.mean(main, axis=-1)
    return statistic_from_variance(
        estimate,
        var,
        np.inf,
        mu0,
        method="conservative Z",
        what=f"σ̂²_cz over the M = {M} half-splits",
        why="μ̂_(m) equals μ̂^c_(m) for every half-split m",
        values=diff,
        of="half-split differences μ̂_(m) - μ̂^c_(m)",
        centred=False,
    )


def kfold_t(fold_means: ArrayLike, *, mu0: ArrayLike = 0.0) -> StatArrays:
    """Naive k-fold cross-validation t test (docs/theory.md §4, extra tests).

    ``μ̂`` = mean of the ``K`` fold means, ``σ̂² = S²_folds / K``, ``t_{K-1}``
    (the formula of the resampled t applied to folds).

    Parameters
    ----------
    fold_means : array_like, shape (..., K)
        Test means of the ``K >= 2`` folds.
    mu0 : array_like, default 0
        Null value.

    Returns
    -------
    StatArrays
        ``estimate``, ``stderr = sqrt(S²/K)``, ``statistic``, ``df = K - 1``.
    """
    arr = as_float_array(fold_means, "fold_means")
    check_core_length(arr.shape[-1], "fold_means", "folds (K)", 2, "k-fold t")
    K = arr.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        s2 = sample_variance(arr, name="fold_means", what="folds (K)")
        estimate = np.mean(arr, axis=-1)
    return statistic_from_variance(
        estimate,
        s2 / K,
        K - 1,
        mu0,
        method="k-fold t",
        what=f"the sample variance of the K = {K} fold means",
        why="all K fold means are equal",
        values=arr,
        of="fold means",
    )


def corrected_repeated_kfold_t(
    fold_means: ArrayLike, k: int, *, mu0: ArrayLike = 0.0
) -> StatArrays:
    """Corrected repeated k-fold t test of Bouckaert & Frank (2004) (docs/theory.md §4).

    All ``r·k`` fold means ``μ̂_j``; ``σ̂² = (1/(r k) + n2/n1) S²`` with
    ``n2/n1 = 1/(k-1)``; reference ``t_{rk-1}`` (method 6 applied to the
    ``r·k`` folds).

    Parameters
    ----------
    fold_means : array_like, shape (..., r*k)
        Fold means of every repetition (the order does not matter).
    k : int
        Number of folds per repetition, ``k >= 2``; the last axis length must
        be a multiple of `k`.
    mu0 : array_like, default 0
        Null value.

    Returns
    -------
    StatArrays
        ``estimate``, ``stderr = sqrt((1/(rk) + 1/(k-1)) S²)``, ``statistic``,
        ``df = rk - 1``.

    Raises
    ------
    ArgumentError
        If `k` is not an integer >= 2.
    DesignError
        If the number of fold means is not a multiple of `k`.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise ArgumentError(f"`k` must be an integer >= 2 (folds per repetition), got {k!r}.")
    arr = as_float_array(fold_means, "fold_means")
    rk = arr.shape[-1]
    if rk % k != 0:
        raise DesignError(
            f"corrected repeated k-fold t: the last axis of `fold_means` holds {rk} fold "
            f"means, not a multiple of k = {k} (expected r·k)."
        )
    check_core_length(rk, "fold_means", "fold means (r·k)", 2, "corrected repeated k-fold t")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        s2 = sample_variance(arr, name="fold_means", what="fold means (r·k)")
        estimate = np.mean(arr, axis=-1)
        variance = (1.0 / rk + 1.0 / (k - 1)) * s2
    return statistic_from_variance(
        estimate,
        variance,
        rk - 1,
        mu0,
        method="corrected repeated k-fold t",
        what=f"the sample variance of the r·k = {rk} fold means",
        why="all fold means are equal",
        values=arr,
        of="fold means",
    )
