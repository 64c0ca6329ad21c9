"""Cluster-robust variance of a mean (docs/grouped-data.md).

When the examples come in groups (patients with several scans, users with
several sessions) the losses of one group are correlated, and the iid
variance ``S²/n`` of their mean is too small. The cluster-robust (CR1)
variance of the mean ``μ̂`` of ``N`` values in ``G`` groups sums the
per-group influence terms ``u_g = Σ_{i ∈ g} (x_i - μ̂)``::

    V̂ = c · Σ_g u_g² / N²,   c = G/(G-1) · (N-1)/(N-K),  K = 1

with the small-sample factor ``c`` of statsmodels' cluster-robust covariance
(``OLS(x, ones).fit(cov_type="cluster", cov_kwds={"groups": g})``, whose
default ``use_correction=True``; Cameron & Miller 2015, "A practitioner's
guide to cluster-robust inference", J. Human Resources 50(2), §II: the
CR1 factor). For a mean ``K = 1``, so ``c = G/(G-1)``; with one value per
group (``G = N``) ``V̂ = S²/N``, the iid variance with the sample variance
``S²`` (denominator ``N - 1``).

Plain numpy: the *last* axis indexes examples (NaN where an example is not
in the sample, e.g. off a split's test set), every leading axis is a batch;
the groups are integer codes ``0..G-1`` broadcastable to the values. ``G``
counts the groups with at least one value in the slice.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import ArgumentError, as_float_array, validate_alternative, warn_if_zero
from cvstats.errors import CubeError, DesignError
from cvstats.kernels._core import StatArrays, statistic_from_variance
from cvstats.kernels.reference import pvalue

__all__ = [
    "MIN_GROUPS",
    "ClusterMoments",
    "ClusteredMcNemar",
    "check_enough_groups",
    "cluster_mcnemar_z",
    "cluster_moments",
    "cluster_t",
    "group_sum_squares",
]

#: Fewest groups a cluster-robust variance is computed from. With fewer, the
#: CR1 variance is biased down and its reference distribution unknown (Cameron
#: & Miller 2015, §VI: "few clusters"); cvstats refuses rather than guess.
MIN_GROUPS = 10

_REFERENCES = ("z", "t")


class ClusteredMcNemar(NamedTuple):
    """Clustered McNemar z (:func:`cluster_mcnemar_z`), as plain arrays.

    Attributes
    ----------
    statistic, pvalue : ndarray
        ``z`` and its normal p-value.
    stderr : ndarray
        ``sqrt(Σ_g u_g²)/n``, the standard error of the difference of error rates.
    n_groups : ndarray of int
        ``G``, the groups with a test example.
    """

    statistic: NDArray[np.float64]
    pvalue: NDArray[np.float64]
    stderr: NDArray[np.float64]
    n_groups: NDArray[np.int64]


class ClusterMoments(NamedTuple):
    """Sizes, mean and cluster-robust variance of the mean, as plain arrays.

    Attributes
    ----------
    count : ndarray of int
        ``N``, the number of values (non-NaN) in each slice.
    n_groups : ndarray of int
        ``G``, the number of groups with a value in each slice.
    mean : ndarray
        ``μ̂``, the mean of the values.
    variance : ndarray
        ``V̂``, the CR1 cluster-robust variance of ``μ̂`` (module docstring);
        nan where ``G < 2``.
    """

    count: NDArray[np.int64]
    n_groups: NDArray[np.int64]
    mean: NDArray[np.float64]
    variance: NDArray[np.float64]


def _codes(groups: ArrayLike, shape: tuple[int, ...]) -> NDArray[np.int64]:
    """Return ``groups`` as non-negative int codes broadcast to ``shape``."""
    codes = np.asarray(groups)
    if not np.issubdtype(codes.dtype, np.integer):
        raise ArgumentError(
            f"`groups` must hold integer group codes 0..G-1, got dtype {codes.dtype}; "
            "code labels with pandas.factorize."
        )
    if codes.size and int(codes.min()) < 0:
        raise ArgumentError(
            f"`groups` must hold non-negative integer codes, got {int(codes.min())}."
        )
    try:
        return np.broadcast_to(codes.astype(np.int64), shape)
    except ValueError as err:
        raise ArgumentError(
            f"`groups` of shape {codes.shape} does not broadcast to the values of shape {shape}."
        ) from err


def _group_sum_squares(
    values: np.ndarray, present: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``Σ_g (Σ_{i ∈ g, present} x_i)²`` and ``G`` (groups present) over the last axis."""
    batch = values.shape[:-1]
    n_batch = int(np.prod(batch, dtype=np.int64))
    width = int(codes.max()) + 1 if codes.size else 1
    # one bincount over (batch slice, group): slice b's group g is bin b * width + g
    offset = np.arange(n_batch, dtype=np.int64).reshape(*batch, 1) * width
    bins = (codes + offset).ravel()
    kept = np.where(present, values, 0.0).ravel()
    sums = np.bincount(bins, weights=kept, minlength=n_batch * width)
    sizes = np.bincount(bins, weights=present.ravel(), minlength=n_batch * width)
    n_groups = (sizes.reshape(*batch, width) > 0).sum(axis=-1)
    return (sums.reshape(*batch, width) ** 2).sum(axis=-1), n_groups


def group_sum_squares(
    values: ArrayLike, groups: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """``Σ_g (Σ_{i ∈ g} x_i)²`` over the last axis, and ``G``, the groups with a value.

    The sum of squared per-group sums of ``values`` as given (centre them
    first for influence terms).

    Parameters
    ----------
    values : array_like, shape (..., n)
        The terms to sum per group; NaN marks one not in the sample.
    groups : array_like of int
        Codes ``0..G-1`` (one per example), broadcastable to `values`.

    Returns
    -------
    sum_squares, n_groups : ndarray
        Over the batch axes. With one value per group ``sum_squares = Σ_i x_i²``.
    """
    arr = as_float_array(values, "values")
    present = ~np.isnan(arr)
    return _group_sum_squares(arr, present, _codes(groups, arr.shape))


#: What :func:`check_enough_groups` advises by default (a cube's ``group`` coordinate).
_GROUP_FIX = (
    "test on more groups, or drop the `group` coordinate if the examples are independent "
    "(cube.drop_vars('group'))"
)


def check_enough_groups(
    n_groups: ArrayLike, method: str, *, unit: str = "group", fix: str = _GROUP_FIX
) -> None:
    """Raise a :class:`~cvstats.errors.DesignError` where fewer than :data:`MIN_GROUPS` groups.

    The one minimum-cluster rule of cvstats (Cameron & Miller 2015, §VI):
    every cluster-robust variance is refused on fewer than
    :data:`MIN_GROUPS` groups.

    Parameters
    ----------
    n_groups : array_like of int
        ``G`` of every slice.
    method : str
        The method refused, as the message names it.
    unit : str, default "group"
        What a group is called for the caller (``"cluster"`` for a benchmark's
        passages).
    fix : str, default: more groups or drop the ``group`` coordinate
        What to do instead.
    """
    n_groups = np.asarray(n_groups)
    few = n_groups < MIN_GROUPS
    if np.any(few):
        raise DesignError(
            f"{method} with {unit}s needs at least {MIN_GROUPS} {unit}s to estimate a "
            f"cluster-robust variance (with fewer it is biased down and its reference "
            f"unknown: Cameron & Miller 2015, §VI), but the sample has "
            f"G = {int(n_groups[few].min())} {unit}(s); {fix}."
        )


def cluster_mcnemar_z(
    differences: ArrayLike, groups: ArrayLike, *, alternative: str = "two-sided"
) -> ClusteredMcNemar:
    """McNemar's z for clustered matched pairs (Durkalski et al. 2003).

    With ``d_i = L_A - L_B ∈ {-1, 0, 1}`` the difference of two classifiers'
    0/1 losses on test example ``i`` and ``u_g = Σ_{i ∈ g} d_i`` (``n10_g -
    n01_g`` of group ``g``)::

        z = Σ_g u_g / sqrt(Σ_g u_g²)

    against ``N(0, 1)``: the variance of ``Σ_i d_i`` under ``H0`` (no
    centring, as McNemar's ``n10 + n01`` is ``Σ_i d_i²``) summed per group
    (Durkalski, Palesch, Lipsitz & Rust 2003, "Analysis of clustered
    matched-pair data", Statistics in Medicine 22, 2417-2428: their statistic
    ``χ² = (Σ_g u_g)²/Σ_g u_g²`` is ``z²``). With one example per group it is McNemar's z.

    ``Σ_g u_g²`` is the uncentred cluster score variance of ``Σ_i d_i`` (the
    null ``E[d_i] = 0`` imposed, so no centring and no small-sample factor):
    statsmodels' ``sandwich_covariance.S_crosssection(d[:, None], groups)``,
    the "meat" of the cluster-robust sandwich (Cameron & Miller 2015, §II).

    Parameters
    ----------
    differences : array_like, shape (..., n)
        ``d_i`` in ``{-1, 0, 1}``, NaN off the test set.
    groups : array_like of int
        Group code of every example, broadcastable to `differences`.
    alternative : {"two-sided", "less", "greater"}
        Sidedness; ``"greater"``: model A errs more often.

    Returns
    -------
    ClusteredMcNemar
        ``statistic = z``, its p-value, ``stderr = sqrt(Σ_g u_g²)/n`` (of the
        difference of error rates ``Σ d_i / n``) and ``n_groups``.

    Raises
    ------
    DesignError
        If a slice has fewer than :data:`MIN_GROUPS` groups.

    Warns
    -----
    ZeroVarianceWarning
        Where no group has a discordant pair left unbalanced (``Σ_g u_g² = 0``).
    """
    alternative = validate_alternative(alternative)
    arr = as_float_array(differences, "differences")
    codes = _codes(groups, arr.shape)
    present = ~np.isnan(arr)
    ss, n_groups = _group_sum_squares(arr, present, codes)
    check_enough_groups(n_groups, "McNemar's test")
    warn_if_zero(
        ss,
        "clustered McNemar z",
        "the sum over groups of (n10_g - n01_g)²",
        "every group has as many (A wrong, B right) as (A right, B wrong) pairs",
    )
    total = np.where(present, arr, 0.0).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = total / np.sqrt(ss)
    n = present.sum(axis=-1)
    return ClusteredMcNemar(z[()], pvalue(z, np.inf, alternative), (np.sqrt(ss) / n)[()], n_groups)


def cluster_moments(values: ArrayLike, groups: ArrayLike) -> ClusterMoments:
    """Mean and cluster-robust (CR1) variance of the mean over the last axis.

    Parameters
    ----------
    values : array_like, shape (..., n)
        Values (per-example losses or loss differences), NaN where an example
        is not in the sample.
    groups : array_like of int
        Group code of every example, broadcastable to `values`.

    Returns
    -------
    ClusterMoments
        ``(count, n_groups, mean, variance)`` over the batch axes.

    Raises
    ------
    CubeError
        If a slice has no value.

    Examples
    --------
    >>> import numpy as np
    >>> m = cluster_moments([1.0, 2.0, 4.0, 7.0], [0, 0, 1, 1])
    >>> # group sums of deviations from 3.5: -4 and 4; G/(G-1) · ((-4)² + 4²) / 4² = 4
    >>> int(m.n_groups), float(m.mean), float(m.variance)
    (2, 3.5, 4.0)
    """
    arr = as_float_array(values, "values")
    codes = _codes(groups, arr.shape)
    present = ~np.isnan(arr)
    count = present.sum(axis=-1)
    if np.any(count == 0):
        raise CubeError(
            f"{int(np.sum(count == 0))} slice(s) of `values` have no value (all NaN); every "
            "slice needs at least one."
        )
    with np.errstate(over="ignore", invalid="ignore"):
        mean = np.where(present, arr, 0.0).sum(axis=-1) / count
        ss, n_groups = _group_sum_squares(arr - mean[..., None], present, codes)
        g = n_groups.astype(np.float64)
        factor = np.where(n_groups > 1, g / np.maximum(g - 1.0, 1.0), np.nan)
        variance = factor * ss / count.astype(np.float64) ** 2
    return ClusterMoments(count, n_groups, mean, variance)


def cluster_t(
    values: ArrayLike,
    groups: ArrayLike,
    *,
    mu0: ArrayLike = 0.0,
    reference: str = "z",
    method: str = "cluster-robust t",
) -> StatArrays:
    """Test of the mean with the cluster-robust variance: ``(μ̂ - μ0)/sqrt(V̂)``.

    Parameters
    ----------
    values : array_like, shape (..., n)
        Values, NaN off the sample.
    groups : array_like of int
        Group code of every example, broadcastable to `values`.
    mu0 : array_like, default 0
        Null value.
    reference : {"z", "t"}, default "z"
        ``"z"``: ``df = inf``; ``"t"``: ``df = G - 1`` (the reference of
        Cameron & Miller 2015, §VI, for the CR1 variance; ``N - 1`` with one
        value per group, as the iid t).
    method : str
        Name of the calling method, for its messages.

    Returns
    -------
    StatArrays
        ``estimate = μ̂``, ``stderr = sqrt(V̂)``, ``statistic``, ``df``.

    Raises
    ------
    DesignError
        If a slice has fewer than :data:`MIN_GROUPS` groups.

    Warns
    -----
    ZeroVarianceWarning
        Where ``V̂ = 0`` (every group's values sum to their mean).
    """
    if reference not in _REFERENCES:
        raise ArgumentError(f"`reference` must be one of {list(_REFERENCES)}, got {reference!r}.")
    count, n_groups, mean, variance = cluster_moments(values, groups)
    check_enough_groups(n_groups, method)
    df = np.inf if reference == "z" else n_groups - 1.0
    return statistic_from_variance(
        mean,
        variance,
        df,
        mu0,
        method=method,
        what="the cluster-robust variance of the mean",
        why="every group's values sum to their mean",
    )
