"""Hold-out t test and McNemar's tests (docs/theory.md §4, method 1).

Losses of one split: last axis = examples, NaN where an example is not in the
test set (``docs/cube-schema.md``), vectorized over leading batch dims.

Floating-point range: a variance is a sum of squares, so losses beyond
about ``1e154`` (or below about ``1e-154``) in absolute value overflow (or
underflow) float64. The hold-out t raises a :class:`~cvstats.errors.CubeError`
saying how to rescale the losses instead of returning an infinite or zero
standard error (:func:`~cvstats.checks.check_float_range`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy
from numpy.typing import ArrayLike, NDArray

from cvstats.checks import (
    ArgumentError,
    as_float_array,
    validate_alternative,
    warn_if_zero,
)
from cvstats.errors import CubeError, DesignError
from cvstats.kernels._core import StatArrays, statistic_from_variance
from cvstats.kernels.moments import nan_moments
from cvstats.kernels.reference import pvalue

__all__ = [
    "McNemarArrays",
    "holdout_t",
    "mcnemar_counts",
    "mcnemar_z",
    "mcnemar_chi2",
    "mcnemar_exact",
]

_REFERENCES = ("z", "t")


class McNemarArrays(NamedTuple):
    """Statistic and p-value of a McNemar test, as plain arrays.

    Attributes
    ----------
    statistic : ndarray
        The test statistic (see each function).
    pvalue : ndarray
        Its p-value.
    """

    statistic: NDArray[np.float64]
    pvalue: NDArray[np.float64]


def holdout_t(losses: ArrayLike, *, mu0: ArrayLike = 0.0, reference: str = "z") -> StatArrays:
    """Hold-out test on one split (docs/theory.md §4, method 1).

    ``μ̂ = μ̂_1`` (mean of the ``n2`` test losses), ``σ̂² = S_L² / n2`` with
    ``S_L²`` the sample variance of the test losses. Reference ``N(0, 1)``
    (theory's default) or ``t_{n2-1}`` (the NIPS paper's choice). A valid
    interval for the *conditional* error of the one trained model.

    Parameters
    ----------
    losses : array_like, shape (..., n_examples)
        Per-example losses of the split (or of a contrast of models), NaN
        off the test set; ``n2`` may differ across the batch.
    mu0 : array_like, default 0
        Null value.
    reference : {"z", "t"}, default "z"
        ``"z"``: ``df = inf``; ``"t"``: ``df = n2 - 1``.

    Returns
    -------
    StatArrays
        ``estimate = μ̂_1``, ``stderr = sqrt(S_L²/n2)``, ``statistic``, ``df``.

    Raises
    ------
    CubeError
        If a slice has no test example.
    DesignError
        If a slice has a single test example (no variance).

    Warns
    -----
    ZeroVarianceWarning
        Where all test losses are equal.
    """
    if reference not in _REFERENCES:
        raise ArgumentError(f"`reference` must be one of {list(_REFERENCES)}, got {reference!r}.")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
        count, mean, s2 = nan_moments(losses)
    if np.any(count < 2):
        raise DesignError(
            "hold-out t needs at least 2 test examples (non-NaN losses on the last axis of "
            f"`losses`); {int(np.sum(count < 2))} slice(s) have 1."
        )
    df = np.inf if reference == "z" else count - 1.0
    return statistic_from_variance(
        mean,
        s2 / count,
        df,
        mu0,
        method="hold-out t",
        what="the sample variance S_L² of the test losses",
        why="all test losses are equal",
        values=losses,
        of="test losses",
    )


def mcnemar_counts(
    loss_a: ArrayLike, loss_b: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Discordant-pair counts of two classifiers' 0/1 losses (docs/theory.md §4, method 1).

    Parameters
    ----------
    loss_a, loss_b : array_like, shape (..., n_examples)
        Zero-one losses of models A and B on the same split, NaN off the test
        set (the same NaN pattern in both).

    Returns
    -------
    n10 : ndarray of int, shape (...)
        Number of test examples where A is wrong and B is right.
    n01 : ndarray of int, shape (...)
        Number where A is right and B is wrong.

    Raises
    ------
    CubeError
        If the NaN patterns differ or a test loss is not 0 or 1.
    """
    a = as_float_array(loss_a, "loss_a")
    b = as_float_array(loss_b, "loss_b")
    if a.shape != b.shape:
        raise CubeError(
            f"`loss_a` and `loss_b` must have the same shape, got {a.shape} and {b.shape}."
        )
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if np.any(nan_a != nan_b):
        raise CubeError(
            "`loss_a` and `loss_b` must be NaN on the same examples (both models are "
            f"tested on the same split); they differ on {int(np.sum(nan_a != nan_b))} "
            "example(s)."
        )
    for name, x, nan in (("loss_a", a, nan_a), ("loss_b", b, nan_b)):
        bad = ~nan & (x != 0) & (x != 1)
        if np.any(bad):
            raise CubeError(
                f"McNemar's test needs zero-one losses; `{name}` has "
                f"{int(bad.sum())} test value(s) other than 0 or 1, e.g. "
                f"{x[bad].ravel()[:3].tolist()}."
            )
    n10 = np.sum((a == 1) & (b == 0), axis=-1)
    n01 = np.sum((a == 0) & (b == 1), axis=-1)
    return n10, n01


def _counts_iv(n10: ArrayLike, n01: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = as_float_array(n10, "n10", min_ndim=0)
    y = as_float_array(n01, "n01", min_ndim=0)
    for name, v in (("n10", x), ("n01", y)):
        bad = ~((v >= 0) & (v == np.round(v)))
        if np.any(bad):
            raise ArgumentError(
                f"`{name}` must hold non-negative integer counts, got "
                f"{v[bad].ravel()[:3].tolist()}."
            )
    return np.broadcast_arrays(x, y)


def _warn_no_discordant(n: np.ndarray, method: str) -> None:
    warn_if_zero(
        n,
        method,
        "the number of discordant pairs n10 + n01",
        "the two models err on the same test examples",
    )


def mcnemar_z(n10: ArrayLike, n01: ArrayLike, *, alternative: str = "two-sided") -> McNemarArrays:
    """McNemar's test in z form (docs/theory.md §4, method 1).

    ``z = (n10 - n01) / sqrt(n10 + n01)`` against ``N(0, 1)``; ``z²`` is
    McNemar's chi-square without continuity correction. ``"greater"`` means
    model A errs more often than B.

    Parameters
    ----------
    n10, n01 : array_like
        Discordant counts (see :func:`mcnemar_counts`).
    alternative : {"two-sided", "less", "greater"}
        Sidedness of the p-value.

    Returns
    -------
    McNemarArrays
        ``statistic = z`` and its normal p-value (nan where
        ``n10 + n01 = 0``).

    Warns
    -----
    ZeroVarianceWarning
        Where there is no discordant pair.
    """
    alternative = validate_alternative(alternative)
    x, y = _counts_iv(n10, n01)
    _warn_no_discordant(x + y, "McNemar z")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (x - y) / np.sqrt(x + y)
    return McNemarArrays(z[()], pvalue(z, np.inf, alternative))


def mcnemar_chi2(n10: ArrayLike, n01: ArrayLike, *, correction: bool = True) -> McNemarArrays:
    """McNemar's chi-square test, two-sided (docs/theory.md §4, method 1).

    ``χ² = (|n10 - n01| - c)² / (n10 + n01)`` with ``c = 1`` (continuity
    correction, as in docs/theory.md §4) or ``c = 0``, against ``χ²_1``. Matches
    ``statsmodels.stats.contingency_tables.mcnemar(exact=False)``, including
    its behaviour at ``n10 = n01`` with correction (statistic
    ``1/(n10 + n01)``, not 0: the formula is applied literally).

    Parameters
    ----------
    n10, n01 : array_like
        Discordant counts.
    correction : bool, default True
        Apply the continuity correction.

    Returns
    -------
    McNemarArrays
        ``statistic = χ²`` and its upper-tail ``χ²_1`` p-value (nan where
        ``n10 + n01 = 0``).

    Warns
    -----
    ZeroVarianceWarning
        Where there is no discordant pair.
    """
    x, y = _counts_iv(n10, n01)
    _warn_no_discordant(x + y, "McNemar chi-square")
    c = 1.0 if correction else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = (np.abs(x - y) - c) ** 2 / (x + y)
    chi2 = np.where(x + y == 0, np.nan, chi2)  # no discordant pair: no test, not a rejection
    return McNemarArrays(chi2[()], np.asarray(scipy.stats.chi2.sf(chi2, 1))[()])


def mcnemar_exact(
    n10: ArrayLike, n01: ArrayLike, *, alternative: str = "two-sided"
) -> McNemarArrays:
    """Exact (binomial) McNemar test (docs/theory.md §4, method 1).

    Under H0, ``n10 ~ Binomial(n10 + n01, 1/2)`` given the discordant total.
    Two-sided: ``min(1, 2 P(X <= min(n10, n01)))`` (as
    ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``);
    ``"greater"`` (A errs more): ``P(X >= n10)``; ``"less"``: ``P(X <= n10)``.
    With no discordant pair the p-value is 1.

    Parameters
    ----------
    n10, n01 : array_like
        Discordant counts.
    alternative : {"two-sided", "less", "greater"}
        Sidedness.

    Returns
    -------
    McNemarArrays
        ``statistic = n10`` (statsmodels reports ``min(n10, n01)`` instead;
        the p-values agree) and the exact p-value.

    Examples
    --------
    >>> from cvstats.kernels import mcnemar_counts, mcnemar_exact
    >>> n10, n01 = mcnemar_counts([1, 1, 0, 0, 1, 1], [0, 1, 1, 0, 0, 0])
    >>> int(n10), int(n01)
    (3, 1)
    >>> float(mcnemar_exact(n10, n01).pvalue)  # 2 P(Bin(4, 1/2) <= 1) = 10/16
    0.625
    """
    alternative = validate_alternative(alternative)
    x, y = _counts_iv(n10, n01)
    n = x + y
    if alternative == "two-sided":
        p = np.minimum(2.0 * scipy.stats.binom.cdf(np.minimum(x, y), n, 0.5), 1.0)
    elif alternative == "greater":
        p = scipy.stats.binom.sf(x - 1, n, 0.5)
    else:
        p = scipy.stats.binom.cdf(x, n, 0.5)
    return McNemarArrays(np.asarray(x)[()], np.asarray(p, dtype=np.float64)[()])
