"""Safety of the study batch files: checksums, leftover temporaries, early option checks.

The runner (:mod:`cvstats.studies._runner`) stores a SHA-256 of each batch's
contents beside its signature; a rerun verifies it, reports a damaged file by
name (:class:`cvstats.studies.BatchFileWarning`), keeps it aside as
``<file>.corrupt`` and recomputes the batch, which must equal the undamaged
run exactly (the seeds depend on the dataset index only).
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

from cvstats.cli import main as cvstats_main  # noqa: E402
from cvstats.errors import ArgumentError, StorageError  # noqa: E402
from cvstats.studies import BatchFileWarning  # noqa: E402
from cvstats.studies._runner import batch_checksum, read_batches  # noqa: E402
from cvstats.studies.classification import run_classification  # noqa: E402
from cvstats.studies.population import run_population, synthetic_population  # noqa: E402
from cvstats.studies.regression import run_regression  # noqa: E402

# the smallest study of tests/studies/test_study_regression.py; 4 datasets per batch make
# the `half` block 4 * 4 * 2 * 6 * 3 float64 = 4608 bytes, so 4 KiB of it are data only
SIZES = {"J": 6, "M": 4, "R": 3, "J_rep": 4}
KW = {"n": 40, "batch_size": 4, **SIZES}
N_DATASETS = 8
TAG = "nb-regression-sim1"


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """An undamaged run: its result and its directory (copied by each test)."""
    out = tmp_path_factory.mktemp("clean")
    return run_regression(1, N_DATASETS, out, **KW), out


def _copy(clean, tmp_path):
    ref, src = clean
    out = tmp_path / "run"
    shutil.copytree(src, out)
    return ref, out


def _data_offset(path, var):
    """Byte offset of variable ``var``'s values inside the netCDF file ``path``."""
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        values = np.ascontiguousarray(ds[var].values, dtype="<f8").tobytes()
    raw = path.read_bytes()
    offset = raw.find(values)
    assert offset > 0 and raw.count(values[:64]) == 1  # stored contiguous, found once
    return offset, len(values)


def _flip_low_bits(path, offset, size=4096):
    raw = bytearray(path.read_bytes())
    for i in range(offset, offset + size):
        raw[i] ^= 0x01
    path.write_bytes(bytes(raw))


def _overwrite(path, offset, size=256):
    raw = bytearray(path.read_bytes())
    raw[offset : offset + size] = np.random.default_rng(0).bytes(size)
    path.write_bytes(bytes(raw))


# --------------------------------------------------------------------------
# checksums
# --------------------------------------------------------------------------


def test_checksum_survives_the_netcdf_round_trip(clean):
    _, out = clean
    for path in sorted(out.glob(f"{TAG}-batch*.nc")):
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            ds = ds.load()
        assert ds.attrs["checksum"].startswith("sha256:")
        assert batch_checksum(ds) == ds.attrs["checksum"]
        changed = ds.copy(deep=True)
        changed["main"][0, 0, 0, 0] = np.nextafter(changed["main"].values[0, 0, 0, 0], np.inf)
        assert batch_checksum(changed) != ds.attrs["checksum"]  # one ulp is enough


def test_flipped_low_bits_are_reported_and_the_batch_recomputed(clean, tmp_path):
    ref, out = _copy(clean, tmp_path)
    path = out / f"{TAG}-batch00001.nc"
    offset, size = _data_offset(path, "half")
    assert size >= 4096
    _flip_low_bits(path, offset)
    with xr.open_dataset(path, engine="h5netcdf") as damaged:  # still opens, values differ
        assert not np.array_equal(damaged["half"].values, ref["half"].isel(dataset=[4, 5, 6, 7]))
    damaged_bytes = path.read_bytes()
    with pytest.warns(BatchFileWarning, match=rf"{path.name}' does not match its checksum"):
        again = run_regression(1, N_DATASETS, out, **KW)
    xr.testing.assert_identical(again, ref)  # exactly the undamaged results
    assert (out / (path.name + ".corrupt")).read_bytes() == damaged_bytes  # kept aside


@pytest.mark.parametrize("where", ["data", "header"])
def test_overwritten_bytes_are_reported_and_the_batch_recomputed(clean, tmp_path, where):
    ref, out = _copy(clean, tmp_path)
    path = out / f"{TAG}-batch00000.nc"
    offset = _data_offset(path, "main")[0] if where == "data" else 0
    _overwrite(path, offset)
    reason = "does not match its checksum" if where == "data" else "cannot be read"
    with pytest.warns(BatchFileWarning, match=rf"{path.name}' {reason}"):
        again = run_regression(1, N_DATASETS, out, **KW)
    xr.testing.assert_identical(again, ref)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_regression(1, N_DATASETS, out, **KW)  # repaired: the next run trusts it


def test_file_without_checksum_or_signature(clean, tmp_path):
    ref, out = _copy(clean, tmp_path)
    legacy, foreign = out / f"{TAG}-batch00000.nc", out / f"{TAG}-batch00001.nc"
    with xr.open_dataset(legacy, engine="h5netcdf") as ds:
        ds = ds.load()
    del ds.attrs["checksum"]  # as written by an older cvstats
    ds.to_netcdf(legacy, engine="h5netcdf")
    xr.Dataset({"x": ("i", [1.0, 2.0])}).to_netcdf(foreign, engine="h5netcdf")  # not a batch
    foreign_bytes = foreign.read_bytes()
    with pytest.warns(BatchFileWarning) as record:
        again = run_regression(1, N_DATASETS, out, **KW)
    messages = sorted(str(w.message) for w in record)
    assert len(messages) == 2
    assert f"{legacy.name}' has no checksum (written by an older cvstats)" in messages[0]
    assert f"{foreign.name}' is not a cvstats batch file" in messages[1]
    xr.testing.assert_identical(again, ref)
    assert (out / (foreign.name + ".corrupt")).read_bytes() == foreign_bytes  # not deleted
    assert not (out / (legacy.name + ".corrupt")).exists()  # ours: recomputed in place


def test_read_batches_refuses_a_file_changed_after_the_run(clean, tmp_path):
    _, out = _copy(clean, tmp_path)
    paths = sorted(out.glob(f"{TAG}-batch*.nc"))
    _overwrite(paths[1], _data_offset(paths[1], "rep")[0])
    with pytest.raises(StorageError, match=rf"{paths[1].name}' does not match its checksum"):
        read_batches(paths, "dataset")


def test_population_batches_are_verified_too(tmp_path):
    pop = synthetic_population(500)
    kw = {"N": 30, "folds": (2,), "repetitions": 2, "batch_size": 2}
    ref = run_population(pop, ["nb"], 4, tmp_path, **kw)
    path = tmp_path / "population-synthetic1-N30-batch00001.nc"
    offset, _ = _data_offset(path, "cv")
    _overwrite(path, offset, size=32)
    with pytest.warns(BatchFileWarning, match=path.name):
        again = run_population(pop, ["nb"], 4, tmp_path, **kw)
    xr.testing.assert_identical(again, ref)


# --------------------------------------------------------------------------
# leftover temporaries
# --------------------------------------------------------------------------


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(os.name != "posix", reason="process checks use os.kill(pid, 0)")
def test_temporary_of_a_killed_writer_is_removed_nothing_else(clean, tmp_path):
    ref, out = _copy(clean, tmp_path)
    # a writer killed with SIGKILL while its temporary file exists (kill -9 during to_netcdf)
    code = (
        "import os, sys, threading, time\n"
        f"p = {str(out)!r} + '/{TAG}-batch00001.tmp%d-%d' % (os.getpid(), threading.get_ident())\n"
        "open(p, 'wb').write(b'partial netCDF')\n"
        "print(p, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    killed = proc.stdout.readline().strip()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    dead, alive = _dead_pid(), os.getppid()
    old = time.time() - 3600
    kept = {
        "notes.txt": b"mine",  # foreign file
        f"{TAG}-batch00000.tmpabc": b"x",  # not the temp pattern
        f"{TAG}-batch00000.nc.tmp{dead}-1": b"x",  # not the temp pattern
        f"other-study-batch00000.tmp{dead}-1": b"x",  # another study's temporary
        f"{TAG}-batch00000.tmp{alive}-1": b"x",  # a live process (a concurrent runner)
        f"{TAG}-batch00002.tmp{dead}-7": b"x",  # dead, but changed after the run started
    }
    for name, content in kept.items():
        (out / name).write_bytes(content)
        os.utime(out / name, (old, old))
    future = time.time() + 3600
    os.utime(out / f"{TAG}-batch00002.tmp{dead}-7", (future, future))
    stale = out / f"{TAG}-batch00003.tmp{dead}-140000000000"  # any batch index of the run
    stale.write_bytes(b"x")
    os.utime(stale, (old, old))
    (out / "sub").mkdir()
    (out / "sub" / f"{TAG}-batch00000.tmp{dead}-1").write_bytes(b"x")  # not the out dir

    again = run_regression(1, N_DATASETS, out, **KW)
    xr.testing.assert_identical(again, ref)
    assert not os.path.exists(killed) and not stale.exists()
    for name, content in kept.items():
        assert (out / name).read_bytes() == content
    assert (out / "sub" / f"{TAG}-batch00000.tmp{dead}-1").exists()


def test_a_failed_write_leaves_no_temporary(tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", fail)
    with pytest.raises(OSError, match="disk full"):
        run_regression(1, 2, tmp_path, n=40, **SIZES)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# --------------------------------------------------------------------------
# options and --out, before any batch
# --------------------------------------------------------------------------

SMALL_CLI = ["--datasets", "4", "--J", "5", "--M", "5", "--R", "3", "--quiet"]
POP = ["population", "--population", "synthetic", "--folds", "2", "--quiet"]


def test_out_that_is_a_file_exits_2_without_traceback(tmp_path):
    afile = tmp_path / "afile.txt"
    afile.write_text("keep me")
    argv = ["study", "nb-regression", *SMALL_CLI, "--out", str(afile)]
    proc = subprocess.run(
        [sys.executable, "-m", "cvstats.cli", *argv], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"cvstats study nb-regression: error: `--out` {str(afile)!r} exists and is not a "
        "directory; give a directory (it is created if missing)."
    ]
    assert afile.read_text() == "keep me"


@pytest.mark.parametrize("command", ["population", "bg-experiment1"])
def test_out_that_is_a_file_other_commands(tmp_path, capsys, command):
    afile = tmp_path / "afile.txt"
    afile.write_text("keep me")
    extra = ["--samples", "2", "--N", "20", "--folds", "2"] if command == "population" else []
    assert cvstats_main(["study", command, *extra, "--out", str(afile)]) == 2
    err = capsys.readouterr().err
    assert "exists and is not a directory" in err and len(err.strip().splitlines()) == 1
    assert afile.read_text() == "keep me"


def test_out_under_a_file_is_refused(tmp_path, capsys):
    afile = tmp_path / "afile.txt"
    afile.write_text("keep me")
    out = afile / "run"
    assert cvstats_main(["study", "nb-regression", *SMALL_CLI, "--out", str(out)]) == 2
    assert "cannot create `--out`" in capsys.readouterr().err
    with pytest.raises(StorageError, match="cannot create `out_dir`"):
        run_regression(1, 2, out, n=40, **SIZES)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nb-regression", *SMALL_CLI, "--alpha", "1.5"], "`--alpha` must be in the open"),
        (["nb-regression", *SMALL_CLI, "--alpha", "0"], "`--alpha` must be in the open"),
        (["nb-regression", *SMALL_CLI, "--J", "3"], r"`--J` must be >= 5 \(the report's J-study"),
        (["nb-regression", *SMALL_CLI, "--M", "2"], r"`--M` must be >= 5 \(the report's M-study"),
        (["nb-regression", *SMALL_CLI, "--datasets", "1"], "`--datasets` must be >= 2"),
        (["nb-regression", *SMALL_CLI, "--R", "1"], "`--R` must be >= 2"),
        (["nb-regression", *SMALL_CLI, "--seed", "-1"], "`--seed` must be an int >= 0"),
        (["nb-regression", *SMALL_CLI, "--n-jobs", "0"], "`--n-jobs` must be a non-zero int"),
        (["nb-regression", *SMALL_CLI, "--batch-size", "0"], "`--batch-size` must be an int"),
        (["nb-regression", *SMALL_CLI, "--sim", "9"], "`simulation` must be one of"),
        (["nb-classification", *SMALL_CLI, "--truth-sets", "1"], "`truth_sets` must be 0"),
        (
            ["nb-classification", *SMALL_CLI, "--truth-test-size", "999"],
            r"`--truth-test-size` must be an int >= 1000 \(the size of the Monte Carlo truth's "
            r"common test sample\), got 999; leave it out for the default 100000\.",
        ),
        (["nb-letter", *SMALL_CLI, "--w", "3"], "`w` must be one of"),
        ([*POP, "--learners", "xx", "--samples", "2", "--N", "20"], "unknown learner 'xx'"),
        ([*POP, "--N", "20", "--folds", "2", "50"], "`folds` must be distinct ints"),
        ([*POP, "--samples", "1"], "`n_samples` must be an int >= 2"),
        (["bg-experiment2", "--K", "1", "--replicates", "5"], "`--K` must be an int >= 2"),
        (["bg-experiment1", "--seed", "-2", "--replicates", "5"], "`--seed` must be an int >= 0"),
    ],
)
def test_invalid_options_exit_2_before_any_batch(tmp_path, capsys, argv, message):
    out = tmp_path / "out"
    assert cvstats_main(["study", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"cvstats study {argv[0]}: error: " in err and len(err.strip().splitlines()) == 1
    assert re.search(message, err)
    assert not out.exists() or not any(out.iterdir())  # no batch file, nothing written


def test_alpha_checked_before_any_batch_in_an_existing_out_dir(clean, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    argv = ["study", "nb-regression", *SMALL_CLI, "--alpha", "1.5", "--out", str(out)]
    assert cvstats_main(argv) == 2
    assert "`--alpha` must be in the open interval (0, 1), got 1.5." in capsys.readouterr().err
    assert not list(out.glob("*batch*"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seed": -1}, "`seed` must be an int >= 0"),
        ({"batch_size": 0}, "`batch_size` must be an int >= 1"),
        ({"n_jobs": 0}, "`n_jobs` must be a non-zero int"),
        ({"J": 1}, "`J` must be an int >= 2"),
        ({"n": 10}, "`n` must be an int >= 20"),
        ({"var_y": -1.0}, "`var_y` must be a positive real number"),
        ({"beta": float("nan")}, "`beta` must be a finite real number"),
        ({"nn": 40}, r"unknown parameter\(s\) \['nn'\] of problem 1"),
    ],
)
def test_run_functions_check_options_before_any_batch(tmp_path, kwargs, message):
    out = tmp_path / "out"
    kw = {"n": 40, **SIZES, **kwargs}
    with pytest.raises(ArgumentError, match=message):
        run_regression(1, 2, out, **kw)
    assert not out.exists()


def test_truth_sets_checked_before_any_batch(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ArgumentError, match="`truth_sets` must be 0"):
        run_classification(1, 2, out, n=40, truth_sets=1, **SIZES)
    with pytest.raises(ArgumentError, match="`s1` must be a positive real number"):
        run_classification(1, 2, out, n=40, s1=0.0, **SIZES)
    assert not out.exists()


def test_run_function_refuses_a_file_as_out_dir(tmp_path):
    afile = tmp_path / "afile.txt"
    afile.write_text("keep me")
    with pytest.raises(StorageError, match="`out_dir` .* exists and is not a directory"):
        run_regression(1, 2, afile, n=40, **SIZES)
    with pytest.raises(StorageError, match="`out_dir` .* exists and is not a directory"):
        run_population(synthetic_population(500), ["nb"], 2, afile, N=20, folds=(2,))
    assert afile.read_text() == "keep me"


def test_damaged_file_that_cannot_be_moved_aside_stops_the_run(clean, tmp_path):
    _, out = _copy(clean, tmp_path)
    path = out / f"{TAG}-batch00000.nc"
    _overwrite(path, 0)
    damaged = path.read_bytes()
    (out / (path.name + ".corrupt")).mkdir()
    (out / (path.name + ".corrupt") / "x").write_text("in the way")
    with pytest.raises(StorageError, match=rf"{path.name}' cannot be read .* cannot be moved"):
        run_regression(1, N_DATASETS, out, **KW)
    assert path.read_bytes() == damaged  # not overwritten
