"""Variance components of K-fold cross-validation (docs/theory.md §7, Bengio & Grandvalet).

For one K-fold run the out-of-fold errors ``e = (e_1..e_n)`` (per-example
losses, or a contrast of models' losses) have a covariance with three values:
``σ²`` on the diagonal, ``ω`` within a test block, ``γ`` between blocks, so
that ``μ̂ = (1/n) Σ e_i`` has

    θ = Var[μ̂] = σ²/n + (m - 1) ω / n + (n - m) γ / n                      (4)

with ``m = n/K`` the block size. This module holds the formulas as plain
numpy functions with integer axes (the *last* axis indexes examples, the one
before it replicates where there are replicates), vectorized over every
leading axis:

* :func:`kfold_statistics`: the invariant statistics ``s1, s2, s3`` of one run
  (in O(n) from per-fold sums);
* :func:`kfold_moments` / :func:`kfold_moments_stderr`: ``μ, σ², ω, γ``, the
  three contributions to (4), ``θ`` and the eigenvalues from ``N``
  independent replicated runs, with jackknife standard errors;
* :func:`variance_components`, :func:`eigenvalues`, :func:`admissible`: (4),
  Lemma 4 and Lemma 5 of the paper for given moments;
* :func:`block_coefficients`, :func:`estimator_matrix`,
  :func:`estimator_coefficients`, :func:`expected_quadratic`: the ``(a, b, c)``
  of a quadratic estimator ``θ̂ = eᵀ W e`` and its expectation (Lemma 3).

Floating-point range: ``s1, s2, s3`` are sums of squares and products, so
errors beyond about ``1e154`` (or below about ``1e-154``) in absolute value
overflow (or underflow) float64; the jackknife standard errors square
deviations of variances, fourth powers of the errors, and leave the range
beyond about ``1e77`` (or below about ``1e-77``). :func:`kfold_statistics`,
:func:`kfold_moments` and :func:`kfold_moments_stderr` raise a
:class:`~cvstats.errors.CubeError` saying how to rescale the losses instead of
returning infinite, NaN or zero moments
(:func:`~cvstats.checks.check_float_range`), from the per-run
sums and the leave-one-run-out estimates; the errors are read again only
where ``Σ e_i²`` is not finite or below the smallest normal float64.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
import scipy
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import (
    TINY,
    ArgumentError,
    as_float_array,
    check_float_range,
    validate_alpha,
)
from cvstats.errors import CubeError, DesignError

__all__ = [
    "ESTIMATORS",
    "KFoldStatistics",
    "KFoldMoments",
    "kfold_statistics",
    "kfold_moments",
    "kfold_moments_stderr",
    "variance_components",
    "eigenvalues",
    "admissible",
    "contiguous_folds",
    "block_coefficients",
    "estimator_matrix",
    "estimator_coefficients",
    "expected_quadratic",
    "variance_ci",
]

#: Named quadratic variance estimators of :func:`estimator_matrix` (docs/theory.md §7).
ESTIMATORS: tuple[str, ...] = ("naive", "folds", "theta1", "theta2")

FloatArray = NDArray[np.float64]


class KFoldStatistics(NamedTuple):
    """The invariant quadratic statistics of one K-fold run (docs/theory.md §7).

    Attributes
    ----------
    s1 : ndarray
        ``(1/n) Σ_i e_i²``.
    s2 : ndarray
        ``(1/(n(m-1))) Σ_k Σ_{i≠j ∈ T_k} e_i e_j`` (NaN when ``m = 1``).
    s3 : ndarray
        ``(1/(n(n-m))) Σ_{k≠ℓ} Σ_{i∈T_k, j∈T_ℓ} e_i e_j``.
    mean : ndarray
        ``μ̂ = (1/n) Σ_i e_i``.
    """

    s1: FloatArray
    s2: FloatArray
    s3: FloatArray
    mean: FloatArray


class KFoldMoments(NamedTuple):
    """Moments of the K-fold errors and the variance of ``μ̂`` (docs/theory.md §7, eq. 4).

    Every field has the batch shape (the input's shape without its last two
    axes). :func:`kfold_moments_stderr` returns the same fields holding
    jackknife standard errors.

    Attributes
    ----------
    mu : ndarray
        ``μ``, the mean of ``e_i`` (the mean of the ``N`` runs' ``μ̂``).
    sigma2 : ndarray
        ``σ² = Var[e_i]``.
    omega : ndarray
        ``ω = Cov[e_i, e_j]``, ``i ≠ j`` in the same test block.
    gamma : ndarray
        ``γ = Cov[e_i, e_j]``, ``i``, ``j`` in different test blocks.
    contribution_sigma2, contribution_omega, contribution_gamma : ndarray
        The three terms ``σ²/n``, ``(m-1)ω/n`` and ``(n-m)γ/n`` of (4).
    theta : ndarray
        ``θ = Var[μ̂]`` from (4), their sum.
    lambda1, lambda2, lambda3 : ndarray
        Eigenvalues ``σ² - ω``, ``σ² + (m-1)ω - mγ`` and
        ``σ² + (m-1)ω + (n-m)γ = nθ`` of the covariance of ``e`` (Lemma 4).
    empirical_var : ndarray
        Sample variance (denominator ``N - 1``) of the ``N`` runs' ``μ̂``.
    """

    mu: FloatArray
    sigma2: FloatArray
    omega: FloatArray
    gamma: FloatArray
    contribution_sigma2: FloatArray
    contribution_omega: FloatArray
    contribution_gamma: FloatArray
    theta: FloatArray
    lambda1: FloatArray
    lambda2: FloatArray
    lambda3: FloatArray
    empirical_var: FloatArray


# --------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------


def _size_iv(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(f"`{name}` must be an int, got {value!r} ({type(value).__name__}).")
    if int(value) < minimum:
        raise ArgumentError(f"`{name}` must be at least {minimum}, got {value}.")
    return int(value)


def _n_k_iv(n: object, K: object) -> tuple[int, int, int]:
    """Validate ``n`` and ``K``; return ``(n, K, m)`` with ``m = n / K``."""
    n = _size_iv("n", n, 2)
    K = _size_iv("K", K, 2)
    if n % K:
        raise DesignError(
            "equal test blocks of size m = n/K are needed (docs/theory.md §7), so K must "
            "divide n; "
            f"got n = {n}, K = {K} (n % K = {n % K}). Choose K among the divisors of n."
        )
    return n, K, n // K


def _fold_iv(e: FloatArray, fold: ArrayLike) -> tuple[FloatArray, NDArray[np.intp], int, int]:
    """Broadcast ``fold`` to ``e``; return ``(e, codes 0..K-1, K, m)`` after checking sizes."""
    f = np.asarray(fold)
    if not (np.issubdtype(f.dtype, np.integer) or f.dtype == bool):
        if (
            np.issubdtype(f.dtype, np.floating)
            and np.all(np.isfinite(f))
            and np.all(f == np.round(f))
        ):
            f = f.astype(np.int64)
        else:
            raise ArgumentError(f"`fold` must hold integer fold labels, got dtype {f.dtype}.")
    try:
        e, f = np.broadcast_arrays(e, f)
    except ValueError as err:
        raise ArgumentError(
            f"`fold` of shape {np.shape(fold)} does not broadcast against `e` of shape "
            f"{e.shape}; give one fold label per example (last axis)."
        ) from err
    labels, codes = np.unique(f, return_inverse=True)
    codes = codes.reshape(f.shape)
    n, K = e.shape[-1], labels.size
    if K < 2:
        raise DesignError(
            f"K-fold variance components need at least K = 2 folds, but `fold` holds "
            f"{K} label(s) {labels.tolist()}."
        )
    if n % K:
        raise DesignError(
            "equal test blocks of size m = n/K are needed (docs/theory.md §7), so K must "
            "divide n; "
            f"got n = {n} examples in K = {K} folds (n % K = {n % K}). Use a K that divides "
            "n, or drop n % K examples before the K-fold split."
        )
    return e, codes, K, n // K


def _finite_iv(e: FloatArray, name: str) -> None:
    bad = ~np.isfinite(e)
    if np.any(bad):
        raise CubeError(
            f"`{name}` must be finite: every example of a K-fold run has one out-of-fold "
            f"error, but {int(bad.sum())} value(s) are NaN or infinite."
        )


def _fold_sums(e: FloatArray, codes: NDArray[np.intp], K: int, m: int) -> FloatArray:
    """Per-fold sums ``S_k``, shape ``(..., K)``; checks every fold has ``m`` examples."""
    batch, n = e.shape[:-1], e.shape[-1]
    B = int(np.prod(batch, dtype=np.int64))
    idx = (np.arange(B)[:, None] * K + codes.reshape(B, n)).ravel()
    counts = np.bincount(idx, minlength=B * K)
    if np.any(counts != m):
        bad = counts[counts != m]
        raise DesignError(
            f"every fold needs m = n/K = {m} examples (equal blocks, docs/theory.md §7), but "
            f"{bad.size} fold(s) hold {sorted(set(bad.tolist()))[:5]} examples; "
            "assign exactly n/K examples to each fold."
        )
    sums = np.bincount(idx, weights=e.reshape(B * n), minlength=B * K)
    return sums.reshape(*batch, K)


# --------------------------------------------------------------------------
# statistics of one run
# --------------------------------------------------------------------------


def kfold_statistics(e: ArrayLike, fold: ArrayLike) -> KFoldStatistics:
    """Invariant statistics ``s1, s2, s3`` of one K-fold run (docs/theory.md §7).

    ``s1 = (1/n) Σ e_i²``, ``s2 = (1/(n(m-1))) Σ_k Σ_{i≠j ∈ T_k} e_i e_j`` and
    ``s3 = (1/(n(n-m))) Σ_{k≠ℓ} Σ_{i∈T_k, j∈T_ℓ} e_i e_j``, the only quadratic
    statistics of ``e`` invariant to the permutations within and between
    blocks (Bengio & Grandvalet, eq. 9). Computed in O(n) from the per-fold
    sums ``S_k`` and ``Q = Σ e_i²``: the within-block sum is ``Σ_k S_k² - Q``
    and the between-block sum ``(Σ_k S_k)² - Σ_k S_k²``. Their expectations
    are ``σ² + μ²``, ``ω + μ²`` and ``γ + μ²``, and
    ``s1 + (m-1) s2 + (n-m) s3 = n μ̂²`` identically.

    Parameters
    ----------
    e : array_like, shape (..., n)
        Out-of-fold errors of one run (losses or a contrast of losses).
    fold : array_like of int, broadcastable to ``e``
        Fold (test block) of each example; any ``K`` distinct labels. Every
        fold must hold ``m = n/K`` examples in every batch element.

    Returns
    -------
    KFoldStatistics
        ``s1, s2, s3`` and ``mean = μ̂``, each of shape ``e.shape[:-1]``
        (``s2`` is NaN for leave-one-out, ``m = 1``).

    Raises
    ------
    DesignError
        If ``K`` does not divide ``n``, a fold has not ``n/K`` examples, or
        there is a single fold.
    CubeError
        If ``e`` has NaN or infinite values, or values so large (about
        ``1e154`` and up) or so small (about ``1e-154`` and down, not all zero)
        that ``Σ e_i²``, ``Σ_k S_k²`` or ``(Σ e_i)²`` overflows or underflows
        float64; the message says by which power of ten to rescale the losses.

    Examples
    --------
    >>> import numpy as np
    >>> from cvstats.kernels.kfold import kfold_statistics
    >>> st = kfold_statistics([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1])
    >>> float(st.s1), float(st.s2), float(st.s3)  # 30/4, 2*(2+12)/4, 2*(3+4+6+8)/8
    (7.5, 7.0, 5.25)
    """
    return _statistics(as_float_array(e, "e"), fold)[0]


def _statistics(
    arr: FloatArray,
    fold: ArrayLike,
    method: str = "K-fold statistics",
    of: str = "out-of-fold errors",
) -> tuple[KFoldStatistics, int]:
    """:func:`kfold_statistics` on a float array, also returning ``K``.

    `method` and `of` name the caller and the errors in a float-range error.
    """
    arr, codes, K, m = _fold_iv(arr, fold)
    _finite_iv(arr, "e")
    n = arr.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        sums = _fold_sums(arr, codes, K, m)
        q = np.sum(arr * arr, axis=-1)
        ss = np.sum(sums * sums, axis=-1)
        t = np.sum(sums, axis=-1)
        tt = t * t
        s1 = q / n
        s2 = (ss - q) / (n * (m - 1)) if m > 1 else np.full(q.shape, np.nan)
        s3 = (tt - ss) / (n * (n - m))
        mean = t / n
    # every case check_float_range can flag; otherwise the n errors are not read again
    over = np.isinf(q) | np.isinf(ss) | np.isinf(tt) | np.isinf(mean)
    if np.any(over | (q < TINY)):
        check_float_range(
            arr,
            np.where(np.isinf(ss) | np.isinf(tt), np.inf, q),
            method=method,
            what="Σ e_i² (or Σ_k S_k², (Σ e_i)², behind s1, s2, s3)",
            of=of,
            centred=False,
            estimate=mean,
        )
    return KFoldStatistics(s1[()], np.asarray(s2)[()], s3[()], mean[()]), K


# --------------------------------------------------------------------------
# eq. (4), eigenvalues, admissible region
# --------------------------------------------------------------------------


def _scaled(coef: float, x: FloatArray) -> FloatArray:
    """``coef * x`` with ``0 * anything = 0`` (the ω terms vanish when ``m = 1``)."""
    return np.zeros_like(x) if coef == 0 else coef * x


def variance_components(
    sigma2: ArrayLike, omega: ArrayLike, gamma: ArrayLike, *, n: int, K: int
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """``θ = Var[μ̂]`` and its three contributions, eq. (4) (docs/theory.md §7).

    Parameters
    ----------
    sigma2, omega, gamma : array_like
        ``σ²``, ``ω`` and ``γ`` (broadcast together).
    n : int
        Number of errors ``e_i``.
    K : int
        Number of blocks; must divide ``n`` (``m = n/K``).

    Returns
    -------
    contribution_sigma2, contribution_omega, contribution_gamma : ndarray
        ``σ²/n``, ``(m-1)ω/n`` and ``(n-m)γ/n``.
    theta : ndarray
        Their sum, ``θ``.

    Examples
    --------
    >>> from cvstats.kernels.kfold import variance_components
    >>> [round(float(x), 6) for x in variance_components(1.0, 0.1, 0.01, n=10, K=5)]
    [0.1, 0.01, 0.008, 0.118]
    """
    n, K, m = _n_k_iv(n, K)
    s, w, g = np.broadcast_arrays(
        *(
            as_float_array(x, name, min_ndim=0)
            for x, name in ((sigma2, "sigma2"), (omega, "omega"), (gamma, "gamma"))
        )
    )
    c1 = s / n
    c2 = _scaled((m - 1) / n, w)
    c3 = (n - m) / n * g
    return c1[()], c2[()], c3[()], (c1 + c2 + c3)[()]


def eigenvalues(
    sigma2: ArrayLike, omega: ArrayLike, gamma: ArrayLike, *, n: int, K: int
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Eigenvalues of the block covariance of ``e`` (docs/theory.md §7, Lemma 4).

    ``λ1 = σ² - ω`` (multiplicity ``n - K``), ``λ2 = σ² + (m-1)ω - mγ``
    (``K - 1``), ``λ3 = σ² + (m-1)ω + (n-m)γ`` (1, eigenvector ``1``), so
    ``Var[μ̂] = λ3/n``. Only ``λ1`` and ``λ2`` have unbiased estimators from
    one run.

    Parameters
    ----------
    sigma2, omega, gamma : array_like
        ``σ²``, ``ω`` and ``γ``.
    n, K : int
        Number of errors and of blocks (``K`` divides ``n``).

    Returns
    -------
    lambda1, lambda2, lambda3 : ndarray
        ``λ1`` is NaN for ``m = 1`` (it has multiplicity ``n - K = 0``).
    """
    n, K, m = _n_k_iv(n, K)
    s, w, g = np.broadcast_arrays(
        *(
            as_float_array(x, name, min_ndim=0)
            for x, name in ((sigma2, "sigma2"), (omega, "omega"), (gamma, "gamma"))
        )
    )
    base = s + _scaled(m - 1, w)
    lam1 = s - w if m > 1 else np.full(s.shape, np.nan)
    return np.asarray(lam1)[()], (base - m * g)[()], (base + (n - m) * g)[()]


def admissible(
    sigma2: ArrayLike, omega: ArrayLike, gamma: ArrayLike, *, n: int, K: int
) -> NDArray[np.bool_]:
    """Whether ``(σ², ω, γ)`` lies in the admissible region (docs/theory.md §7, Lemma 5).

    ``0 <= ω <= σ²`` and ``-(σ² + (m-1)ω)/(n-m) <= γ <= (σ² + (m-1)ω)/m``:
    ``ω >= 0`` (errors of one block share their trained model) and the
    covariance being positive semi-definite (``λ1, λ2, λ3 >= 0``). For
    ``m = 1`` (leave-one-out) ``ω`` does not exist and only the ``γ``
    bounds are checked.

    Parameters
    ----------
    sigma2, omega, gamma : array_like
        ``σ²``, ``ω`` and ``γ`` (e.g. estimates: then the answer is about the
        point estimate, which sampling noise may push just outside).
    n, K : int
        Number of errors and of blocks (``K`` divides ``n``).

    Returns
    -------
    ndarray of bool
    """
    n, K, m = _n_k_iv(n, K)
    s, w, g = np.broadcast_arrays(
        *(
            as_float_array(x, name, min_ndim=0)
            for x, name in ((sigma2, "sigma2"), (omega, "omega"), (gamma, "gamma"))
        )
    )
    base = s + _scaled(m - 1, w)
    ok = (g >= -base / (n - m)) & (g <= base / m) & (s >= 0)
    if m > 1:
        ok &= (w >= 0) & (w <= s)
    return np.asarray(ok)[()]


# --------------------------------------------------------------------------
# moments from replicated runs
# --------------------------------------------------------------------------


def _from_sums(
    S1: FloatArray,
    S2: FloatArray,
    S3: FloatArray,
    T: FloatArray,
    Q: FloatArray,
    N: int | FloatArray,
    n: int,
    K: int,
) -> KFoldMoments:
    """Moments from the sums over ``N`` runs of ``s1, s2, s3, μ̂, μ̂²``."""
    mubar = T / N
    # unbiased μ² estimate: the mean of μ̂_r μ̂_r' over distinct runs r ≠ r'
    mu2 = (T * T - Q) / (N * (N - 1))
    emp = (Q - T * T / N) / (N - 1)
    sigma2 = S1 / N - mu2
    omega = S2 / N - mu2
    gamma = S3 / N - mu2
    c1, c2, c3, theta = variance_components(sigma2, omega, gamma, n=n, K=K)
    l1, l2, l3 = eigenvalues(sigma2, omega, gamma, n=n, K=K)
    return KFoldMoments(mubar, sigma2, omega, gamma, c1, c2, c3, theta, l1, l2, l3, emp)


_MOMENTS = "K-fold moments"


def _moments(
    e: ArrayLike, fold: ArrayLike, *, stderr: bool = True
) -> tuple[KFoldMoments, KFoldMoments | None]:
    """Estimates and (with `stderr`) jackknife standard errors of :func:`kfold_moments`."""
    arr = as_float_array(e, "e", min_ndim=2)
    N = arr.shape[-2]
    if N < 2:
        raise DesignError(
            "K-fold moments need at least N = 2 independent replicated runs (datasets) on "
            f"the second-to-last axis of `e`, got {N}."
        )
    _finite_iv(arr, "e")
    # shift by a constant per batch element: the estimators are shift-invariant
    # (σ², ω, γ are covariances), and centring avoids cancellation in s - μ².
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        shift = np.mean(arr, axis=(-2, -1), keepdims=True)
        centred = arr - shift
    st, K = _statistics(centred, fold, _MOMENTS, "out-of-fold errors minus their grand mean")
    n = arr.shape[-1]
    mean = st.mean
    with np.errstate(over="ignore", invalid="ignore"):
        parts = (st.s1, st.s2, st.s3, mean, mean * mean)
        sums = [np.sum(p, axis=-1) for p in parts]
        est = _from_sums(*sums, N, n, K)
    check_float_range(
        mean,
        sums[4],
        method=_MOMENTS,
        what="Σ_r μ̂_r², behind the μ² estimate and the empirical variance of the μ̂_r",
        of="run means μ̂_r minus the grand mean",
        centred=False,
        estimate=est.mu,
    )
    est = est._replace(mu=est.mu + shift[..., 0, 0])
    if not stderr:
        return est, None
    # jackknife over runs: leave run r out (N - 1 >= 2 needed for the μ² term)
    if N >= 3:
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
            loo = _from_sums(
                *(s[..., None] - p for s, p in zip(sums, parts, strict=True)), N - 1, n, K
            )
            spread = [np.sum((x - x.mean(-1, keepdims=True)) ** 2, axis=-1) for x in loo]
        for name, x, ss in zip(KFoldMoments._fields, loo, spread, strict=True):
            # every field but μ is a variance: its squared deviations are 4th powers
            check_float_range(
                x,
                ss,
                method=_MOMENTS,
                what=f"the jackknife sum of squares of {name}",
                of=f"leave-one-run-out estimates of {name}",
                power=1 if name == "mu" else 2,
            )
        se = KFoldMoments(*(np.sqrt((N - 1) / N * ss) for ss in spread))
    else:
        se = KFoldMoments(*(np.full(np.shape(x), np.nan) for x in est))
    return est, se


def kfold_moments(e: ArrayLike, fold: ArrayLike) -> KFoldMoments:
    """``μ, σ², ω, γ``, eq. (4), eigenvalues from replicated K-fold runs (docs/theory.md §7).

    ``N`` independent runs (datasets) of the same K-fold experiment give
    ``e^(r)``, ``r = 1..N``, and their statistics ``s1^(r), s2^(r), s3^(r)``
    and ``μ̂_r`` (:func:`kfold_statistics`). Since ``E[s1] = σ² + μ²``,
    ``E[s2] = ω + μ²`` and ``E[s3] = γ + μ²``, the estimators are

    * ``μ̄ = (1/N) Σ_r μ̂_r``;
    * ``U = (1/(N(N-1))) Σ_{r≠r'} μ̂_r μ̂_r' = μ̄² - V/N``, unbiased for ``μ²``
      (independent runs), with ``V`` the sample variance of the ``μ̂_r``;
    * ``σ̂² = s̄1 - U``, ``ω̂ = s̄2 - U``, ``γ̂ = s̄3 - U`` (``s̄`` the means over
      runs): each **unbiased**.

    These are the averages of the empirical covariances
    ``(e_i - μ̄)(e_j - μ̄)`` over the three index classes, plus ``V/N``. Centring
    with the grand mean ``μ̄`` alone (i.e. using ``μ̄²`` for ``μ²``) would bias
    all three down by ``E[μ̄²] - μ² = θ/N``; the ``V/N`` term removes that bias.
    Because ``s1 + (m-1)s2 + (n-m)s3 = n μ̂²`` for every run, ``θ`` from (4)
    with these estimates equals ``V`` *identically* (grand-mean centring would
    give ``(N-1)V/N``): (4) is an exact decomposition of the across-run
    variance, not an independent check of it.

    Parameters
    ----------
    e : array_like, shape (..., N, n)
        Out-of-fold errors of ``N`` independent runs (second-to-last axis) on
        ``n`` examples (last axis).
    fold : array_like of int, broadcastable to ``e``
        Fold of each example in each run (runs may have different
        assignments); every fold holds ``m = n/K`` examples.

    Returns
    -------
    KFoldMoments
        Fields of shape ``e.shape[:-2]``; ``empirical_var = V``.

    Raises
    ------
    DesignError
        If ``N < 2``, ``K`` does not divide ``n`` or the folds are unequal.
    CubeError
        If ``e`` has NaN or infinite values, or deviations from their grand
        mean so large (about ``1e154`` and up) or so small (about ``1e-154``
        and down, not all zero) that the sums of squares behind the
        statistics overflow or underflow float64; the message says by which
        power of ten to rescale the losses.

    See Also
    --------
    kfold_moments_stderr : jackknife standard errors of the same fields.

    Examples
    --------
    >>> import numpy as np
    >>> from cvstats.kernels.kfold import kfold_moments
    >>> e = np.random.default_rng(0).normal(size=(50, 12))
    >>> mom = kfold_moments(e, np.arange(12) // 4)
    >>> bool(np.isclose(mom.theta, mom.empirical_var))
    True
    """
    return _moments(e, fold, stderr=False)[0]


def kfold_moments_stderr(e: ArrayLike, fold: ArrayLike) -> KFoldMoments:
    """Jackknife standard errors over runs of :func:`kfold_moments` (docs/theory.md §7).

    Leave-one-run-out (delete-1) jackknife,
    ``se = sqrt((N-1)/N Σ_r (x_(r) - x_(·))²)``, computed in closed form from
    the sums over runs; consistent because every field is a smooth function
    of means of i.i.d. per-run vectors ``(s1, s2, s3, μ̂, μ̂²)``. No normality
    assumption (the kurtosis of ``μ̂`` enters ``se(θ)`` through the data).

    Parameters
    ----------
    e : array_like, shape (..., N, n)
        As in :func:`kfold_moments`.
    fold : array_like of int
        As in :func:`kfold_moments`.

    Returns
    -------
    KFoldMoments
        Standard errors of the fields of :func:`kfold_moments` (NaN when
        ``N < 3``; ``lambda1`` also NaN for ``m = 1``).

    Raises
    ------
    CubeError
        As :func:`kfold_moments`, and where the jackknife sums of squared
        deviations of the variance estimates (fourth powers of the errors)
        overflow or underflow float64: deviations of the errors from their
        grand mean beyond about ``1e77`` or below about ``1e-77``.
    """
    return _moments(e, fold)[1]


def variance_ci(
    variance: ArrayLike, df: ArrayLike, *, alpha: float = 0.05
) -> tuple[FloatArray, FloatArray]:
    """Chi-square ``1 - α`` interval for a variance from its sample variance.

    ``[df V / χ²_{df, 1-α/2}, df V / χ²_{df, α/2}]``: exact when the sample
    is i.i.d. Gaussian (used for ``Var[μ̂]`` from the ``N`` runs' ``μ̂``, with
    ``df = N - 1``; ``μ̂`` is a mean of ``n`` errors, close to Gaussian).

    Parameters
    ----------
    variance : array_like
        Sample variance ``V``.
    df : array_like
        Its degrees of freedom (``> 0``).
    alpha : float, default 0.05
        One minus the confidence level.

    Returns
    -------
    lower, upper : ndarray
    """
    alpha = validate_alpha(alpha)
    v = as_float_array(variance, "variance", min_ndim=0)
    d = as_float_array(df, "df", min_ndim=0)
    lower = d * v / scipy.stats.chi2.ppf(1 - alpha / 2, d)
    upper = d * v / scipy.stats.chi2.ppf(alpha / 2, d)
    return np.asarray(lower)[()], np.asarray(upper)[()]


# --------------------------------------------------------------------------
# quadratic estimators θ̂ = eᵀ W e (Lemma 3)
# --------------------------------------------------------------------------


def contiguous_folds(n: int, K: int) -> NDArray[np.int64]:
    """Fold labels of ``K`` equal contiguous blocks: ``[0]*m + [1]*m + ...``, ``m = n/K``.

    Parameters
    ----------
    n, K : int
        Number of errors and of blocks (``K`` divides ``n``).

    Returns
    -------
    ndarray of int, shape (n,)
    """
    n, K, m = _n_k_iv(n, K)
    return np.arange(n, dtype=np.int64) // m


def block_coefficients(
    W: ArrayLike, fold: ArrayLike | None = None, *, K: int | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return ``(a, b, c)`` of a quadratic estimator ``θ̂ = eᵀ W e`` (docs/theory.md §7, Lemma 3).

    ``a = Σ_i W_ii``; ``b`` = sum of ``W_ij`` over pairs ``i ≠ j`` in the same
    block; ``c`` = sum over pairs in different blocks, so that
    ``E[θ̂] = a(σ² + μ²) + b(ω + μ²) + c(γ + μ²)`` and ``a + b + c = Σ_ij W_ij``.

    Parameters
    ----------
    W : array_like, shape (..., n, n)
        The matrix of the quadratic form (need not be symmetric).
    fold : array_like of int, shape (n,), optional
        Block of each error; default ``K`` equal contiguous blocks.
    K : int, optional
        Number of contiguous blocks when ``fold`` is not given.

    Returns
    -------
    a, b, c : ndarray
        Of shape ``W.shape[:-2]``.
    """
    w = as_float_array(W, "W", min_ndim=2)
    n = w.shape[-1]
    if w.shape[-2] != n:
        raise ArgumentError(f"`W` must be square on its last two axes, got shape {w.shape}.")
    if fold is None:
        if K is None:
            raise ArgumentError("pass the fold assignment `fold` or the number of blocks `K`.")
        f = contiguous_folds(n, K)
    else:
        f = _fold_vector_iv(fold, n)
    same = f[:, None] == f[None, :]
    a = np.trace(w, axis1=-2, axis2=-1)
    within = np.sum(np.where(same, w, 0.0), axis=(-2, -1))
    total = np.sum(w, axis=(-2, -1))
    return np.asarray(a)[()], (within - a)[()], (total - within)[()]


def _fold_vector_iv(fold: ArrayLike, n: int) -> NDArray[np.intp]:
    """One fold label per error, ``K >= 2`` equal blocks; return codes ``0..K-1``."""
    f = np.asarray(fold)
    if f.shape != (n,):
        raise ArgumentError(
            f"`fold` must give one block label per error, shape ({n},), got {f.shape}."
        )
    _, codes, K, m = _fold_iv(np.zeros(n), f)
    _fold_sums(np.zeros(n), codes, K, m)
    return codes


def _estimator_iv(name: str) -> str:
    if not isinstance(name, str) or name not in ESTIMATORS:
        raise ArgumentError(f"`estimator` must be one of {list(ESTIMATORS)}, got {name!r}.")
    return name


def estimator_matrix(name: str, n: int, K: int, fold: ArrayLike | None = None) -> FloatArray:
    """Matrix ``W`` of a named quadratic variance estimator (docs/theory.md §7).

    * ``"naive"`` and ``"theta1"``: ``s²/n`` with ``s²`` the sample variance of
      the ``n`` errors, ``W = (I - 11ᵀ/n) / (n(n-1))`` (ignores every
      correlation). ``θ̂1`` of the hold-out setting is this estimator.
    * ``"folds"`` and ``"theta2"``: ``S²_blocks / K`` with ``S²_blocks`` the
      sample variance of the ``K`` block means, ``W = A(I_K - 11ᵀ/K)Aᵀ /
      (m² K (K-1))`` with ``A`` the ``n x K`` block indicator; the K-fold t's
      variance. ``θ̂2`` of the hold-out setting is this estimator, because
      ``Σ_{i,j}(L_ki - L̄)(L_kj - L̄) = n² (L̄_k - L̄)²``.

    Parameters
    ----------
    name : {"naive", "folds", "theta1", "theta2"}
        The estimator.
    n : int
        Number of errors (for ``"theta1"``/``"theta2"``: ``K`` test sets of
        ``n/K`` losses each, i.e. the paper's ``K n``).
    K : int
        Number of blocks (folds, or independent test sets); divides ``n``.
    fold : array_like of int, shape (n,), optional
        Block of each error; default contiguous blocks.

    Returns
    -------
    ndarray, shape (n, n)
    """
    name = _estimator_iv(name)
    n, K, m = _n_k_iv(n, K)
    codes = contiguous_folds(n, K) if fold is None else _fold_vector_iv(fold, n)
    if codes.max() + 1 != K:
        raise ArgumentError(f"`fold` has {codes.max() + 1} blocks but `K` = {K}.")
    if name in ("naive", "theta1"):
        return (np.eye(n) - 1.0 / n) / (n * (n - 1))
    A = (codes[:, None] == np.arange(K)[None, :]).astype(float)
    center = np.eye(K) - 1.0 / K
    return A @ center @ A.T / (m * m * K * (K - 1))


def estimator_coefficients(name: str, n: int, K: int) -> tuple[float, float, float]:
    """Closed-form ``(a, b, c)`` of a named estimator (docs/theory.md §7, Lemma 3).

    * ``"naive"``/``"theta1"``: ``a = 1/n``, ``b = -(m-1)/(n(n-1))``,
      ``c = -(n-m)/(n(n-1))``, so ``E[θ̂] = (σ² - ((m-1)ω + (n-m)γ)/(n-1))/n``:
      biased low whenever ``ω, γ > 0``.
    * ``"folds"``/``"theta2"``: ``a = 1/n``, ``b = (m-1)/n``, ``c = -m/n``, so
      ``E[θ̂] = λ2/n`` while ``θ = λ3/n``: the bias is ``-γ``; unbiased when
      ``γ = 0`` (independent hold-out test sets).

    Both have ``a + b + c = 0`` (no ``μ²`` term).

    Parameters
    ----------
    name : {"naive", "folds", "theta1", "theta2"}
        The estimator.
    n, K : int
        Number of errors and of blocks (``K`` divides ``n``).

    Returns
    -------
    a, b, c : float
    """
    name = _estimator_iv(name)
    n, K, m = _n_k_iv(n, K)
    if name in ("naive", "theta1"):
        return 1.0 / n, -(m - 1) / (n * (n - 1)), -(n - m) / (n * (n - 1))
    return 1.0 / n, (m - 1) / n, -m / n


def expected_quadratic(
    mu: ArrayLike,
    sigma2: ArrayLike,
    omega: ArrayLike,
    gamma: ArrayLike,
    *,
    a: ArrayLike,
    b: ArrayLike,
    c: ArrayLike,
) -> FloatArray:
    """``E[θ̂] = a(σ² + μ²) + b(ω + μ²) + c(γ + μ²)`` (docs/theory.md §7, Lemma 3).

    Parameters
    ----------
    mu, sigma2, omega, gamma : array_like
        Moments of the errors.
    a, b, c : array_like
        Coefficients of the estimator (:func:`block_coefficients`).

    Returns
    -------
    ndarray
        The expectation; a ``b = 0`` term contributes 0 even where ``ω`` is NaN
        (leave-one-out).
    """
    a_, b_, c_, mu_, s, w, g = (
        as_float_array(x, name, min_ndim=0)
        for x, name in (
            (a, "a"),
            (b, "b"),
            (c, "c"),
            (mu, "mu"),
            (sigma2, "sigma2"),
            (omega, "omega"),
            (gamma, "gamma"),
        )
    )
    mu2 = mu_ * mu_
    wterm = np.where(b_ == 0, 0.0, b_ * (w + mu2))
    return np.asarray(a_ * (s + mu2) + wterm + c_ * (g + mu2))[()]
