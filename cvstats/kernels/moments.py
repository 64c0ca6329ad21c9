"""Moments of losses and split means (docs/theory.md §1–§2).

Plain numpy, last axis = core axis. NaN marks an example that is not in a
split's test set (``docs/cube-schema.md``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import (
    as_float_array,
    check_core_length,
    check_no_empty_split,
)

__all__ = ["n_test", "split_means", "sample_variance", "nan_moments"]


def n_test(losses: ArrayLike) -> NDArray[np.int64]:
    """Count the test examples (non-NaN losses) of each split.

    Parameters
    ----------
    losses : array_like, shape (..., n_examples)
        Per-example losses, NaN where the example is not in the test set.

    Returns
    -------
    ndarray of int, shape (...)
        ``n2`` of each split.
    """
    arr = as_float_array(losses, "losses")
    return np.sum(~np.isnan(arr), axis=-1)


def split_means(losses: ArrayLike) -> NDArray[np.float64]:
    """Test mean ``μ̂_j`` of each split (docs/theory.md §1).

    ``μ̂_j = (1/n2) Σ_{i ∈ S_j^c} L(j, i)``: the mean of the non-NaN losses on
    the last axis.

    Parameters
    ----------
    losses : array_like, shape (..., n_examples)
        Per-example losses, NaN where the example is not in the test set
        (typically shape ``(..., J, n_examples)``).

    Returns
    -------
    ndarray, shape (...)
        The split means.

    Raises
    ------
    CubeError
        If some split has no test example (all of its losses are NaN).
    """
    arr = as_float_array(losses, "losses")
    count = np.sum(~np.isnan(arr), axis=-1)
    check_no_empty_split(count, "losses")
    return np.nansum(arr, axis=-1) / count


def sample_variance(x: ArrayLike, *, name: str = "x", what: str = "values") -> NDArray[np.float64]:
    """Sample variance (denominator ``K - 1``) over the last axis (docs/theory.md §2, Lemma 1).

    Where all values of a slice are equal the result is exactly ``0.0``
    (the two-pass formula can otherwise leave a rounding residue such as
    ``1e-34``, which would turn an undefined statistic into a huge finite
    one). NaN propagates.

    Parameters
    ----------
    x : array_like, shape (..., K)
        Values, ``K >= 2``.
    name, what : str
        Argument name and what the values are, for the error message.

    Returns
    -------
    ndarray, shape (...)
        ``S² = Σ_k (x_k - x̄)² / (K - 1)``.

    Raises
    ------
    DesignError
        If ``K < 2``.
    """
    arr = as_float_array(x, name)
    check_core_length(arr.shape[-1], name, what, 2, "sample_variance")
    mean = np.mean(arr, axis=-1, keepdims=True)
    var = np.sum((arr - mean) ** 2, axis=-1) / (arr.shape[-1] - 1)
    all_equal = np.all(arr == arr[..., :1], axis=-1)
    return np.where(all_equal, 0.0, var)


def nan_moments(
    losses: ArrayLike,
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Count, mean and sample variance of the non-NaN losses on the last axis.

    Parameters
    ----------
    losses : array_like, shape (..., n_examples)
        Per-example losses of one split, NaN off the test set.

    Returns
    -------
    count : ndarray of int, shape (...)
        ``n2``, the number of test examples.
    mean : ndarray, shape (...)
        ``μ̂_1``, their mean.
    variance : ndarray, shape (...)
        ``S_L²``, their sample variance (denominator ``n2 - 1``; nan when
        ``n2 = 1``; exactly 0 when all test losses are equal).

    Raises
    ------
    CubeError
        If some slice has no test example.
    """
    arr = as_float_array(losses, "losses")
    test = ~np.isnan(arr)
    count = np.sum(test, axis=-1)
    check_no_empty_split(count, "losses")
    mean = np.nansum(arr, axis=-1) / count
    dev2 = np.where(test, (arr - mean[..., None]) ** 2, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.sum(dev2, axis=-1) / (count - 1)
    var = np.where(count > 1, var, np.nan)
    first = np.take_along_axis(arr, np.argmax(test, axis=-1)[..., None], axis=-1)
    all_equal = np.all(~test | (arr == first), axis=-1)
    var = np.where(all_equal & (count > 1), 0.0, var)
    return count, mean, var
