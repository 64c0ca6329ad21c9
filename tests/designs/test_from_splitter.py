"""Tests of cvstats.designs.from_splitter: designs holding a scikit-learn splitter's splits."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from sklearn import model_selection as ms

import cvstats
from cvstats import designs
from cvstats.cube.schema import SPLIT_COORDS
from cvstats.errors import ArgumentError, DesignError
from cvstats.inference.registry import applicable_methods

N = 40
RNG = np.random.default_rng(0)
X = RNG.random((N, 3))
Y = np.tile([0, 1], N // 2)  # binary labels for the stratified splitters
GROUPS = np.repeat(np.arange(8), 5)  # 8 groups of 5
UNEQUAL_GROUPS = np.r_[np.repeat(np.arange(6), 5), np.repeat([6, 7], [4, 6])]  # sizes 5.., 4, 6
TEST_FOLD = np.random.default_rng(1).permutation(np.repeat(np.arange(4), 10))

# name -> (splitter, kwargs of split, expected flags, k-fold layout (K, repeats) or None)
CASES = {
    "KFold": (ms.KFold(5, shuffle=True, random_state=0), {}, (1, 1, 1, 0), (5, 1)),
    "StratifiedKFold": (
        ms.StratifiedKFold(4, shuffle=True, random_state=1),
        {"y": Y},
        (1, 1, 1, 0),
        (4, 1),
    ),
    "RepeatedKFold": (
        ms.RepeatedKFold(n_splits=4, n_repeats=3, random_state=2),
        {},
        (1, 1, 1, 0),
        (4, 3),
    ),
    "RepeatedStratifiedKFold": (
        ms.RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=3),
        {"y": Y},
        (1, 1, 1, 0),
        (5, 2),
    ),
    "ShuffleSplit": (
        ms.ShuffleSplit(6, test_size=8, train_size=20, random_state=4),
        {},
        (0, 1, 1, 0),
        None,
    ),
    "StratifiedShuffleSplit": (
        ms.StratifiedShuffleSplit(5, test_size=10, random_state=5),
        {"y": Y},
        (0, 1, 1, 0),
        None,
    ),
    "GroupKFold": (ms.GroupKFold(3), {"groups": GROUPS}, (1, 0, 0, 0), (3, 1)),
    "StratifiedGroupKFold": (
        ms.StratifiedGroupKFold(4, shuffle=True, random_state=6),
        {"y": Y, "groups": GROUPS},
        (1, 1, 1, 0),
        (4, 1),
    ),
    "GroupShuffleSplit": (
        ms.GroupShuffleSplit(5, test_size=2, random_state=7),
        {"groups": GROUPS},
        (0, 1, 1, 0),
        None,
    ),
    "LeaveOneOut": (ms.LeaveOneOut(), {}, (1, 1, 1, 0), (N, 1)),
    "LeaveOneGroupOut": (ms.LeaveOneGroupOut(), {"groups": GROUPS}, (1, 1, 1, 0), (8, 1)),
    "LeavePGroupsOut": (ms.LeavePGroupsOut(2), {"groups": GROUPS}, (0, 1, 1, 0), None),
    "TimeSeriesSplit": (ms.TimeSeriesSplit(4), {}, (0, 0, 1, 1), None),
    "PredefinedSplit": (ms.PredefinedSplit(TEST_FOLD), {}, (1, 1, 1, 0), (4, 1)),
    "PredefinedSplit-partial": (
        ms.PredefinedSplit(np.where(TEST_FOLD == 3, -1, TEST_FOLD)),
        {},
        (0, 1, 1, 0),
        None,
    ),
}


def _expected_pairs(cv, kwargs):
    return list(cv.split(X, kwargs.get("y"), kwargs.get("groups")))


def _check_masks(d: xr.Dataset, pairs) -> None:
    assert d.sizes["split"] == len(pairs)
    for j, (tr, te) in enumerate(pairs):
        np.testing.assert_array_equal(np.flatnonzero(d.train.values[j]), np.sort(tr))
        np.testing.assert_array_equal(np.flatnonzero(d.test.values[j]), np.sort(te))


@pytest.mark.parametrize("name", list(CASES))
def test_masks_equal_the_splitter_indices(name):
    cv, kwargs, _, _ = CASES[name]
    d = designs.from_splitter(cv, X, **kwargs)
    _check_masks(d, _expected_pairs(cv, kwargs))
    assert d.train.dtype == bool and d.test.dtype == bool
    assert d.sizes["example"] == N and d.attrs["n"] == N
    for c in SPLIT_COORDS:
        assert d[c].dims == ("split",)
    assert set(d.block.values.tolist()) == {"main"}
    assert (d.half == -1).all() and (d.side == -1).all() and (d.replicate == -1).all()
    np.testing.assert_array_equal(d.n_train, d.train.sum("example"))
    np.testing.assert_array_equal(d.n_test, d.test.sum("example"))
    assert d.n_test.dtype == np.int64 and d.n_train.dtype == np.int64
    assert not (d.train & d.test).any()
    assert d.attrs["design"] == "splitter"
    assert d.attrs["splitter"] == type(cv).__name__
    assert d.attrs["n_splits"] == len(_expected_pairs(cv, kwargs))


@pytest.mark.parametrize("name", list(CASES))
def test_repeat_and_fold(name):
    cv, kwargs, _, layout = CASES[name]
    d = designs.from_splitter(cv, X, **kwargs)
    if layout is None:
        assert (d.repeat == -1).all() and (d.fold == -1).all()
        assert "K" not in d.attrs and "repeats" not in d.attrs
        return
    K, repeats = layout
    np.testing.assert_array_equal(d.repeat, np.repeat(np.arange(repeats), K))
    np.testing.assert_array_equal(d.fold, np.tile(np.arange(K), repeats))
    assert (d.attrs["K"], d.attrs["repeats"]) == (K, repeats)
    # every repeat tests every example exactly once
    cover = d.test.groupby("repeat").sum("split")
    assert (cover == 1).all()


@pytest.mark.parametrize("name", list(CASES))
def test_flags(name):
    cv, kwargs, flags, _ = CASES[name]
    d = designs.from_splitter(cv, X, **kwargs)
    got = tuple(d.attrs[k] for k in ("partition", "equal_n_train", "equal_n_test", "nested_train"))
    assert got == flags
    assert all(type(v) is int for v in got)  # ints 0/1: netCDF attrs cannot be bools


def test_time_series_split_nested_and_untested_examples():
    d = designs.from_splitter(ms.TimeSeriesSplit(4), n=N)
    assert d.attrs["nested_train"] == 1 and d.attrs["equal_n_train"] == 0
    assert d.n_train.values.tolist() == [8, 16, 24, 32]
    # the first chunk is never tested: NaN in every split of a cube
    untested = ~d.test.any("split").values
    assert untested[:8].all() and not untested[8:].any()
    cube = cvstats.from_arrays(RNG.random((4, N, 2)), design=d, models=["a", "b"])
    assert cube.isel(example=slice(0, 8)).isnull().all()


@pytest.mark.parametrize(
    ("cv", "nested", "ordered"),
    [
        (ms.TimeSeriesSplit(4), 1, 1),
        (ms.TimeSeriesSplit(4, max_train_size=8), 0, 1),  # a sliding window
        (ms.TimeSeriesSplit(4, gap=2), 1, 1),
        (ms.KFold(4), 0, 0),  # in order, but the first folds train on later examples
        (ms.ShuffleSplit(4, test_size=5, random_state=0), 0, 0),
    ],
)
def test_time_ordered_flag(cv, nested, ordered):
    d = designs.from_splitter(cv, n=N)
    assert (d.attrs["nested_train"], d.attrs["time_ordered"]) == (nested, ordered)
    assert type(d.attrs["time_ordered"]) is int
    # one forward split is a hold-out, not a time-ordered design
    one = [(np.arange(10), np.arange(10, 15))]
    assert designs.from_splitter(one, n=N).attrs["time_ordered"] == 0


def test_shuffle_split_leaving_examples_out():
    d = designs.from_splitter(ms.ShuffleSplit(3, test_size=5, train_size=10, random_state=0), X)
    assert (d.n_train == 10).all() and (d.n_test == 5).all()
    assert (d.train | d.test).sum("example").values.tolist() == [15, 15, 15]
    cube = cvstats.from_arrays(RNG.random((3, N, 2)), design=d, models=["a", "b"])
    assert int(cube.isel(model=0).notnull().sum()) == 15


def test_seed_recorded():
    assert designs.from_splitter(ms.KFold(4, shuffle=True, random_state=7), X).attrs["seed"] == 7
    assert designs.from_splitter(ms.KFold(4), X).attrs["seed"] == -1
    assert designs.from_splitter(ms.KFold(4), X, seed=3).attrs["seed"] == 3
    rs = np.random.RandomState(0)
    assert (
        designs.from_splitter(ms.KFold(4, shuffle=True, random_state=rs), X, seed=5).attrs["seed"]
        == 5
    )
    assert designs.from_splitter([([0], [1])], n=2, seed=11).attrs["seed"] == 11


def test_n_from_y_groups_or_test_fold_without_x():
    d = designs.from_splitter(ms.StratifiedKFold(4), y=Y)
    _check_masks(d, list(ms.StratifiedKFold(4).split(X, Y)))
    d = designs.from_splitter(ms.LeaveOneGroupOut(), groups=GROUPS)
    assert d.attrs["n"] == N and d.attrs["K"] == 8
    d = designs.from_splitter(ms.PredefinedSplit(TEST_FOLD))
    assert d.attrs["n"] == N and d.attrs["partition"] == 1
    d = designs.from_splitter(ms.KFold(4), n=N)
    _check_masks(d, list(ms.KFold(4).split(X)))


def test_split_is_called_exactly_once():
    class Counting:
        calls = 0

        def split(self, X, y=None, groups=None):
            Counting.calls += 1
            return ms.KFold(4).split(X, y, groups)

    d = designs.from_splitter(Counting(), X)
    assert Counting.calls == 1
    assert d.attrs["splitter"] == "Counting" and d.attrs["partition"] == 1


def test_iterable_of_pairs():
    pairs = list(ms.RepeatedKFold(n_splits=4, n_repeats=2, random_state=0).split(X))
    d = designs.from_splitter(iter(pairs), n=N)  # a one-shot generator is fine
    _check_masks(d, pairs)
    assert d.attrs["splitter"] == "iterable" and d.attrs["seed"] == -1
    # the k-fold layout is read off the indices, not the class
    np.testing.assert_array_equal(d.repeat, np.repeat([0, 1], 4))
    np.testing.assert_array_equal(d.fold, np.tile(np.arange(4), 2))
    # X gives n too; lists and boolean masks are accepted
    d = designs.from_splitter([([0, 1], [2, 3]), ([2, 3], [0, 1])], np.zeros((4, 2)))
    assert d.attrs["partition"] == 1 and d.fold.values.tolist() == [0, 1]
    mask = np.array([True, True, False, False])
    d2 = designs.from_splitter([(mask, ~mask), (~mask, mask)], n=4)
    assert d2.train.equals(d.train) and d2.test.equals(d.test)


def test_iterable_that_does_not_partition():
    pairs = [([0, 1, 2], [3, 4]), ([2, 3, 4], [0, 1]), ([0, 1, 4], [2, 3])]
    d = designs.from_splitter(pairs, n=5)
    assert (d.fold == -1).all() and (d.repeat == -1).all() and d.attrs["partition"] == 0
    # two partitions with different numbers of folds are not one repeated k-fold
    pairs = [
        ([0, 1], [2, 3]),
        ([2, 3], [0, 1]),
        ([1, 2, 3], [0]),
        ([0, 2, 3], [1]),
        ([0, 1, 3], [2]),
        ([0, 1, 2], [3]),
    ]
    d = designs.from_splitter(pairs, n=4)
    assert (d.fold == -1).all() and d.attrs["partition"] == 0


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cv",
    [
        ms.GroupKFold(3),
        ms.GroupShuffleSplit(3, random_state=0),
        ms.LeaveOneGroupOut(),
        ms.LeavePGroupsOut(2),
    ],
)
def test_missing_groups(cv):
    with pytest.raises(DesignError, match=r"needs `groups`.*pass it"):
        designs.from_splitter(cv, X, Y)


def test_missing_groups_when_y_is_given():
    cv = ms.StratifiedGroupKFold(3)
    with pytest.raises(DesignError, match=r"StratifiedGroupKFold needs `groups`"):
        designs.from_splitter(cv, X, Y)


@pytest.mark.parametrize(
    "cv",
    [
        ms.StratifiedKFold(3),
        ms.StratifiedShuffleSplit(3, random_state=0),
        ms.RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0),
    ],
)
def test_missing_y(cv):
    with pytest.raises(DesignError, match=rf"{type(cv).__name__} needs `y`"):
        designs.from_splitter(cv, X)


def test_custom_splitter_missing_groups_reraises_sklearn_error():
    class Wrapped:
        def split(self, X, y=None, groups=None):
            return ms.GroupKFold(2).split(X, y, groups)

    with pytest.raises(DesignError, match=r"Wrapped needs `groups`.*scikit-learn: The 'groups'"):
        designs.from_splitter(Wrapped(), X)


def test_sklearn_refusal_is_reraised_with_context():
    with pytest.raises(DesignError, match=r"KFold.split\(X, y, groups\) failed: Cannot have"):
        designs.from_splitter(ms.KFold(50), X)


def test_empty_test_set():
    with pytest.raises(DesignError, match="split 1 has an empty test set"):
        designs.from_splitter([([0, 1], [2, 3]), ([0, 1, 2, 3], [])], n=4)


def test_empty_training_set():
    with pytest.raises(DesignError, match="split 0 has an empty training set"):
        designs.from_splitter([([], [0, 1])], n=4)


def test_overlapping_train_and_test():
    with pytest.raises(DesignError, match="split 0 puts example 2 in both"):
        designs.from_splitter([([0, 1, 2], [2, 3])], n=4)


@pytest.mark.parametrize("bad", [4, -1])
def test_index_out_of_range(bad):
    with pytest.raises(DesignError, match=f"test index {bad} is out of range for n = 4"):
        designs.from_splitter([([0, 1], [2, bad])], n=4)


def test_repeated_index_and_bad_dtype_and_shape():
    with pytest.raises(DesignError, match="repeats an example in its training set"):
        designs.from_splitter([([0, 0, 1], [2])], n=4)
    with pytest.raises(DesignError, match="must be integers"):
        designs.from_splitter([([0.0, 1.0], [2])], n=4)
    with pytest.raises(DesignError, match="one-dimensional"):
        designs.from_splitter([([[0, 1]], [2])], n=4)
    with pytest.raises(DesignError, match="boolean test mask needs one entry per example"):
        designs.from_splitter([([0], [False, True])], n=4)


def test_not_a_pair():
    with pytest.raises(DesignError, match=r"split 0 is 3, not a \(train_idx, test_idx\) pair"):
        designs.from_splitter([3], n=4)
    with pytest.raises(DesignError, match="split 0 has 3 parts"):
        designs.from_splitter([([0], [1], [2])], n=4)


def test_no_split():
    with pytest.raises(DesignError, match="made no split"):
        designs.from_splitter([], n=4)

    class Empty:
        def split(self, X, y=None, groups=None):
            return iter(())

    with pytest.raises(DesignError, match="made no split"):
        designs.from_splitter(Empty(), X)


@pytest.mark.parametrize(
    ("cv", "match"),
    [
        (object(), "must be a scikit-learn splitter .* got object"),
        (5, r"For 5 folds pass sklearn.model_selection.KFold\(5\)"),
        ("kfold", "got str"),
        ({0: 1}, "got dict"),
        (ms.KFold, r"is the class KFold, not a splitter; pass an instance"),
    ],
)
def test_not_a_splitter(cv, match):
    with pytest.raises(DesignError, match=match):
        designs.from_splitter(cv, X)


def test_number_of_examples_unknown_or_inconsistent():
    with pytest.raises(ArgumentError, match="cannot tell the number of examples"):
        designs.from_splitter([([0], [1])])
    with pytest.raises(ArgumentError, match="cannot tell the number of examples"):
        designs.from_splitter(ms.KFold(3))
    with pytest.raises(ArgumentError, match="disagree on the number of examples"):
        designs.from_splitter(ms.KFold(3), X, n=N + 1)
    with pytest.raises(ArgumentError, match="disagree on the number of examples"):
        designs.from_splitter(ms.StratifiedKFold(3), X, Y[:-2])
    with pytest.raises(ArgumentError, match="at least 2 examples"):
        designs.from_splitter([([0], [0])], n=1)
    with pytest.raises(ArgumentError, match="`n` must be an int"):
        designs.from_splitter(ms.KFold(3), n=4.0)


def test_bad_seed():
    with pytest.raises(ArgumentError, match="`seed` must be an int"):
        designs.from_splitter(ms.KFold(3), X, seed=-2)
    with pytest.raises(ArgumentError, match="disagrees with the splitter's random_state = 0"):
        designs.from_splitter(ms.KFold(3, shuffle=True, random_state=0), X, seed=1)


# --------------------------------------------------------------------------
# cubes on splitter designs
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "KFold",
        "StratifiedKFold",
        "RepeatedKFold",
        "RepeatedStratifiedKFold",
        "LeaveOneOut",
        "LeaveOneGroupOut",
        "PredefinedSplit",
        "StratifiedGroupKFold",
    ],
)
def test_cube_on_kfold_like_design_with_equal_folds(name):
    cv, kwargs, _, (K, repeats) = CASES[name]
    d = designs.from_splitter(cv, X, **kwargs)
    S = d.sizes["split"]
    cube = cvstats.from_arrays(RNG.random((S, N, 2)), design=d, models=["a", "b"])
    cvstats.validate(cube)
    expected = ["corrected_repeated_kfold_t"]
    if repeats == 1:
        expected = ["kfold_t", "bayle_cv", "corrected_repeated_kfold_t"]
    assert applicable_methods(cube) == expected


@pytest.mark.parametrize(
    "name",
    [
        "GroupKFold",
        "ShuffleSplit",
        "StratifiedShuffleSplit",
        "GroupShuffleSplit",
        "LeavePGroupsOut",
        "TimeSeriesSplit",
        "PredefinedSplit-partial",
    ],
)
def test_cube_on_other_accepted_designs(name):
    # GroupKFold here has unequal folds (8 groups in 3 folds): k-fold blocks may
    # differ in test size; the others have equal test sizes
    cv, kwargs, _, _ = CASES[name]
    d = designs.from_splitter(cv, X, **kwargs)
    cube = cvstats.from_arrays(RNG.random((d.sizes["split"], N, 2)), design=d, models=["a", "b"])
    cvstats.validate(cube)


UNEQUAL_TEST_SIZES = {
    "GroupShuffleSplit-unequal-groups": (
        ms.GroupShuffleSplit(5, test_size=2, random_state=0),
        {"groups": UNEQUAL_GROUPS},
    ),
    "LeavePGroupsOut-unequal-groups": (ms.LeavePGroupsOut(2), {"groups": UNEQUAL_GROUPS}),
    "PredefinedSplit-partial-unequal-folds": (
        ms.PredefinedSplit(np.r_[np.zeros(10), np.ones(15), -np.ones(15)].astype(int)),
        {},
    ),
    "iterable-unequal-test-sizes": ([([0, 1, 2], [3, 4]), ([2, 3, 4], [0])], {}),
}


@pytest.mark.parametrize("name", list(UNEQUAL_TEST_SIZES))
def test_cube_on_designs_with_unequal_test_sizes(name):
    # random splits whose test sets differ in size (groups of unequal size, PredefinedSplit
    # folds of unequal size with examples never tested, arbitrary iterables): the cube
    # states the sizes (`n_test`); the resampled t runs, the corrected one needs n1/n2
    cv, kwargs = UNEQUAL_TEST_SIZES[name]
    n = N if name != "iterable-unequal-test-sizes" else 5
    d = designs.from_splitter(cv, n=n, **kwargs)
    assert d.attrs["equal_n_test"] == 0 and d.attrs["partition"] == 0
    cube = cvstats.from_arrays(RNG.random((d.sizes["split"], n, 2)), design=d, models=["a", "b"])
    cvstats.validate(cube)
    np.testing.assert_array_equal(cube["n_test"].values, d["n_test"].values)
    diff = cvstats.pairwise(cube)
    mu = np.nanmean(np.asarray(diff.values)[..., 0], axis=1)
    res = cvstats.resampled_t(diff)
    np.testing.assert_allclose(
        float(res.statistic.squeeze()), mu.mean() / np.sqrt(mu.var(ddof=1) / mu.size)
    )
    with pytest.raises(DesignError, match="one n1 and one n2"):
        cvstats.corrected_resampled_t(diff)
    n1, n2 = int(np.median(d.n_train)), int(np.median(d.n_test))
    res = cvstats.corrected_resampled_t(diff, n1=n1, n2=n2)
    np.testing.assert_allclose(
        float(res.statistic.squeeze()),
        mu.mean() / np.sqrt((1 / mu.size + n2 / n1) * mu.var(ddof=1)),
    )


def test_combine_with_a_design_without_n_test():
    # the design without `n_test` gets it from its own test masks, in either order
    d = designs.from_splitter(ms.KFold(5), X)
    five = designs.five_by_two(N, seed=0)
    for parts in ((d, five), (five, d)):
        out = designs.combine(*parts)
        assert out.sizes["split"] == 15
        np.testing.assert_array_equal(out["n_test"].values, out["test"].sum("example").values)
        assert out["n_test"].dtype == np.int64
        cube = cvstats.from_arrays(RNG.random((15, N, 2)), design=out, models=["a", "b"])
        cvstats.validate(cube)
        for block in ("main", "5x2"):  # each block's methods run as on its own design
            assert (cube["block"] == block).sum() > 0
    diff = cvstats.pairwise(
        cvstats.from_arrays(RNG.random((15, N, 2)), design=out, models=["a", "b"])
    )
    cvstats.kfold_t(diff)
    cvstats.dietterich_5x2cv(diff)


def test_combine_after_dropping_n_test():
    d = designs.from_splitter(ms.KFold(5), X).drop_vars("n_test")
    out = designs.combine(d, designs.five_by_two(N, seed=0))
    assert out.sizes["split"] == 15 and "n_test" not in out.coords


def test_combine_refuses_a_stated_n_test_that_contradicts_the_masks():
    d = designs.from_splitter(ms.KFold(5), X)
    wrong = d.assign_coords(n_test=("split", d["n_test"].values + 1))
    with pytest.raises(DesignError, match=r"design 0 states `n_test` = 9 for split 0.*holds 8"):
        designs.combine(wrong, designs.five_by_two(N, seed=0))


def test_combine_refuses_another_coordinate_only_one_design_has():
    d = designs.from_splitter(ms.KFold(5), X).assign_coords(weight=("split", np.ones(5)))
    with pytest.raises(
        DesignError, match=r"design 1 lacks the split coordinate\(s\) \['weight'\]"
    ):
        designs.combine(d, designs.five_by_two(N, seed=0))


def test_combine_keeps_nested_training_sets():
    ts = designs.from_splitter(ms.TimeSeriesSplit(3), X)
    five = designs.select_blocks(designs.five_by_two(N, seed=0), ["5x2"])
    out = designs.combine(ts, five)
    assert out.attrs["nested_train"] == 1
    assert designs.combine(designs.from_splitter(ms.KFold(5), X), five).attrs["nested_train"] == 0
    assert "nested_train" not in designs.combine(designs.kfold(N, 5, seed=0), five).attrs
    sliding = designs.from_splitter(ms.TimeSeriesSplit(3, max_train_size=6), X)
    out_sliding = designs.combine(sliding, five).attrs
    assert (out_sliding["nested_train"], out_sliding["time_ordered"]) == (0, 1)
    cube = cvstats.from_arrays(RNG.random((13, N, 2)), design=out, models=["a", "b"])
    with pytest.raises(DesignError, match="training sets are nested"):
        cvstats.dietterich_5x2cv(cube)
