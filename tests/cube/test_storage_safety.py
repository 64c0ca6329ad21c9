"""Storage never loses a file: full disks, concurrent saves, foreign paths, FIFOs, chunks.

Covers :func:`cvstats.save` / :func:`cvstats.open_cube` and
:func:`cvstats.cube.compact.save_compact` / :func:`cvstats.cube.compact.open_compact`:

* a full disk while writing netCDF raises StorageError and never crashes the
  interpreter (checked in a subprocess, on a real 200 kB tmpfs when it can be
  mounted and everywhere with an injected ENOSPC);
* without ``overwrite``, of several processes saving to the same new path at
  once exactly one succeeds;
* ``overwrite=True`` replaces only files and stores cvstats wrote;
* FIFOs, devices and stores holding them are refused before being opened;
* invalid ``chunks`` raise ArgumentError / CvstatsTypeError naming ``chunks``.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from test_io import as_saved, assert_exact, make_cube, tmp_names

import cvstats
from cvstats.cube import files as io
from cvstats.cube.compact import from_compact, open_compact, save_compact, to_compact
from cvstats.errors import ArgumentError, CvstatsTypeError, StorageError

SUFFIXES = [".nc", ".zarr"]
TESTS = Path(__file__).parent
REFUSAL = (
    r"not a cube written by cvstats.*refusing to overwrite it; remove it yourself or choose "
    r"another path"
)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail with TimeoutError instead of blocking for ever (POSIX main thread only)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_script(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `script` in a fresh interpreter (a segfault fails the test, not pytest)."""
    path = cwd / "script.py"
    path.write_text(textwrap.dedent(script))
    return subprocess.run(
        [sys.executable, "-X", "faulthandler", "-W", "error", str(path), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def assert_clean_exit(proc: subprocess.CompletedProcess[str]) -> None:
    """Exit status 0 (a segfault gives -11 / 139) and no error ignored in a finalizer."""
    report = f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, report
    assert "Exception ignored" not in proc.stderr, report
    assert "Fatal Python error" not in proc.stderr, report


# --------------------------------------------------------------------------
# a full disk
# --------------------------------------------------------------------------

FULL_DISK = """
    import errno, gc, os, shutil, sys
    from pathlib import Path

    root, modes = Path(sys.argv[1]), sys.argv[2].split(",")
    sys.path.insert(0, sys.argv[3])
    from test_io import make_cube

    import cvstats
    from cvstats.cube import files as io
    from cvstats.cube.compact import save_compact, to_compact

    big = make_cube(n=800, J=30, n_test=400, n_train=300)  # 384 kB of losses
    state = {"mode": "tmpfs", "budget": float("inf")}  # bytes the injected disk still takes
    real_write = io._ShieldedFile._write_raw


    def write_raw(self, view, offset):
        # "inject": the disk fills up after `budget` bytes: part of a write lands, then
        # ENOSPC; "interrupt": Ctrl-C arrives during that write instead.
        if len(view) > state["budget"]:
            real_write(self, view[: int(state["budget"])], offset)
            state["budget"] = 0
            if state["mode"] == "inject":
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            raise KeyboardInterrupt
        state["budget"] -= len(view)
        real_write(self, view, offset)


    io._ShieldedFile._write_raw = write_raw
    check_free_space = io._check_free_space
    for mode in modes:
        state["mode"] = mode
        directory = root / mode
        directory.mkdir()
        if mode == "tmpfs":  # a real 200 kB filesystem
            try:
                cvstats.save(big, directory / "big.nc")
            except cvstats.StorageError as e:
                assert "not enough free space" in str(e), e
                assert list(directory.iterdir()) == [], list(directory.iterdir())
                print(mode, "precheck refused", flush=True)
            # Let the writes themselves run into the full disk.
            io._check_free_space = lambda dataset, target: None
        old = cvstats.save(make_cube(seed=1), directory / "old.nc")
        before = old.read_bytes()
        cases = {
            "numpy": lambda: cvstats.save(big, directory / "new.nc"),
            "dask": lambda: cvstats.save(big.chunk({"split": 2}), directory / "new.nc"),
            "compact": lambda: save_compact(to_compact(big), directory / "new.nc"),
            "overwrite": lambda: cvstats.save(big.chunk({"split": 5}), old, overwrite=True),
        }
        for name, case in cases.items():
            state["budget"] = float("inf") if mode == "tmpfs" else 20_000
            try:
                case()
            except (cvstats.StorageError, KeyboardInterrupt) as e:
                if mode == "interrupt":
                    assert isinstance(e, KeyboardInterrupt), repr(e)
                else:
                    assert "No space left on device" in str(e), e
                    assert isinstance(e.__cause__, OSError), repr(e.__cause__)
                left = sorted(p.name for p in directory.iterdir())
                assert left == ["old.nc"], left  # no temporary, no new file
                assert old.read_bytes() == before
                print(mode, name, "refused", flush=True)
            else:
                print(mode, name, "saved", flush=True)
            gc.collect()
        # The failures released their space and left HDF5 usable.
        state["budget"] = float("inf")
        io._check_free_space = check_free_space
        old.unlink()
        cube = make_cube(seed=3)
        path = cvstats.save(cube, directory / "ok.nc")
        back = cvstats.open_cube(path)
        assert back.drop_attrs().identical(cube.drop_attrs())
        shutil.rmtree(directory)
        print(mode, "done", flush=True)
"""


def expected_lines(mode: str) -> list[str]:
    """What FULL_DISK prints for `mode` when every failure is handled."""
    lines = [f"{mode} {case} refused" for case in ("numpy", "dask", "compact", "overwrite")]
    return [f"{mode} precheck refused"] * (mode == "tmpfs") + lines + [f"{mode} done"]


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 200 kB tmpfs mounted in `tmp_path` (skips where mounting is not permitted)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs Linux and root")
    mount = tmp_path / "small"
    mount.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"cannot run mount: {e}")
    if done.returncode != 0:
        pytest.skip(f"mounting a 200 kB tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def test_full_disk_raises_instead_of_crashing(small_fs, tmp_path):
    proc = run_script(FULL_DISK, str(small_fs), "tmpfs", str(TESTS), cwd=tmp_path)
    assert_clean_exit(proc)
    assert proc.stdout.splitlines() == expected_lines("tmpfs")


def test_failing_writes_raise_instead_of_crashing(tmp_path):
    # Everywhere: the file's writes fail midway (ENOSPC, or Ctrl-C arriving in a write).
    directory = tmp_path / "disk"
    directory.mkdir()
    proc = run_script(FULL_DISK, str(directory), "inject,interrupt", str(TESTS), cwd=tmp_path)
    assert_clean_exit(proc)
    assert proc.stdout.splitlines() == expected_lines("inject") + expected_lines("interrupt")


def test_free_space_is_checked_before_writing(tmp_path, monkeypatch):
    full = types.SimpleNamespace(f_frsize=4096, f_bavail=2, f_bfree=2)
    monkeypatch.setattr(os, "statvfs", lambda path: full, raising=False)
    monkeypatch.setattr(io.shutil, "disk_usage", lambda path: types.SimpleNamespace(free=8192))
    with pytest.raises(StorageError, match=r"not enough free space .*\(8192 bytes\) free"):
        cvstats.save(make_cube(n=200, J=10), tmp_path / "cube.nc")
    with pytest.raises(StorageError, match="not enough free space"):
        save_compact(to_compact(make_cube(n=2000, J=10, n_test=500)), tmp_path / "c.nc")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    cvstats.save(make_cube(), tmp_path / "cube.nc")  # a small cube fits


# --------------------------------------------------------------------------
# no clobbering, also between processes
# --------------------------------------------------------------------------

RACES = ["hooked.nc", "hooked.zarr", "hooked_compact.zarr", "plain.nc", "plain.zarr"]


def _race(barrier: object, results: object, directory: str, seed: int) -> None:
    """Child process: save cube `seed` to every path of RACES, racing the other children.

    For the "hooked" paths every child has written its file before all move
    them into place at the same instant; for the "plain" ones they all start
    saving at the same instant.
    """
    real_install = io._install

    def install(tmp: Path, target: Path, *, overwrite: bool) -> None:
        if target.name.startswith("hooked"):
            barrier.wait(timeout=120)
        real_install(tmp, target, overwrite=overwrite)

    io._install = install
    cube = make_cube(seed=seed)
    outcome = {}
    for name in RACES:
        path = Path(directory) / name
        try:
            if name.startswith("plain"):
                barrier.wait(timeout=120)
            if "compact" in name:
                save_compact(to_compact(cube), path)
            else:
                cvstats.save(cube, path)
            outcome[name] = "saved"
        except StorageError as e:
            outcome[name] = str(e)
        except BaseException as e:  # report it, and do not leave the others waiting
            outcome[name] = f"unexpected {type(e).__name__}: {e}"
            barrier.abort()
    results.put((seed, outcome))


def test_concurrent_saves_never_clobber(tmp_path):
    n = 3
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(n), context.Queue()
    processes = [
        context.Process(target=_race, args=(barrier, results, str(tmp_path), seed))
        for seed in range(n)
    ]
    for process in processes:
        process.start()
    try:
        outcomes = dict(results.get(timeout=240) for _ in processes)
    finally:
        for process in processes:
            process.join(timeout=60)
            if process.is_alive():
                process.kill()
    for name in RACES:
        winners = [seed for seed, outcome in outcomes.items() if outcome[name] == "saved"]
        assert len(winners) == 1, (name, outcomes)
        for seed, outcome in outcomes.items():
            if seed != winners[0]:
                assert re.search("already exists.*pass `overwrite=True`", outcome[name]), outcome
        expected = make_cube(seed=winners[0])
        if "compact" in name:
            xr.testing.assert_identical(from_compact(open_compact(tmp_path / name)), expected)
        else:
            assert_exact(cvstats.open_cube(tmp_path / name), as_saved(expected))
    assert tmp_names(tmp_path) == []


@pytest.fixture(params=["renameat2", "fallback"])
def rename(request, monkeypatch):
    """Run a test with Linux's renameat2 (where available) and with the portable fallback."""
    if request.param == "renameat2" and io._renameat2() is None:
        pytest.skip("no renameat2 on this platform")
    if request.param == "fallback":
        monkeypatch.setattr(io, "_renameat2", lambda: None)
    return request.param


def _appear_before_install(monkeypatch, make) -> None:
    """Make something appear at the target just before the finished file is moved there."""
    real_install = io._install

    def install(tmp: Path, target: Path, *, overwrite: bool) -> None:
        make(target)
        real_install(tmp, target, overwrite=overwrite)

    monkeypatch.setattr(io, "_install", install)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_path_created_meanwhile_is_not_replaced(tmp_path, monkeypatch, rename, suffix):
    def make(target: Path) -> None:
        if suffix == ".nc":
            target.write_text("someone else's")
        else:
            target.mkdir()
            (target / "important.txt").write_text("someone else's")

    _appear_before_install(monkeypatch, make)
    path = tmp_path / f"cube{suffix}"
    with pytest.raises(StorageError, match="already exists .*another process created it"):
        cvstats.save(make_cube(), path)
    kept = path if suffix == ".nc" else path / "important.txt"
    assert kept.read_text() == "someone else's"
    assert tmp_names(tmp_path) == []


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_foreign_path_created_meanwhile_survives_overwrite(tmp_path, monkeypatch, suffix):
    def make(target: Path) -> None:
        io._remove(target)
        if suffix == ".nc":
            target.write_text("someone else's")
        else:
            target.mkdir()
            (target / "important.txt").write_text("someone else's")

    path = cvstats.save(make_cube(seed=1), tmp_path / f"cube{suffix}")
    _appear_before_install(monkeypatch, make)
    with pytest.raises(StorageError, match=REFUSAL):
        cvstats.save(make_cube(seed=2), path, overwrite=True)
    kept = path if suffix == ".nc" else path / "important.txt"
    assert kept.read_text() == "someone else's"
    assert tmp_names(tmp_path) == []


def test_rename_noreplace_fallbacks(tmp_path, rename):
    src, dst = tmp_path / "src", tmp_path / "dst"
    for make in (Path.touch, Path.mkdir):
        make(src)
        make(dst)
        with pytest.raises(FileExistsError):
            io._rename_noreplace(src, dst)
        assert src.exists() and dst.exists()
        io._remove(dst)
        io._rename_noreplace(src, dst)
        assert not src.exists() and dst.exists()
        io._remove(dst)


# --------------------------------------------------------------------------
# overwrite=True replaces only what cvstats wrote
# --------------------------------------------------------------------------


def _foreign(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """Make a foreign `kind` of path; return it and a file whose content must survive."""
    if kind == "directory":
        path = tmp_path / "mydata.zarr"
        path.mkdir()
        keep = path / "important.txt"
    elif kind == "empty directory":
        path = tmp_path / "empty.zarr"
        path.mkdir()
        keep = tmp_path / "witness.txt"
    elif kind == "extra file in a cvstats store":
        path = cvstats.save(make_cube(), tmp_path / "store.zarr")
        keep = path / "notes.txt"
    elif kind == "file named .zarr":
        path = keep = tmp_path / "file.zarr"
    elif kind == "text file":
        path = keep = tmp_path / "notes.nc"
    elif kind == "foreign netCDF":
        path = keep = tmp_path / "other.nc"
        xr.Dataset({"x": ("t", np.arange(3.0))}, attrs={"title": "not ours"}).to_netcdf(
            path, engine="h5netcdf"
        )
    elif kind == "foreign zarr":
        path = tmp_path / "other.zarr"
        xr.Dataset({"x": ("t", np.arange(3.0))}).to_zarr(path, consolidated=False)
        keep = path / "zarr.json"
    else:  # a link to a cvstats file
        target = cvstats.save(make_cube(), tmp_path / "real.nc")
        path = tmp_path / "link.nc"
        path.symlink_to(target)
        keep = target
    if not keep.exists():
        keep.write_text("mine, not cvstats'")
    return path, keep


FOREIGN = [
    "directory",
    "empty directory",
    "extra file in a cvstats store",
    "file named .zarr",
    "text file",
    "foreign netCDF",
    "foreign zarr",
    "symbolic link",
]


@pytest.mark.parametrize("kind", FOREIGN)
@pytest.mark.parametrize("writer", ["save", "save_compact"])
def test_overwrite_refuses_what_cvstats_did_not_write(tmp_path, kind, writer):
    path, keep = _foreign(tmp_path, kind)
    before = sorted(os.listdir(tmp_path))
    content = keep.read_bytes()
    cube = make_cube(seed=5)
    with pytest.raises(StorageError, match=REFUSAL):
        if writer == "save":
            cvstats.save(cube, path, overwrite=True)
        else:
            save_compact(to_compact(cube), path, overwrite=True)
    assert keep.read_bytes() == content
    assert sorted(os.listdir(tmp_path)) == before
    assert os.path.islink(path) == (kind == "symbolic link")


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_overwrite_replaces_cvstats_files_of_either_layout(tmp_path, suffix):
    cube = make_cube(seed=1)
    path = save_compact(to_compact(cube), tmp_path / f"cube{suffix}")
    cvstats.save(make_cube(seed=2), path, overwrite=True)
    assert_exact(cvstats.open_cube(path), as_saved(make_cube(seed=2)))
    save_compact(to_compact(cube), path, overwrite=True)
    xr.testing.assert_identical(from_compact(open_compact(path)), cube)
    assert sorted(os.listdir(tmp_path)) == [path.name]


ADDED = [
    "zarr array",  # zarr's own API: no dimension names (open_cube refuses the store)
    "zarr array with dims",
    "zarr group",
    "xarray variable",  # appended with xarray, the store's attrs kept (open_cube reads it)
    "netCDF variable",
    "netCDF group",
]


def _add_foreign(path: Path, kind: str, values: np.ndarray) -> None:
    """Add an array (or a group holding one) of the user's own to a file cvstats wrote."""
    if kind.startswith("zarr"):
        import zarr

        group = zarr.open_group(path, mode="a")
        if kind == "zarr group":
            group = group.create_group("mine")
        dims = ["t"] if kind == "zarr array with dims" else None
        group.create_array("scores", data=values, dimension_names=dims)
    elif kind == "xarray variable":
        import zarr

        attrs = zarr.open_group(path, mode="r").attrs.asdict()  # with its `coordinates`
        xr.Dataset({"scores": ("t", values)}, attrs=attrs).to_zarr(
            path, mode="a", consolidated=False
        )
    else:
        import h5netcdf

        with h5netcdf.File(path, "a") as file:
            where = file.create_group("mine") if kind == "netCDF group" else file
            where.dimensions["t"] = values.size
            where.create_variable("scores", ("t",), values.dtype)[:] = values


def _read_foreign(path: Path, kind: str) -> np.ndarray:
    if kind.startswith("zarr"):
        import zarr

        group = zarr.open_group(path, mode="r")
        return np.asarray((group["mine"] if kind == "zarr group" else group)["scores"][:])
    if kind == "xarray variable":
        return xr.open_zarr(path, consolidated=False)["scores"].values
    import h5netcdf

    with h5netcdf.File(path, "r") as file:
        where = file.groups["mine"] if kind == "netCDF group" else file
        return np.asarray(where.variables["scores"][:])


@pytest.mark.parametrize("kind", ADDED)
@pytest.mark.parametrize("layout", ["save", "save_compact"])
def test_overwrite_refuses_a_cvstats_file_holding_the_users_arrays(tmp_path, kind, layout):
    """Issue 26: a cvstats file with an array of the user's own is not wiped by overwrite."""
    suffix = ".nc" if kind.startswith("netCDF") else ".zarr"
    old = make_cube(seed=7, J=3, n=12)
    path = tmp_path / f"results{suffix}"
    if layout == "save":
        cvstats.save(old, path)
    else:
        save_compact(to_compact(old), path)
    values = np.linspace(0.25, 0.75, 5)
    _add_foreign(path, kind, values)
    name = "group 'mine'" if kind.endswith("group") else "array 'scores'"
    for write in (
        lambda: cvstats.save(make_cube(seed=8), path, overwrite=True),
        lambda: save_compact(to_compact(make_cube(seed=8)), path, overwrite=True),
    ):
        with pytest.raises(
            StorageError,
            match=rf"holds a cube written by cvstats \('loss'\) and also {name}, which "
            r"cvstats did not write; overwriting it would delete them\. Move them",
        ):
            write()
        np.testing.assert_array_equal(_read_foreign(path, kind), values)
    assert sorted(os.listdir(tmp_path)) == [path.name]
    if kind in ("xarray variable", "netCDF variable", "netCDF group", "zarr array with dims"):
        opened = cvstats.open_cube(path) if layout == "save" else open_compact(path)
        if layout == "save":
            assert_exact(opened, as_saved(old))


# --------------------------------------------------------------------------
# FIFOs and other special files
# --------------------------------------------------------------------------

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


@needs_fifo
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_fifo_is_refused_before_opening(tmp_path, suffix):
    path = tmp_path / f"pipe{suffix}"
    os.mkfifo(path)
    with deadline(20):
        with pytest.raises(StorageError, match=r"is a FIFO \(named pipe\), not a .*block"):
            cvstats.open_cube(path)
        with pytest.raises(StorageError, match=r"is a FIFO \(named pipe\)"):
            open_compact(path, chunks={})
        with pytest.raises(StorageError, match="already exists; pass `overwrite=True`"):
            cvstats.save(make_cube(), path)
        with pytest.raises(StorageError, match=r"is a FIFO \(named pipe\), " + REFUSAL):
            cvstats.save(make_cube(), path, overwrite=True)
        with pytest.raises(StorageError, match=r"is a FIFO \(named pipe\), " + REFUSAL):
            save_compact(to_compact(make_cube()), path, overwrite=True)
    assert sorted(os.listdir(tmp_path)) == [path.name]
    assert Path(path).is_fifo()


@needs_fifo
def test_zarr_store_holding_a_fifo_is_refused(tmp_path):
    path = cvstats.save(make_cube(), tmp_path / "cube.zarr")
    chunk = next(p for p in (path / "loss").rglob("*") if p.is_file() and p.name != "zarr.json")
    chunk.unlink()
    os.mkfifo(chunk)
    with deadline(20):
        with pytest.raises(StorageError, match="is neither a regular file nor a directory"):
            cvstats.open_cube(path, chunks={})
        with pytest.raises(StorageError, match="is neither a regular file nor a directory"):
            open_compact(path)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_device_is_refused(tmp_path):
    path = tmp_path / "null.nc"
    path.symlink_to("/dev/null")
    with pytest.raises(StorageError, match="is a character device, not a netCDF-4 file"):
        cvstats.open_cube(path)
    with pytest.raises(StorageError, match=r"symbolic link, " + REFUSAL):
        cvstats.save(make_cube(), path, overwrite=True)


def test_broken_link_does_not_exist(tmp_path):
    path = tmp_path / "gone.nc"
    path.symlink_to(tmp_path / "nothing.nc")
    with pytest.raises(StorageError, match=r"does not exist \(a symbolic link to nothing\)"):
        cvstats.open_cube(path)


# --------------------------------------------------------------------------
# chunks
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("chunks")
    cube = make_cube()
    return {
        "cube": cvstats.save(cube, directory / "cube.zarr"),
        "compact": save_compact(to_compact(cube), directory / "compact.nc"),
    }


BAD_CHUNKS = [
    (-5, ArgumentError, r"`chunks` got -5; valid values are None .*'auto'.*-1 \(whole dims\)"),
    (0, ArgumentError, r"`chunks` got 0; valid values"),
    ("bad", ArgumentError, r"`chunks` got 'bad'; valid values"),
    (1.5, CvstatsTypeError, r"`chunks` got 1.5 of type float; valid values"),
    (True, CvstatsTypeError, r"`chunks` got True of type bool"),
    ([2, 2], CvstatsTypeError, r"`chunks` got \[2, 2\] of type list"),
    ({"split": -2}, ArgumentError, r"`chunks\['split'\]` got -2; valid values"),
    ({"split": "x"}, ArgumentError, r"`chunks\['split'\]` got 'x'"),
    ({"split": 2.0}, CvstatsTypeError, r"`chunks\['split'\]` got 2.0 of type float"),
    ({"split": (2, 0, 2)}, ArgumentError, r"`chunks\['split'\]` got \(2, 0, 2\), holding 0"),
    ({"split": (3, 3)}, ArgumentError, r"`chunks` .* cannot chunk .*add up"),
    ({"splits": 2}, ArgumentError, r"`chunks` names dim\(s\) \['splits'\]"),
]


@pytest.mark.parametrize(("chunks", "error", "match"), BAD_CHUNKS)
@pytest.mark.parametrize("which", ["cube", "compact"])
def test_bad_chunks(saved, which, chunks, error, match):
    opener = cvstats.open_cube if which == "cube" else open_compact
    with pytest.raises(error, match=match):
        opener(saved[which], chunks=chunks)


@pytest.mark.parametrize(
    "chunks", [-1, "auto", 2, np.int64(3), {}, {"split": None}, {"split": 0}, {"split": (1, 3)}]
)
def test_good_chunks(saved, chunks):
    lazy = cvstats.open_cube(saved["cube"], chunks=chunks)
    try:
        assert lazy.chunks is not None
        assert_exact(lazy.compute(), as_saved(make_cube()))
    finally:
        lazy.close()
    compact = open_compact(saved["compact"], chunks=chunks)
    try:
        xr.testing.assert_identical(from_compact(compact.compute()), make_cube())
    finally:
        compact.close()
