"""Lazy (dask-backed) cubes: same results as in memory, results stay lazy, no full load.

(``compare`` computes the split means in one read and returns results in memory.)
Every method is run on a cube opened lazily from a zarr store
(``cvstats.open_cube(path, chunks=...)``) and on ``cube.chunk(...)``, and
compared with the in-memory result (rtol 1e-12). A dask callback records the
size of every task result: none may be larger than one chunk of the cube
(a quarter or a half of it), so no step materializes the whole cube.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import xarray as xr
from dask.callbacks import Callback

import cvstats
from cvstats import designs
from cvstats.cube.compact import compact_cube, lazy_chunks, to_compact
from cvstats.inference.blocks import split_means
from cvstats.results import EstimatesResult, InferenceResult
from cvstats.studies import METHOD_NAMES

FIELDS = ("estimate", "stderr", "statistic", "df", "pvalue")
N_DATASETS = 4
CHUNKS = {"dataset": 2, "split": 44}  # 4 chunks of the nadeau_bengio cube below


class TaskSizes(Callback):
    """Record the largest numpy result of any dask task (and the number of tasks)."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0
        self.tasks = 0

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, id: Any) -> None:
        self.tasks += 1
        for value in result if isinstance(result, tuple | list) else (result,):
            if isinstance(value, np.ndarray):
                self.largest = max(self.largest, value.nbytes)


def _cube(design: xr.Dataset, n_datasets: int, *, zero_one: bool = False) -> xr.DataArray:
    rng = np.random.default_rng(1)
    shape = (n_datasets, design.sizes["split"], design.sizes["example"], 2)
    losses = (rng.random(shape) < 0.3).astype(float) if zero_one else rng.random(shape)
    losses[..., 1] += 0.0 if zero_one else 0.1
    return cvstats.from_arrays(
        losses, design=design, models=["a", "b"], extra_dims=["dataset"], name="loss"
    )


@pytest.fixture(scope="module")
def nb_cube() -> xr.DataArray:
    d = designs.nadeau_bengio(60, n_test=6, J=6, M=4, R=4, seed=0)  # 6+48+24+10 = 88 splits
    return _cube(d, N_DATASETS)


@pytest.fixture(scope="module")
def kfold_cube() -> xr.DataArray:
    return _cube(designs.kfold(40, 4, seed=0), N_DATASETS)


@pytest.fixture(scope="module")
def repeated_kfold_cube() -> xr.DataArray:
    return _cube(designs.kfold(40, 4, repeats=3, seed=0), N_DATASETS)


@pytest.fixture(scope="module")
def holdout_cube() -> xr.DataArray:
    return _cube(designs.holdout(40, 10, seed=0), N_DATASETS, zero_one=True)


@pytest.fixture(scope="module")
def lazy_versions(tmp_path_factory):
    """Per cube: opened lazily from a zarr store (saved once), and chunked in memory.

    Each has 4 chunks; the stores stay open for the module and are closed at its end.
    """
    opened: dict[int, list[xr.DataArray]] = {}
    store = tmp_path_factory.mktemp("lazy")

    def versions(cube: xr.DataArray) -> list[xr.DataArray]:
        if id(cube) not in opened:
            path = store / f"cube{len(opened)}.zarr"
            cvstats.save(cube, path)
            chunks = {"dataset": 2, "split": -(-cube.sizes["split"] // 2)}
            opened[id(cube)] = [cvstats.open_cube(path, chunks=chunks), cube.chunk(chunks)]
        return opened[id(cube)]

    yield versions
    for pair in opened.values():
        pair[0].close()


def _chunk_bytes(cube: xr.DataArray) -> int:
    """Bytes of the largest chunk of a dask-backed cube."""
    return int(np.prod([max(c) for c in cube.chunks])) * cube.dtype.itemsize


def _lazy_fields(value: Any) -> list[xr.DataArray]:
    if isinstance(value, InferenceResult):
        return [getattr(value, f) for f in FIELDS]
    if isinstance(value, EstimatesResult | xr.Dataset):
        return [value[v] for v in value.data_vars]
    return [value]


def _check(
    func: Callable[[xr.DataArray], Any],
    cube: xr.DataArray,
    versions: Callable[[xr.DataArray], list[xr.DataArray]],
) -> None:
    eager = _lazy_fields(func(cube))
    for lazy_cube in versions(cube):
        sizes = TaskSizes()
        with sizes:
            lazy = _lazy_fields(func(lazy_cube))
            for value in lazy:  # 0-d fields are constants (e.g. fit_rho's rho0)
                assert isinstance(value, xr.DataArray)
                assert value.ndim == 0 or value.chunks is not None, value.name
            computed = [value.compute() for value in lazy]
        for got, want in zip(computed, eager, strict=True):
            np.testing.assert_allclose(
                np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12, equal_nan=True
            )
        assert sizes.tasks > 0
        assert sizes.largest <= _chunk_bytes(lazy_cube) < cube.nbytes, sizes.largest


#: the resampling method functions: every method of docs/theory.md §4 (the studies' list) but
#: the hold-out t and the t4/t5 variants (options of dietterich_5x2cv, not functions)
RESAMPLING = [
    m for m in METHOD_NAMES if m not in ("holdout_t", "dietterich_5x2cv_t4", "dietterich_5x2cv_t5")
]


@pytest.mark.parametrize("name", RESAMPLING)
def test_resampling_methods_lazy(nb_cube, lazy_versions, name):
    _check(getattr(cvstats, name), nb_cube, lazy_versions)


@pytest.mark.parametrize("name", ["kfold_t", "corrected_repeated_kfold_t"])
def test_kfold_methods_lazy(kfold_cube, repeated_kfold_cube, lazy_versions, name):
    cube = kfold_cube if name == "kfold_t" else repeated_kfold_cube
    _check(getattr(cvstats, name), cube, lazy_versions)


@pytest.mark.parametrize("name", ["holdout_t", "mcnemar"])
def test_holdout_methods_lazy(holdout_cube, lazy_versions, name):
    _check(getattr(cvstats, name), holdout_cube, lazy_versions)


@pytest.mark.parametrize(
    "func",
    [
        cvstats.kfold_statistics,
        cvstats.kfold_moments,
        lambda c: cvstats.kfold_statistics(cvstats.pairwise(c)),
    ],
    ids=["kfold_statistics", "kfold_moments", "kfold_statistics_contrast"],
)
def test_kfold_variance_lazy(kfold_cube, lazy_versions, func):
    _check(func, kfold_cube, lazy_versions)


@pytest.mark.parametrize(
    "func",
    [
        cvstats.fit_rho,
        cvstats.fit_r,
        lambda c: cvstats.fit_lemma1(
            split_means(c, ["main"]), dataset_dim="dataset", member_dim="split"
        ),
    ],
    ids=["fit_rho", "fit_r", "fit_lemma1"],
)
def test_fits_lazy(nb_cube, lazy_versions, func):
    _check(func, nb_cube, lazy_versions)


def test_compare_lazy(nb_cube, lazy_versions):
    eager = cvstats.compare("loss ~ model", nb_cube).to_frame()
    for lazy_cube in lazy_versions(nb_cube):
        sizes = TaskSizes()
        with sizes:
            table = cvstats.compare("loss ~ model", lazy_cube)
            # compare computes the split means in one read and runs its methods on them
            for res in table.results.values():
                assert all(getattr(res, f).chunks is None for f in FIELDS)
            frame = table.to_frame()
        assert sizes.largest <= _chunk_bytes(lazy_cube) < nb_cube.nbytes
        np.testing.assert_allclose(
            frame.select_dtypes(float).to_numpy(),
            eager.select_dtypes(float).to_numpy(),
            rtol=1e-12,
            atol=1e-12,
        )


def test_open_cube_validates_without_loading(nb_cube, tmp_path):
    path = tmp_path / "cube.zarr"
    cvstats.save(nb_cube, path)
    sizes = TaskSizes()
    with sizes:
        lazy = cvstats.open_cube(path, chunks=CHUNKS)
    assert lazy.chunks is not None
    assert 0 < sizes.largest <= _chunk_bytes(lazy) < nb_cube.nbytes
    lazy.close()


def test_compact_lazy(nb_cube):
    """A dask-backed compact cube: to_compact stays lazy, methods match the dense cube."""
    dense = nb_cube.chunk(CHUNKS)
    sizes = TaskSizes()
    with sizes:
        compact = to_compact(dense)
        cc = compact_cube(compact)
        assert cc.chunks is not None
        for name in ("corrected_resampled_t", "conservative_z"):
            want = getattr(cvstats, name)(nb_cube)
            got = getattr(cvstats, name)(cc)
            assert got.statistic.chunks is not None
            np.testing.assert_allclose(got.statistic.values, want.statistic, rtol=1e-12)
    assert 0 < sizes.largest <= _chunk_bytes(dense)


def test_lazy_chunks_whole_examples_and_models():
    sizes = {"dataset": 1000, "split": 320, "example": 2000, "model": 3}
    chunks = lazy_chunks(sizes, itemsize=4, target_bytes=64 * 2**20)
    assert chunks["example"] == 2000 and chunks["model"] == 3
    assert chunks["split"] == 320
    assert 1 <= chunks["dataset"] and chunks["dataset"] * 320 * 2000 * 3 * 4 <= 64 * 2**20
    big = lazy_chunks({"split": 10_000, "example": 100_000, "model": 2})
    assert big["split"] * 100_000 * 2 * 8 <= 64 * 2**20 and big["example"] == 100_000
    tiny = lazy_chunks({"split": 5, "example": 10, "model": 2})
    assert tiny == {"split": 5, "example": 10, "model": 2}
