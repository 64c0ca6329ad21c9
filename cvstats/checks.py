"""Input validation shared by the array kernels (scipy's ``_<name>_iv`` style).

Every check raises a subclass of :class:`cvstats.errors.CvstatsError` and of
the matching built-in, with a message that names the argument in backticks,
shows the value received and says what is allowed.

Part of the foundation layer (see ``docs/architecture.md``): imports numpy and,
from the rest of the package, only :mod:`cvstats.errors`, so that the numeric
layer (:mod:`cvstats.kernels`) loads without xarray or pandas. The data model
re-exports every name as :mod:`cvstats.cube.checks`.
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
    "check_float_range",
    "difference",
    "warn_if_zero",
    "TINY",
]

#: Smallest normal float64: below it a number keeps fewer significant bits (subnormal).
TINY: float = float(np.finfo(np.float64).tiny)
#: Largest power of ten a rescaling message suggests (``1e300`` is a float64).
_MAX_EXPONENT = 300

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

    Parameters
    ----------
    alpha : float
        A level.

    Returns
    -------
    float

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

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : object
        The value given.
    minimum : int
        The smallest value allowed.

    Returns
    -------
    int

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


def _rescale_hint(
    values: np.ndarray, flagged: np.ndarray, too_large: bool, power: int = 1
) -> tuple[str, str]:
    """Describe the largest finite ``|value|`` of the flagged elements and a power of ten.

    Returns the largest value, formatted, and the advice: divide (too large) or
    multiply (too small) the losses by a power of ten that brings them near 1.
    The values scale as the losses to the power `power`, so the power of ten
    for the losses is the `power`-th root of the one for the values.
    """
    batch = values.shape[:-1]
    if flagged.shape == batch:
        values = values[flagged]
    verb = "divide" if too_large else "multiply"
    finite = np.abs(values[np.isfinite(values) & (values != 0)])
    if np.isinf(values).any() or finite.size == 0:  # the magnitude is unknown
        return (
            "inf" if too_large else "0"
        ), f"{verb} them by a power of ten that brings them near 1"
    peak = float(finite.max())
    exponent = min(abs(int(np.floor(np.log10(peak) / power))), _MAX_EXPONENT)
    if exponent == 0:
        return f"{peak:.3g}", f"{verb} them by a power of ten that brings them near 1"
    return f"{peak:.3g}", f"{verb} them by 1e{exponent}"


def difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return ``a - b``, infinite (not NaN) where ``a`` or ``b`` is, so overflows show.

    ``inf - inf`` is NaN, which :func:`check_float_range` would take for a
    missing value; the means behind ``a`` and ``b`` overflowed, so the
    difference is reported as infinite instead. No RuntimeWarning.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isinf(a) | np.isinf(b), np.inf, a - b)


def check_float_range(
    values: ArrayLike,
    result: ArrayLike,
    *,
    method: str,
    what: str,
    of: str,
    centred: bool = True,
    estimate: ArrayLike | None = None,
    power: int = 1,
) -> None:
    """Raise a :class:`~cvstats.errors.CubeError` where a sum of squares left float64's range.

    Every variance of a test is a sum of squares. Squares of numbers above
    about ``1e154`` overflow float64 (an infinite variance: statistic 0,
    p-value 1) and squares of numbers below about ``1e-154`` underflow (a
    zero or subnormal variance: an infinite or imprecise statistic, p-value
    0). Both are caught here, on the small arrays a test reduces, and turned
    into an error that says how to rescale the losses (every test statistic
    is unchanged when the losses and ``mu0`` are multiplied by one constant).

    Parameters
    ----------
    values : array_like, shape (..., K)
        The numbers whose squares (or squared deviations from their mean)
        were summed; NaN entries (examples off the test set) are ignored.
    result : array_like, shape (...)
        The variance (or sum of squares) computed from them.
    method : str
        Name of the method, for the message.
    what : str
        Which variance, e.g. ``"the sample variance of the J = 5 split means"``.
    of : str
        What the values are (plural), e.g. ``"split means"``.
    centred : bool, default True
        ``result`` measures deviations from the mean (legitimately zero when
        all values are equal); False: squares of the values themselves
        (legitimately zero when all are zero).
    estimate : array_like, optional
        The point estimate (a mean): infinite when the sum behind it overflowed.
    power : int, default 1
        How `values` scale with the losses: 1 for losses, means and their
        differences; 2 for squared deviations (as in a sandwich variance or a
        jackknife of variances, whose squares are fourth powers of the
        losses). The power of ten the message suggests for the losses is the
        `power`-th root of the one that would bring the values near 1.

    Raises
    ------
    CubeError
        Where ``result`` or ``estimate`` overflowed (or ``values`` are
        infinite), or where ``result`` is below the smallest normal float64
        while the values are not all equal (all zero when not ``centred``).
    """
    arr = np.asarray(values, dtype=np.float64)
    res = np.asarray(result, dtype=np.float64)
    over = np.isinf(res) | np.isinf(arr).any(axis=-1)
    if estimate is not None:
        over = over | np.isinf(np.asarray(estimate, dtype=np.float64))
    if np.any(over):
        largest, hint = _rescale_hint(arr, over, too_large=True, power=power)
        detail = (
            f"the {of} themselves overflow"
            if np.isinf(arr).any() or largest == "inf"
            else f"{what} overflows (largest |value| of the {of}: {largest})"
        )
        raise CubeError(
            f"{method}: the losses are too large for float64: {detail} in {int(over.sum())} "
            f"of {over.size} batch element(s); rescale the losses ({hint}, and mu0 with them): "
            "every test statistic is unchanged by rescaling."
        )
    tested = ~np.isnan(arr)
    if centred:
        first = np.take_along_axis(arr, np.argmax(tested, axis=-1)[..., None], axis=-1)
        degenerate = np.all(~tested | (arr == first), axis=-1)
    else:
        degenerate = np.all(~tested | (arr == 0), axis=-1)
    under = (res < TINY) & ~degenerate
    if np.any(under):
        largest, hint = _rescale_hint(arr, under, too_large=False, power=power)
        lost = (
            "; numbers that small have already lost precision, so recompute the losses in "
            "a larger unit if you can"
            if power == 1 and largest != "0" and float(largest) < TINY  # the losses' scale
            else ""
        )
        differ = "equal" if centred else "zero"
        raise CubeError(
            f"{method}: the losses are too small for float64: the squares behind {what} "
            f"underflow (largest |value| of the {of}: {largest}) in {int(under.sum())} of "
            f"{under.size} batch element(s), although the {of} are not all {differ}; rescale "
            f"the losses ({hint}, and mu0 with them): every test statistic is unchanged by "
            f"rescaling{lost}."
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
