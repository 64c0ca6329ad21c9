"""Estimating-function fit of the Lemma-1 structure across many datasets (docs/theory.md §5).

``N`` independent rows ``T_i = (T_{i,1}, ..., T_{i,K})`` each have the
structure of Lemma 1 (docs/theory.md §2): common mean ``β``, variance ``δ`` and
pairwise correlation ``π``. With ``θ = (β, δ, π)`` and ``T̄_i`` the mean of
row ``i``, the estimating function of docs/theory.md §5 is

``g_i(θ) = (T̄_i - β, Σ_k [(T_{i,k} - β)² - δ], (T̄_i - β)² - δ (π + (1 - π)/K))``

and ``Σ_i g_i(θ̂) = 0`` has the closed-form root ``β̂ = mean of all T``,
``δ̂ = mean of (T_{i,k} - β̂)²``, ``π̂ = (K v̂/δ̂ - 1)/(K - 1)`` with
``v̂ = mean_i (T̄_i - β̂)²``. Its sandwich (White 1982) covariance is
``V = A⁻¹ B A⁻ᵀ`` with ``B = Σ_i g_i(θ̂) g_i(θ̂)ᵀ`` and ``A`` the expectation of
minus the Jacobian of ``Σ_i g_i`` (which here equals the observed one at
``θ̂``, because the ``β`` derivatives ``-2 Σ (T̄_i - β̂)`` and
``-2 Σ (T_{i,k} - β̂)`` vanish at the root).

No xarray here: the sample axis is ``-2`` and the member axis ``-1``, every
leading axis is a batch axis, and nothing loops over the batch.

Floating-point range: ``δ̂`` is a mean of squares, so values whose deviations
from ``β̂`` are beyond about ``1e154`` (or below about ``1e-154``) overflow (or
underflow) float64; ``B`` sums squares of ``g_i``, fourth powers of the
deviations, and leaves the range beyond about ``1e77`` (or below about
``1e-77``). :func:`lemma1_fit` (hence :func:`lemma1_components`) raises a
:class:`~cvstats.errors.CubeError` saying how to rescale instead of returning
infinite, NaN or zero estimates and standard errors
(:func:`~cvstats.checks.check_float_range`), from ``T``, ``δ̂``
and the ``N x 3`` values ``g_i``; infinite values in ``T`` (e.g. squares that
overflowed before the fit) are reported the same way.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import ArgumentError, as_float_array, check_float_range
from cvstats.errors import DesignError, ZeroVarianceWarning

__all__ = [
    "Lemma1Fit",
    "Lemma1Components",
    "lemma1_estimating_function",
    "lemma1_bread",
    "lemma1_fit",
    "lemma1_components",
    "political_ratio_from_rho",
    "squared_half_differences",
]

FloatArray = NDArray[np.float64]

_METHOD = "Lemma-1 fit"


class Lemma1Fit(NamedTuple):
    """Estimates and sandwich covariance of ``θ = (β, δ, π)`` (docs/theory.md §5).

    Attributes
    ----------
    theta : ndarray, shape (..., 3)
        ``(β̂, δ̂, π̂)``.
    cov : ndarray, shape (..., 3, 3)
        ``V = A⁻¹ B A⁻ᵀ``; the standard errors are ``sqrt(diag(V))``.
    """

    theta: FloatArray
    cov: FloatArray

    @property
    def stderr(self) -> FloatArray:
        """``sqrt(diag(V))``, shape ``(..., 3)``."""
        return np.sqrt(np.diagonal(self.cov, axis1=-2, axis2=-1))


class Lemma1Components(NamedTuple):
    """Lemma-1 moments and their delta-method standard errors (docs/theory.md §1, §5).

    Every field has the batch shape ``(...)``. ``γ = π δ`` is the covariance of
    two members of a row and ``δ - γ = δ (1 - π)`` the expected within-row
    variance (Lemma 1.3: ``E[S_U²] = δ - γ``).
    """

    beta: FloatArray
    delta: FloatArray
    gamma: FloatArray
    within: FloatArray
    pi: FloatArray
    beta_se: FloatArray
    delta_se: FloatArray
    gamma_se: FloatArray
    within_se: FloatArray
    pi_se: FloatArray


def _rows_iv(T: ArrayLike, name: str = "T") -> FloatArray:
    """``T`` as a float array of shape ``(..., N, K)`` with ``N, K >= 2`` and no NaN."""
    arr = as_float_array(T, name, min_ndim=2)
    N, K = arr.shape[-2:]
    if N < 2:
        raise DesignError(
            f"the Lemma-1 fit needs at least 2 independent rows (datasets) on axis -2 of "
            f"`{name}`, got N = {N}."
        )
    if K < 2:
        raise DesignError(
            f"the Lemma-1 fit needs at least 2 members per row on axis -1 of `{name}` (a "
            f"correlation between members), got K = {K}."
        )
    bad = ~np.isfinite(arr)
    if np.any(bad) and not np.isnan(arr).any():  # ±inf only: numbers that overflowed
        check_float_range(
            arr.reshape(*arr.shape[:-2], N * K),
            np.zeros(arr.shape[:-2]),
            method=_METHOD,
            what=f"`{name}`",
            of=f"values of `{name}`",
        )
    if np.any(bad):
        raise ArgumentError(
            f"`{name}` holds {int(bad.sum())} NaN or infinite value(s) out of {arr.size}; the "
            "Lemma-1 fit needs every member of every row (drop incomplete rows first)."
        )
    return arr


def _theta_iv(theta: ArrayLike) -> FloatArray:
    arr = as_float_array(theta, "theta")
    if arr.shape[-1] != 3:
        raise ArgumentError(
            f"`theta` must have (β, δ, π) on its last axis (length 3), got shape {arr.shape}."
        )
    return arr


def lemma1_estimating_function(T: ArrayLike, theta: ArrayLike) -> FloatArray:
    """Per-row estimating function ``g_i(θ)`` of docs/theory.md §5.

    Parameters
    ----------
    T : array_like, shape (..., N, K)
        ``N`` independent rows of ``K`` members.
    theta : array_like, shape (..., 3)
        ``(β, δ, π)``, broadcastable to the batch shape of `T`.

    Returns
    -------
    ndarray, shape (..., N, 3)
        ``g_i(θ) = (T̄_i - β, Σ_k [(T_{i,k} - β)² - δ],
        (T̄_i - β)² - δ (π + (1 - π)/K))``.

    Examples
    --------
    >>> import numpy as np
    >>> from cvstats.kernels.lemma1 import lemma1_estimating_function, lemma1_fit
    >>> T = np.array([[0.1, 0.3], [0.2, 0.6], [0.5, 0.4]])
    >>> g = lemma1_estimating_function(T, lemma1_fit(T).theta)
    >>> bool(np.allclose(g.sum(axis=0), 0.0))
    True
    """
    arr = as_float_array(T, "T", min_ndim=2)
    th = _theta_iv(theta)[..., None, :]  # (..., 1, 3): broadcast over rows
    beta, delta, pi = th[..., 0], th[..., 1], th[..., 2]
    K = arr.shape[-1]
    dev = arr - beta[..., None]
    row_dev = dev.mean(axis=-1)
    g1 = row_dev
    g2 = np.sum(dev**2, axis=-1) - K * delta
    g3 = row_dev**2 - delta * (pi + (1.0 - pi) / K)
    return np.stack(np.broadcast_arrays(g1, g2, g3), axis=-1)


def lemma1_bread(theta: ArrayLike, N: int, K: int) -> FloatArray:
    """Return the matrix ``A`` of docs/theory.md §5 (minus the expected Jacobian of ``Σ_i g_i``).

    Parameters
    ----------
    theta : array_like, shape (..., 3)
        ``(β, δ, π)``.
    N, K : int
        Number of rows and of members per row.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``A = N [[1, 0, 0], [0, K, 0], [0, π + (1 - π)/K, (K - 1) δ / K]]``.
    """
    th = _theta_iv(theta)
    delta, pi = th[..., 1], th[..., 2]
    A = np.zeros((*th.shape[:-1], 3, 3))
    A[..., 0, 0] = 1.0
    A[..., 1, 1] = K
    A[..., 2, 1] = pi + (1.0 - pi) / K
    A[..., 2, 2] = (K - 1) * delta / K
    return N * A


def _estimates(arr: FloatArray) -> FloatArray:
    """Closed-form root ``(β̂, δ̂, π̂)`` of ``Σ_i g_i(θ) = 0``; NaN ``π̂`` where ``δ̂ = 0``.

    Raises a :class:`~cvstats.errors.CubeError` first where ``δ̂`` or ``β̂``
    left float64's range (not a misleading zero-variance warning).
    """
    N, K = arr.shape[-2:]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        beta = arr.mean(axis=(-2, -1))
        dev = arr - beta[..., None, None]
        delta = np.mean(dev**2, axis=(-2, -1))
        v = np.mean(dev.mean(axis=-1) ** 2, axis=-1)
    check_float_range(
        arr.reshape(*arr.shape[:-2], N * K),
        delta,
        method=_METHOD,
        what=f"δ̂, the mean squared deviation of the N·K = {N * K} values from β̂",
        of="values of T",
        estimate=beta,
    )
    zero = delta == 0
    if np.any(zero):
        warnings.warn(
            f"Lemma-1 fit: all values of a batch element are equal (δ̂ = 0) in "
            f"{int(np.sum(zero))} of {zero.size} batch element(s); π̂ and the covariance "
            "are NaN there.",
            ZeroVarianceWarning,
            stacklevel=3,
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = (K * v / delta - 1.0) / (K - 1)
    return np.stack([beta, delta, np.where(zero, np.nan, pi)], axis=-1)


#: The three components of ``g_i`` and how they scale with the values of ``T``.
_G_TERMS = (("g_i,β = T̄_i - β̂", 1), ("g_i,δ", 2), ("g_i,π", 2))


def _check_meat(g: FloatArray, B: FloatArray, delta: FloatArray) -> None:
    """Raise where a diagonal entry ``B_jj = Σ_i g_ij²`` of the sandwich left float64's range.

    ``|B_jk| <= sqrt(B_jj B_kk)``, so the diagonal bounds every entry. Not
    checked where ``δ̂ = 0`` (all values equal: the covariance is NaN there).
    """
    for j, (term, power) in enumerate(_G_TERMS):
        check_float_range(
            g[..., j],
            np.where(delta == 0, np.nan, B[..., j, j]),
            method=_METHOD,
            what=f"the sandwich meat B = Σ_i g_i g_iᵀ (its entry for {term})",
            of=f"terms {term} of the N rows",
            centred=False,
            power=power,
        )


def lemma1_fit(T: ArrayLike) -> Lemma1Fit:
    """Fit ``(β, δ, π)`` of Lemma 1 across independent rows, with sandwich covariance.

    Solves ``Σ_i g_i(θ) = 0`` for the estimating function of docs/theory.md §5
    (closed form: ``β̂`` the mean of all ``T``, ``δ̂`` the mean of
    ``(T_{i,k} - β̂)²``, ``π̂ = (K v̂/δ̂ - 1)/(K - 1)`` with
    ``v̂ = mean_i (T̄_i - β̂)²``) and returns the sandwich covariance
    ``V = A⁻¹ B A⁻ᵀ``, ``B = Σ_i g_i(θ̂) g_i(θ̂)ᵀ``, ``A`` from
    :func:`lemma1_bread`. For ``β`` it reduces to ``V_11 = (1/N²) Σ_i (T̄_i - T̄)²``.

    ``π̂`` lies in ``[-1/(K-1), 1]`` (``v̂ <= δ̂`` by Jensen). If the members are
    not exchangeable (different pairwise correlations, e.g. the folds of a
    repeated k-fold), ``π̂`` estimates their average pairwise correlation, which
    is what enters ``Var[T̄_i] = δ (π + (1 - π)/K)`` and ``E[S²] = δ (1 - π)``; the
    sandwich covariance stays valid for that root.

    Parameters
    ----------
    T : array_like, shape (..., N, K)
        ``N >= 2`` independent rows (e.g. datasets) of ``K >= 2`` members with
        the Lemma-1 structure (e.g. the ``J`` split means of each dataset); any
        leading axes are batch axes. No NaN.

    Returns
    -------
    Lemma1Fit
        ``theta`` of shape ``(..., 3)`` holding ``(β̂, δ̂, π̂)`` and ``cov`` of
        shape ``(..., 3, 3)``. NaN ``π̂`` and covariance where ``δ̂ = 0``.

    Raises
    ------
    DesignError
        If ``N < 2`` or ``K < 2``.
    ArgumentError
        If `T` holds NaN values.
    CubeError
        If `T` holds infinite values, or values whose deviations from ``β̂``
        are so large or so small that ``δ̂`` (beyond about ``1e154`` or below
        about ``1e-154``) or the sandwich ``B`` (about ``1e77`` and ``1e-77``)
        overflows or underflows float64 (not all deviations zero); the message
        says by which power of ten to rescale.

    Warns
    -----
    ZeroVarianceWarning
        Where every value of a batch element is the same (``δ̂ = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> from cvstats.kernels.lemma1 import lemma1_fit
    >>> rng = np.random.default_rng(0)
    >>> common = rng.normal(size=(500, 1))  # rows share a component: π = 0.5
    >>> T = 1.0 + common + rng.normal(size=(500, 8))
    >>> fit = lemma1_fit(T)
    >>> np.round(fit.theta, 1)  # β = 1, δ = 2, π = 0.5
    array([1. , 2. , 0.5])
    >>> fit.cov.shape
    (3, 3)
    """
    arr = _rows_iv(T)
    N, K = arr.shape[-2:]
    theta = _estimates(arr)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        g = lemma1_estimating_function(arr, theta)
        B = np.einsum("...ni,...nj->...ij", g, g)
    _check_meat(g, B, theta[..., 1])
    A = lemma1_bread(theta, N, K)
    bad = ~np.isfinite(A).all(axis=(-2, -1)) | (theta[..., 1] == 0)
    A = np.where(bad[..., None, None], np.eye(3), A)  # keep the stacked solve non-singular
    AinvB = np.linalg.solve(A, B)
    V = np.linalg.solve(A, np.swapaxes(AinvB, -1, -2))  # A⁻¹ (A⁻¹ B)ᵀ = A⁻¹ B A⁻ᵀ
    V = 0.5 * (V + np.swapaxes(V, -1, -2))
    V = np.where(bad[..., None, None], np.nan, V)
    return Lemma1Fit(theta, V)


def _delta_se(cov: FloatArray, grad: FloatArray) -> FloatArray:
    """``sqrt(∇ᵀ V ∇)`` over the batch (delta method)."""
    var = np.einsum("...i,...ij,...j->...", grad, cov, grad)
    return np.sqrt(np.maximum(var, 0.0))


def lemma1_components(T: ArrayLike) -> Lemma1Components:
    """Lemma-1 moments ``β, δ, γ = πδ, δ - γ, π`` with delta-method standard errors.

    From :func:`lemma1_fit`: ``γ̂ = π̂ δ̂`` with gradient ``(0, π̂, δ̂)`` and
    ``δ̂ - γ̂ = δ̂ (1 - π̂)`` with gradient ``(0, 1 - π̂, -δ̂)`` with respect to
    ``(β, δ, π)``; each standard error is ``sqrt(∇ᵀ V ∇)``. When a row holds
    ``K`` repetitions of a cross-validation estimate on one dataset, ``δ`` is
    its total variance, ``γ`` the sample variance ``Var_T(E_π[ε̂])`` and
    ``δ - γ`` the internal variance ``E_T[Var_π(ε̂)]`` (docs/theory.md §1).

    Parameters
    ----------
    T : array_like, shape (..., N, K)
        As in :func:`lemma1_fit`.

    Returns
    -------
    Lemma1Components
        Estimates and standard errors, each of the batch shape ``(...)``.
    """
    fit = lemma1_fit(T)
    beta, delta, pi = np.moveaxis(fit.theta, -1, 0)
    se = fit.stderr
    zeros = np.zeros_like(delta)
    grad_gamma = np.stack([zeros, pi, delta], axis=-1)
    grad_within = np.stack([zeros, 1.0 - pi, -delta], axis=-1)
    return Lemma1Components(
        beta=beta,
        delta=delta,
        gamma=pi * delta,
        within=(1.0 - pi) * delta,
        pi=pi,
        beta_se=se[..., 0],
        delta_se=se[..., 1],
        gamma_se=_delta_se(fit.cov, grad_gamma),
        within_se=_delta_se(fit.cov, grad_within),
        pi_se=se[..., 2],
    )


def squared_half_differences(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """Return ``(a - b)²``, the squared half differences behind ``r`` (docs/theory.md §5).

    The squares are the values ``fit_r`` hands to :func:`lemma1_fit`; squaring
    numbers beyond about ``1e154`` overflows and below about ``1e-154``
    underflows float64 (the kernel would then take exact zeros for equal
    halves), so both are caught here on the differences themselves.

    Parameters
    ----------
    a, b : array_like, shape (..., M)
        Mean losses of the two halves of each of ``M`` half-splits.

    Returns
    -------
    ndarray, shape (..., M)
        The squared differences.

    Raises
    ------
    CubeError
        If a squared difference overflows, or underflows while the
        differences are not all zero; the message says how to rescale.

    Examples
    --------
    >>> squared_half_differences([1.0, 2.0], [0.5, 2.0])
    array([0.25, 0.  ])
    """
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        sq = diff * diff
    check_float_range(
        diff[..., None],
        sq,
        method="fit_r",
        what="a squared half difference",
        of="half differences",
        centred=False,
    )
    return sq


def political_ratio_from_rho(
    rho: ArrayLike, J: ArrayLike, n1: ArrayLike, n2: ArrayLike
) -> FloatArray:
    """Political ratio of the corrected resampled t at ``ρ`` clipped to ``[0, 1]``.

    ``(1 + Jρ/(1 - ρ)) / (1 + J n2/n1)`` (docs/theory.md §4, method 6), an
    increasing function of ``ρ``. ``ρ`` is first clipped to ``[0, 1]``: the
    true ``ρ`` is a correlation that is ``>= 0`` by Lemma 1.2, so an estimate or
    interval bound below 0 is mapped to the ratio at ``ρ = 0``,
    ``1 / (1 + J n2/n1)``; at ``ρ >= 1`` the ratio is ``+inf``. NaN stays NaN.

    Parameters
    ----------
    rho : array_like
        Correlation(s) of split means, e.g. ``ρ̂`` or its interval bounds.
    J : array_like
        Number of splits.
    n1, n2 : array_like
        Training and test sizes.

    Returns
    -------
    ndarray
        The ratio, in ``[1 / (1 + J n2/n1), inf]``.

    Examples
    --------
    >>> from cvstats.kernels.lemma1 import political_ratio_from_rho
    >>> political_ratio_from_rho([-0.1, 0.5, 1.2], 10, 80, 20).round(4).tolist()
    [0.2857, 3.1429, inf]
    """
    r = np.clip(as_float_array(rho, "rho", min_ndim=0), 0.0, 1.0)
    J = as_float_array(J, "J", min_ndim=0)
    n1 = as_float_array(n1, "n1", min_ndim=0)
    n2 = as_float_array(n2, "n2", min_ndim=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.where(r >= 1.0, np.inf, r / np.where(r >= 1.0, 1.0, 1.0 - r))
        return ((1.0 + J * odds) / (1.0 + J * n2 / n1))[()]
