"""What every inference method shares.

Input checks, the one kernel-applying helper around :func:`xarray.apply_ufunc`,
and the assembly of the result.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import xarray as xr

from cvstats import kernels
from cvstats.cube import validate
from cvstats.errors import ArgumentError
from cvstats.kernels._validation import validate_alpha, validate_alternative
from cvstats.results import InferenceResult

__all__ = [
    "trusted",
    "check_options",
    "check_sizes",
    "apply_kernel",
    "pvalues",
    "make_result",
    "finish_test",
    "resolve_size",
]


# ids of cubes a caller (compare) has validated already, so that running many
# methods on one cube validates it once; scoped to a `with trusted(cube):` block.
_TRUSTED: ContextVar[frozenset[int]] = ContextVar("cvstats_trusted_cubes", default=frozenset())


@contextmanager
def trusted(cube: xr.DataArray) -> Iterator[None]:
    """Within the block, methods skip re-validating ``cube`` (already validated)."""
    token = _TRUSTED.set(_TRUSTED.get() | {id(cube)})
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def check_options(
    cube: xr.DataArray, mu0: float, alpha: float, alternative: str, *, check: bool = True
) -> tuple[float, float, str]:
    """Validate the cube (unless ``check=False``) and the common keywords."""
    if check and id(cube) not in _TRUSTED.get():
        validate(cube)
    if isinstance(mu0, bool) or not isinstance(mu0, numbers.Real) or not np.isfinite(mu0):
        raise ArgumentError(f"`mu0` must be a finite real number, got {mu0!r}.")
    return float(mu0), validate_alpha(alpha), validate_alternative(alternative)


def check_sizes(cube: xr.DataArray, n1: int, n2: int) -> tuple[int, int]:
    """Check ``n1 + n2`` against the cube's ``n`` (for user overrides); return them."""
    n = int(cube.attrs["n"])
    if n1 + n2 > n:
        raise ArgumentError(
            f"`n1` + `n2` = {n1} + {n2} exceeds the cube's n = {n} examples; pass sizes that "
            "fit the design (or None: from the cube)."
        )
    return n1, n2


def resolve_size(name: str, given: int | None, from_cube: int) -> int:
    """``n1``/``n2``: the cube's value unless the caller overrides it."""
    if given is None:
        return from_cube
    if isinstance(given, bool) or not isinstance(given, numbers.Integral) or given < 1:
        raise ArgumentError(
            f"`{name}` must be a positive int (or None: from the cube), got {given!r}."
        )
    return int(given)


def apply_kernel(
    kernel: Callable[..., Any],
    arrays: Sequence[xr.DataArray],
    core_dims: Sequence[Sequence[str]],
    n_outputs: int,
    **kwargs: Any,
) -> tuple[xr.DataArray, ...]:
    """Apply a numpy kernel over named core dims, vectorized over every other dim.

    The one bridge between the estimators and the kernels: core dims are
    moved last, every other dim is a batch dim, dask arrays stay lazy.
    """
    out = xr.apply_ufunc(
        kernel,
        *arrays,
        input_core_dims=[list(d) for d in core_dims],
        output_core_dims=[[] for _ in range(n_outputs)],
        kwargs=kwargs,
        dask="parallelized",
        output_dtypes=[float] * n_outputs,
        dask_gufunc_kwargs={"allow_rechunk": True},
    )
    return tuple(out) if n_outputs > 1 else (out,)


def pvalues(statistic: xr.DataArray, df: xr.DataArray, alternative: str) -> xr.DataArray:
    """p-values of a z or t statistic (``df = inf``: normal)."""
    return xr.apply_ufunc(
        kernels.pvalue,
        statistic,
        df,
        kwargs={"alternative": alternative},
        dask="parallelized",
        output_dtypes=[float],
    )


def _plain(value: xr.DataArray) -> xr.DataArray | float:
    return float(value) if value.ndim == 0 else value


def make_result(
    estimate: xr.DataArray,
    stderr: xr.DataArray,
    statistic: xr.DataArray,
    df: xr.DataArray,
    pvalue: xr.DataArray,
    **fields: Any,
) -> InferenceResult:
    """Assemble an :class:`InferenceResult` (0-d arrays become floats)."""
    return InferenceResult(
        estimate=_plain(estimate),
        stderr=_plain(stderr),
        statistic=_plain(statistic),
        df=_plain(df),
        pvalue=_plain(pvalue),
        **fields,
    )


def finish_test(
    stat: Sequence[xr.DataArray],
    cube: xr.DataArray,
    *,
    alternative: str,
    **fields: Any,
) -> InferenceResult:
    """Assemble the result of a z/t test from a kernel's ``(estimate, stderr, statistic, df)``.

    Adds the p-value for ``alternative`` and the cube's loss name; ``fields`` are
    the remaining :class:`InferenceResult` fields.
    """
    estimate, stderr, statistic, df = stat
    return make_result(
        estimate,
        stderr,
        statistic,
        df,
        pvalues(statistic, df, alternative),
        loss=str(cube.name),
        alternative=alternative,
        **fields,
    )
