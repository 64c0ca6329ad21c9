import numpy as np
import pandas as pd
import pytest
import xarray as xr

import cvstats
from cvstats import CubeError, designs
from cvstats.cube import in_test


@pytest.fixture
def design():
    return designs.nadeau_bengio(60, 6, J=3, M=2, R=2, seed=0)


@pytest.fixture
def cube(design):
    rng = np.random.default_rng(0)
    losses = rng.random((design.sizes["split"], 60, 2))
    return cvstats.from_arrays(losses, design=design, models=["a", "b"], name="squared")


def test_from_arrays_with_design(cube, design):
    assert cube.dims == ("split", "example", "model")
    assert cube.name == "squared"
    assert cube.model.values.tolist() == ["a", "b"]
    # NaN exactly off the test sets, for every model
    np.testing.assert_array_equal(cube.notnull().isel(model=0), design.test)
    np.testing.assert_array_equal(cube.notnull().isel(model=1), design.test)
    np.testing.assert_array_equal(cube.in_train, design.train)
    assert cube.attrs == design.attrs
    for c in ("block", "half", "side", "replicate", "repeat", "fold", "n_train"):
        np.testing.assert_array_equal(cube[c], design[c])
    np.testing.assert_array_equal(in_test(cube), design.test)


def own_splits_cube(datasets, models, n, n_test, J, seed):
    """``(cube, test mask)``: each dataset its own ``resampled(n, n_test, J=J)`` splits.

    Dataset ``k`` of ``datasets`` has the splits of seed ``k``, so the NaN pattern, not
    a design, says which examples each split tests; uniform losses of generator ``seed``.
    """
    ds = [designs.resampled(n, n_test, J=J, seed=s) for s in range(len(datasets))]
    mask = np.stack([d.test.values for d in ds])
    losses = np.random.default_rng(seed).random((len(datasets), J, n, len(models)))
    cube = cvstats.from_arrays(
        losses,
        mask,
        n_train=n - n_test,
        extra_dims=["dataset"],
        extra_coords={"dataset": datasets},
        models=models,
    )
    return cube, mask


def test_from_arrays_extra_dim_with_own_splits():
    # each dataset has its own random splits: the NaN pattern is the source of truth
    cube, mask = own_splits_cube([10, 11, 12], ["x", "y"], n=30, n_test=5, J=4, seed=1)
    assert cube.dims == ("dataset", "split", "example", "model")
    np.testing.assert_array_equal(cube.notnull().isel(model=0), mask)
    np.testing.assert_array_equal(cube.dataset, [10, 11, 12])
    assert cube.attrs["design"] == "user" and cube.attrs["seed"] == -1


def test_from_arrays_nan_on_test_example_is_an_error(design):
    losses = np.ones((design.sizes["split"], 60, 1))
    first_test = int(np.argmax(design.test.values[0]))
    losses[0, first_test, 0] = np.nan
    with pytest.raises(CubeError, match="1 test example.*NaN or infinite loss"):
        cvstats.from_arrays(losses, design=design)


def test_from_arrays_shape_errors(design):
    with pytest.raises(CubeError, match="has 2 dims but 3 are expected"):
        cvstats.from_arrays(np.ones((3, 4)), n_train=1)
    with pytest.raises(CubeError, match="but the design has"):
        cvstats.from_arrays(np.ones((3, 60, 1)), design=design)
    with pytest.raises(CubeError, match="`models` names 1 models"):
        cvstats.from_arrays(np.ones((design.sizes["split"], 60, 2)), design=design, models=["a"])
    with pytest.raises(CubeError, match="training-set size of each split is needed"):
        cvstats.from_arrays(np.ones((2, 3, 1)))
    with pytest.raises(CubeError, match="`losses` must be real numbers"):
        cvstats.from_arrays(np.array([[["a"]]]), n_train=1)


def test_from_arrays_nan_pattern_default():
    design = designs.resampled(20, 4, J=3, seed=0)
    losses = np.where(design.test.values[..., None], 1.0, np.nan)
    cube = cvstats.from_arrays(losses, n_train=design.n_train.values, models=["m"])
    np.testing.assert_array_equal(cube.notnull().isel(model=0), design.test)
    assert "in_train" not in cube.coords


def test_from_frame_round_trip(cube):
    df = cube.drop_vars("in_train").to_dataframe().dropna(subset=["squared"]).reset_index()
    back = cvstats.from_frame(df, loss="squared", attrs=cube.attrs)
    # example order is order of first appearance: reindex before comparing
    back = back.reindex(example=cube.example)
    xr.testing.assert_identical(back, cube.drop_vars("in_train"))


def test_from_frame_errors():
    df = pd.DataFrame({"split": [0, 0], "example": [1, 1], "model": "a", "loss": [0.1, 0.2]})
    with pytest.raises(CubeError, match="more than one loss"):
        cvstats.from_frame(df, n_train=1)
    with pytest.raises(CubeError, match=r"lacks the column\(s\) \['err'\]"):
        cvstats.from_frame(df, loss="err")
    df2 = pd.DataFrame(
        {"split": [0, 0], "example": [1, 2], "model": "a", "loss": [0.1, 0.2], "n_train": [3, 4]}
    )
    with pytest.raises(CubeError, match="'n_train' varies within split 0"):
        cvstats.from_frame(df2)
    df3 = pd.DataFrame({"split": [0], "example": [1], "model": "a", "loss": [np.inf]})
    with pytest.raises(CubeError, match="NaN or infinite losses"):
        cvstats.from_frame(df3, n_train=1)


def test_from_frame_missing_model_row():
    df = pd.DataFrame(
        {
            "split": [0, 0, 0],
            "example": [0, 1, 0],
            "model": ["a", "a", "b"],
            "loss": [1.0, 2.0, 3.0],
        }
    )
    with pytest.raises(CubeError, match="NaN pattern differs between models at split 0, exam"):
        cvstats.from_frame(df, n_train=1)


# ---------------------------------------------------------------------------
# validate on bad cubes: one case each, asserting the key words of the message
# ---------------------------------------------------------------------------


def _set_coord(cube, name, i, value):
    values = cube[name].values.copy()
    values[i] = value
    return cube.assign_coords({name: ("split", values)})


def _first(cube, block):
    return int(np.flatnonzero(cube.block.values == block)[0])


BAD_CUBES = {
    "not a DataArray": (lambda c: c.to_dataset(), "must be an xarray.DataArray"),
    "no name": (lambda c: c.rename(None), "has no name"),
    "name of a coordinate": (lambda c: c.rename("block"), "named 'block' like one of its coord"),
    "missing dim": (lambda c: c.rename(model="learner"), r"lacks the dim\(s\) \['model'\]"),
    "dim order": (lambda c: c.transpose("example", "split", "model"), "must end with"),
    "int dtype": (lambda c: c.fillna(0).astype(int), "losses must be floating point"),
    "str dtype": (lambda c: c.astype(str), "non-numeric dtype"),
    "duplicate split": (
        lambda c: c.assign_coords(split=np.zeros(c.sizes["split"], dtype=int)),
        "`split` coordinate has duplicated label 0",
    ),
    "duplicate example": (
        lambda c: c.assign_coords(example=np.r_[0, np.arange(c.sizes["example"] - 1)]),
        "`example` coordinate has duplicated label 0",
    ),
    "float split labels": (
        lambda c: c.assign_coords(split=c.split.astype(float)),
        "`split` coordinate must hold ints",
    ),
    "int model labels": (lambda c: c.assign_coords(model=[0, 1]), "model names"),
    "missing block": (lambda c: c.drop_vars("block"), r"split coordinate\(s\) \['block'\]"),
    "unknown block": (lambda c: _set_coord(c, "block", 0, "mian"), "has block 'mian'"),
    "half without side": (
        lambda c: _set_coord(c, "side", _first(c, "half"), -1),
        "in block 'half' has side not in",
    ),
    "main with side": (lambda c: _set_coord(c, "side", 0, 0), "has side != -1"),
    "replicate index missing": (
        lambda c: _set_coord(c, "replicate", _first(c, "replicate"), -1),
        "has replicate = -1",
    ),
    "n_train too big": (lambda c: _set_coord(c, "n_train", 0, 60), "n_train >= n = 60"),
    "missing attr": (lambda c: c.assign_attrs(n=None).drop_attrs(), "lacks the attr"),
    "bad seed attr": (lambda c: c.assign_attrs(seed="x"), "attr `seed` must be an int"),
    "infinite loss": (
        lambda c: c.where(~(c.notnull() & (c.split == 0) & (c.model == "a")), np.inf),
        "infinite loss",
    ),
    "nan pattern differs": (
        lambda c: c.where(~((c.split == 0) & (c.model == "b")), np.nan),
        "NaN pattern differs between models",
    ),
    "loss on training example": (
        lambda c: c.fillna(1.0).where(c.notnull() | ~c.in_train.isel(split=0), 1.0),
        "losses are present for training examples",
    ),
    "n_train disagrees with in_train": (
        lambda c: _set_coord(c, "n_train", 0, 50),
        "split 0 has n_train = 50 but `in_train` marks 54",
    ),
    "unequal test sizes in main": (
        lambda c: c.drop_vars("in_train").where(
            ~((c.split == 0) & (c.example == int(np.argmax(c.notnull().values[0, :, 0])))),
        ),
        "block 'main' has splits with different test sizes",
    ),
    "empty split": (
        lambda c: c.where(c.split != 0),
        "split 0 has no test example",
    ),
    "half with one side only": (
        lambda c: _set_coord(
            _set_coord(c, "side", np.flatnonzero(c.block.values == "half")[3:6], 0),
            "half",
            np.flatnonzero(c.block.values == "half")[3:6],
            0,
        ),
        "has splits on one side only|different numbers of splits",
    ),
}


@pytest.mark.parametrize("case", list(BAD_CUBES))
def test_validate_rejects(cube, case):
    mutate, match = BAD_CUBES[case]
    with pytest.raises(CubeError, match=match):
        cvstats.validate(mutate(cube))


def test_validate_accepts_good_cubes(cube):
    cvstats.validate(cube)
    cvstats.validate(cube.drop_vars("in_train"))
    cvstats.validate(cube.astype(np.float32))
    # extra leading dim
    cvstats.validate(xr.concat([cube, cube], dim="dataset"))


def test_validate_kfold_partition():
    d = designs.kfold(12, 3, repeats=2, seed=0)
    cube = cvstats.from_arrays(np.ones((6, 12, 1)), design=d)
    cvstats.validate(cube)  # fold sizes may differ by one in general; here equal
    broken = cube.drop_vars("in_train").where(~((cube.split == 0) & (cube.example == 0)))
    first = int(np.argmax(d.test.values[0]))
    broken = cube.drop_vars("in_train").where(~((cube.split == 0) & (cube.example == first)))
    with pytest.raises(CubeError, match="does not test every example exactly once per repeat"):
        cvstats.validate(broken)


def test_validate_unequal_kfold_folds_allowed():
    d = designs.kfold(11, 3, seed=0)
    cube = cvstats.from_arrays(np.ones((3, 11, 1)), design=d)
    assert sorted(cube.notnull().sum("example").isel(model=0).values.tolist()) == [3, 4, 4]


def test_validate_overlapping_halves():
    d = designs.five_by_two(20, seed=0)
    test = d.test.values.copy()
    test[1] = test[0]  # side 1 tests the same half as side 0
    # with equal test sets the 5x2 halves overlap
    with pytest.raises(CubeError, match="two sides of a half-split test common examples"):
        cvstats.from_arrays(
            np.ones((10, 20, 1)),
            test,
            splits={c: d[c].values for c in ("block", "half", "side", "n_train")},
        )


def test_validate_dask_backed_cube(cube):
    cvstats.validate(cube.chunk({"split": 5}))
    bad = cube.where(~((cube.split == 0) & (cube.model == "b")), np.nan).chunk({"split": 5})
    with pytest.raises(CubeError, match="NaN pattern differs"):
        cvstats.validate(bad)


def test_validate_does_not_mutate(cube):
    before = cube.copy(deep=True)
    cvstats.validate(cube)
    xr.testing.assert_identical(before, cube)
