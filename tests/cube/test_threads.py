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
from cvstats.cube.dense import _fast_counts, _value_summary
from cvstats.cube.formula import checked_pairwise
from cvstats.cube.known import recall
from cvstats.inference.blocks import _means, split_means


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


@pytest.fixture
def many_cores(monkeypatch):
    """Pretend the process may run on 8 cores (the option, not the machine, then decides)."""
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)


def test_threads_option_sets_the_workers(many_cores, monkeypatch):
    monkeypatch.setattr(threads, "_caller_limit", lambda: None)
    assert threads.workers() == threads.MAX_THREADS  # the default, as before
    with cvstats.set_options(threads=2):
        assert threads.workers() == 2
        assert cvstats.get_options() == {"threads": 2}
    assert threads.workers() == threads.MAX_THREADS  # restored on leaving the block
    try:
        cvstats.set_options(threads=1)  # for the process
        assert threads.workers() == 1
        monkeypatch.setattr(threads, "MIN_VALUES", 1)
        assert threads.leading_parts(np.zeros((8, 2))) == [slice(None)]
    finally:
        cvstats.set_options(threads=None)
    with cvstats.set_options(threads=16):  # never more than the cores available
        assert threads.workers() == 8


def test_threads_option_is_restored_when_the_block_raises():
    with pytest.raises(ZeroDivisionError), cvstats.set_options(threads=1):
        1 / 0  # noqa: B018
    assert cvstats.get_options()["threads"] is None


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (0, cvstats.ArgumentError, "must be ≥ 1, got 0"),
        (-2, cvstats.ArgumentError, "must be ≥ 1, got -2"),
        (1.5, cvstats.CvstatsTypeError, r"whole number ≥ 1, got 1\.5 \(float\)"),
        (True, cvstats.CvstatsTypeError, "got True"),
        ("4", cvstats.CvstatsTypeError, "got '4'"),
    ],
)
def test_threads_option_refuses_bad_values(value, error, match):
    with pytest.raises(error, match=match):
        cvstats.set_options(threads=value)
    assert cvstats.get_options()["threads"] is None


def test_unknown_option_is_refused():
    with pytest.raises(cvstats.ArgumentError, match=r"unknown option\(s\) 'thread'.*threads"):
        cvstats.set_options(thread=2)


def test_a_callers_threadpoolctl_limit_is_honoured(many_cores):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not threadpoolctl.threadpool_info():
        pytest.skip("no BLAS/OpenMP pool loaded")
    with threadpoolctl.threadpool_limits(limits=1):
        assert threads.workers() == 1
    with threadpoolctl.threadpool_limits(limits=2), cvstats.set_options(threads=4):
        assert threads.workers() == 2  # the caller's limit wins over the option


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


# ---------------------------------------------------------------------------
# blocked passes: several operations per block, while it is in the cache
# ---------------------------------------------------------------------------


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 100 values: a small cube is read in many blocks (and in 3 threads)."""
    monkeypatch.setattr(threads, "BLOCK_VALUES", 100)
    monkeypatch.setattr(threads, "MIN_VALUES", 1)
    monkeypatch.setattr(threads, "workers", lambda: 3)


@pytest.mark.parametrize(
    "shape, keep", [((7, 5, 3, 2), 2), ((3, 40, 30, 2), 2), ((60, 3, 2), 2), ((9, 50), 1)]
)
def test_blocks_cover_the_array_once_in_order(shape, keep, monkeypatch):
    monkeypatch.setattr(threads, "BLOCK_VALUES", 100)
    marks = np.zeros(shape, dtype=int)
    order = []
    for at in threads.leading_blocks(shape, keep=keep):
        assert len(at) <= len(shape) - keep and all(isinstance(s, slice) for s in at)
        block = marks[at]
        assert block.shape[len(shape) - keep :] == shape[len(shape) - keep :]  # kept whole
        block += 1
        order.append(np.ravel_multi_index([s.start for s in at], shape[: len(at)]))
    assert (marks == 1).all()
    assert order == sorted(order)
    assert threads.leading_blocks((), keep=0) == [()]
    assert threads.leading_blocks((0, 3, 2)) == [()]


def test_a_block_holds_whole_rows_of_about_the_block_size():
    sizes = [b[0].stop - b[0].start for b in threads.leading_blocks((10, 4, 5), size=45)]
    assert sizes == [2, 2, 2, 2, 2]  # 20 values a row: two rows a block, even blocks
    nested = threads.leading_blocks((2, 30, 4, 5), size=45)  # a row of 600 values: cut
    assert nested[0] == (slice(0, 1), slice(0, 2)) and len(nested) == 2 * 15


def test_validation_counts_and_lazy_means_are_identical_in_blocks(tiny_blocks, monkeypatch):
    c = cube()
    coords = {k: c[k].values for k in ("block", "half", "side", "fold", "repeat")}
    blocked = _value_summary(c.values, None, **coords, means=True)
    monkeypatch.setattr(threads, "BLOCK_VALUES", 1 << 30)
    whole = _value_summary(c.values, None, **coords, means=True)
    np.testing.assert_array_equal(blocked[0], whole[0])
    assert blocked[1] is whole[1] is False
    np.testing.assert_array_equal(blocked[2], whole[2])  # bit for bit
    assert blocked[3] == whole[3] == float(np.nanmax(np.abs(c.values)))


@pytest.mark.parametrize("model", [0, 1])
def test_a_problem_in_the_last_block_is_found(tiny_blocks, model):
    c = cube().copy(deep=True)
    last = c.sizes["split"] - 1
    i = int(np.flatnonzero(c.isel(dataset=4, split=last, model=0).notnull())[-1])
    c[4, last, i, model] = np.inf
    with pytest.raises(
        CubeError, match=rf"infinite loss\(es\) \(first at dataset 4, split {last}"
    ):
        cvstats.validate(c)
    c[4, last, i, model] = np.nan
    with pytest.raises(CubeError, match="NaN pattern differs"):
        cvstats.validate(c)


@pytest.mark.parametrize("models", [2, 3])
def test_a_contrast_and_its_split_means_are_identical_in_blocks(tiny_blocks, models):
    c = cube(models=models)
    known = checked_pairwise(c)  # compare's route
    contrast, facts = known.cube, known.facts
    assert facts.finite and facts.means is not None
    want = _means(writable(contrast))  # the reduction of the contrast cube itself
    xr.testing.assert_identical(facts.means, want)
    np.testing.assert_array_equal(facts.means.values, want.values)  # bit for bit
    pairs = [(a, b) for a in range(models) for b in range(a + 1, models)]
    want_values = np.stack([c.values[..., a] - c.values[..., b] for a, b in pairs], axis=-1)
    np.testing.assert_array_equal(contrast.values, want_values)
    assert split_means(contrast, known=known) is facts.means  # no losses read again
    sub = split_means(contrast, ["half"], "t", known=known)
    xr.testing.assert_identical(sub, _means(writable(contrast).isel(split=sub.split.values)))


def test_an_overflow_in_the_last_block_is_not_trusted(tiny_blocks):
    c = cube().copy(deep=True)
    last = c.sizes["split"] - 1
    tested = np.flatnonzero(c.isel(dataset=4, split=last, model=0).notnull())[-1]
    c[4, last, tested] = [1e308, -1e308]
    contrast = cvstats.pairwise(c)
    assert recall(contrast) is None
    with pytest.raises(CubeError, match="infinite loss"):
        cvstats.corrected_resampled_t(contrast)


def writable(cube: xr.DataArray) -> xr.DataArray:
    """A copy the user could change: validated on every call, nothing remembered."""
    return cube.copy(data=cube.values.copy())


def test_a_call_from_within_a_part_runs_in_that_thread(cut, monkeypatch):
    """A part that itself cuts in parts must not wait on the pool it runs on.

    More outer parts than the pool has threads, each cut again: were the inner
    parts queued on the pool, every pool thread would wait for them.
    """
    import threading

    monkeypatch.setattr(threads, "workers", lambda: threads.MAX_THREADS + 2)
    rows = np.arange(96.0).reshape(12, 8)

    def outer(part):
        inner = threads.leading_parts(rows[part])
        return sum(threads.map_parts(lambda p: float(rows[part][p].sum()), inner))

    result = []
    worker = threading.Thread(
        target=lambda: result.append(threads.map_parts(outer, threads.leading_parts(rows))),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "nested map_parts deadlocked"
    assert sum(result[0]) == rows.sum()


def test_remembered_means_cannot_be_edited_through_split_means(tiny_blocks):
    known = checked_pairwise(cube())
    first = split_means(known.cube, known=known)
    before = first.values.copy()
    with pytest.raises(ValueError, match="read-only"):
        first += 100
    np.testing.assert_array_equal(split_means(known.cube, known=known).values, before)
