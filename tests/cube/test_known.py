"""A cube validated once is not re-read while it provably stays the same (issues 16, 26).

``cvstats.cube.known`` remembers a lazy cube (a dask graph, renamed by any
assignment) together with a snapshot of everything else validation reads;
``compare`` validates its cube once and hands its methods the validated handle
(``Checked``), through which they share the split means; an in-memory cube, even a read-only
contrast cube, is validated again by every call (numpy lets anyone make it
writable again). These tests check that the proof is sound (any change is
seen and the cube is validated again), that the fast paths compute the same
numbers as the general ones, and that the in-memory and dask validations
name the same problems.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import cvstats
from cvstats import CubeError, designs
from cvstats.cube.formula import checked_contrasts, checked_pairwise
from cvstats.cube.known import Checked, Facts, immutable, recall
from cvstats.cube.schema import CONTRAST, MODEL
from cvstats.cube.validation import validated
from cvstats.inference.blocks import block_sizes, split_means
from cvstats.inference.registry import METHODS


@functools.cache
def loss_cube(models: int = 2, datasets: int = 3) -> xr.DataArray:
    """Every block, an extra ``dataset`` dim, uniform losses."""
    d = designs.nadeau_bengio(40, 4, J=3, M=2, R=2, seed=0)
    shape = (datasets, d.sizes["split"], 40, models)
    losses = np.random.default_rng(0).random(shape)
    names = [f"m{k}" for k in range(models)]
    return cvstats.from_arrays(losses, design=d, models=names, name="loss", extra_dims=["dataset"])


def writable(cube: xr.DataArray) -> xr.DataArray:
    """A deep copy the user could change: never remembered."""
    return cube.copy(deep=True)


def test_a_users_cube_is_not_remembered():
    cube = writable(loss_cube())
    cvstats.validate(cube)
    assert recall(cube) is None


def test_pairwise_is_read_only_and_not_remembered():
    contrast = cvstats.pairwise(loss_cube(3))
    assert not contrast.data.flags.writeable
    assert not immutable(contrast.data)  # numpy: setflags(write=True) unlocks it
    assert recall(contrast) is None  # validated again by the next call
    # compare's route: the contrast cube comes with what its validation would prove
    known = checked_pairwise(loss_cube(3))
    assert isinstance(known, Checked) and isinstance(known.facts, Facts)
    assert known.facts.finite and known.facts.first_counts is not None
    assert recall(known.cube) is None  # nothing global: the handle is the proof
    with pytest.raises(ValueError, match="read-only"):
        contrast.values[0, 0, 0, 0] = 1.0
    # the counts it remembers are those a fresh count of the NaN pattern gives
    fresh = writable(contrast)
    for block in ("main", "half", "replicate", "5x2"):
        assert block_sizes(contrast, block, "t") == block_sizes(fresh, block, "t")


@pytest.mark.parametrize("models", [2, 3])
def test_subtraction_equals_the_weighted_sum(models):
    """The contrast by subtraction equals ``xr.dot`` with the weights, to the last bit."""
    cube = loss_cube(models)
    contrast = cvstats.pairwise(cube)
    weights = xr.DataArray(
        [
            [1.0 if m == a else -1.0 if m == b else 0.0 for m in cube[MODEL].values]
            for a, b in (c.split(" - ") for c in contrast[CONTRAST].values)
        ],
        dims=(CONTRAST, MODEL),
        coords={CONTRAST: contrast[CONTRAST].values, MODEL: cube[MODEL].values},
    )
    want = xr.dot(cube, weights, dim=MODEL).transpose(*contrast.dims)
    np.testing.assert_array_equal(contrast.values, want.values)
    assert set(contrast.coords) == set(want.coords) | {"weights"}
    for name in want.coords:
        np.testing.assert_array_equal(contrast[name].values, want[name].values)


def test_treatment_contrasts_keep_the_same_values():
    cube = loss_cube(3)
    got = cvstats.contrasts("loss ~ model", cube)
    assert checked_contrasts("loss ~ model", cube).facts.finite
    models = [cube.isel(model=k, drop=True) for k in range(3)]
    want = [models[0], models[1] - models[0], models[2] - models[0]]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(got.isel(contrast=k, drop=True).values, w.values)


def test_general_weights_go_through_einsum_and_are_remembered():
    cube = loss_cube(3)
    got = cvstats.contrasts("loss ~ C(model, contr.sum)", cube)
    known = checked_contrasts("loss ~ C(model, contr.sum)", cube)
    assert known.facts.finite and known.facts.means is None  # einsum: no means on the way
    mean = cube.mean(MODEL)
    np.testing.assert_allclose(got.isel(contrast=0, drop=True), mean, rtol=1e-14)


def test_the_users_cube_is_left_alone():
    cube = writable(loss_cube())
    before = cube["in_train"].values.copy()
    contrast = cvstats.pairwise(cube)
    assert cube.data.flags.writeable and cube["in_train"].values.flags.writeable
    cube["in_train"].values[...] = ~before  # the user changes their own cube
    np.testing.assert_array_equal(contrast["in_train"].values, before)
    cvstats.validate(contrast)


def alias(array: np.ndarray) -> np.ndarray:
    """A writable numpy array on the memory of ``array``, through a ctypes pointer."""
    raw = (ctypes.c_char * array.nbytes).from_address(array.ctypes.data)
    return np.frombuffer(raw, dtype=array.dtype).reshape(array.shape)


def unlocked(array: np.ndarray) -> np.ndarray:
    """``array`` made writable by ``setflags`` where numpy allows it, else its ctypes alias."""
    try:
        array.setflags(write=True)
    except ValueError:  # a read-only view of another array: no flag to flip
        return alias(array)
    return array


@pytest.fixture
def lazy_contrast(tmp_path):
    """The contrast cube of a cube opened lazily from a zarr store: remembered for the process."""
    pytest.importorskip("dask")
    path = tmp_path / "cube.zarr"
    cvstats.save(loss_cube(), path)
    cube = cvstats.open_cube(path, chunks={"dataset": 1})
    yield cvstats.pairwise(cube)
    cube.close()


@pytest.mark.parametrize(
    "change",
    [
        "attrs",
        "coordinate replaced",
        "coordinate changed in place",
        "coordinate changed through a ctypes alias",
        "name",
    ],
)
def test_any_change_is_seen_and_validated_again(change, lazy_contrast):
    contrast = lazy_contrast
    assert recall(contrast) is not None
    if change == "attrs":
        contrast.attrs["n"] = 3  # n_train >= n: invalid
        match = "n_train >= n"
    elif change == "coordinate replaced":
        contrast["n_train"] = ("split", np.zeros(contrast.sizes["split"], dtype=np.int64))
        match = "n_train = 0 < 1"
    elif change == "coordinate changed in place":
        unlocked(contrast["n_train"].variable.data)[0] = 0
        match = "n_train = 0 < 1"
    elif change == "coordinate changed through a ctypes alias":
        alias(contrast["n_train"].variable.data)[0] = 0
        match = "n_train = 0 < 1"
    else:
        contrast.name = None
        match = "no name"
    assert recall(contrast) is None
    with pytest.raises(CubeError, match=match):
        cvstats.validate(contrast)
    with pytest.raises(CubeError, match=match):
        cvstats.corrected_resampled_t(contrast)


def _outcome(run, cube: xr.DataArray) -> object:
    """The frame of ``run(cube)``, or the message of the CubeError it raises."""
    try:
        return run(cube).to_frame()
    except CubeError as e:
        return str(e)


def _tested(cube: xr.DataArray, dataset: int, split: int) -> int:
    return int(np.argmax(~np.isnan(cube.values[dataset, split, :, 0])))


def _change_in_place(contrast: xr.DataArray, change: str) -> None:
    """Change ``contrast`` in place as a user could, locking it again afterwards."""
    if change == "ctypes alias":  # no flag touched at all
        alias(contrast.data)[..., 0] *= 3.0
        return
    if change in ("n_train", "in_train"):
        values = contrast[change].variable.data
    else:
        values = contrast.data
    writable_values = unlocked(values)
    if change == "scaled":
        writable_values[..., 0] *= 3.0
    elif change in ("inf", "nan"):
        writable_values[1, 2, _tested(contrast, 1, 2), 0] = np.inf if change == "inf" else np.nan
    elif change == "n_train":
        writable_values -= 1  # a valid size, which the correction reads (n2 / n1)
    else:  # in_train: a training example of split 0 is no longer one
        writable_values[0, int(np.argmax(values[0]))] = False
    values.setflags(write=False)


@pytest.mark.parametrize("change", ["scaled", "inf", "nan", "n_train", "in_train", "ctypes alias"])
@pytest.mark.parametrize(
    "run",
    [cvstats.corrected_resampled_t, cvstats.compare, cvstats.conservative_z],
    ids=["corrected_resampled_t", "compare", "conservative_z"],
)
def test_a_result_comes_from_the_values_the_call_reads(change, run):
    """Issue 26: unlock a read-only contrast cube, change it, lock it again: never stale."""
    d = designs.nadeau_bengio(30, 6, J=4, M=3, R=3, seed=5)
    losses = np.random.default_rng(11).gamma(2.0, 0.5, size=(3, d.sizes["split"], 30, 3))
    cube = cvstats.from_arrays(
        losses, design=d, models=["x", "y", "z"], name="loss", extra_dims=["site"]
    )
    cube = cube.drop_vars("n_train").assign_coords(n_train=("split", coord_values(cube)))
    contrast = cvstats.pairwise(cube)
    before = _outcome(run, contrast)  # validated (and formerly remembered) here
    assert not isinstance(before, str)
    _change_in_place(contrast, change)
    assert not contrast.data.flags.writeable
    fresh = contrast.copy(deep=True)  # the values as they are now, in a cube never seen
    got, want = _outcome(run, contrast), _outcome(run, fresh)
    if isinstance(want, str):
        assert got == want
        return
    assert not isinstance(got, str)
    pd.testing.assert_frame_equal(got, want)
    changed = ~np.isclose(got.select_dtypes(float), before.select_dtypes(float)).all()
    assert changed  # the change matters: an old result would have failed above


def coord_values(cube: xr.DataArray) -> np.ndarray:
    """The cube's ``n_train``, in an array that owns its memory (setflags can unlock it)."""
    return np.array(cube["n_train"].values, copy=True)


def test_a_dask_cube_over_numpy_blocks_is_read_again():
    """A lazy cube whose graph holds its blocks as numpy arrays is validated by every call."""
    da = pytest.importorskip("dask.array")
    lazy_cube = loss_cube().copy(data=da.from_array(loss_cube().values, chunks=(1, -1, -1, -1)))
    contrast = cvstats.pairwise(lazy_cube)
    cvstats.corrected_resampled_t(contrast).to_frame()
    assert recall(contrast) is None and recall(lazy_cube) is None
    blocks = [
        value
        for layer in lazy_cube.data.__dask_graph__().layers.values()
        for value in layer.mapping.values()
        if isinstance(value, np.ndarray) and value.ndim == 4
    ]
    assert len(blocks) == lazy_cube.sizes["dataset"]
    # whoever holds a block (it is a numpy array) can change it
    unlocked(blocks[1])[0, 0, _tested(loss_cube(), 1, 0), 0] = np.inf
    with pytest.raises(CubeError, match="infinite"):
        cvstats.corrected_resampled_t(contrast)


def test_an_overflowing_contrast_is_not_trusted():
    # one test example a split: no split's sum overflows, only the difference does
    d = designs.resampled(20, 1, J=3, seed=0)
    losses = np.where(np.arange(2) == 0, 9e307, -9e307) * np.ones((3, 20, 2))
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b"], name="loss")
    cvstats.validate(cube)  # finite
    contrast = cvstats.pairwise(cube)  # a - b overflows to inf
    assert recall(contrast) is None
    with pytest.raises(CubeError, match="infinite"):
        cvstats.compare(contrast)
    with pytest.raises(CubeError, match="infinite"):
        cvstats.compare(cvstats.pairwise(cube))


def test_compare_with_shared_means_equals_each_method_on_a_fresh_cube():
    contrast = cvstats.pairwise(loss_cube(3))
    table = cvstats.compare(contrast).to_frame()
    fresh = writable(contrast)  # validated by every method, own split means
    keys = ["method", "contrast", "dataset"]
    fields = ["estimate", "stderr", "statistic", "df", "pvalue", "ci_lower", "ci_upper"]
    for name in table["method"].unique():
        spec = METHODS[name]
        alone = spec.func(fresh, **spec.fixed).to_frame().sort_values(keys)
        got = table[table["method"] == name].sort_values(keys)
        assert len(got) == len(alone) == 9
        # the table's pvalue is adjusted for the 3 comparisons; pvalue_raw is the method's
        got = got.drop(columns="pvalue").rename(columns={"pvalue_raw": "pvalue"})
        np.testing.assert_allclose(
            got[fields].to_numpy(float), alone[fields].to_numpy(float), rtol=1e-13
        )


def test_split_means_are_shared_through_the_handle_only():
    contrast = cvstats.pairwise(loss_cube())
    known = Checked(contrast, validated(contrast))
    first = split_means(contrast, ["main", "replicate"], "t", known=known)
    assert split_means(contrast, ["main", "replicate"], "t", known=known) is first
    assert split_means(contrast, ["main", "replicate"], "t") is not first  # no handle: again
    # a handle of another cube is not used for this one
    other = Checked(writable(contrast), known.facts)
    assert split_means(contrast, ["main", "replicate"], "t", known=other) is not first
    fresh = split_means(writable(contrast), ["main", "replicate"], "t")
    np.testing.assert_array_equal(first.values, fresh.values)
    np.testing.assert_array_equal(first["split"].values, fresh["split"].values)


# ---------------------------------------------------------------------------
# the in-memory checks name the same problems as the dask (one-pass) ones
# ---------------------------------------------------------------------------


def _with(cube: xr.DataArray, index: tuple, value: float) -> xr.DataArray:
    values = cube.values.copy()
    values[index] = value
    return cube.copy(data=values)


def _bad(case: str) -> tuple[xr.DataArray, str]:
    cube = loss_cube()
    test = int(np.argmax(~np.isnan(cube.values[1, 0, :, 0])))
    train = int(np.argmax(cube["in_train"].values[0]))
    if case == "inf":
        return _with(cube, (1, 0, test, 0), -np.inf), "1 infinite loss.*dataset 1, split 0"
    if case == "pattern":
        return _with(cube, (1, 0, test, 1), np.nan), "NaN pattern differs.*dataset 1"
    if case == "train":
        return _with(cube, (2, 0, train, slice(None)), 0.5), "training examples"
    if case == "halves":
        half = np.flatnonzero(cube["block"].values == "half")
        side1 = half[(cube["half"].values[half] == 0) & (cube["side"].values[half] == 1)][0]
        side0 = half[(cube["half"].values[half] == 0) & (cube["side"].values[half] == 0)][0]
        values = cube.values.copy()
        values[:, side1, :, :] = np.nan
        tested = np.flatnonzero(~np.isnan(cube.values[0, side0, :, 0]))
        values[:, side1, tested, :] = 0.5  # side 1 tests side 0's examples
        return cube.copy(data=values), "two sides of a half-split test common examples"
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["inf", "pattern", "train", "halves"])
@pytest.mark.parametrize("lazy", [False, True])
def test_in_memory_and_dask_validation_agree(case, lazy):
    pytest.importorskip("dask")
    bad, match = _bad(case)
    if lazy:
        bad = bad.chunk({"dataset": 1})
    with pytest.raises(CubeError, match=match):
        cvstats.validate(bad)


# ---------------------------------------------------------------------------
# lazy (dask) cubes: remembered by their graph's name; finiteness proved on one read
# ---------------------------------------------------------------------------


class Tasks:
    """Count the dask tasks run within the block, and the largest array one returned."""

    def __enter__(self) -> Tasks:
        from dask.callbacks import Callback

        self.count = 0
        self.largest = 0

        def posttask(key: object, result: object, *args: object) -> None:
            self.count += 1
            if isinstance(result, np.ndarray):
                self.largest = max(self.largest, result.nbytes)

        self._callback = Callback(posttask=posttask)
        self._callback.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._callback.__exit__(*exc)


def test_a_lazy_cube_is_validated_once(tmp_path):
    pytest.importorskip("dask")
    path = tmp_path / "cube.zarr"
    cvstats.save(loss_cube(), path)
    cube = cvstats.open_cube(path, chunks={"dataset": 1})  # validated on opening
    try:
        assert recall(cube) is not None
        with Tasks() as tasks:
            cvstats.validate(cube)
            contrast = cvstats.pairwise(cube)  # lazy: nothing read
        assert tasks.count == 0
        # finite: proved from the largest loss validation found (no difference overflows)
        assert recall(contrast) is not None and recall(contrast).finite
        with Tasks() as tasks:
            facts = validated(contrast)
        assert tasks.count == 0 and facts.finite
        with Tasks() as tasks:
            cvstats.validate(contrast)
        assert tasks.count == 0
        # an assignment gives the dask array a new name: validated again, and refused
        contrast[{"dataset": 0, "split": 0, "example": _first_tested(contrast)}] = np.inf
        assert recall(contrast) is None
        with pytest.raises(CubeError, match="infinite"):
            cvstats.validate(contrast)
    finally:
        cube.close()


def _first_tested(cube: xr.DataArray) -> int:
    return int(np.argmax(cube.isel(dataset=0, split=0, contrast=0).notnull().values))


def test_a_lazy_contrast_overflowing_where_the_means_do_not_show_it_is_refused():
    """Two examples whose differences overflow in opposite directions: finite model means."""
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.array")
    d = designs.resampled(20, 2, J=3, seed=0)
    losses = np.zeros((3, 20, 2))
    cube = cvstats.from_arrays(np.ones((3, 20, 2)), design=d, models=["a", "b"], name="loss")
    mask = cube.notnull().values
    for j in range(3):
        e1, e2 = np.flatnonzero(mask[j, :, 0])[:2]
        losses[j, e1] = [9e307, -9e307]
        losses[j, e2] = [-9e307, 9e307]
    # a lazy cube over a source that is no numpy array: remembered, as a store would be
    source = Counting(np.where(mask, losses, np.nan))
    cube = cube.copy(data=dask.array.from_array(source, chunks=-1))
    contrast = cvstats.pairwise(cube)
    facts = recall(contrast)
    assert not facts.finite  # the bound cannot prove it
    np.testing.assert_array_equal(facts.means.values, 0.0)  # the models' means hide it
    with pytest.raises(CubeError, match="infinite"):
        cvstats.compare(contrast)


def test_a_lazy_overflowing_contrast_is_refused():
    pytest.importorskip("dask")
    # one test example a split: no split's sum overflows, only the difference does
    d = designs.resampled(20, 1, J=3, seed=0)
    losses = np.where(np.arange(2) == 0, 9e307, -9e307) * np.ones((3, 20, 2))
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b"], name="loss").chunk()
    contrast = cvstats.pairwise(cube)
    with pytest.raises(CubeError, match="infinite"):
        cvstats.compare(contrast)
    with pytest.raises(CubeError, match="infinite"):
        cvstats.corrected_resampled_t(contrast)
    with pytest.raises(CubeError, match="infinite"):
        cvstats.compare("loss ~ model", cube)


class Counting:
    """An array that counts the reads of its chunks (dask reads it by ``__getitem__``)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values, self.reads = values, 0
        self.shape, self.dtype, self.ndim = values.shape, values.dtype, values.ndim

    def __getitem__(self, key: object) -> np.ndarray:
        self.reads += 1
        return self.values[key]


def test_lazy_compare_reads_the_cube_once():
    """compare(pairwise(cube)) on a lazy cube reads it once: to validate it."""
    da = pytest.importorskip("dask.array")
    cube = loss_cube()
    source = Counting(cube.values)
    lazy_cube = cube.copy(data=da.from_array(source, chunks=(1, -1, -1, -1)))
    chunks, source.reads = cube.sizes["dataset"], 0  # (dask read an empty slice for its meta)
    contrast = cvstats.pairwise(lazy_cube)
    assert source.reads == chunks  # validation of the loss cube: one read
    # validation computed the models' split means and largest loss as it read each chunk:
    # the contrast's means are their weighted sums, and its losses are proved finite
    facts = recall(contrast)
    assert facts.finite and facts.means is not None
    table = cvstats.compare(contrast)
    assert source.reads == chunks  # nothing read again
    assert all(res.estimate.chunks is None for res in table.results.values())  # computed
    frame = table.to_frame()
    assert source.reads == chunks
    eager = cvstats.compare(cvstats.pairwise(cube)).to_frame()
    np.testing.assert_allclose(
        frame.select_dtypes(float).to_numpy(), eager.select_dtypes(float).to_numpy(), rtol=1e-12
    )


def test_lazy_compare_without_validations_means_reads_twice():
    """Chunks along ``split``: validation takes the general path (no means); compare reads."""
    da = pytest.importorskip("dask.array")
    cube = loss_cube()
    source = Counting(cube.values)
    lazy_cube = cube.copy(data=da.from_array(source, chunks=(1, 16, -1, -1)))
    source.reads = 0
    contrast = cvstats.pairwise(lazy_cube)
    first = source.reads
    assert recall(contrast).means is None and not recall(contrast).finite
    frame = cvstats.compare(contrast).to_frame()
    assert source.reads == 2 * first  # the split means, which prove the contrast finite
    assert recall(contrast).finite
    other = cvstats.pairwise(lazy_cube)  # a method alone proves finiteness in one read
    before = source.reads
    with Tasks() as tasks:
        cvstats.validate(other)
    assert tasks.count > 0 and source.reads == before + first and recall(other).finite
    eager = cvstats.compare(cvstats.pairwise(cube)).to_frame()
    np.testing.assert_allclose(
        frame.select_dtypes(float).to_numpy(), eager.select_dtypes(float).to_numpy(), rtol=1e-12
    )


def test_validations_means_equal_split_means():
    pytest.importorskip("dask")
    cube = loss_cube(3).chunk({"dataset": 1})
    facts = validated(writable_lazy := cube)
    assert facts.means is not None
    want = split_means(writable_lazy).compute()
    xr.testing.assert_allclose(facts.means, want, rtol=1e-14)
    assert list(facts.means.coords) == list(want.coords)
    assert facts.largest == pytest.approx(float(np.abs(loss_cube(3)).max()))


def test_block_sizes_are_computed_once_per_block_through_the_handle():
    contrast = cvstats.pairwise(loss_cube(3))
    known = Checked(contrast, validated(contrast))
    first = block_sizes(contrast, "half", "m", known=known)
    # shared, not recomputed
    assert block_sizes(contrast, "half", "other method", known=known) is first
    assert block_sizes(contrast, "main", "m", known=known) is not first
    fresh = block_sizes(writable(contrast), "half", "m")
    assert first == fresh and block_sizes(contrast, "half", "m") is not first
