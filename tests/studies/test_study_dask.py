"""The study runners on a dask.distributed cluster give the single-process results."""

import numpy as np
import pytest
import xarray as xr

distributed = pytest.importorskip("distributed")

from cvstats.studies import run_study  # noqa: E402
from cvstats.studies.classification import classification_problem  # noqa: E402
from cvstats.studies.regression import run_regression  # noqa: E402

SIZES = {"J": 4, "M": 3, "R": 2, "J_rep": 2}


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _batches(path):
    return sorted(path.glob("*-batch*.nc"))


def _assert_same_files(dir_a, dir_b):
    files_a, files_b = _batches(dir_a), _batches(dir_b)
    assert [f.name for f in files_a] == [f.name for f in files_b] and files_a
    for a, b in zip(files_a, files_b, strict=True):
        with (
            xr.open_dataset(a, engine="h5netcdf") as da,
            xr.open_dataset(b, engine="h5netcdf") as db,
        ):
            xr.testing.assert_identical(da.load(), db.load())


def test_regression_on_cluster_equals_single_process(tmp_path, client):
    ref = run_regression(1, 7, tmp_path / "ref", batch_size=2, n_jobs=1, n=40, **SIZES)
    got = run_regression(1, 7, tmp_path / "dask", batch_size=2, client=client, n=40, **SIZES)
    xr.testing.assert_identical(ref, got)
    assert len(_batches(tmp_path / "dask")) == 4
    _assert_same_files(tmp_path / "ref", tmp_path / "dask")
    assert not list((tmp_path / "dask").glob("*.tmp*"))


def test_classification_on_cluster_resumes_and_matches(tmp_path, client):
    problem = classification_problem(1, n=40)
    ref = run_study(problem, 3, tmp_path / "ref", batch_size=1, **SIZES)
    out = tmp_path / "dask"
    first = run_study(problem, 2, out, batch_size=1, client=client, **SIZES)
    xr.testing.assert_identical(first, ref.isel(dataset=slice(0, 2)))
    stamp = {f.name: f.stat().st_mtime_ns for f in _batches(out)}
    got = run_study(problem, 3, out, batch_size=1, client=client, **SIZES)  # resumes
    assert {f.name: f.stat().st_mtime_ns for f in _batches(out)}.items() >= stamp.items()
    np.testing.assert_array_equal(got["main"].values, ref["main"].values)
    xr.testing.assert_identical(got, ref)


def test_cli_scheduler_flag(tmp_path, client, capsys):
    import matplotlib

    matplotlib.use("Agg")
    from cvstats.studies.cli import main

    args = ["study", "nb-regression", "--datasets", "3", "--J", "5", "--M", "5", "--R", "3",
            "--quiet", "--batch-size", "2"]  # fmt: skip
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    address = client.scheduler.address
    assert main([*args, "--out", str(tmp_path / "b"), "--scheduler", address]) == 0
    _assert_same_files(tmp_path / "a", tmp_path / "b")
    assert "corrected_resampled_t" in capsys.readouterr().out


def test_population_on_cluster_equals_single_process(tmp_path, client):
    from cvstats.studies.population import run_population, synthetic_population

    pop = synthetic_population(2000)
    kw = {"N": 40, "folds": (2, 4), "repetitions": 2, "batch_size": 2}
    ref = run_population(pop, ["nb", "4nn"], 5, tmp_path / "ref", **kw)
    got = run_population(pop, ["nb", "4nn"], 5, tmp_path / "dask", client=client, **kw)
    xr.testing.assert_identical(ref, got)
    _assert_same_files(tmp_path / "ref", tmp_path / "dask")
