"""Reductions cut over threads (cvstats.cube.threads) give what the whole array gives.

The threshold is lowered so that the small cubes here are cut; the parts run in
threads exactly as on a large cube.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import cvstats
from cvstats import CubeError, designs
from cvstats.cube import threads
from cvstats.cube.dense import _fast_counts
from cvstats.inference.blocks import _means


def cube(datasets: int = 5, models: int = 2) -> xr.DataArray:
    d = designs.nadeau_bengio(40, 4, J=3, M=2, R=2, seed=0)
    losses = np.random.default_rng(1).random((datasets, d.sizes["split"], 40, models))
    return cvstats.from_arrays(
        losses, design=d, models=[f"m{k}" for k in range(models)], extra_dims=["dataset"]
    )


@pytest.fixture
def cut(monkeypatch):
    """Cut every array of two rows or more, in up to 3 threads."""
    monkeypatch.setattr(threads, "MIN_VALUES", 1)
    monkeypatch.setattr(threads, "workers", lambda: 3)


def test_parts_cover_the_first_axis_in_order(cut):
    parts = threads.leading_parts(np.zeros((7, 2)))
    assert parts == [slice(0, 2), slice(2, 5), slice(5, 7)]
    assert threads.leading_parts(np.zeros((2, 2))) == [slice(0, 1), slice(1, 2)]
    assert threads.leading_parts(np.zeros((1, 9))) == [slice(None)]
    assert threads.leading_parts(np.float64(1.0)) == [slice(None)]
    assert threads.map_parts(lambda p: (p.start, p.stop), parts) == [(0, 2), (2, 5), (5, 7)]


def test_small_arrays_and_one_core_are_not_cut(monkeypatch):
    assert threads.leading_parts(np.zeros((50, 10))) == [slice(None)]  # below MIN_VALUES
    monkeypatch.setattr(threads, "MIN_VALUES", 1)
    monkeypatch.setattr(threads, "workers", lambda: 1)
    assert threads.leading_parts(np.zeros((50, 10))) == [slice(None)]


def test_workers_are_bounded():
    assert 1 <= threads.workers() <= threads.MAX_THREADS


def test_split_means_are_identical_when_cut(cut):
    c = cube()
    with xr.set_options(use_bottleneck=True):
        whole = c.mean("example", skipna=True)
    xr.testing.assert_identical(_means(c), whole)  # bit for bit, same coordinates


def test_validation_counts_are_identical_when_cut(cut, monkeypatch):
    c = cube()
    counted, _, _ = _fast_counts(c)
    monkeypatch.setattr(threads, "workers", lambda: 1)
    alone, _, _ = _fast_counts(c)
    xr.testing.assert_identical(counted, alone)


@pytest.mark.parametrize("where", [0, 2, 4])
def test_a_problem_in_any_part_is_found_and_named(cut, where):
    c = cube().copy(deep=True)
    c[where, 0, int(np.flatnonzero(c.isel(dataset=0, split=0, model=0).notnull())[0]), 1] = np.inf
    with pytest.raises(
        CubeError, match=rf"infinite loss\(es\) \(first at dataset {where}, split 0"
    ):
        cvstats.validate(c)


def test_a_nan_pattern_problem_in_the_last_part_is_found(cut):
    c = cube().copy(deep=True)
    i = int(np.flatnonzero(c.isel(dataset=4, split=0, model=0).notnull())[0])
    c[4, 0, i, 1] = np.nan
    with pytest.raises(CubeError, match="NaN pattern differs"):
        cvstats.validate(c)


def test_pairwise_contrasts_are_identical_when_cut(cut, monkeypatch):
    c = cube(models=3)
    in_parts = cvstats.pairwise(c)
    monkeypatch.setattr(threads, "workers", lambda: 1)
    whole = cvstats.pairwise(c)
    xr.testing.assert_identical(in_parts, whole)
    np.testing.assert_array_equal(in_parts.values, whole.values)


def test_an_overflow_in_the_last_part_is_not_trusted(cut):
    from cvstats.cube.known import recall

    c = cube().copy(deep=True)
    tested = np.flatnonzero(c.isel(dataset=4, split=0, model=0).notnull())[0]
    c[4, 0, tested] = [1e308, -1e308]  # finite losses whose difference overflows
    contrast = cvstats.pairwise(c)
    assert np.isinf(contrast.values).sum() == 1
    assert recall(contrast) is None  # not remembered valid: validation names the infinity
    with pytest.raises(CubeError, match="infinite loss"):
        cvstats.corrected_resampled_t(contrast)
