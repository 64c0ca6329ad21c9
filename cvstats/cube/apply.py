"""The one bridge between named dims and the numpy kernels.

Every computation of cvstats on labelled arrays goes through
:func:`apply_kernel`, a thin wrapper around :func:`xarray.apply_ufunc`: the
named core dims are moved to the last axes of plain numpy arrays, a kernel of
:mod:`cvstats.kernels` (or any numpy function) computes on them, vectorized over
the leading batch axes, and the outputs come back as DataArrays over the batch
dims (and the output core dims, if any). Dask-backed inputs stay lazy: the
kernel runs chunk by chunk.

Only xarray's public API is used: an in-memory re-implementation of
:func:`xarray.apply_ufunc` on xarray's private ``fastpath`` constructor saved
10–15 ms per ``compare`` (measured 2026-11-28: 76 vs 88 ms at 50 datasets,
150 vs 166 ms at 250) and nothing for a method alone, which the performance
targets do not need (``docs/performance.md``), so it was dropped.

It lives in the data model because the compact packing
(:mod:`cvstats.cube.compact`) and the results need it as well as the
estimators, and layers below the estimators may not import them. It imports
only xarray (no other module of cvstats), so any module of the package may
import it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["apply_kernel", "labelled"]


def apply_kernel(
    kernel: Callable[..., Any],
    arrays: Sequence[xr.DataArray],
    core_dims: Sequence[Sequence[Hashable]],
    n_outputs: int,
    *,
    output_core_dims: Sequence[Sequence[Hashable]] | None = None,
    output_sizes: Mapping[Hashable, int] | None = None,
    output_dtypes: Sequence[Any] | None = None,
    keep_attrs: bool | str | None = None,
    **kwargs: Any,
) -> tuple[xr.DataArray, ...]:
    """Apply a numpy kernel over named core dims, vectorized over every other dim.

    The one call of :func:`xarray.apply_ufunc` in cvstats. The core dims of
    each input are moved to its last axes (in the order given), every other dim
    is a batch dim broadcast across the inputs, and dask-backed inputs stay
    lazy (``dask="parallelized"``; a core dim split over several chunks is
    rechunked into one).

    Parameters
    ----------
    kernel : callable
        ``kernel(*arrays, **kwargs)`` on numpy arrays whose last axes are the
        core dims; returns one array, or a tuple (e.g. a named tuple) of
        ``n_outputs`` arrays, each with the batch shape followed by its output
        core dims.
    arrays : sequence of xarray.DataArray
        The inputs, in the kernel's positional order.
    core_dims : sequence of sequence of hashable
        The core dims of each input (``[]`` for none), one entry per array.
    n_outputs : int
        Number of arrays the kernel returns.
    output_core_dims : sequence of sequence of hashable, optional
        The core dims of each output, one entry per output, e.g.
        ``[[SLOT, unit], [SLOT]]``; default none (every output has the batch
        dims only).
    output_sizes : mapping of hashable to int, optional
        Sizes of output core dims that are in no input (needed by dask to
        build the lazy result), e.g. ``{SLOT: k}``.
    output_dtypes : sequence, optional
        The dtype of each output (used by dask); default ``float`` for all.
    keep_attrs : bool or str, optional
        Passed to :func:`xarray.apply_ufunc`: whether (or how) the outputs keep
        the attrs of the inputs; default ``None``, xarray's default (its
        ``keep_attrs`` option).
    **kwargs
        Keyword arguments of the kernel.

    Returns
    -------
    tuple of xarray.DataArray
        The ``n_outputs`` outputs (a 1-tuple for one output).

    Raises
    ------
    ValueError
        If ``core_dims`` does not have one entry per array, or
        ``output_core_dims`` or ``output_dtypes`` not one per output.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from cvstats.cube.apply import apply_kernel
    >>> x = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("model", "split"))
    >>> (mean,) = apply_kernel(lambda a: a.mean(axis=-1), [x], [["split"]], 1)
    >>> mean.dims, mean.values.tolist()
    (('model',), [1.0, 4.0])
    """
    if len(core_dims) != len(arrays):
        raise ValueError(
            f"apply_kernel: {len(arrays)} arrays but {len(core_dims)} entries of core_dims."
        )
    out_dims = [[] for _ in range(n_outputs)] if output_core_dims is None else output_core_dims
    dtypes = [float] * n_outputs if output_dtypes is None else output_dtypes
    if len(out_dims) != n_outputs or len(dtypes) != n_outputs:
        raise ValueError(
            f"apply_kernel: n_outputs = {n_outputs}, but {len(out_dims)} entries of "
            f"output_core_dims and {len(dtypes)} of output_dtypes."
        )
    return _xarray_apply(
        kernel, arrays, core_dims, out_dims, output_sizes, dtypes, keep_attrs, kwargs
    )


def _xarray_apply(
    kernel: Callable[..., Any],
    arrays: Sequence[xr.DataArray],
    core_dims: Sequence[Sequence[Hashable]],
    out_dims: Sequence[Sequence[Hashable]],
    output_sizes: Mapping[Hashable, int] | None,
    dtypes: Sequence[Any],
    keep_attrs: bool | str | None,
    kwargs: Mapping[str, Any],
) -> tuple[xr.DataArray, ...]:
    """:func:`apply_kernel` by :func:`xarray.apply_ufunc` (any input, lazy ones too)."""
    gufunc_kwargs: dict[str, Any] = {"allow_rechunk": True}
    if output_sizes:
        gufunc_kwargs["output_sizes"] = dict(output_sizes)
    out = xr.apply_ufunc(
        kernel,
        *arrays,
        input_core_dims=[list(d) for d in core_dims],
        output_core_dims=[list(d) for d in out_dims],
        kwargs=dict(kwargs),
        dask="parallelized",
        output_dtypes=list(dtypes),
        dask_gufunc_kwargs=gufunc_kwargs,
        keep_attrs=keep_attrs,
    )
    return tuple(out) if len(out_dims) > 1 else (out,)


def labelled(
    values: np.ndarray,
    dims: Sequence[Hashable],
    coords: Mapping[Hashable, xr.Variable],
    indexes: Mapping[Hashable, Any],
    name: Hashable | None,
    attrs: Mapping[Any, Any],
) -> xr.DataArray:
    """Return ``values`` over ``dims`` with coordinates and indexes taken from another array.

    ``coords`` are coordinate variables and ``indexes`` their indexes
    (``array.xindexes``), on dims of ``dims`` of the same sizes. Equal to
    ``xarray.DataArray(values, dims=dims, coords=coords, name=name, attrs=attrs)``,
    without re-creating the indexes from the coordinates' values: they are
    handed to :class:`xarray.Coordinates` (public API) with their indexes.
    """
    unindexed = any(name in dims and name not in indexes for name in coords)
    if unindexed:  # the constructor builds that index
        return xr.DataArray(values, dims=tuple(dims), coords=dict(coords), name=name, attrs=attrs)
    # shallow copies, as the constructor makes them: their attrs are not the source's
    own = {name: coord.copy(deep=False) for name, coord in coords.items()}
    labels = xr.Coordinates(own, indexes=dict(indexes))
    return xr.DataArray(values, dims=tuple(dims), coords=labels, name=name, attrs=dict(attrs))
