"""Saving and opening loss cubes: netCDF-4 (``.nc``) and zarr (``.zarr``) files.

Score cubes (:mod:`cvstats.cube.score`, one value per split and model) are saved
and opened the same way; their bool-or-int attr ``greater_is_better`` is written
as an int (netCDF refuses bool attrs).

:func:`save` validates a cube and writes it atomically: the file is written
under a temporary name in the destination directory and moved into place
only once complete, so a crash, a kill or a full disk mid-way leaves any
previous file at that path intact. :func:`open_cube` reads it back exactly
(values, NaN pattern, coordinates with their dtypes, attrs), eagerly or as a
lazy dask-backed array, and refuses files that ``save`` did not write.

On disk a cube is a one-variable ``xarray.Dataset`` (``cube.to_dataset()``)
whose global attrs record ``schema_version``, ``cvstats_version`` and, under
``cvstats_variable``, the name of the cube's variable.

Storage never loses a file:

* **no clobbering**: without ``overwrite`` the finished file is moved to its
  path by an operation that fails if anything exists there (``renameat2``
  with ``RENAME_NOREPLACE`` on Linux, else a hard link for a file), so of
  two processes saving to the same new path at once exactly one succeeds;
* **only cvstats files are replaced**: ``overwrite=True`` replaces a file or
  store whose global attrs carry ``cvstats_version`` and
  ``cvstats_variable`` (and, for a zarr store, nothing but zarr metadata and
  arrays), never a foreign file, directory, link, pipe or device;
* **a full disk is an error, not a crash**: netCDF files are written through
  a file object that never reports an I/O failure to HDF5 (HDF5 cannot close
  a file whose writes failed without corrupting its memory), so the failure
  is raised as :class:`cvstats.StorageError` once HDF5 has closed the file;
* only regular files and directories are opened (a FIFO would block forever);
* temporary files are hidden, named ``.<name>.tmp-<random>`` (or
  ``.<name>.old-<random>`` for a zarr store being replaced), and deleted on
  any failure; nothing else is ever written or deleted.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from cvstats._version import __version__
from cvstats.cube.files import (
    BUILD_HINT,
    FORMATS,
    OPEN_KWARGS,
    VARIABLE_ATTR,
    VERSION_ATTR,
    check_chunk_dims,
    check_chunks,
    check_source,
    check_suffix,
    save_dataset,
)
from cvstats.cube.schema import (
    CORE_DIMS,
    EXAMPLE,
    GREATER_IS_BETTER,
    IN_TRAIN,
    MODEL,
    N_TEST,
    SCHEMA_VERSION,
    SPLIT,
    SPLIT_COORDS,
    UNIT_DIMS,
)
from cvstats.cube.validation import validate
from cvstats.errors import (
    ArgumentError,
    CubeError,
    StorageError,
)

__all__ = ["SCHEMA_VERSION", "save", "open_cube"]


def save(cube: xr.DataArray, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Validate a loss cube and write it atomically to a netCDF-4 or zarr file.

    The format follows the suffix of `path`: ``.nc`` writes a netCDF-4 file
    (through h5netcdf), ``.zarr`` a zarr store (a directory). The cube is
    written under a temporary name (``.<name>.tmp-<random>``) in the same
    directory, then moved to `path`, so an interrupted or failed save never
    leaves a half-written file at `path` and keeps the previous one intact.

    Without `overwrite` the move fails if anything exists at `path` by then,
    so of several processes saving to the same new path at once exactly one
    succeeds and the others raise. With `overwrite` only a file or store
    written by cvstats is replaced: a netCDF file in one atomic rename, a
    zarr store in two (old store aside, new one in), so for an instant
    `path` does not exist.

    Dask-backed cubes are written chunk by chunk without being loaded into
    memory. The written file carries the attrs ``schema_version`` and
    ``cvstats_version`` (on the cube and globally); `cube` itself is not
    modified.

    Parameters
    ----------
    cube : xarray.DataArray
        A loss cube (or a score cube) following ``docs/cube-schema.md``;
        validated with :func:`cvstats.validate` before anything is written. A
        bool ``greater_is_better`` attr (score cubes) is written as 0 or 1.
    path : str or os.PathLike
        Destination, ending in ``.nc`` or ``.zarr``. Its directory must exist.
    overwrite : bool, default False
        Replace a file or store written by cvstats at `path`. Without it an
        existing `path` is an error.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    cvstats.CubeError
        If `cube` does not follow the schema.
    cvstats.StorageError
        If the suffix is not ``.nc`` or ``.zarr``; `path` exists and `overwrite`
        is false (also when another process saved there first); `overwrite` is
        true but `path` is not a file or store written by cvstats (a foreign
        file or directory, a symbolic link, a FIFO or device); its directory
        does not exist; the disk has less free space than the netCDF file's
        data need; or writing fails (e.g. an attr the format cannot store,
        such as a bool or dict in netCDF, a full disk, or an error computing a
        dask-backed cube), the original exception chained.

    See Also
    --------
    open_cube : Read a saved cube back.

    Notes
    -----
    A process killed mid-save (e.g. by SIGKILL or a power cut) cannot clean up:
    it may leave a hidden ``.<name>.tmp-<random>`` file or directory next to
    `path`, which is safe to delete. A zarr store killed between its two renames
    leaves the previous store as ``.<name>.old-<random>``. netCDF files are
    flushed to disk (``fsync``) before they are moved into place; zarr stores are
    not.

    The no-clobber move is atomic on Linux (``renameat2``, on filesystems that
    support it: ext4, xfs, btrfs, tmpfs, ...) and, for netCDF files, wherever
    hard links work; elsewhere (e.g. a zarr store on macOS) a path created by
    another process between the last check and the move can still be
    replaced if it is an empty directory. The check that a path holds a
    cvstats file before replacing it is not atomic with the replacement.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, cvstats
    >>> d = cvstats.designs.kfold(6, K=3, seed=0)
    >>> cube = cvstats.from_arrays(np.ones((3, 6, 1)), design=d)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = cvstats.save(cube, pathlib.Path(tmp) / "results.nc")
    ...     back = cvstats.open_cube(path)  # adds schema_version, cvstats_version attrs
    ...     print(path.name, back.drop_attrs().identical(cube.drop_attrs()))
    results.nc True
    """
    target = Path(path)
    check_suffix(target)
    validate(cube)
    return save_dataset(lambda: _to_dataset(cube), target, overwrite=overwrite, what="the cube")


def open_cube(
    path: str | os.PathLike[str],
    chunks: Mapping[str, int | str | None] | int | str | None = None,
) -> xr.DataArray:
    """Open a loss cube (or a score cube) written by :func:`save`.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.nc`` file or ``.zarr`` store written by :func:`cvstats.save`.
    chunks : dict, int, "auto" or None, default None
        ``None`` reads the whole cube into memory (numpy-backed) and closes the
        file. Anything else opens it lazily as a dask-backed array with these
        chunks: ``"auto"``, a positive int (on every dim), ``-1`` (whole dims),
        or a dict mapping dims to one of these or to a tuple of chunk sizes; a
        dim left out of the dict or given ``None`` or ``0`` keeps the file's own
        chunks (so ``{}`` uses the file's chunks throughout). The file stays open until the cube's
        ``close()`` is called or it is garbage-collected.

    Returns
    -------
    xarray.DataArray
        The cube, exactly as saved: values and dtype (float32 or float64), NaN
        pattern, coordinates (int as int64, strings as numpy unicode, `in_train`
        as bool), attrs (including ``schema_version`` and ``cvstats_version``).
        It has been checked with :func:`cvstats.validate`.

    Raises
    ------
    cvstats.StorageError
        If the suffix is not ``.nc`` or ``.zarr``, `path` does not exist, is
        neither a regular file nor a directory (a FIFO, socket or device, or a
        zarr store containing one: reading it could block forever), cannot be
        read as netCDF-4 / zarr (e.g. truncated), holds no cube written by
        ``cvstats.save``, was written by a newer cvstats, or is a zarr store
        using a pickle codec (never decoded, as unpickling can run code).
    cvstats.CubeError
        If the stored cube does not follow the schema.
    cvstats.ArgumentError
        If `chunks` has an invalid value (e.g. ``-5`` or ``"bad"``) or names a
        dim the cube does not have.
    cvstats.CvstatsTypeError
        If `chunks` has an invalid type (e.g. a float or a list).

    See Also
    --------
    save : Write a cube.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, cvstats
    >>> d = cvstats.designs.kfold(6, K=3, seed=0)
    >>> cube = cvstats.from_arrays(np.arange(18.0).reshape(3, 6, 1), design=d)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = cvstats.save(cube, pathlib.Path(tmp) / "results.zarr")
    ...     lazy = cvstats.open_cube(path, chunks={"split": 1})  # dask-backed
    ...     print(lazy.chunks is not None, float(lazy.sum()))
    True 51.0
    """
    source = Path(path)
    suffix = check_suffix(source)
    if chunks is not None:
        check_chunks(chunks)
    check_source(source, suffix)
    try:
        dataset = xr.open_dataset(source, cache=False, **OPEN_KWARGS[suffix])
    except Exception as e:
        raise StorageError(
            f"cannot read {str(source)!r} as {FORMATS[suffix]}: {e}. The file may be "
            "truncated or in another format; write it again with `cvstats.save`."
        ) from e
    try:
        cube = _cube_variable(dataset, source)
        try:
            # 1-D coordinates (labels, split coordinates) are small: read them now.
            small = _small_coords(cube)
            cube = cube.assign_coords(small)
            if chunks is None:
                cube = cube.load()
        except Exception as e:
            raise StorageError(
                f"cannot read the data of {str(source)!r}: {e}. The file may be damaged; "
                "write it again with `cvstats.save`."
            ) from e
        if chunks is not None:
            cube = _chunk(cube, chunks, source).assign_coords(small)
        cube = _canonical_order(cube)
        for attr in ("_FillValue", "missing_value"):  # encodings read as attrs (no masking)
            value = cube.attrs.get(attr)
            if isinstance(value, float | np.floating) and np.isnan(value):
                cube.attrs.pop(attr)
    except BaseException:
        dataset.close()
        raise
    if chunks is None:
        dataset.close()
    else:
        cube.set_close(dataset.close)
    try:
        validate(cube)
    except CubeError as e:
        cube.close()
        raise CubeError(f"{str(source)!r} holds a cube that breaks the schema: {e}") from e
    return cube


def _to_dataset(cube: xr.DataArray) -> tuple[xr.Dataset, dict[str, dict[str, Any]]]:
    """Return the Dataset to write and its encoding, leaving `cube` untouched.

    Encodings inherited from a file the cube was read from are dropped, no
    variable gets a ``_FillValue`` (NaN is stored as NaN), and string variables
    become object arrays of ``str``, which both backends store as
    variable-length UTF-8 (zarr v3 has no stable fixed-width unicode type).
    """
    # name checks (a str, not a coordinate's name) are done by validate() before this
    versions = {"schema_version": SCHEMA_VERSION, VERSION_ATTR: __version__}
    named = cube.copy(deep=False)
    named.attrs = {**cube.attrs, **versions}
    direction = named.attrs.get(GREATER_IS_BETTER)
    if isinstance(direction, bool | np.bool_):  # a score cube's; netCDF refuses bool attrs
        named.attrs[GREATER_IS_BETTER] = int(direction)
    dataset = named.to_dataset().drop_encoding()
    strings = {
        name: var.copy(data=np.asarray(var.values).astype(object))
        for name, var in dataset.variables.items()
        if var.dtype.kind in "OUT"
    }
    dataset = dataset.assign_coords(
        {k: v for k, v in strings.items() if k in dataset.coords}
    ).assign({k: v for k, v in strings.items() if k not in dataset.coords})
    dataset.attrs = {**versions, VARIABLE_ATTR: cube.name}
    encoding = {name: {"_FillValue": None} for name in dataset.variables}
    return dataset, encoding


def _cube_variable(dataset: xr.Dataset, source: Path) -> xr.DataArray:
    """Return the cube held by an opened file, checking it was written by ``save``."""
    version = dataset.attrs.get("schema_version")
    if version is None:
        raise StorageError(
            f"{str(source)!r} holds no cvstats cube: it has no 'schema_version' attribute, "
            "so it was not written by `cvstats.save`. " + BUILD_HINT
        )
    if isinstance(version, bool | np.bool_) or not isinstance(version, int | np.integer):
        raise StorageError(
            f"{str(source)!r} has an invalid 'schema_version' {version!r} (an integer "
            "was expected); it was not written by `cvstats.save`. " + BUILD_HINT
        )
    if int(version) > SCHEMA_VERSION:
        raise StorageError(
            f"{str(source)!r} was written by a newer cvstats (schema version {int(version)}, "
            f"this cvstats reads up to {SCHEMA_VERSION}); upgrade cvstats to open it."
        )
    if int(version) < 1:
        raise StorageError(
            f"{str(source)!r} has an invalid 'schema_version' {int(version)}; it was not "
            "written by `cvstats.save`. " + BUILD_HINT
        )
    name = dataset.attrs.get(VARIABLE_ATTR)
    if not isinstance(name, str) or name not in dataset.data_vars:
        raise StorageError(
            f"{str(source)!r} holds no cvstats cube: its {VARIABLE_ATTR!r} attribute "
            f"({name!r}) names none of its variables {sorted(map(str, dataset.data_vars))}, "
            "so it was not written by `cvstats.save`. " + BUILD_HINT
        )
    cube = dataset[name]
    loss_form = cube.dims[-3:-1] == CORE_DIMS[:2]
    score_form = EXAMPLE not in cube.dims and cube.dims[-2:-1] == (SPLIT,)
    if not (loss_form or score_form) or not cube.dims or cube.dims[-1] not in UNIT_DIMS:
        raise StorageError(
            f"{str(source)!r} holds no cvstats cube: variable {name!r} has dims "
            f"{cube.dims}, not (*extra, {', '.join(CORE_DIMS)}) (a loss cube) or (*extra, "
            f"{SPLIT}, {MODEL}) (a score cube), so it was not written by `cvstats.save`. "
            + BUILD_HINT
        )
    return cube


#: A boolean coordinate of more dims (``in_train``) up to this many values is read on
#: open, like the 1-D ones: validation reads it anyway, twice if it stays on disk.
SMALL_COORD = 1 << 22


def _small_coords(cube: xr.DataArray) -> dict[Hashable, xr.Variable]:
    """Read the 1-D coordinates and a small boolean mask, giving strings numpy's unicode dtype.

    Zarr returns strings as numpy's variable-width ``StringDType`` and netCDF as
    fixed-width unicode; both come back as the latter, like cubes built in memory.
    """
    small = {}
    for name, coord in cube.coords.items():
        if coord.ndim > 1 and (coord.size > SMALL_COORD or coord.dtype.kind != "b"):
            continue  # a large mask (in_train over extra dims) stays on disk until needed
        values = np.asarray(coord.values)
        if values.dtype.kind == "T" or (
            values.dtype.kind == "O" and all(isinstance(v, str) for v in values.flat)
        ):
            values = values.astype(object).astype(str)
        small[name] = coord.variable.copy(data=values)
    return small


def _chunk(
    cube: xr.DataArray, chunks: Mapping[str, int | str | None] | int | str, source: Path
) -> xr.DataArray:
    """Return `cube` (backed by the open file) as a dask array, chunked like ``open_dataset``.

    Dims missing from a `chunks` mapping, or given as ``None``/0, take the file's
    own chunk size (or the whole dim when the data are stored contiguously).
    """
    from dask.base import tokenize

    if isinstance(chunks, Mapping):
        check_chunk_dims(chunks, list(cube.dims), f"the cube in {str(source)!r}")
        preferred = cube.encoding.get("preferred_chunks", {})
        sizes = {dim: chunks.get(dim) or preferred.get(dim, -1) for dim in cube.dims}
    else:
        sizes = dict.fromkeys(cube.dims, chunks)
    # A token from the file's identity, so dask never hashes (or reads) the data to name it.
    info = source.stat()
    token = tokenize(str(source.resolve()), info.st_ino, info.st_mtime_ns, info.st_size)
    try:
        return cube.chunk(sizes, token=token)
    except ValueError as e:  # sizes passed check_chunks; dask may still refuse (e.g. too big)
        raise ArgumentError(f"`chunks` {chunks!r} cannot chunk the cube: {e}") from e


def _canonical_order(cube: xr.DataArray) -> xr.DataArray:
    """Order the coordinates as dims, split coordinates, `in_train`, then the rest.

    Zarr lists arrays in no particular order; a fixed one keeps reprs reproducible.
    """
    first = [*cube.dims, *SPLIT_COORDS, N_TEST, IN_TRAIN]
    order = [name for name in first if name in cube.coords]
    order += sorted((name for name in cube.coords if name not in order), key=str)
    return xr.DataArray(
        cube.variable, coords={name: cube.coords[name].variable for name in order}, name=cube.name
    )
