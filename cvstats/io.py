"""Saving and opening loss cubes: netCDF-4 (``.nc``) and zarr (``.zarr``) files.

:func:`save` validates a cube and writes it atomically: the file is written
under a temporary name in the destination directory and renamed into place
only once complete, so a crash or a kill mid-way leaves any previous file at
that path intact. :func:`open_cube` reads it back exactly (values, NaN
pattern, coordinates with their dtypes, attrs), eagerly or as a lazy
dask-backed array, and refuses files that ``save`` did not write.

On disk a cube is a one-variable ``xarray.Dataset`` (``cube.to_dataset()``)
whose global attrs record ``schema_version``, ``cvstats_version`` and, under
``cvstats_variable``, the name of the cube's variable.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from cvstats.errors import ArgumentError, CubeError, CvstatsError, StorageError
from cvstats.schema import CORE_DIMS, IN_TRAIN, SCHEMA_VERSION, SPLIT_COORDS, UNIT_DIMS

__all__ = ["SCHEMA_VERSION", "save", "open_cube"]

#: File suffixes ``save`` and ``open_cube`` understand, and the format of each.
FORMATS = {".nc": "netCDF-4", ".zarr": "zarr"}
#: Global attr of a saved file that names the variable holding the cube.
VARIABLE_ATTR = "cvstats_variable"

# Decoding options for reading: no masking (cvstats writes no ``_FillValue``, so
# NaN is stored as NaN and no real value can be turned into NaN). Bool, string,
# datetime and (dtype-tagged) timedelta decoding stay on, so such coordinates
# round-trip. Neither backend ever unpickles; zarr stores are additionally
# screened for a pickle codec before they are opened.
_DECODE: dict[str, Any] = {"mask_and_scale": False}
_OPEN_KWARGS: dict[str, dict[str, Any]] = {
    ".nc": {"engine": "h5netcdf", **_DECODE},
    ".zarr": {"engine": "zarr", "consolidated": False, **_DECODE},
}
_BUILD_HINT = (
    "To store results computed elsewhere, build a cube with `cvstats.from_arrays` or "
    "`cvstats.from_frame` and write it with `cvstats.save`."
)


def save(cube: xr.DataArray, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Validate a loss cube and write it atomically to a netCDF-4 or zarr file.

    The format follows the suffix of `path`: ``.nc`` writes a netCDF-4 file
    (through h5netcdf), ``.zarr`` a zarr store (a directory). The cube is
    written under a temporary name (``.<name>.tmp-<random>``) in the same
    directory, then renamed to `path`, so an interrupted save never leaves a
    half-written file at `path` and keeps the previous one intact. A zarr store
    is swapped in two renames (old store aside, new one in), so for an instant
    `path` does not exist; a netCDF file is replaced in one atomic rename.

    Dask-backed cubes are written chunk by chunk without being loaded into
    memory. The written file carries the attrs ``schema_version`` and
    ``cvstats_version`` (on the cube and globally); `cube` itself is not
    modified.

    Parameters
    ----------
    cube : xarray.DataArray
        A loss cube following ``docs/cube-schema.md``; validated with
        :func:`cvstats.validate` before anything is written.
    path : str or os.PathLike
        Destination, ending in ``.nc`` or ``.zarr``. Its directory must exist.
    overwrite : bool, default False
        Replace an existing file or store at `path`. Without it an existing
        `path` is an error.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    cvstats.CubeError
        If `cube` does not follow the schema.
    cvstats.StorageError
        If the suffix is not ``.nc`` or ``.zarr``, `path` exists and `overwrite`
        is false, its directory does not exist, or writing fails (e.g. an attr
        the format cannot store, such as a bool or dict in netCDF, a full disk,
        or an error computing a dask-backed cube); the original exception is
        chained.

    See Also
    --------
    open_cube : Read a saved cube back.

    Notes
    -----
    A process killed mid-save (e.g. by SIGKILL or a power cut) cannot clean up:
    it may leave a hidden ``.<name>.tmp-<random>`` file or directory next to
    `path`, which is safe to delete. A zarr store killed between its two renames
    leaves the previous store as ``.<name>.old-<random>``. netCDF files are
    flushed to disk (``fsync``) before the rename; zarr stores are not.

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
    suffix = _suffix(target)
    _validate(cube)
    parent = target.parent
    if not parent.is_dir():
        raise StorageError(
            f"cannot save to `path` {str(target)!r}: directory {str(parent)!r} does not "
            "exist; create it first."
        )
    if os.path.lexists(target):
        if not overwrite:
            raise StorageError(
                f"`path` {str(target)!r} already exists; pass `overwrite=True` to replace it."
            )
        if suffix == ".nc" and target.is_dir():
            raise StorageError(
                f"`path` {str(target)!r} is a directory, not a netCDF file; remove it or "
                "choose another path."
            )

    try:
        dataset, encoding = _to_dataset(cube)
        _write_atomically(dataset, encoding, target)
    except CvstatsError:
        raise
    except Exception as e:  # backends raise many types (OSError, TypeError, h5netcdf's ...)
        raise StorageError(
            f"could not write the cube to {str(target)!r} as {FORMATS[suffix]} "
            f"({type(e).__name__}: {e}); any previous file at that path is unchanged."
        ) from e
    return target


def open_cube(
    path: str | os.PathLike[str],
    chunks: Mapping[str, int | str] | int | str | None = None,
) -> xr.DataArray:
    """Open a loss cube written by :func:`save`.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.nc`` file or ``.zarr`` store written by :func:`cvstats.save`.
    chunks : dict, int, "auto" or None, default None
        ``None`` reads the whole cube into memory (numpy-backed) and closes the
        file. Anything else opens it lazily as a dask-backed array with these
        chunks (as in :func:`xarray.open_dataset`; ``{}`` uses the file's own
        chunks); the file stays open until the cube's ``close()`` is called or
        it is garbage-collected.

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
        If the suffix is not ``.nc`` or ``.zarr``, `path` does not exist, cannot
        be read as netCDF-4 / zarr (e.g. truncated), holds no cube written by
        ``cvstats.save``, was written by a newer cvstats, or is a zarr store
        using a pickle codec (never decoded, as unpickling can run code).
    cvstats.CubeError
        If the stored cube does not follow the schema.
    cvstats.ArgumentError
        If `chunks` names a dim the cube does not have.

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
    suffix = _suffix(source)
    if not os.path.lexists(source):
        raise StorageError(
            f"`path` {str(source)!r} does not exist; check the path, or write a cube there "
            "with `cvstats.save`."
        )
    if suffix == ".zarr":
        _refuse_pickle_codecs(source)
    try:
        dataset = xr.open_dataset(source, cache=False, **_OPEN_KWARGS[suffix])
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
        _validate(cube)
    except CubeError as e:
        cube.close()
        raise CubeError(f"{str(source)!r} holds a cube that breaks the schema: {e}") from e
    return cube


def _suffix(path: Path) -> str:
    """Return the (lower-cased) format suffix of `path`, or raise StorageError."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise StorageError(
            f"`path` {str(path)!r} has suffix {path.suffix!r}; use '.nc' (netCDF-4) or "
            "'.zarr' (zarr store)."
        )
    return suffix


def _validate(cube: xr.DataArray) -> None:
    """Run :func:`cvstats.cube.validate` (imported late: cube.py may import this module)."""
    from cvstats.cube import validate

    validate(cube)


def _to_dataset(cube: xr.DataArray) -> tuple[xr.Dataset, dict[str, dict[str, Any]]]:
    """Return the Dataset to write and its encoding, leaving `cube` untouched.

    Encodings inherited from a file the cube was read from are dropped, no
    variable gets a ``_FillValue`` (NaN is stored as NaN), and string variables
    become object arrays of ``str``, which both backends store as
    variable-length UTF-8 (zarr v3 has no stable fixed-width unicode type).
    """
    import cvstats

    # name checks (a str, not a coordinate's name) are done by validate() before this
    versions = {"schema_version": SCHEMA_VERSION, "cvstats_version": cvstats.__version__}
    named = cube.copy(deep=False)
    named.attrs = {**cube.attrs, **versions}
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


def _write_atomically(
    dataset: xr.Dataset, encoding: dict[str, dict[str, Any]], target: Path
) -> None:
    """Write `dataset` to a temporary path next to `target`, then move it into place.

    On any failure (including KeyboardInterrupt) the temporary is removed and
    `target` is left as it was.
    """
    tmp = target.parent / f".{target.name}.tmp-{secrets.token_hex(6)}"
    try:
        if _suffix(target) == ".nc":
            dataset.to_netcdf(tmp, engine="h5netcdf", encoding=encoding)
            _fsync(tmp)
            os.replace(tmp, target)
            _fsync(target.parent)
        else:
            _chunks_for_zarr(dataset).to_zarr(
                tmp, mode="w-", consolidated=False, encoding=encoding
            )
            _swap_directory(tmp, target)
    except BaseException:
        _remove(tmp)
        raise


def _chunks_for_zarr(dataset: xr.Dataset) -> xr.Dataset:
    """Rechunk dask variables whose chunks zarr cannot store (irregular) to regular ones."""
    rechunk = {}
    for name, var in dataset.variables.items():
        if var.chunks is None:
            continue
        sizes = {
            dim: max(chunks)
            for dim, chunks in zip(var.dims, var.chunks, strict=True)
            if any(c != chunks[0] for c in chunks[:-1]) or chunks[-1] > chunks[0]
        }
        if sizes:
            rechunk[name] = var.chunk(sizes)
    coords = {k: v for k, v in rechunk.items() if k in dataset.coords}
    data = {k: v for k, v in rechunk.items() if k not in dataset.coords}
    return dataset.assign_coords(coords).assign(data)


def _swap_directory(tmp: Path, target: Path) -> None:
    """Move the store `tmp` to `target`, replacing (and then deleting) any old one."""
    if not os.path.lexists(target):
        os.replace(tmp, target)
        return
    old = target.parent / f".{target.name}.old-{secrets.token_hex(6)}"
    os.replace(target, old)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.replace(old, target)
        raise
    _remove(old)


def _remove(path: Path) -> None:
    """Delete a file or directory tree if it exists, ignoring errors (best-effort cleanup)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def _fsync(path: Path) -> None:
    """Flush a file or directory to disk, where the platform allows it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. directories on Windows
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _refuse_pickle_codecs(store: Path) -> None:
    """Raise StorageError if an array of the zarr `store` is encoded with pickle.

    Zarr v2 object arrays may name numcodecs' ``pickle`` codec, whose decoding
    would run arbitrary code. Only the root group and its arrays (what
    :func:`xarray.open_dataset` reads) are checked.
    """
    if not store.is_dir():
        return  # not a store: opening it fails with a clear error
    names = ("zarr.json", ".zarray")
    candidates = [store / "zarr.json"]
    candidates += [d / name for d in store.iterdir() if d.is_dir() for name in names]
    for meta_path in candidates:
        if not meta_path.is_file():
            continue
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise StorageError(
                f"cannot read {str(store)!r} as zarr: metadata {meta_path.name!r} of "
                f"{str(meta_path.parent)!r} is unreadable ({e}); write it again with "
                "`cvstats.save`."
            ) from e
        if isinstance(meta, dict):
            meta.pop("attributes", None)
            meta.pop("consolidated_metadata", None)
        if _names_pickle(meta):
            raise StorageError(
                f"{str(meta_path.parent)!r} is encoded with the pickle codec, which cvstats "
                "never decodes (unpickling can run arbitrary code). " + _BUILD_HINT
            )


def _names_pickle(meta: object) -> bool:
    """Whether a zarr metadata document names a pickle codec anywhere."""
    if isinstance(meta, dict):
        for key, value in meta.items():
            if key in ("id", "name") and isinstance(value, str) and "pickle" in value.lower():
                return True
            if _names_pickle(value):
                return True
    elif isinstance(meta, list):
        return any(_names_pickle(item) for item in meta)
    return False


def _cube_variable(dataset: xr.Dataset, source: Path) -> xr.DataArray:
    """Return the cube held by an opened file, checking it was written by ``save``."""
    version = dataset.attrs.get("schema_version")
    if version is None:
        raise StorageError(
            f"{str(source)!r} holds no cvstats cube: it has no 'schema_version' attribute, "
            "so it was not written by `cvstats.save`. " + _BUILD_HINT
        )
    if isinstance(version, bool | np.bool_) or not isinstance(version, int | np.integer):
        raise StorageError(
            f"{str(source)!r} has an invalid 'schema_version' {version!r} (an integer "
            "was expected); it was not written by `cvstats.save`. " + _BUILD_HINT
        )
    if int(version) > SCHEMA_VERSION:
        raise StorageError(
            f"{str(source)!r} was written by a newer cvstats (schema version {int(version)}, "
            f"this cvstats reads up to {SCHEMA_VERSION}); upgrade cvstats to open it."
        )
    if int(version) < 1:
        raise StorageError(
            f"{str(source)!r} has an invalid 'schema_version' {int(version)}; it was not "
            "written by `cvstats.save`. " + _BUILD_HINT
        )
    name = dataset.attrs.get(VARIABLE_ATTR)
    if not isinstance(name, str) or name not in dataset.data_vars:
        raise StorageError(
            f"{str(source)!r} holds no cvstats cube: its {VARIABLE_ATTR!r} attribute "
            f"({name!r}) names none of its variables {sorted(map(str, dataset.data_vars))}, "
            "so it was not written by `cvstats.save`. " + _BUILD_HINT
        )
    cube = dataset[name]
    if cube.dims[-3:-1] != CORE_DIMS[:2] or cube.dims[-1] not in UNIT_DIMS:
        raise StorageError(
            f"{str(source)!r} holds no cvstats cube: variable {name!r} has dims "
            f"{cube.dims}, not (*extra, {', '.join(CORE_DIMS)}), so it was not written by "
            "`cvstats.save`. " + _BUILD_HINT
        )
    return cube


def _small_coords(cube: xr.DataArray) -> dict[Hashable, xr.Variable]:
    """Read the 1-D non-index coordinates, giving strings the numpy unicode dtype.

    Zarr returns strings as numpy's variable-width ``StringDType`` and netCDF as
    fixed-width unicode; both come back as the latter, like cubes built in memory.
    """
    small = {}
    for name, coord in cube.coords.items():
        if coord.ndim > 1:
            continue
        values = np.asarray(coord.values)
        if values.dtype.kind == "T" or (
            values.dtype.kind == "O" and all(isinstance(v, str) for v in values.flat)
        ):
            values = values.astype(object).astype(str)
        small[name] = coord.variable.copy(data=values)
    return small


def _chunk(
    cube: xr.DataArray, chunks: Mapping[str, int | str] | int | str, source: Path
) -> xr.DataArray:
    """Return `cube` (backed by the open file) as a dask array, chunked like ``open_dataset``.

    Dims missing from a `chunks` mapping, or given as ``None``/0, take the file's
    own chunk size (or the whole dim when the data are stored contiguously).
    """
    from dask.base import tokenize

    if isinstance(chunks, Mapping):
        unknown = [dim for dim in chunks if dim not in cube.dims]
        if unknown:
            raise ArgumentError(
                f"`chunks` names dim(s) {unknown} that the cube in {str(source)!r} does not "
                f"have; its dims are {list(cube.dims)}."
            )
        preferred = cube.encoding.get("preferred_chunks", {})
        sizes = {dim: chunks.get(dim) or preferred.get(dim, -1) for dim in cube.dims}
    else:
        sizes = dict.fromkeys(cube.dims, chunks)
    # A token from the file's identity, so dask never hashes (or reads) the data to name it.
    stat = source.stat()
    token = tokenize(str(source.resolve()), stat.st_ino, stat.st_mtime_ns, stat.st_size)
    return cube.chunk(sizes, token=token)


def _canonical_order(cube: xr.DataArray) -> xr.DataArray:
    """Order the coordinates as dims, split coordinates, `in_train`, then the rest.

    Zarr lists arrays in no particular order; a fixed one keeps reprs reproducible.
    """
    first = [*cube.dims, *SPLIT_COORDS, IN_TRAIN]
    order = [name for name in first if name in cube.coords]
    order += sorted((name for name in cube.coords if name not in order), key=str)
    return xr.DataArray(
        cube.variable, coords={name: cube.coords[name].variable for name in order}, name=cube.name
    )
