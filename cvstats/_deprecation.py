"""Renamed arguments: the one place an old keyword is read and warned about.

Part of the foundation layer (``docs/architecture.md``): imports nothing but the
standard library and :mod:`cvstats.errors`, so the kernels use it too. One
concept has one name across the public API (``greater_is_better``,
``dataset_dim``, ``variant``, ...); a renamed argument's old keyword keeps
working for a while with a :class:`FutureWarning` saying the new name, through
:func:`renamed_argument`.
"""

from __future__ import annotations

import warnings
from typing import Any

from cvstats.errors import ArgumentError

__all__ = ["renamed_argument"]


def renamed_argument(
    old: str,
    new: str,
    value_old: Any,
    value_new: Any,
    func: str,
    *,
    default: Any = None,
    stacklevel: int = 3,
) -> Any:
    """Return the value of a renamed argument, warning when the old name was used.

    Parameters
    ----------
    old, new : str
        The old and the new keyword.
    value_old : object
        What the caller gave under ``old``; ``None`` when it was not given.
    value_new : object
        What the caller gave under ``new`` (``default`` when not given).
    func : str
        The public function, for the messages.
    default : object, optional
        The default of ``new``: a ``value_new`` other than it means ``new`` was
        given too.
    stacklevel : int, default 3
        Of the warning: 3 points at the caller of the function that calls this one.

    Returns
    -------
    object
        ``value_old`` if the old name was used, else ``value_new``.

    Raises
    ------
    ArgumentError
        If both names were given.

    Warns
    -----
    FutureWarning
        If the old name was used.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     renamed_argument("higher_is_better", "greater_is_better", True, None, "f")
    True
    >>> print(caught[0].message)
    f: `higher_is_better=` is now called `greater_is_better=`; the old name will be removed.
    """
    if value_old is None:
        return value_new
    if value_new is not default and value_new != default:
        raise ArgumentError(f"{func}: give `{new}` only (`{old}` is its old name), not both.")
    warnings.warn(
        f"{func}: `{old}=` is now called `{new}=`; the old name will be removed.",
        FutureWarning,
        stacklevel=stacklevel,
    )
    return value_old
