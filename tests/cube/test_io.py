"""Tests of cvstats.io: exact round trips, refusals, atomic writes (also under SIGKILL)."""

from __future__ import annotations

import json
import os
import pickle
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import dask.array as da
import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cvstats
from cvstats.cube.storage import SCHEMA_VERSION, open_cube, save
from cvstats.errors import ArgumentError, CubeError, StorageError

SUFFIXES = [".nc", ".zarr"]
# netCDF's default fill values: a real loss equal to one must not come back as NaN.
NC_FILL_F64 = 9.969209968386869e36
NC_FILL_F32 = float(np.float32(9.96921e36))


def make_cube(
    *,
    dtype: type = np.float64,
    extra: int = 0,
    str_examples: bool = True,
    in_train: bool = True,
    n: int = 10,
    J: int = 4,
    n_test: int = 3,
    n_train: int = 5,
    models: tuple[str, ...] = ("tree", "logreg"),
    seed: int = 0,
) -> xr.DataArray:
    """A valid cube built by hand after docs/cube-schema.md (block "main", J random splits)."""
    rng = np.random.default_rng(seed)
    lead = (extra,) if extra else ()
    test = np.zeros((*lead, J, n), dtype=bool)
    train = np.zeros_like(test)
    for idx in np.ndindex(*lead, J):
        perm = rng.permutation(n)
        test[idx][perm[:n_test]] = True
        train[idx][perm[n_test : n_test + n_train]] = True
    values = rng.random((*lead, J, n, len(models))).astype(dtype)
    values[~test] = np.nan
    dims = (*(("dataset",) if extra else ()), "split", "example", "model")
    minus_one = np.full(J, -1, dtype=np.int64)
    coords = {
        "split": np.arange(J, dtype=np.int64),
        "example": np.array([f"ex{i}" for i in range(n)])
        if str_examples
        else np.arange(100, 100 + n, dtype=np.int64),
        "model": np.array(models),
        "block": ("split", np.array(["main"] * J)),
        "half": ("split", minus_one),
        "side": ("split", minus_one),
        "replicate": ("split", minus_one),
        "repeat": ("split", minus_one),
        "fold": ("split", minus_one),
        "n_train": ("split", np.full(J, n_train, dtype=np.int64)),
    }
    if in_train:
        coords["in_train"] = (dims[:-1], train)
    return xr.DataArray(
        values,
        dims=dims,
        name="loss",
        coords=coords,
        attrs={"design": "user", "n": n, "seed": np.int64(-1), "n_test": n_test},
    )


def as_saved(cube: xr.DataArray) -> xr.DataArray:
    """What open_cube returns for a saved `cube`: the same, plus the version attrs."""
    return cube.assign_attrs(schema_version=SCHEMA_VERSION, cvstats_version=cvstats.__version__)


def put_extreme_values(cube: xr.DataArray) -> xr.DataArray:
    """Put zeros, tiny/huge values and netCDF's default fill value on test examples."""
    values = cube.values.copy()
    tested = np.argwhere(~np.isnan(values[..., 0]))
    fill = NC_FILL_F32 if values.dtype == np.float32 else NC_FILL_F64
    specials = [0.0, fill, -fill, 1e-30, 1e30, -0.0]
    for (*idx,), value in zip(tested, specials, strict=False):
        values[tuple(idx)] = value
    return cube.copy(data=values)


def assert_exact(opened: xr.DataArray, expected: xr.DataArray) -> None:
    """Identical values, NaN pattern, coords and attrs, with dtypes and attr types."""
    xr.testing.assert_identical(opened, expected)
    assert opened.dtype == expected.dtype
    np.testing.assert_array_equal(np.isnan(opened.values), np.isnan(expected.values))
    np.testing.assert_array_equal(np.signbit(opened.values), np.signbit(expected.values))
    for name, coord in expected.coords.items():
        got = opened.coords[name]
        if coord.dtype.kind in "UOT":
            assert got.dtype.kind == "U", name
            assert got.values.tolist() == coord.values.tolist(), name
        else:
            assert got.dtype == coord.dtype, name
    for name in ("n", "seed", "schema_version"):
        assert isinstance(opened.attrs[name], int | np.integer)
        assert not isinstance(opened.attrs[name], bool | np.bool_)
    assert isinstance(opened.attrs["design"], str)


def tmp_names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


# --------------------------------------------------------------------------
# round trips
# --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("extra", [0, 2])
def test_round_trip_exact(tmp_path, suffix, dtype, extra):
    cube = put_extreme_values(make_cube(dtype=dtype, extra=extra))
    path = tmp_path / f"cube{suffix}"
    assert save(cube, path) == path
    opened = open_cube(path)
    assert isinstance(opened.data, np.ndarray)
    assert opened.in_train.dtype == bool
    assert opened.example.dtype.kind == "U"
    assert opened.attrs["schema_version"] == SCHEMA_VERSION
    assert_exact(opened, as_saved(cube))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_round_trip_int_examples_without_in_train(tmp_path, suffix):
    cube = make_cube(str_examples=False, in_train=False, models=("a",))
    path = save(cube, tmp_path / f"cube{suffix}")
    opened = open_cube(path)
    assert opened.example.dtype == np.int64
    assert "in_train" not in opened.coords
    assert_exact(opened, as_saved(cube))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_round_trip_awkward_strings_and_stale_encoding(tmp_path, suffix):
    # Empty and non-ASCII labels; object and StringDType inputs; an encoding left over
    # from some earlier read whose _FillValue (0.0) is a real loss here.
    cube = make_cube(models=("", "réseau ñ", "a much longer model name"))
    cube = cube.assign_coords(
        model=cube.model.values.astype(object),
        block=("split", cube.block.values.astype(np.dtypes.StringDType())),
    )
    values = cube.values.copy()
    values[~np.isnan(values)] = 0.0
    cube = cube.copy(data=values)
    cube.encoding = {"_FillValue": 0.0, "dtype": "int16", "scale_factor": 0.5}
    path = save(cube, tmp_path / f"cube{suffix}")
    opened = open_cube(path)
    assert opened.model.values.tolist() == ["", "réseau ñ", "a much longer model name"]
    assert opened.block.dtype.kind == "U"
    np.testing.assert_array_equal(opened.values, values)
    assert_exact(opened, as_saved(cube))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_round_trip_other_coordinate_dtypes(tmp_path, suffix):
    # Coordinates beyond the schema: datetimes and timedeltas with NaT, a float with
    # NaN and netCDF's default fill value, bool, small ints, an int with a "units" attr.
    when = ["2024-01-01T00:00", "NaT", "2024-01-02T03:04:05.123456789", "1900-01-01"]
    cube = make_cube(J=4).assign_coords(
        when=("split", np.array(when, dtype="datetime64[ns]")),
        fit_time=("split", np.array([1, "NaT", 3, 4], dtype="timedelta64[ms]")),
        seconds=("split", np.arange(4), {"units": "seconds"}),
        score=("split", np.array([np.nan, 1.5, NC_FILL_F64, 0.0])),
        flag=("split", np.array([True, False, True, False])),
        u8=("split", np.array([0, 255, 1, 2], dtype=np.uint8)),
        i32=("split", np.array([0, -(2**31), 1, 2], dtype=np.int32)),
    )
    path = save(cube, tmp_path / f"cube{suffix}")
    assert_exact(open_cube(path), as_saved(cube))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_save_does_not_mutate_cube(tmp_path, suffix):
    cube = make_cube()
    before = cube.copy(deep=True)
    attrs_before = dict(cube.attrs)
    save(cube, tmp_path / f"cube{suffix}")
    assert cube.attrs == attrs_before
    assert "schema_version" not in cube.attrs
    xr.testing.assert_identical(cube, before)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    data=st.data(),
    dtype=st.sampled_from([np.float32, np.float64]),
    suffix=st.sampled_from(SUFFIXES),
)
def test_round_trip_any_finite_losses(tmp_path_factory, data, dtype, suffix):
    cube = make_cube(dtype=dtype, J=2, n=6, n_test=2, n_train=3, models=("a", "b"))
    width = 32 if dtype == np.float32 else 64
    finite = st.floats(allow_nan=False, allow_infinity=False, width=width)
    tested = ~np.isnan(cube.values)
    size = int(tested.sum())
    drawn = data.draw(st.lists(finite, min_size=size, max_size=size))
    values = cube.values.copy()
    values[tested] = np.array(drawn, dtype=dtype)
    cube = cube.copy(data=values)
    path = save(cube, tmp_path_factory.mktemp("h") / f"cube{suffix}")
    assert_exact(open_cube(path), as_saved(cube))


# --------------------------------------------------------------------------
# lazy cubes
# --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("chunks", [{}, "auto", {"split": 2, "example": 4}])
def test_lazy_open_is_dask_backed_and_equal(tmp_path, suffix, chunks):
    cube = make_cube(extra=2)
    path = save(cube, tmp_path / f"cube{suffix}")
    eager = open_cube(path)
    lazy = open_cube(path, chunks=chunks)
    try:
        assert isinstance(lazy.data, da.Array)
        if isinstance(chunks, dict) and chunks:
            assert lazy.chunksizes["split"] == (2, 2)
        assert_exact(lazy.compute(), eager)
    finally:
        lazy.close()


def test_lazy_open_unknown_chunk_dim(tmp_path):
    path = save(make_cube(), tmp_path / "cube.nc")
    with pytest.raises(ArgumentError, match=r"`chunks` names dim\(s\) \['splits'\]"):
        open_cube(path, chunks={"splits": 2})
    os.remove(path)  # the failed open closed the file


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_save_dask_cube_stays_lazy(tmp_path, suffix):
    cube = make_cube(extra=2, J=5)
    # Irregular chunks, which zarr cannot store as they are.
    lazy = cube.chunk({"split": (1, 3, 1), "example": 4})
    path = save(lazy, tmp_path / f"cube{suffix}")
    assert isinstance(lazy.data, da.Array)
    assert isinstance(lazy.in_train.data, da.Array)
    assert lazy.encoding == {}
    assert_exact(open_cube(path), as_saved(cube))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_resave_lazily_opened_cube_over_its_own_file(tmp_path, suffix):
    cube = make_cube()
    path = save(cube, tmp_path / f"cube{suffix}")
    lazy = open_cube(path, chunks={})
    try:
        save(lazy, path, overwrite=True)
    finally:
        lazy.close()
    assert_exact(open_cube(path), as_saved(cube))
    assert tmp_names(tmp_path) == []


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_eager_open_leaves_no_open_handle(tmp_path, suffix):
    psutil = pytest.importorskip("psutil")  # installed with distributed
    path = save(make_cube(), tmp_path / f"cube{suffix}")
    opened = open_cube(path)
    opened.values.sum()
    process = psutil.Process()
    assert not [f.path for f in process.open_files() if f.path.startswith(str(path))]


# --------------------------------------------------------------------------
# refusals when saving
# --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_save_refuses_to_overwrite(tmp_path, suffix):
    path = save(make_cube(seed=1), tmp_path / f"cube{suffix}")
    new = make_cube(seed=2)
    with pytest.raises(StorageError, match=r"already exists; pass `overwrite=True`"):
        save(new, path)
    assert_exact(open_cube(path), as_saved(make_cube(seed=1)))
    save(new, path, overwrite=True)
    assert_exact(open_cube(path), as_saved(new))
    assert tmp_names(tmp_path) == []


@pytest.mark.parametrize("name", ["cube.h5", "cube.netcdf", "cube"])
def test_unknown_suffix(tmp_path, name):
    match = r"has suffix .*use '\.nc' \(netCDF-4\) or '\.zarr'"
    with pytest.raises(StorageError, match=match):
        save(make_cube(), tmp_path / name)
    with pytest.raises(StorageError, match=match):
        open_cube(tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_save_validates_first(tmp_path):
    cube = make_cube()
    del cube.attrs["n"]
    with pytest.raises(CubeError, match=r"lacks the attr\(s\) \['n'\]"):
        save(cube, tmp_path / "cube.nc")
    with pytest.raises(CubeError, match="has no name"):
        save(make_cube().rename(None), tmp_path / "cube.zarr")
    assert list(tmp_path.iterdir()) == []


def test_save_name_clashing_with_a_coordinate(tmp_path):
    cube = make_cube().rename("fold")
    with pytest.raises(CubeError, match="named 'fold' like one of its coordinates"):
        save(cube, tmp_path / "cube.nc")
    assert list(tmp_path.iterdir()) == []


def test_save_into_missing_directory(tmp_path):
    with pytest.raises(StorageError, match="does not exist; create it first"):
        save(make_cube(), tmp_path / "nowhere" / "cube.nc")


def test_save_nc_over_a_directory(tmp_path):
    (tmp_path / "cube.nc").mkdir()
    with pytest.raises(StorageError, match="is a directory, not a netCDF file"):
        save(make_cube(), tmp_path / "cube.nc", overwrite=True)


@pytest.mark.parametrize("value", [{"a": 1}, True])
def test_save_attr_netcdf_cannot_store(tmp_path, value):
    path = save(make_cube(), tmp_path / "cube.nc")
    cube = make_cube(seed=3).assign_attrs(note=value)
    with pytest.raises(StorageError, match="could not write the cube.*previous file") as info:
        save(cube, path, overwrite=True)
    assert info.value.__cause__ is not None
    assert_exact(open_cube(path), as_saved(make_cube()))
    assert tmp_names(tmp_path) == []


# --------------------------------------------------------------------------
# refusals when opening
# --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_open_missing(tmp_path, suffix):
    with pytest.raises(StorageError, match="does not exist; check the path"):
        open_cube(tmp_path / f"missing{suffix}")


def test_open_foreign_netcdf(tmp_path):
    path = tmp_path / "foreign.nc"
    cube = make_cube()
    cube.to_dataset().to_netcdf(path, engine="h5netcdf")
    with pytest.raises(StorageError, match=r"not written by `cvstats.save`.*from_arrays"):
        open_cube(path)


def test_open_foreign_zarr(tmp_path):
    path = tmp_path / "foreign.zarr"
    xr.Dataset({"x": ("t", np.arange(3.0))}).to_zarr(path, consolidated=False)
    with pytest.raises(StorageError, match=r"not written by `cvstats.save`.*from_frame"):
        open_cube(path)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_open_store_without_cube_variable(tmp_path, suffix):
    path = tmp_path / f"odd{suffix}"
    dataset = xr.Dataset({"x": ("t", np.arange(3.0))})
    dataset.attrs = {"schema_version": 1, "cvstats_variable": "loss"}
    write(dataset, path)
    with pytest.raises(StorageError, match=r"names none of its variables \['x'\]"):
        open_cube(path)
    dataset.attrs["cvstats_variable"] = "x"
    write(dataset, path)
    with pytest.raises(StorageError, match=r"has dims \('t',\), not \(\*extra, split"):
        open_cube(path)


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("version", [SCHEMA_VERSION + 1, "1", 0])
def test_open_schema_version(tmp_path, suffix, version):
    path = tmp_path / f"cube{suffix}"
    dataset = make_cube().to_dataset()
    dataset.attrs = {"schema_version": version, "cvstats_variable": "loss"}
    write(dataset, path)
    newer = version == SCHEMA_VERSION + 1
    match = "written by a newer cvstats.*upgrade" if newer else "invalid 'schema_version'"
    with pytest.raises(StorageError, match=match):
        open_cube(path)


def write(dataset: xr.Dataset, path: Path) -> None:
    """Write a dataset with plain xarray (not cvstats.save)."""
    if path.suffix == ".nc":
        dataset.to_netcdf(path, engine="h5netcdf")
    else:
        # Fixed-width unicode has no stable zarr v3 data type (zarr warns): use object.
        strings = {
            k: v.astype(object) for k, v in dataset.variables.items() if v.dtype.kind == "U"
        }
        dataset.assign_coords(strings).to_zarr(path, mode="w", consolidated=False)


def test_open_truncated_netcdf(tmp_path):
    path = save(make_cube(J=40, n=200, n_test=20, n_train=100), tmp_path / "cube.nc")
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    for chunks in (None, {}):
        with pytest.raises(StorageError, match="cannot read .* as netCDF-4.*truncated") as info:
            open_cube(path, chunks=chunks)
        assert isinstance(info.value.__cause__, OSError)


def test_open_truncated_zarr(tmp_path):
    path = save(make_cube(), tmp_path / "cube.zarr")
    meta = path / "loss" / "zarr.json"
    text = meta.read_text()
    meta.write_text(text[: len(text) // 2])
    with pytest.raises(StorageError, match="cannot read .* as zarr") as info:
        open_cube(path)
    assert info.value.__cause__ is not None


def test_open_text_file_with_nc_suffix(tmp_path):
    path = tmp_path / "notes.nc"
    path.write_text("split,example,model,loss\n0,1,tree,0.5\n")
    with pytest.raises(StorageError, match="cannot read .* as netCDF-4") as info:
        open_cube(path)
    assert isinstance(info.value.__cause__, OSError)


@pytest.mark.parametrize("make", ["empty_dir", "file"])
def test_open_zarr_that_is_not_a_store(tmp_path, make):
    path = tmp_path / "cube.zarr"
    if make == "empty_dir":
        path.mkdir()
    else:
        path.write_text("not a store")
    with pytest.raises(StorageError, match="cannot read .* as zarr") as info:
        open_cube(path)
    assert info.value.__cause__ is not None


class _Payload:
    """Unpickling this creates a marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_open_never_unpickles(tmp_path):
    # A zarr v2 store whose object array uses numcodecs' pickle codec.
    root = tmp_path / "evil.zarr"
    marker = tmp_path / "code-ran"
    (root / "loss").mkdir(parents=True)
    (root / ".zgroup").write_text(json.dumps({"zarr_format": 2}))
    (root / ".zattrs").write_text(json.dumps({"schema_version": 1, "cvstats_variable": "loss"}))
    zarray = {
        "zarr_format": 2,
        "shape": [1],
        "chunks": [1],
        "dtype": "|O",
        "compressor": None,
        "fill_value": None,
        "filters": [{"id": "pickle", "protocol": 5}],
        "order": "C",
    }
    (root / "loss" / ".zarray").write_text(json.dumps(zarray))
    (root / "loss" / ".zattrs").write_text(json.dumps({"_ARRAY_DIMENSIONS": ["x"]}))
    payload = np.empty(1, dtype=object)
    payload[0] = _Payload(marker)
    (root / "loss" / "0").write_bytes(pickle.dumps(payload, protocol=5))
    for chunks in (None, {}):
        with pytest.raises(StorageError, match="pickle codec, which cvstats never decodes"):
            open_cube(root, chunks=chunks)
    assert not marker.exists()


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_open_validates(tmp_path, suffix):
    path = tmp_path / f"cube{suffix}"
    cube = make_cube()
    dataset = cube.assign_attrs(n=1).to_dataset()  # breaks the schema: n < 2
    dataset.attrs = {"schema_version": 1, "cvstats_variable": "loss"}
    write(dataset, path)
    with pytest.raises(CubeError, match=r"cube\..* holds a cube that breaks the schema.*`n`"):
        open_cube(path)
    with pytest.raises(CubeError, match="breaks the schema"):
        open_cube(path, chunks={})


# --------------------------------------------------------------------------
# atomicity
# --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_writer_failing_halfway_keeps_previous_file(tmp_path, monkeypatch, suffix):
    old = make_cube(seed=1)
    path = save(old, tmp_path / f"cube{suffix}")
    if suffix == ".nc":
        # HDF5 writes through cvstats.cube.files._ShieldedFile: the disk fills up after 2 kB.
        real_write = cvstats.cube.files._ShieldedFile._write_raw
        budget = [2048]

        def failing_write(self, view, offset):
            if len(view) > budget[0]:
                real_write(self, view[: budget[0]], offset)  # a partial write, then ENOSPC
                budget[0] = 0
                raise OSError(28, "No space left on device")
            budget[0] -= len(view)
            real_write(self, view, offset)

        monkeypatch.setattr(cvstats.cube.files._ShieldedFile, "_write_raw", failing_write)
    else:

        def failing_writer(self, target, *args, **kwargs):
            # Leave a partial output behind, then fail, as a full disk would.
            (Path(target) / "loss").mkdir(parents=True)
            (Path(target) / "zarr.json").write_text("{")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(xr.Dataset, "to_zarr", failing_writer)
    with pytest.raises(
        StorageError, match="No space left.*previous file at that path is unchanged"
    ):
        save(make_cube(seed=2), path, overwrite=True)
    monkeypatch.undo()
    assert_exact(open_cube(path), as_saved(old))
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_real_writer_failing_midway_keeps_previous_file(tmp_path, suffix, monkeypatch):
    """A dask-backed cube whose last chunk fails while another chunk is still being written.

    The last chunk fails once the first is being computed, and the first waits
    until the failed save has deleted its temporary (or 2 s, whichever comes
    first) before it is written: were it still running when the save cleans
    up, it would recreate the temporary store. The order is forced, so the
    outcome does not depend on the threads' timing (issue 26: this test was
    flaky, and the race was real).
    """
    old = make_cube(seed=1)
    path = save(old, tmp_path / f"cube{suffix}")
    new = make_cube(seed=2)
    pattern = f".{path.name}.tmp-*"
    removed = threading.Event()
    real_remove = cvstats.cube.files._remove

    def remove(target):
        real_remove(target)
        removed.set()

    monkeypatch.setattr(cvstats.cube.files, "_remove", remove)

    started = threading.Event()

    def compute_block(block, block_info=None):
        where = block_info[0]["chunk-location"][0]
        if any(tmp_path.glob(pattern)):  # writing (validation computes it first)
            if where == block_info[0]["num-chunks"][0] - 1:
                started.wait(timeout=2.0)  # the first chunk is being written
                raise RuntimeError("learner crashed")
            if where == 0:
                started.set()
                removed.wait(timeout=2.0)
        return block

    data = da.from_array(new.values, chunks=(1, -1, -1))
    data = data.map_blocks(compute_block, dtype=data.dtype, meta=data._meta)
    with pytest.raises(StorageError, match="RuntimeError: learner crashed") as info:
        save(new.copy(data=data), path, overwrite=True)
    assert isinstance(info.value.__cause__, RuntimeError)
    time.sleep(0.2)  # a chunk written after the clean-up would show now
    assert_exact(open_cube(path), as_saved(old))
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_zarr_swap_failure_restores_previous_store(tmp_path, monkeypatch):
    old = make_cube(seed=1)
    path = save(old, tmp_path / "cube.zarr")
    real_replace = os.replace

    def replace(src, dst):
        if ".tmp-" in Path(src).name and Path(dst) == path:
            raise PermissionError(13, "Permission denied")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(StorageError, match="Permission denied"):
        save(make_cube(seed=2), path, overwrite=True)
    monkeypatch.undo()
    assert_exact(open_cube(path), as_saved(old))
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


KILLED_SAVE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path

    import dask
    import dask.array as da

    from cvstats.cube.storage import open_cube, save

    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    cube = open_cube(source)
    pattern = f".{target.name}.tmp-*"

    def compute_block(block, block_info=None):
        location = block_info[0]["chunk-location"][0]
        # Once the temporary file exists (i.e. after validation, while writing),
        # stall on the second chunk: the first one is already in the file.
        if location == 1 and any(target.parent.glob(pattern)):
            print("writing", flush=True)
            time.sleep(60)
        return block

    data = da.from_array(cube.values, chunks=(1, -1, -1))
    data = data.map_blocks(compute_block, dtype=data.dtype, meta=data._meta)
    with dask.config.set(scheduler="synchronous"):
        save(cube.copy(data=data), target, overwrite=True)
    print("finished", flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL and select() on pipes")
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_sigkill_mid_save_keeps_previous_file(tmp_path, suffix):
    old = make_cube(seed=1, J=6, n=100, n_test=20, n_train=50)
    new = make_cube(seed=2, J=6, n=100, n_test=20, n_train=50)
    path = save(old, tmp_path / f"cube{suffix}")
    source = save(new, tmp_path / f"source{suffix}")
    script = tmp_path / "killed_save.py"
    script.write_text(KILLED_SAVE)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(source), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        assert line == "writing\n", proc.stderr.read() if proc.poll() is not None else line
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    # The killed save left its partial temporary behind; the previous cube is intact.
    assert len(tmp_names(tmp_path)) == 1
    assert_exact(open_cube(path), as_saved(old))
    # A later save still works and only touches its own temporary.
    save(new, path, overwrite=True)
    assert_exact(open_cube(path), as_saved(new))
    assert len(tmp_names(tmp_path)) == 1
