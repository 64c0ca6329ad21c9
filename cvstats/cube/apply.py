"""The one bridge between named dims and the numpy kernels.

Every computation of cvstats on labelled arrays goes through
:func:`apply_kernel`, a thin wrapper around :func:`xarray.apply_ufunc`: the
named core dims are moved to the last axes of plain numpy arrays, a kernel of
:mod:`cvstats.kernels` (or any numpy function) computes on them, vectorized over
the leading batch axes, and the outputs come back as DataArrays over the batch
dims (and the output core dims, if any). Dask-backed inputs stay lazy: the
kernel runs chunk by chunk.

It lives in the data model because the compact packing
(:mod:`cvstats.cube.compact`) and the results need it as well as the
estimators, and layers below the estimators may not import them. It imports
only xarray (no other module of cvstats), so any module of the package may
import it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import xarray as xr

__all__ = ["apply_kernel"]


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
    gufunc_kwargs: dict[str, Any] = {"allow_rechunk": True}
    if output_sizes:
        gufunc_kwargs["output_sizes"] = dict(output_sizes)
    out = xr.apply_ufunc(
        kernel,
        *arrays,
        input_core_dims=[list(d) for d in core_dims],
        output_core_dims=[list(d) for d in out_dims],
        kwargs=kwargs,
        dask="parallelized",
        output_dtypes=list(dtypes),
        dask_gufunc_kwargs=gufunc_kwargs,
        keep_attrs=keep_attrs,
    )
    return tuple(out) if n_outputs > 1 else (out,)
