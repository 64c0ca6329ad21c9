"""Nested cross-validation of Bates, Hastie & Tibshirani (2024) (docs/nested-cv.md).

Per repetition ``r`` and outer fold ``k`` (test examples ``I_k``):

* ``e_out``: the losses on ``I_k`` of the fit trained on every other fold;
* ``e_in``: the losses of the inner cross-validation on the other ``K - 1``
  folds: example ``i`` of fold ``j != k`` scored by the fit that leaves out
  folds ``k`` and ``j``;

and then::

    a_k = (mean(e_in) - mean(e_out))²        b_k = var(e_out) / |I_k|
    MSE^ = mean over (r, k) of (a_k - b_k)
    Err^NCV = mean of every e_in            Err^CV = mean of every e_out
    bias = (1 + (K - 2)/K) (Err^NCV - Err^CV)
    estimate = Err^NCV - bias
    se = clip(sqrt(max(0, (K - 1)/K · MSE^)), se_naive, sqrt(K) se_naive)
    se_naive = sd(e_in) / sqrt(n)

with the interval ``estimate ± z_{1-α/2} se`` for ``Err_XY``, the error of
the model fitted on all ``n`` examples.

With groups of examples (``groups=``, docs/grouped-data.md) the two
variances over examples sum per-group influence terms instead
(:mod:`cvstats.kernels.cluster`): ``b_k`` is the CR1 cluster-robust variance
of ``mean(e_out)`` over the ``G_k`` groups of fold ``k``,
``G_k/(G_k-1) Σ_g u_g²/|I_k|²`` with ``u_g = Σ_{i ∈ g ∩ I_k} (e_out_i -
mean(e_out))`` (statsmodels' small-sample factor: with it ``b_k`` is
unbiased for the variance of the fold mean when groups are exchangeable,
as ``var(e_out)/|I_k|`` is for examples), and ``var(e_in)`` sums the
squared per-group sums of ``e_in - Err^NCV`` within every inner
cross-validation ``(r, k)`` over the same ``N_in - 1`` (``N_in`` the inner
losses). With one example per group both equal the iid forms. Plain numpy: the last axes are core
axes, every leading axis is a batch.

Floating-point range: ``var(e_in)``, ``var(e_out)`` and ``a_k`` are sums of
squares, so losses beyond about ``1e154`` (or below about ``1e-154``) in
absolute value overflow (or underflow) float64. :func:`nested_terms` raises a
:class:`~cvstats.errors.CubeError` saying how to rescale the losses instead of
returning an infinite, NaN or zero standard error
(:func:`~cvstats.checks.check_float_range`), from the per-fold
means and the variances; the inner losses are read again only where
``var(e_in)`` is not finite or below the smallest normal float64.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import (
    TINY,
    ArgumentError,
    as_float_array,
    check_float_range,
    difference,
)
from cvstats.errors import DesignError
from cvstats.kernels._core import check_statistic
from cvstats.kernels.cluster import check_enough_groups, cluster_moments, group_sum_squares

__all__ = ["NestedTerms", "bias_factor", "route_nested", "nested_terms", "nested_cv"]

FloatArray = NDArray[np.float64]


def bias_factor(K: int) -> float:
    """``1 + (K - 2)/K``: scales ``Err^NCV - Err^CV`` to the bias of ``Err^NCV`` at ``n``.

    If the error at training size ``m`` is ``c + d/m``, the plain CV estimate
    (``m = n(K-1)/K``) exceeds the error at ``n`` by ``(K-2)/K`` times
    ``Err^NCV - Err^CV`` (``Err^NCV`` at ``m = n(K-2)/K``), so ``Err^NCV``
    exceeds it by ``1 + (K-2)/K`` times that gap (docs/nested-cv.md).
    """
    return 1.0 + (K - 2) / K


class NestedTerms(NamedTuple):
    """Arrays of the nested-CV interval, all over the batch shape.

    Attributes
    ----------
    estimate, stderr, statistic, df : ndarray
        Bias-corrected estimate, clipped standard error, ``(estimate - mu0)/stderr``
        and ``inf`` (normal reference).
    err_ncv, err_cv : ndarray
        Mean of the inner losses ``e_in`` and of the outer losses ``e_out``.
    bias : ndarray
        ``(1 + (K-2)/K)(err_ncv - err_cv)``.
    mse : ndarray
        ``MSE^ = mean(a_k - b_k)`` before rescaling and clipping.
    se_naive : ndarray
        ``sd(e_in)/sqrt(n)``, the lower clip of ``stderr`` (``sqrt(K)`` times it the upper).
    """

    estimate: FloatArray
    stderr: FloatArray
    statistic: FloatArray
    df: FloatArray
    err_ncv: FloatArray
    err_cv: FloatArray
    bias: FloatArray
    mse: FloatArray
    se_naive: FloatArray


def _codes(labels: ArrayLike, name: str, size: int) -> tuple[NDArray[np.intp], int]:
    arr = np.asarray(labels)
    if arr.shape != (size,):
        raise ArgumentError(f"`{name}` must hold one label per split ({size}), got {arr.shape}.")
    uniq, codes = np.unique(arr, return_inverse=True)
    return codes.astype(np.intp), int(uniq.size)


def route_nested(
    main: ArrayLike,
    nested: ArrayLike,
    *,
    main_repeat: ArrayLike,
    main_fold: ArrayLike,
    nested_repeat: ArrayLike,
    nested_fold: ArrayLike,
) -> tuple[FloatArray, NDArray[np.intp], FloatArray]:
    """Sort the losses of a nested-CV design into ``e_out``, fold labels and ``e_in``.

    Parameters
    ----------
    main : array-like, shape (..., S_main, n)
        Losses of the K-fold splits, NaN off each split's test fold.
    nested : array-like, shape (..., S_nested, n)
        Losses of the pair-left-out fits, NaN off their two test folds.
    main_repeat, main_fold : array-like, shape (S_main,)
        Repeat and fold of each K-fold split.
    nested_repeat, nested_fold : array-like, shape (S_nested,)
        Repeat and one left-out fold of each pair fit (the other is read off
        the test set).

    Returns
    -------
    e_out : ndarray, shape (..., R, n)
        Out-of-fold loss of every example in every repeat.
    fold : ndarray of int, shape (..., R, n)
        Fold code ``0..K-1`` of every example in every repeat.
    e_in : ndarray, shape (..., R, K, n)
        ``e_in[..., r, k, i]``: loss of example ``i`` from the fit that leaves out
        fold ``k`` and the fold of ``i``; NaN for ``i`` in fold ``k``.
    """
    m = as_float_array(main, "main", min_ndim=2)
    s = as_float_array(nested, "nested", min_ndim=2)
    if m.shape[:-2] != s.shape[:-2] or m.shape[-1] != s.shape[-1]:
        raise ArgumentError(
            f"`main` {m.shape} and `nested` {s.shape} must agree on every axis but the splits."
        )
    batch, n = m.shape[:-2], m.shape[-1]
    m = m.reshape(-1, *m.shape[-2:])
    s = s.reshape(-1, *s.shape[-2:])
    m_rep, R = _codes(main_repeat, "main_repeat", m.shape[1])
    m_fold_labels = np.asarray(main_fold)
    m_fold, K = _codes(m_fold_labels, "main_fold", m.shape[1])
    fold_values = np.unique(m_fold_labels)
    s_rep, _ = _codes(nested_repeat, "nested_repeat", s.shape[1])
    s_fold = np.searchsorted(fold_values, np.asarray(nested_fold))
    B = m.shape[0]
    fold = np.full((B, R, n), -1, dtype=np.intp)
    e_out = np.full((B, R, n), np.nan)
    for j in range(m.shape[1]):
        tested = ~np.isnan(m[:, j])
        fold[:, m_rep[j]] = np.where(tested, m_fold[j], fold[:, m_rep[j]])
        e_out[:, m_rep[j]] = np.where(tested, m[:, j], e_out[:, m_rep[j]])
    e_in = np.full((B, R, K, n), np.nan)
    for j in range(s.shape[1]):
        r, a = s_rep[j], s_fold[j]
        tested = ~np.isnan(s[:, j])
        f = fold[:, r]
        other = np.where(tested & (f != a), f, -1).max(axis=-1)  # the second fold, per batch
        partner = np.where(f == a, other[:, None], a)
        bb, ii = np.nonzero(tested)
        e_in[bb, r, partner[bb, ii], ii] = s[bb, j, ii]
    return (
        e_out.reshape(*batch, R, n),
        fold.reshape(*batch, R, n),
        e_in.reshape(*batch, R, K, n),
    )


def _mean_var(
    x: FloatArray, mask: NDArray[np.bool_], axes: tuple[int, ...]
) -> tuple[FloatArray, ...]:
    cnt = mask.sum(axis=axes)
    total = np.where(mask, x, 0.0).sum(axis=axes)
    mean = total / cnt
    dev = np.where(mask, x - np.expand_dims(mean, axes), 0.0)
    var = (dev**2).sum(axis=axes) / (cnt - 1)
    return mean, var, cnt


def _check_range(
    inner: FloatArray,
    var_in: FloatArray,
    estimate: FloatArray,
    gap: FloatArray,
    a: FloatArray,
    mse: FloatArray,
) -> None:
    """Raise where a sum of squares of the nested-CV terms left float64's range.

    First ``var(e_in)`` (behind ``se_naive``, which bounds ``stderr`` on both
    sides) with the estimate; the inner losses are read again only where
    ``var(e_in)`` is infinite, NaN or below the smallest normal float64 or the
    estimate is not finite (every case :func:`check_float_range` can flag
    there). Then the per-fold gaps ``mean(e_in) - mean(e_out)`` behind
    ``a_k``, with ``MSE^`` (infinite also where ``var(e_out)`` overflowed).
    """
    method = "nested CV"
    suspect = ~np.isfinite(var_in) | ~np.isfinite(estimate) | (var_in < TINY)
    if np.any(suspect):
        check_float_range(
            inner.reshape(*inner.shape[:-3], -1),
            var_in,
            method=method,
            what="the sample variance of the inner losses e_in (behind se_naive)",
            of="inner losses e_in",
            estimate=estimate,
        )
    check_float_range(
        gap.reshape(*gap.shape[:-2], -1),
        a.mean(axis=(-2, -1)),
        method=method,
        what="MSE^ = mean over folds of (mean(e_in) - mean(e_out))² - var(e_out)/|I_k|",
        of="per-fold gaps mean(e_in) - mean(e_out)",
        centred=False,
        estimate=mse,
    )


def _clustered_variances(
    out_k: FloatArray,
    in_outer: NDArray[np.bool_],
    inner: FloatArray,
    err_ncv: FloatArray,
    groups: ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """``b_k`` and ``var(e_in)`` with groups (module docstring), checked for enough groups."""
    fold_means = cluster_moments(np.where(in_outer, out_k, np.nan), groups)
    few = fold_means.n_groups < 2
    if few.any():
        raise DesignError(
            "the nested CV interval with groups needs at least 2 groups in every outer fold "
            f"(the cluster-robust variance of the fold mean), but a fold has "
            f"{int(fold_means.n_groups[few].min())}; use fewer folds or more groups."
        )
    check_enough_groups(group_sum_squares(out_k[..., 0, :], groups)[1], "the nested CV interval")
    ss, _ = group_sum_squares(inner - err_ncv[..., None, None, None], groups)
    count = (~np.isnan(inner)).sum(axis=(-3, -2, -1))
    return fold_means.variance, ss.sum(axis=(-2, -1)) / (count - 1)


def nested_terms(
    e_out: ArrayLike,
    fold: ArrayLike,
    e_in: ArrayLike,
    *,
    mu0: float = 0.0,
    groups: ArrayLike | None = None,
) -> NestedTerms:
    """Compute the nested-CV estimate, standard error and their parts (module docstring).

    Parameters
    ----------
    e_out : array-like, shape (..., R, n)
        Out-of-fold losses of every repeat.
    fold : array-like of int, shape (..., R, n)
        Fold codes ``0..K-1``.
    e_in : array-like, shape (..., R, K, n)
        Inner losses, NaN on the outer fold (:func:`route_nested`).
    mu0 : float, default 0
        Null value of the statistic.
    groups : array_like of int, optional
        Group code ``0..G-1`` of every example, broadcastable to ``(..., n)``:
        ``b_k`` and ``var(e_in)`` are then cluster-robust (module docstring).

    Returns
    -------
    NestedTerms

    Raises
    ------
    ArgumentError
        If the shapes disagree, `e_in` is not NaN exactly on the outer fold, or
        a fold has fewer than 2 examples.
    DesignError
        With `groups`: if a fold has fewer than 2 groups, or the examples
        fewer than :data:`cvstats.kernels.cluster.MIN_GROUPS`.
    CubeError
        Where the losses are so large (about ``1e154`` and up) or so small
        (about ``1e-154`` and down) that a variance, ``a_k`` or the estimate
        overflows or underflows float64; the message says by which power of
        ten to rescale the losses (the statistic is unchanged by rescaling).
    """
    out = as_float_array(e_out, "e_out", min_ndim=2)
    inner = as_float_array(e_in, "e_in", min_ndim=3)
    labels = np.asarray(fold)
    K, n = inner.shape[-2], out.shape[-1]
    if labels.shape != out.shape or inner.shape[:-2] != out.shape[:-1] or inner.shape[-1] != n:
        raise ArgumentError(
            f"`e_out` {out.shape}, `fold` {labels.shape} and `e_in` {inner.shape} must be "
            "(..., R, n), (..., R, n) and (..., R, K, n)."
        )
    in_outer = labels[..., None, :] == np.arange(K)[:, None]  # (..., R, K, n)
    if (np.isnan(inner) != in_outer).any():
        raise ArgumentError(
            "`e_in` must hold a loss for every example outside the outer fold and NaN inside "
            "it: a fit leaving out each pair of folds is missing."
        )
    sizes = in_outer.sum(axis=-1)
    if (sizes < 2).any():
        raise ArgumentError(
            f"every fold needs at least 2 examples for var(e_out), got {int(sizes.min())}."
        )
    out_k = np.broadcast_to(out[..., None, :], in_outer.shape)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        mean_out, var_out, size = _mean_var(out_k, in_outer, (-1,))
        mean_in = np.nanmean(inner, axis=-1)
        a = (mean_in - mean_out) ** 2
        b = var_out / size
        err_ncv, var_in, _ = _mean_var(inner, ~in_outer, (-3, -2, -1))
        if groups is not None:
            b, var_in = _clustered_variances(out_k, in_outer, inner, err_ncv, groups)
        mse = (a - b).mean(axis=(-2, -1))
        err_cv = out.mean(axis=(-2, -1))
        bias = bias_factor(K) * (err_ncv - err_cv)
        estimate = err_ncv - bias
        gap = difference(mean_in, mean_out)
    _check_range(inner, var_in, estimate, gap, a, mse)
    se_naive = np.sqrt(var_in / n)
    se_ncv = np.sqrt(np.maximum((K - 1) / K * mse, 0.0))
    stderr = np.clip(se_ncv, se_naive, np.sqrt(K) * se_naive)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        statistic = np.where(stderr > 0, (estimate - mu0) / stderr, np.nan)
    check_statistic(estimate, stderr, statistic, mu0, "nested_cv")
    df = np.full(np.shape(estimate), np.inf)
    return NestedTerms(
        *(np.asarray(v, dtype=np.float64) for v in (estimate, stderr, statistic, df)),
        np.asarray(err_ncv, dtype=np.float64),
        np.asarray(err_cv, dtype=np.float64),
        np.asarray(bias, dtype=np.float64),
        np.asarray(mse, dtype=np.float64),
        np.asarray(se_naive, dtype=np.float64),
    )


def nested_cv(
    main: ArrayLike,
    nested: ArrayLike,
    *,
    main_repeat: ArrayLike,
    main_fold: ArrayLike,
    nested_repeat: ArrayLike,
    nested_fold: ArrayLike,
    mu0: float = 0.0,
    groups: ArrayLike | None = None,
) -> NestedTerms:
    """:func:`route_nested` then :func:`nested_terms`: the interval from raw design losses.

    `groups` (int codes of the examples, optional) as in :func:`nested_terms`.

    Returns
    -------
    NestedTerms
    """
    e_out, fold, e_in = route_nested(
        main,
        nested,
        main_repeat=main_repeat,
        main_fold=main_fold,
        nested_repeat=nested_repeat,
        nested_fold=nested_fold,
    )
    return nested_terms(e_out, fold, e_in, mu0=mu0, groups=groups)
