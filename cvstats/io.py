"""Saving and opening loss cubes: netCDF-4 (``.nc``) and zarr (``.zarr``) files.

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

import ctypes
import errno
import functools
import io
import json
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from cvstats.errors import (
    ArgumentError,
    CubeError,
    CvstatsError,
    CvstatsTypeError,
    StorageError,
)
from cvstats.schema import CORE_DIMS, IN_TRAIN, SCHEMA_VERSION, SPLIT_COORDS, UNIT_DIMS

__all__ = ["SCHEMA_VERSION", "save", "open_cube"]

#: File suffixes ``save`` and ``open_cube`` understand, and the format of each.
FORMATS = {".nc": "netCDF-4", ".zarr": "zarr"}
#: Global attr of a saved file that names the variable holding the cube.
VARIABLE_ATTR = "cvstats_variable"
#: Global attr of a saved file that records the cvstats version that wrote it.
VERSION_ATTR = "cvstats_version"

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
_CHUNKS_HELP = (
    "valid values are None (read into memory), 'auto', a positive int, -1 (whole dims), "
    "or a dict mapping dims to one of these or to a tuple of chunk sizes (a dim given None "
    "or 0, or left out, keeps the file's own chunks)"
)
# Files of a zarr store's root besides its arrays (zarr v3, then v2).
_ZARR_ROOT_FILES = frozenset({"zarr.json", ".zattrs", ".zgroup", ".zmetadata"})
_ZARR_ARRAY_FILES = ("zarr.json", ".zarray")


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
        A loss cube following ``docs/cube-schema.md``; validated with
        :func:`cvstats.validate` before anything is written.
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
    _suffix(target)
    _validate(cube)
    return _save_dataset(lambda: _to_dataset(cube), target, overwrite=overwrite, what="the cube")


def open_cube(
    path: str | os.PathLike[str],
    chunks: Mapping[str, int | str | None] | int | str | None = None,
) -> xr.DataArray:
    """Open a loss cube written by :func:`save`.

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
    suffix = _suffix(source)
    if chunks is not None:
        _check_chunks(chunks)
    _check_source(source, suffix)
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
    versions = {"schema_version": SCHEMA_VERSION, VERSION_ATTR: cvstats.__version__}
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


# --------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------


class _TargetExists(FileExistsError):
    """The destination was created by someone else while the file was being written."""


def _save_dataset(
    build: Callable[[], tuple[xr.Dataset, dict[str, dict[str, Any]]]],
    target: Path,
    *,
    overwrite: bool,
    what: str,
) -> Path:
    """Check the destination, build the Dataset to write and write it atomically.

    Shared by :func:`save` and :func:`cvstats.compact.save_compact`: `build`
    returns the Dataset and its encoding; `what` names it in messages
    ("the cube"). Any failure other than a :class:`cvstats.CvstatsError` is
    re-raised as :class:`cvstats.StorageError` with the original chained.
    """
    suffix = _suffix(target)
    parent = target.parent
    if not parent.is_dir():
        raise StorageError(
            f"cannot save to `path` {str(target)!r}: directory {str(parent)!r} does not "
            "exist; create it first."
        )
    if os.path.lexists(target):
        if not overwrite:
            raise _exists_error(target)
        _check_replaceable(target, suffix)
    try:
        dataset, encoding = build()
        if suffix == ".nc":
            _check_free_space(dataset, target)
        _write_atomically(dataset, encoding, target, overwrite=overwrite)
    except _TargetExists as e:
        raise _exists_error(target, raced=True) from e
    except CvstatsError:
        raise
    except Exception as e:  # backends raise many types (OSError, TypeError, h5netcdf's ...)
        raise StorageError(
            f"could not write {what} to {str(target)!r} as {FORMATS[suffix]} "
            f"({type(e).__name__}: {e}); any previous file at that path is unchanged."
        ) from e
    return target


def _exists_error(target: Path, *, raced: bool = False) -> StorageError:
    """Return the error for an existing `target` when `overwrite` is false."""
    how = (
        " (another process created it while this save was writing; nothing was replaced)"
        if raced
        else ""
    )
    return StorageError(
        f"`path` {str(target)!r} already exists{how}; pass `overwrite=True` to replace it."
    )


def _check_free_space(dataset: xr.Dataset, target: Path) -> None:
    """Raise StorageError if the disk of `target` cannot hold the data of a netCDF file.

    The bound is the uncompressed size of the fixed-size variables, which a
    netCDF file written by cvstats (uncompressed, contiguous) always exceeds:
    a save refused here would certainly have failed, and one let through may
    still fail on a nearly full disk (then :func:`_write_netcdf` reports it).
    """
    needed = sum(int(var.nbytes) for var in dataset.variables.values() if var.dtype.kind != "O")
    try:
        if hasattr(os, "statvfs"):
            fs = os.statvfs(target.parent)
            root = hasattr(os, "geteuid") and os.geteuid() == 0
            free = fs.f_frsize * (fs.f_bfree if root else fs.f_bavail)
        else:
            free = shutil.disk_usage(target.parent).free
    except OSError:
        return  # unknown: let the write find out
    if needed > free:
        raise StorageError(
            f"not enough free space to save to {str(target)!r}: the netCDF file needs at "
            f"least {_size_text(needed)} and {str(target.parent)!r} has {_size_text(free)} "
            "free. Free some space or choose another directory; nothing was written."
        )


def _size_text(nbytes: int) -> str:
    """``1234567`` -> ``'1.2 MB (1234567 bytes)'``."""
    value, unit = float(nbytes), "bytes"
    for name in ("kB", "MB", "GB", "TB"):
        if value < 1000:
            break
        value, unit = value / 1000, name
    return f"{nbytes} bytes" if unit == "bytes" else f"{value:.1f} {unit} ({nbytes} bytes)"


def _write_atomically(
    dataset: xr.Dataset, encoding: dict[str, dict[str, Any]], target: Path, *, overwrite: bool
) -> None:
    """Write `dataset` to a temporary path next to `target`, then move it into place.

    On any failure (including KeyboardInterrupt) the temporary is removed and
    `target` is left as it was. Raises :class:`_TargetExists` if `overwrite`
    is false and something appeared at `target` meanwhile.
    """
    tmp = _temporary(target, "tmp")
    try:
        if _suffix(target) == ".nc":
            _write_netcdf(dataset, encoding, tmp)
        else:
            _chunks_for_zarr(dataset).to_zarr(
                tmp, mode="w-", consolidated=False, encoding=encoding
            )
        _install(tmp, target, overwrite=overwrite)
    except BaseException:
        _remove(tmp)
        raise


def _temporary(target: Path, kind: str) -> Path:
    """Return a fresh hidden name next to `target`: ``.<name>.<kind>-<random>``."""
    return target.parent / f".{target.name}.{kind}-{secrets.token_hex(6)}"


def _write_netcdf(dataset: xr.Dataset, encoding: dict[str, dict[str, Any]], tmp: Path) -> None:
    """Write `dataset` as netCDF-4 to the new file `tmp`, flushed to disk.

    HDF5 writes through a :class:`_ShieldedFile`, so it never sees an I/O
    error (see there); the first one (a full disk, a quota, an I/O error) is
    raised here, once HDF5 has closed the file.
    """
    with open(tmp, "x+b", buffering=0) as raw:
        sink = _ShieldedFile(raw)
        try:
            _stop_after_failure(dataset, sink).to_netcdf(
                sink, engine="h5netcdf", encoding=encoding
            )
        except BaseException:
            if sink.error is None:
                raise
        if sink.error is not None:
            raise sink.error
        try:
            os.fsync(raw.fileno())
        except OSError as e:
            if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise


class _WriteAborted(Exception):
    """Stops the computation of a dask-backed cube once a write has failed."""


class _ShieldedFile(io.RawIOBase):
    """A new file, for h5py's ``fileobj`` driver, that never reports a failure to HDF5.

    When a write fails while HDF5 closes a file (a full disk), HDF5 leaves the
    file half-released: h5py still sees it open, and h5netcdf, whose
    ``__del__`` retries ``close()``, then makes HDF5 read freed memory and the
    interpreter dies with a segmentation fault (h5py issue #914). So writes
    come here: the first failure (an ``OSError``, or an interrupt arriving
    during a write) is kept in `error`, and from then on written bytes are
    kept in memory (read back as HDF5 expects), so HDF5 finishes and closes
    the file normally. The caller then raises `error` and deletes the file;
    :func:`_stop_after_failure` keeps a dask-backed cube from computing (and
    buffering) the rest meanwhile.
    """

    def __init__(self, raw: io.FileIO) -> None:
        super().__init__()
        self._raw = raw
        self._pos = 0
        self._size = 0
        self._pending: list[tuple[int, bytes]] = []  # (offset, bytes) written after a failure
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._size}[whence]
        self._pos = base + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        if self.error is None:
            try:
                self._write_raw(view, self._pos)
            except BaseException as e:  # kept, and raised once HDF5 has closed the file
                self.error = e
        if self.error is not None:
            self._pending.append((self._pos, view.tobytes()))
        self._pos += len(view)
        self._size = max(self._size, self._pos)
        return len(view)

    def _write_raw(self, view: memoryview, offset: int) -> None:
        """Write all of `view` at `offset` of the file on disk."""
        self._raw.seek(offset)
        while view:
            written = self._raw.write(view)
            if not written:
                raise OSError(errno.EIO, "the file accepted no bytes", self._raw.name)
            view = view[written:]

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        size, got = len(view), 0
        try:
            self._raw.seek(self._pos)
            while got < size:
                n = self._raw.readinto(view[got:])
                if not n:
                    break
                got += n
        except BaseException as e:  # kept, and raised once HDF5 has closed the file
            if self.error is None:
                self.error = e
            got = 0
        view[got:] = bytes(size - got)  # beyond the end of the file: zeros, as HDF5 expects
        end = self._pos + size
        for offset, data in self._pending:
            lo, hi = max(offset, self._pos), min(offset + len(data), end)
            if lo < hi:
                view[lo - self._pos : hi - self._pos] = data[lo - offset : hi - offset]
        self._pos = end
        return size

    def truncate(self, size: int | None = None) -> int:
        size = self._pos if size is None else size
        if self.error is None:
            try:
                self._raw.truncate(size)
            except BaseException as e:  # kept, and raised once HDF5 has closed the file
                self.error = e
        self._size = size
        return size


def _stop_after_failure(dataset: xr.Dataset, sink: _ShieldedFile) -> xr.Dataset:
    """Make every dask-backed variable of `dataset` fail once a write to `sink` has failed."""

    def check(block: np.ndarray) -> np.ndarray:
        if sink.error is not None:
            raise _WriteAborted("a write failed")
        return block

    guarded = {
        name: var.copy(
            data=var.data.map_blocks(
                check, dtype=var.dtype, name=f"cvstats-save-{secrets.token_hex(8)}"
            )
        )
        for name, var in dataset.variables.items()
        if var.chunks is not None
    }
    coords = {k: v for k, v in guarded.items() if k in dataset.coords}
    data = {k: v for k, v in guarded.items() if k not in dataset.coords}
    return dataset.assign_coords(coords).assign(data)


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


def _install(tmp: Path, target: Path, *, overwrite: bool) -> None:
    """Move the finished file or store `tmp` to `target`.

    Never replaces anything unless `overwrite`, and then only a file or store
    written by cvstats (checked again here, just before the replacement).
    """
    try:
        _rename_noreplace(tmp, target)
    except FileExistsError as e:
        if not overwrite:
            raise _TargetExists(errno.EEXIST, "already exists", str(target)) from e
        _check_replaceable(target, _suffix(target))
        if tmp.is_dir():
            _swap_directory(tmp, target)
        else:
            os.replace(tmp, target)
    _fsync(target.parent)


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """Linux's ``renameat2`` from the C library, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # no C library handle, or a libc without it
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    function.argtypes += [ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1


def _rename_noreplace(src: Path, dst: Path) -> None:
    """Rename `src` to `dst`, raising FileExistsError if anything exists at `dst`.

    Atomic with ``renameat2(RENAME_NOREPLACE)`` (Linux), or for a file with a
    hard link (then removing `src`); Windows' rename never replaces. Elsewhere
    the existence check precedes the rename, which still refuses to replace a
    file or a non-empty directory.
    """
    function = _renameat2()
    if function is not None:
        names = (os.fsencode(src), os.fsencode(dst))
        if function(_AT_FDCWD, names[0], _AT_FDCWD, names[1], _RENAME_NOREPLACE) == 0:
            return
        code = ctypes.get_errno()
        if code == errno.EEXIST:
            raise FileExistsError(code, os.strerror(code), str(dst))
        if code not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            raise OSError(code, os.strerror(code), str(src), None, str(dst))
        # this filesystem (or kernel) cannot do it: fall back
    if not src.is_dir():
        try:
            os.link(src, dst)
        except FileExistsError:
            raise
        except OSError:
            pass  # no hard links on this filesystem (e.g. FAT, some network filesystems)
        else:
            _remove(src)
            return
    if os.name == "nt":
        os.rename(src, dst)  # raises FileExistsError if dst exists
        return
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst))
    try:
        os.rename(src, dst)
    except OSError as e:
        if e.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
            raise FileExistsError(e.errno, e.strerror, str(dst)) from e
        raise


def _swap_directory(tmp: Path, target: Path) -> None:
    """Move the store `tmp` to `target`, replacing (and then deleting) the old one there."""
    old = _temporary(target, "old")
    os.replace(target, old)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.replace(old, target)
        raise
    _remove(old)


def _remove(path: Path) -> None:
    """Delete a file or directory tree cvstats made, ignoring errors (best-effort cleanup)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def _fsync(path: Path) -> None:
    """Flush a directory to disk, where the platform allows it (best effort)."""
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


# --------------------------------------------------------------------------
# what may be replaced, and what may be opened
# --------------------------------------------------------------------------


def _check_replaceable(target: Path, suffix: str) -> None:
    """Raise StorageError unless `target` is a file or store written by cvstats.

    A netCDF file must be a regular file whose global attrs carry
    ``cvstats_version`` and ``cvstats_variable``; a zarr store a directory
    whose root group carries them and that holds nothing but zarr metadata
    and arrays. Symbolic links, FIFOs, devices and sockets are never replaced.
    """
    refusal = "; refusing to overwrite it; remove it yourself or choose another path."
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return  # gone meanwhile: nothing to replace
    except OSError as e:
        raise StorageError(
            f"cannot check whether `path` {str(target)!r} holds a cube written by cvstats "
            f"({e})" + refusal
        ) from e
    if stat.S_ISLNK(mode):
        raise StorageError(
            f"`path` {str(target)!r} is a symbolic link, not a cube written by cvstats" + refusal
        )
    if suffix == ".nc" and stat.S_ISDIR(mode):
        raise StorageError(
            f"`path` {str(target)!r} is a directory, not a netCDF file; remove it or "
            "choose another path."
        )
    expected = stat.S_ISREG(mode) if suffix == ".nc" else stat.S_ISDIR(mode)
    if not expected:
        raise StorageError(
            f"`path` {str(target)!r} is {_kind(mode)}, not a cube written by cvstats" + refusal
        )
    if suffix == ".nc":
        attrs, foreign = _netcdf_attrs(target), []
    else:
        try:
            attrs, foreign = _zarr_attrs(target), _foreign_entries(target)
        except OSError as e:
            raise StorageError(
                f"cannot check whether `path` {str(target)!r} holds a cube written by "
                f"cvstats ({e})" + refusal
            ) from e
    if not _written_by_cvstats(attrs):
        why = (
            f"no {FORMATS[suffix]} metadata could be read"
            if attrs is None
            else f"its global attributes lack {VERSION_ATTR!r} and {VARIABLE_ATTR!r}"
        )
        raise StorageError(
            f"`path` {str(target)!r} is not a cube written by cvstats ({why})" + refusal
        )
    if foreign:
        raise StorageError(
            f"`path` {str(target)!r} is not a cube written by cvstats: it also holds "
            f"{foreign[:3]}{' and more' if len(foreign) > 3 else ''}, which cvstats did not "
            "write" + refusal
        )


def _kind(mode: int) -> str:
    """Describe a file type for messages: ``'a FIFO (named pipe)'``, ``'a directory'``..."""
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ]
    return next((text for test, text in kinds if test(mode)), "a special file")


def _written_by_cvstats(attrs: Mapping[str, Any] | None) -> bool:
    """Whether global attrs mark a file written by ``save`` or ``save_compact``."""
    if not attrs:
        return False
    return all(isinstance(attrs.get(name), str) for name in (VERSION_ATTR, VARIABLE_ATTR))


def _netcdf_attrs(path: Path) -> dict[str, Any] | None:
    """Return the cvstats global attrs of a netCDF-4 file (None if it cannot be read)."""
    import h5py

    try:
        with h5py.File(path, "r") as file:
            attrs = {
                name: file.attrs[name]
                for name in (VERSION_ATTR, VARIABLE_ATTR)
                if name in file.attrs
            }
    except Exception:  # not HDF5, damaged, locked...: not recognisably ours
        return None
    return {
        name: value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        for name, value in attrs.items()
    }


def _zarr_attrs(store: Path) -> dict[str, Any] | None:
    """Return the root attrs of a zarr store (v3 ``zarr.json``, v2 ``.zattrs``), or None."""
    for name in ("zarr.json", ".zattrs"):
        meta = store / name
        if not meta.is_file():
            continue
        try:
            document = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        if not isinstance(document, dict):
            return None
        attrs = document.get("attributes") if name == "zarr.json" else document
        return attrs if isinstance(attrs, dict) else None
    return None


def _foreign_entries(store: Path) -> list[str]:
    """List the names in the root of a zarr `store` that are neither zarr metadata nor arrays."""
    foreign = []
    with os.scandir(store) as entries:
        for entry in entries:
            if entry.is_symlink():
                foreign.append(entry.name)
            elif entry.is_dir():
                if not any(os.path.isfile(os.path.join(entry.path, n)) for n in _ZARR_ARRAY_FILES):
                    foreign.append(entry.name)
            elif not (entry.is_file() and entry.name in _ZARR_ROOT_FILES):
                foreign.append(entry.name)
    return sorted(foreign)


def _check_source(source: Path, suffix: str) -> None:
    """Refuse what cannot be opened safely, before any backend touches it.

    `source` must exist and be a regular file or a directory (after following
    links): opening a FIFO blocks until a writer appears, and a device or
    socket is no file at all. A zarr store must hold only regular files and
    directories, and no array using a pickle codec.
    """
    try:
        mode = os.stat(source).st_mode
    except FileNotFoundError:
        link = " (a symbolic link to nothing)" if os.path.lexists(source) else ""
        raise StorageError(
            f"`path` {str(source)!r} does not exist{link}; check the path, or write a cube "
            "there with `cvstats.save`."
        ) from None
    except OSError as e:
        raise StorageError(f"cannot read {str(source)!r}: {e}.") from e
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        what = "zarr store" if suffix == ".zarr" else "netCDF-4 file"
        raise StorageError(
            f"`path` {str(source)!r} is {_kind(mode)}, not a {what}: cvstats "
            "opens only regular files and directories (reading from it could block forever "
            "or never end). " + _BUILD_HINT
        )
    if suffix == ".zarr" and stat.S_ISDIR(mode):
        try:
            special = _special_entry(source)
        except OSError as e:
            raise StorageError(f"cannot read {str(source)!r} as zarr: {e}.") from e
        if special is not None:
            raise StorageError(
                f"{str(source)!r} is not a zarr store written by cvstats: {str(special)!r} "
                "is neither a regular file nor a directory (reading from it could block "
                "forever). " + _BUILD_HINT
            )
        _refuse_pickle_codecs(source)


def _special_entry(store: Path) -> Path | None:
    """Return the first entry under `store` that is neither a regular file nor a directory."""
    pending = [store]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir():  # follows links, as zarr does
                    if not entry.is_symlink():
                        pending.append(Path(entry.path))
                elif not entry.is_file():
                    return Path(entry.path)
    return None


def _check_chunks(chunks: object) -> None:
    """Raise ArgumentError / CvstatsTypeError unless `chunks` is a valid ``chunks`` value.

    Dim names are checked once the file is open (:func:`_chunk`).
    """
    if isinstance(chunks, Mapping):
        for dim, value in chunks.items():
            _check_chunk_size(value, f"`chunks[{dim!r}]`", in_mapping=True)
    else:
        _check_chunk_size(chunks, "`chunks`", in_mapping=False)


def _check_chunk_size(value: object, name: str, *, in_mapping: bool) -> None:
    """Check one chunk size: "auto", a positive int or -1 (in a mapping: None, 0, a tuple)."""
    if in_mapping and value is None:
        return
    if in_mapping and isinstance(value, tuple):
        for size in value:
            if isinstance(size, bool | np.bool_) or not isinstance(size, int | np.integer):
                raise CvstatsTypeError(
                    f"{name} got {value!r}, holding {size!r} of type {type(size).__name__}; "
                    f"{_CHUNKS_HELP}."
                )
            if size < 1:
                raise ArgumentError(f"{name} got {value!r}, holding {size}; {_CHUNKS_HELP}.")
        return
    if isinstance(value, str):
        if value == "auto":
            return
        raise ArgumentError(f"{name} got {value!r}; {_CHUNKS_HELP}.")
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise CvstatsTypeError(
            f"{name} got {value!r} of type {type(value).__name__}; {_CHUNKS_HELP}."
        )
    if value < -1 or (value == 0 and not in_mapping):
        raise ArgumentError(f"{name} got {int(value)}; {_CHUNKS_HELP}.")


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
    cube: xr.DataArray, chunks: Mapping[str, int | str | None] | int | str, source: Path
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
    info = source.stat()
    token = tokenize(str(source.resolve()), info.st_ino, info.st_mtime_ns, info.st_size)
    try:
        return cube.chunk(sizes, token=token)
    except ValueError as e:  # sizes passed _check_chunks; dask may still refuse (e.g. too big)
        raise ArgumentError(f"`chunks` {chunks!r} cannot chunk the cube: {e}") from e


def _chunk_dataset(
    ds: xr.Dataset, chunks: Mapping[str, int | str | None] | int | str, source: Path
) -> xr.Dataset:
    """Return `ds` chunked with dask; in a `chunks` mapping, None or 0 means one chunk."""
    if isinstance(chunks, Mapping):
        unknown = [dim for dim in chunks if dim not in ds.dims]
        if unknown:
            raise ArgumentError(
                f"`chunks` names dim(s) {unknown} that the Dataset in {str(source)!r} does "
                f"not have; its dims are {sorted(map(str, ds.dims))}."
            )
        chunks = {dim: -1 if value in (None, 0) else value for dim, value in chunks.items()}
    try:
        return ds.chunk(chunks)
    except ValueError as e:  # passed _check_chunks; dask may still refuse
        raise ArgumentError(f"`chunks` {chunks!r} cannot chunk {str(source)!r}: {e}") from e


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
