"""Safe file handling for cube storage: atomic, no-clobber writes and checked reads.

The layer under :mod:`cvstats.cube.storage` (dense cubes) and :mod:`cvstats.cube.compact`
(compact cubes): writing a Dataset under a hidden temporary name and moving it into place
without clobbering (``renameat2`` with ``RENAME_NOREPLACE``, else a hard link), replacing
only stores cvstats wrote, surviving a full disk (HDF5 writes through a shielded file
object), refusing FIFOs, devices and pickle codecs, and checking ``chunks``. It knows
nothing of the cube's schema; imports only :mod:`cvstats.errors`.
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from cvstats.errors import (
    ArgumentError,
    CvstatsError,
    CvstatsTypeError,
    StorageError,
)

__all__ = [
    "BUILD_HINT",
    "FORMATS",
    "OPEN_KWARGS",
    "VARIABLE_ATTR",
    "VERSION_ATTR",
    "check_chunk_dims",
    "check_chunks",
    "check_source",
    "check_suffix",
    "chunk_dataset",
    "save_dataset",
]

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


OPEN_KWARGS: dict[str, dict[str, Any]] = {
    ".nc": {"engine": "h5netcdf", **_DECODE},
    ".zarr": {"engine": "zarr", "consolidated": False, **_DECODE},
}


BUILD_HINT = (
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


def check_suffix(path: Path) -> str:
    """Return the (lower-cased) format suffix of `path`, or raise StorageError."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise StorageError(
            f"`path` {str(path)!r} has suffix {path.suffix!r}; use '.nc' (netCDF-4) or "
            "'.zarr' (zarr store)."
        )
    return suffix


class _TargetExists(FileExistsError):
    """The destination was created by someone else while the file was being written."""


def save_dataset(
    build: Callable[[], tuple[xr.Dataset, dict[str, dict[str, Any]]]],
    target: Path,
    *,
    overwrite: bool,
    what: str,
) -> Path:
    """Check the destination, build the Dataset to write and write it atomically.

    Shared by :func:`save` and :func:`cvstats.cube.compact.save_compact`: `build`
    returns the Dataset and its encoding; `what` names it in messages
    ("the cube"). Any failure other than a :class:`cvstats.CvstatsError` is
    re-raised as :class:`cvstats.StorageError` with the original chained.
    """
    suffix = check_suffix(target)
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
        with _settled_threads(dataset):  # no chunk still being written once this fails
            if check_suffix(target) == ".nc":
                _write_netcdf(dataset, encoding, tmp)
            else:
                _chunks_for_zarr(dataset).to_zarr(
                    tmp, mode="w-", consolidated=False, encoding=encoding
                )
        _install(tmp, target, overwrite=overwrite)
    except BaseException:
        _remove(tmp)
        raise


@contextlib.contextmanager
def _settled_threads(dataset: xr.Dataset) -> Iterator[None]:
    """Compute the dask-backed variables of `dataset` on threads that have all stopped on exit.

    dask's default (threaded) scheduler raises the first failing task's error
    while the tasks already running go on, each writing its chunk: a zarr
    store deleted meanwhile would be recreated by them, and a failed save would
    leave a temporary behind. Within the block, dask computes on a pool of its
    own (as many threads as dask's default), shut down on exit once every
    running task has ended, its queued tasks cancelled. Another scheduler the
    user configured (e.g. a ``dask.distributed`` client) is left as it is.
    """
    if all(var.chunks is None for var in dataset.variables.values()):
        yield
        return
    import dask
    from dask.system import CPU_COUNT

    if dask.config.get("scheduler", None) is not None:  # chosen by the user
        yield
        return
    pool = ThreadPoolExecutor(CPU_COUNT, thread_name_prefix="cvstats-save")
    try:
        with dask.config.set(scheduler=pool):
            yield
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


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
        _check_replaceable(target, check_suffix(target))
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
    assert attrs is not None
    nodes = _netcdf_nodes(target) if suffix == ".nc" else _zarr_nodes(target, attrs)
    if nodes is None:
        raise StorageError(
            f"cannot list the variables of `path` {str(target)!r} to check that it holds "
            "nothing but a cube written by cvstats" + refusal
        )
    added = _added_by_others(nodes, attrs)
    if added:
        variable = str(attrs[VARIABLE_ATTR])
        raise StorageError(
            f"`path` {str(target)!r} holds a cube written by cvstats ({variable!r}) and also "
            f"{_listed(added)}, which cvstats did not write; overwriting it would delete them. "
            "Move them to another file (or delete them) first, or save the cube to another "
            "path."
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


#: The key of a file's root group among its nodes (no variable can be named so).
_ROOT = ""


class _Node(NamedTuple):
    """A variable or group of a file: its kind, dims and the coordinates it lists."""

    kind: str  # "array" or "group"
    dims: tuple[str, ...] = ()
    coordinates: tuple[str, ...] = ()


def _coordinate_names(attrs: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the names in a CF ``coordinates`` attribute (space-separated), or none."""
    value = attrs.get("coordinates")
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return tuple(value.split()) if isinstance(value, str) else ()


def _added_by_others(nodes: Mapping[str, _Node], attrs: Mapping[str, Any]) -> list[str]:
    """Name the variables and groups of a cvstats file that ``save`` did not write.

    ``save`` (and ``save_compact``) write one Dataset: the variable named by the
    global attr ``cvstats_variable``, the coordinates that variable or the file
    lists in a ``coordinates`` attribute, and index coordinates (a 1-D array
    named after its dim, which xarray writes for every labelled dim). Anything
    else (another variable, a group) was added by someone else.
    """
    variable = str(attrs[VARIABLE_ATTR])
    ours = {variable, *nodes[_ROOT].coordinates}
    if variable in nodes:
        ours.update(nodes[variable].coordinates)
    added = []
    for name, node in nodes.items():
        if name == _ROOT:
            continue
        if node.kind == "group":
            added.append(f"group {name!r}")
        elif name not in ours and node.dims != (name,):
            added.append(f"array {name!r}")
    return sorted(added)


def _listed(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _zarr_nodes(store: Path, attrs: Mapping[str, Any]) -> dict[str, _Node] | None:
    """Return the arrays and groups in the root of a zarr store (v3, v2); None: unreadable.

    `attrs` are the root's attributes; the root itself is the entry :data:`_ROOT`.
    """
    nodes = {_ROOT: _Node("group", (), _coordinate_names(attrs))}
    try:
        with os.scandir(store) as entries:
            children = [Path(e.path) for e in entries if e.is_dir() and not e.is_symlink()]
        for child in children:
            v3 = child / "zarr.json"
            if v3.is_file():
                meta = json.loads(v3.read_text(encoding="utf-8"))
                kind = meta.get("node_type", "array")
                dims = meta.get("dimension_names") or ()
                attrs = meta.get("attributes") or {}
            else:
                kind = "group" if (child / ".zgroup").is_file() else "array"
                zattrs = child / ".zattrs"
                attrs = json.loads(zattrs.read_text(encoding="utf-8")) if zattrs.is_file() else {}
                dims = attrs.get("_ARRAY_DIMENSIONS") or ()
            nodes[child.name] = _Node(
                str(kind), tuple(str(d) for d in dims), _coordinate_names(attrs)
            )
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError):
        return None
    return nodes


def _netcdf_nodes(path: Path) -> dict[str, _Node] | None:
    """Return the variables and groups in the root of a netCDF-4 file; None: unreadable."""
    import h5netcdf

    try:
        with h5netcdf.File(path, "r") as file:
            nodes = {_ROOT: _Node("group", (), _coordinate_names(dict(file.attrs)))}
            nodes |= {
                str(name): _Node(
                    "array",
                    tuple(str(d) for d in var.dimensions),
                    _coordinate_names(dict(var.attrs)),
                )
                for name, var in file.variables.items()
            }
            nodes.update({str(name): _Node("group") for name in file.groups})
    except Exception:  # not HDF5, damaged, locked...: not recognisably ours
        return None
    return nodes


def check_source(source: Path, suffix: str) -> None:
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
            "or never end). " + BUILD_HINT
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
                "forever). " + BUILD_HINT
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


def check_chunks(chunks: object) -> None:
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
                "never decodes (unpickling can run arbitrary code). " + BUILD_HINT
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


def check_chunk_dims(chunks: Mapping[Any, Any], dims: list[Any], what: str) -> None:
    """Refuse a `chunks` mapping naming dims that ``what`` (with ``dims``) does not have."""
    unknown = [dim for dim in chunks if dim not in dims]
    if unknown:
        raise ArgumentError(
            f"`chunks` names dim(s) {unknown} that {what} does not have; its dims are {dims}."
        )


def chunk_dataset(
    ds: xr.Dataset, chunks: Mapping[str, int | str | None] | int | str, source: Path
) -> xr.Dataset:
    """Return `ds` chunked with dask; in a `chunks` mapping, None or 0 means one chunk."""
    if isinstance(chunks, Mapping):
        check_chunk_dims(chunks, sorted(map(str, ds.dims)), f"the Dataset in {str(source)!r}")
        chunks = {dim: -1 if value in (None, 0) else value for dim, value in chunks.items()}
    try:
        return ds.chunk(chunks)
    except ValueError as e:  # passed check_chunks; dask may still refuse
        raise ArgumentError(f"`chunks` {chunks!r} cannot chunk {str(source)!r}: {e}") from e
