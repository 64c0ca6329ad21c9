"""Bayle, Bayle, Janson & Mackey (2020) cross-validation interval (docs/beyond.md).

From one K-fold run, ``e_i`` is the out-of-fold loss of example ``i`` (or a
contrast of models' losses) and ``B_j`` the test block of fold ``j``:

    R̂ = (1/n) Σ_i e_i
    σ̂²_out = (1/n) Σ_i (e_i - R̂)²                                  (all pairs)
    σ̂²_in  = (1/K) Σ_j (|B_j| - 1)⁻¹ Σ_{i ∈ B_j} (e_i - R̂_j)²       (within fold)

and the interval ``R̂ ± z_{1-α/2} σ̂ / sqrt(n)`` (a normal reference), for the
k-fold test error (the average conditional error of the ``K`` fold models).
Plain numpy: the *last* axis indexes examples, every leading axis is a batch.

Floating-point range: ``σ̂²`` is a sum of squares, so errors beyond about
``1e154`` (or below about ``1e-154``) in absolute value overflow (or
underflow) float64. :func:`bayle_cv` raises a :class:`~cvstats.errors.CubeError`
saying how to rescale the losses instead of returning an infinite or zero
standard error (:func:`~cvstats.checks.check_float_range`); the
check reads the ``n`` errors again only where ``σ̂²`` is not finite or below
the smallest normal float64 (also where it is legitimately zero).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cvstats.checks import (
    TINY,
    ArgumentError,
    as_float_array,
    check_core_length,
    check_float_range,
)
from cvstats.kernels._core import StatArrays, statistic_from_variance

__all__ = ["BAYLE_VARIANCES", "bayle_variance", "bayle_cv"]

#: The two variance estimators of Bayle et al. (2020).
BAYLE_VARIANCES: tuple[str, ...] = ("out", "in")


def _iv(e: ArrayLike, fold: ArrayLike, variance: str) -> tuple[np.ndarray, np.ndarray]:
    if variance not in BAYLE_VARIANCES:
        raise ArgumentError(
            f"`variance` must be one of {list(BAYLE_VARIANCES)}, got {variance!r}."
        )
    arr = as_float_array(e, "e")
    check_core_length(arr.shape[-1], "e", "out-of-fold errors (n)", 2, "Bayle's CV interval")
    labels = np.asarray(fold)
    try:
        labels = np.broadcast_to(labels, arr.shape)
    except ValueError as err:
        raise ArgumentError(
            f"`fold` of shape {np.shape(fold)} does not broadcast to `e` of shape {arr.shape}."
        ) from err
    return arr, labels


def bayle_variance(e: ArrayLike, fold: ArrayLike, *, variance: str = "out") -> np.ndarray:
    """Variance estimate ``σ̂²`` of Bayle et al. (2020) for one K-fold run.

    Parameters
    ----------
    e : array_like
        Out-of-fold errors, examples on the last axis.
    fold : array_like of int
        Fold label of every example, broadcastable to `e`.
    variance : {"out", "in"}, default "out"
        ``"out"``: ``(1/n) Σ_i (e_i - R̂)²``; ``"in"``: the mean over folds of the
        within-fold sample variances (denominator ``|B_j| - 1``).

    Returns
    -------
    ndarray
        ``σ̂²`` over the batch axes.
    """
    arr, labels = _iv(e, fold, variance)
    if variance == "out":
        return np.mean((arr - arr.mean(axis=-1, keepdims=True)) ** 2, axis=-1)
    folds = np.unique(labels)
    total = np.zeros(arr.shape[:-1])
    for f in folds:
        inside = labels == f
        size = inside.sum(axis=-1)
        if np.any(size < 2):
            raise ArgumentError(
                f"`variance='in'` needs at least 2 examples in every fold, but fold {f} has "
                f"{int(size.min())}; use variance='out'."
            )
        mean_f = np.where(inside, arr, 0.0).sum(axis=-1) / size
        ss = np.where(inside, (arr - mean_f[..., None]) ** 2, 0.0).sum(axis=-1)
        total = total + ss / (size - 1)
    return total / folds.size


def _within_fold_deviations(arr: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``e_i - R̂_j`` for every example ``i`` of fold ``j`` (as in :func:`bayle_variance`)."""
    dev = np.empty_like(arr)
    with np.errstate(over="ignore", invalid="ignore"):
        for f in np.unique(labels):
            inside = labels == f
            mean_f = np.where(inside, arr, 0.0).sum(axis=-1) / inside.sum(axis=-1)
            dev = np.where(inside, arr - mean_f[..., None], dev)
    return dev


def _check_range(
    arr: np.ndarray,
    labels: np.ndarray,
    s2: np.ndarray,
    estimate: np.ndarray,
    variance: str,
    what: str,
) -> None:
    """Raise where ``σ̂²`` or ``R̂`` left float64's range (module docstring).

    Only where ``σ̂²`` is infinite, NaN or below the smallest normal float64,
    or ``R̂`` is not finite (every case :func:`check_float_range` can flag), are
    the ``n`` errors read again; ``"in"`` checks the within-fold deviations,
    whose squares make up ``σ̂²_in`` (legitimately zero when the errors are
    constant within every fold).
    """
    suspect = ~np.isfinite(s2) | ~np.isfinite(estimate) | (s2 < TINY)
    if not np.any(suspect):
        return
    if variance == "out":
        values, of, centred = arr, "out-of-fold errors", True
    else:
        values = _within_fold_deviations(arr, labels)
        of, centred = "within-fold deviations e_i - R̂_j", False
    check_float_range(
        values,
        s2,
        method="Bayle's CV interval",
        what=what,
        of=of,
        centred=centred,
        estimate=estimate,
    )


def bayle_cv(
    e: ArrayLike, fold: ArrayLike, *, variance: str = "out", mu0: ArrayLike = 0.0
) -> StatArrays:
    """Bayle et al.'s CV test: ``R̂``, ``σ̂/sqrt(n)``, ``(R̂ - μ0) sqrt(n)/σ̂`` and ``df = inf``.

    Parameters
    ----------
    e : array_like
        Out-of-fold errors, examples on the last axis.
    fold : array_like of int
        Fold label of every example, broadcastable to `e`.
    variance : {"out", "in"}, default "out"
        Variance estimator (:func:`bayle_variance`).
    mu0 : array_like, default 0
        Null value.

    Returns
    -------
    StatArrays
        ``(estimate, stderr, statistic, df)`` with ``df = inf`` (normal).

    Raises
    ------
    CubeError
        Where the errors are so large (about ``1e154`` and up) or so small
        (about ``1e-154`` and down) that ``σ̂²`` or ``R̂`` overflows or
        underflows float64; the message says by which power of ten to rescale
        the losses (the statistic is unchanged by rescaling).

    Warns
    -----
    ZeroVarianceWarning
        Where ``σ̂² = 0`` (all errors equal, or constant within folds for ``"in"``).

    Examples
    --------
    >>> import numpy as np
    >>> res = bayle_cv([1.0, 2.0, 3.0, 6.0], [0, 0, 1, 1])
    >>> float(res.estimate), float(res.stderr ** 2 * 4)
    (3.0, 3.5)
    """
    arr, labels = _iv(e, fold, variance)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        s2 = bayle_variance(arr, fold, variance=variance)
        estimate = arr.mean(axis=-1)
    n = arr.shape[-1]
    what = f"the {variance}-fold variance of the n = {n} out-of-fold errors"
    _check_range(arr, labels, s2, estimate, variance, what)
    return statistic_from_variance(
        estimate,
        s2 / n,
        np.inf,
        mu0,
        method="Bayle's CV interval",
        what=what,
        why="all out-of-fold errors are equal" if variance == "out" else "constant within folds",
    )
