"""Input validation shared by the array kernels (scipy's ``_<name>_iv`` style).

Every check raises a subclass of :class:`cvstats.errors.CvstatsError` and of
the matching built-in, with a message that names the argument in backticks,
shows the value received and says what is allowed.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cvstats.errors import ArgumentError, CubeError, DesignError, ZeroVarianceWarning

__all__ = [
    "ArgumentError",
    "ALTERNATIVES",
    "validate_alternative",
    "validate_alpha",
    "check_int",
    "as_float_array",
    "check_core_length",
    "positive_array",
    "check_no_empty_split",
    "warn_if_zero",
]

ALTERNATIVES: tuple[str, ...] = ("two-sided", "less", "greater")


def validate_alternative(alternative: str) -> str:
    """Return `alternative` if it is one of :data:`ALTERNATIVES`, else raise.

    Raises
    ------
    ArgumentError
        If `alternative` is not ``"two-sided"``, ``"less"`` or ``"greater"``.
    """
    if not isinstance(alternative, str) or alternative not in ALTERNATIVES:
        raise ArgumentError(
            f"`alternative` must be one of {list(ALTERNATIVES)}, got {alternative!r}."
        )
    return alternative


def validate_alpha(alpha: float) -> float:
    """Return `alpha` as a float if it is a real number in (0, 1), else raise.

    Raises
    ------
    ArgumentError
        If `alpha` is not a real scalar strictly between 0 and 1.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise ArgumentError(
            f"`alpha` must be a real number in (0, 1), got {alpha!r} "
            f"of type {type(alpha).__name__}."
        )
    value = float(alpha)
    if not 0.0 < value < 1.0:
        raise ArgumentError(f"`alpha` must be in the open interval (0, 1), got {alpha!r}.")
    return value


def check_int(name: str, value: object, minimum: int) -> int:
    """Return ``value`` as an int if it is an integer (not a bool) ``>= minimum``.

    Raises
    ------
    ArgumentError
        ``"`name` must be an int >= minimum, got value."`` otherwise.

    Examples
    --------
    >>> check_int("J", 15, 2)
    15
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ArgumentError(f"`{name}` must be an int >= {minimum}, got {value!r}.")
    return int(value)


def as_float_array(x: ArrayLike, name: str, *, min_ndim: int = 1) -> NDArray[np.float64]:
    """Convert `x` to a float64 array with at least `min_ndim` dims, or raise.

    Raises
    ------
    ArgumentError
        If `x` cannot be converted to floats or has fewer than `min_ndim`
        dimensions.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"`{name}` must be an array of numbers: {e}") from e
    if arr.ndim < min_ndim:
        raise ArgumentError(
            f"`{name}` must have at least {min_ndim} dimension(s) (the core dims last), "
            f"got an array of shape {arr.shape}."
        )
    return arr


def check_core_length(n: int, name: str, what: str, minimum: int, method: str) -> None:
    """Raise a :class:`~cvstats.errors.DesignError` if a core axis is too short.

    Parameters
    ----------
    n : int
        Length of the core axis.
    name : str
        Argument whose axis it is.
    what : str
        What the axis counts, e.g. ``"split means J"``.
    minimum : int
        Smallest valid length.
    method : str
        Name of the method that needs it (for the message).
    """
    if n < minimum:
        raise DesignError(
            f"{method} needs at least {minimum} {what} on the last axis of `{name}`, got {n}."
        )


def positive_array(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """Return `x` as a float array after checking every value is finite and > 0.

    Raises
    ------
    ArgumentError
        If any value of `x` is not a finite positive number.
    """
    arr = as_float_array(x, name, min_ndim=0)
    bad = ~(np.isfinite(arr) & (arr > 0))
    if np.any(bad):
        raise ArgumentError(
            f"`{name}` must be finite and > 0, got {arr[bad].ravel()[:5].tolist()} "
            f"in {int(bad.sum())} element(s)."
        )
    return arr


def check_no_empty_split(count: NDArray[np.int64], name: str) -> None:
    """Raise a :class:`~cvstats.errors.CubeError` if some split has no test example.

    Parameters
    ----------
    count : ndarray of int
        Number of non-NaN losses of each split.
    name : str
        Argument holding the losses.
    """
    empty = count == 0
    if np.any(empty):
        raise CubeError(
            f"`{name}`: {int(empty.sum())} of {empty.size} split(s) have no test example "
            "(every loss on the last axis is NaN); NaN must mark only examples that are "
            "not in the split's test set."
        )


def warn_if_zero(variance: NDArray[np.float64], method: str, what: str, why: str) -> None:
    """Emit one :class:`~cvstats.errors.ZeroVarianceWarning` if any variance is zero.

    Parameters
    ----------
    variance : ndarray
        Variance estimates (NaN entries are ignored).
    method : str
        Name of the method, for the message.
    what : str
        Which variance, e.g. ``"the sample variance of the J = 5 split means"``.
    why : str
        When it is zero, e.g. ``"all J split means are equal"``.
    """
    zero = variance == 0
    if np.any(zero):
        warnings.warn(
            f"{method}: {what} is zero in {int(zero.sum())} of {zero.size} batch "
            f"element(s) ({why}); the statistic there is +-inf, or nan where the "
            "estimate equals mu0.",
            ZeroVarianceWarning,
            stacklevel=3,
        )
