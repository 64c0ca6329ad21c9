"""Process-wide options of cvstats, set with :func:`set_options` (as ``xarray.set_options``).

``cvstats.set_options(threads=1)`` sets an option for the rest of the
process; ``with cvstats.set_options(threads=1): ...`` sets it for a block and
restores the previous value on leaving it, also when the block raises.
:func:`get_options` returns the values in force.

Options
-------
threads : int or None, default None
    The most threads one in-memory pass over a large cube (validation's
    checks, the split means, a contrast) may use. ``None``: up to 4 and no
    more than the cores this process may run on (the default). Either way a
    caller's limit set with threadpoolctl (``threadpool_limits(limits=n)``,
    as scikit-learn and joblib's workers set it) is honoured: cvstats never
    runs more threads than the BLAS/OpenMP pools are limited to. Results do
    not depend on this option (see :mod:`cvstats.cube.threads`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from types import TracebackType
from typing import Any

from cvstats.errors import ArgumentError, CvstatsTypeError

__all__ = ["get_options", "set_options"]


def _threads(value: Any) -> int | None:
    """Validate the ``threads`` option: ``None`` or a whole number ≥ 1."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise CvstatsTypeError(f"`threads` must be None or a whole number ≥ 1, got {value!r}.")
    try:
        n = operator.index(value)
    except TypeError:
        raise CvstatsTypeError(
            f"`threads` must be None or a whole number ≥ 1, got {value!r} "
            f"({type(value).__name__})."
        ) from None
    if n < 1:
        raise ArgumentError(
            f"`threads` must be ≥ 1, got {n}; pass threads=1 to run every pass in the "
            "calling thread, or None for the default."
        )
    return n


#: Each option's validator; its default is what the validator returns for ``None``.
_VALIDATORS: dict[str, Callable[[Any], Any]] = {"threads": _threads}
_OPTIONS: dict[str, Any] = {"threads": None}


def get_options() -> dict[str, Any]:
    """Return a copy of the options in force, ``{name: value}``."""
    return dict(_OPTIONS)


class set_options:  # noqa: N801 (a function to its callers, as xarray.set_options)
    """Set cvstats's options, for the process or, as a context manager, for a block.

    Parameters
    ----------
    threads : int or None
        The most threads one in-memory pass may use; ``None`` for the default
        (up to 4, within the cores available). A caller's threadpoolctl limit
        is honoured whatever this says.

    Examples
    --------
    >>> import cvstats
    >>> with cvstats.set_options(threads=1):
    ...     cvstats.get_options()["threads"]
    1
    >>> cvstats.get_options()["threads"] is None
    True
    """

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - set(_VALIDATORS))
        if unknown:
            raise ArgumentError(
                f"unknown option(s) {', '.join(map(repr, unknown))}; the options are "
                f"{', '.join(sorted(_VALIDATORS))}."
            )
        checked = {name: _VALIDATORS[name](value) for name, value in options.items()}
        self._previous = {name: _OPTIONS[name] for name in checked}
        _OPTIONS.update(checked)

    def __enter__(self) -> set_options:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _OPTIONS.update(self._previous)
