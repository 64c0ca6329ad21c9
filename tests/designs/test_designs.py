import numpy as np
import pytest
import xarray as xr

from cvstats import DesignError, designs
from cvstats.cube.schema import SPLIT_COORDS


def _idx(mask_row):
    return set(np.flatnonzero(mask_row).tolist())


def _common_checks(d: xr.Dataset, n: int) -> None:
    assert set(d.dims) == {"split", "example"}
    assert d.train.dtype == bool and d.test.dtype == bool
    assert d.sizes["example"] == n and d.attrs["n"] == n
    for c in SPLIT_COORDS:
        assert d[c].dims == ("split",)
    # train and test never meet, n_train counts the training set
    assert not (d.train & d.test).any()
    np.testing.assert_array_equal(d.train.sum("example"), d.n_train)
    np.testing.assert_array_equal(d.split, np.arange(d.sizes["split"]))


def test_holdout_sizes_and_reproducible():
    d = designs.holdout(50, 10, seed=3)
    _common_checks(d, 50)
    assert d.sizes["split"] == 1
    assert int(d.test.sum()) == 10 and int(d.train.sum()) == 40
    assert d.block.values.tolist() == ["main"]
    assert d.identical(designs.holdout(50, 10, seed=3))
    assert not d.identical(designs.holdout(50, 10, seed=4))


def test_resampled_sizes_random_and_independent():
    n, n2, J = 40, 8, 12
    d = designs.resampled(n, n2, J, seed=0)
    _common_checks(d, n)
    np.testing.assert_array_equal(d.test.sum("example"), n2)
    np.testing.assert_array_equal(d.n_train, n - n2)
    # every example is train or test in every split when n_train = n - n_test
    assert (d.train | d.test).all()
    # splits differ from each other
    rows = {tuple(np.flatnonzero(r)) for r in d.test.values}
    assert len(rows) == J


def test_resampled_uniform_test_membership():
    # each example is in the test set with probability n2/n: check the frequency
    d = designs.resampled(20, 5, J=4000, seed=1)
    freq = d.test.mean("split").values
    np.testing.assert_allclose(freq, 5 / 20, atol=4 * np.sqrt(0.25 * 0.75 / 4000))


def test_reduced_dataset_uses_first_examples_only():
    # docs/theory.md §6: (n/2, n/10) configuration cuts the data once to 0.6 n
    n = 100
    d = designs.resampled(n, 10, J=30, n_train=50, seed=0)
    used = (d.train | d.test).any("split").values
    assert used[:60].all() and not used[60:].any()
    np.testing.assert_array_equal(d.n_train, 50)


def test_seed_none_is_recorded_and_reproduces():
    d = designs.resampled(30, 5, J=3)
    again = designs.resampled(30, 5, J=3, seed=d.attrs["seed"])
    assert d.identical(again)


def test_kfold_partitions_every_repeat():
    n, K, r = 23, 5, 3
    d = designs.kfold(n, K, repeats=r, seed=2)
    _common_checks(d, n)
    assert d.sizes["split"] == K * r
    per_repeat = d.test.groupby("repeat").sum("split")
    assert (per_repeat == 1).all()  # every example exactly once per repeat
    sizes = d.test.sum("example").values
    assert set(sizes.tolist()) <= {n // K, n // K + 1}
    np.testing.assert_array_equal(d.n_train, n - sizes)
    assert (d.train == ~d.test).all()
    assert d.fold.values.tolist() == list(range(K)) * r
    assert d.repeat.values.tolist() == sorted(list(range(r)) * K)
    # repeats are different partitions
    assert not np.array_equal(d.test.values[:K], d.test.values[K : 2 * K])


def test_stratified_kfold_keeps_class_proportions():
    y = np.repeat([0, 1, 2], [30, 20, 10])
    d = designs.kfold(60, 5, stratify=y, seed=0)
    for row in d.test.values:
        counts = np.bincount(y[row], minlength=3)
        np.testing.assert_array_equal(counts, [6, 4, 2])
    assert (d.test.sum("split") == 1).all()


def test_stratified_resampled_keeps_class_proportions():
    y = np.repeat([0, 1], [80, 20])
    d = designs.resampled(100, 10, J=20, stratify=y, seed=0)
    for row in d.test.values:
        np.testing.assert_array_equal(np.bincount(y[row], minlength=2), [8, 2])


def test_stratified_kfold_too_rare_class():
    y = np.array([0] * 10 + [1] * 2)
    with pytest.raises(DesignError, match="rarest class has 2"):
        designs.kfold(12, 5, stratify=y, seed=0)


def test_five_by_two_halves():
    n = 21  # odd: one example left out of each replication
    d = designs.five_by_two(n, seed=0)
    _common_checks(d, n)
    assert d.sizes["split"] == 10
    assert (d.block == "5x2").all()
    assert d.half.values.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert d.side.values.tolist() == [0, 1] * 5
    for m in range(5):
        a = d.isel(split=2 * m)
        b = d.isel(split=2 * m + 1)
        # side 1 is the reverse of side 0
        assert (a.train == b.test).all() and (a.test == b.train).all()
        assert int(a.train.sum()) == int(a.test.sum()) == n // 2
        assert int((a.train | a.test).sum()) == n - 1


def test_conservative_z_structure():
    n, n2, J, M = 101, 10, 4, 3
    d = designs.conservative_z(n, n2, J=J, M=M, seed=5)
    _common_checks(d, n)
    main = d.isel(split=(d.block == "main").values)
    half = d.isel(split=(d.block == "half").values)
    assert main.sizes["split"] == J and half.sizes["split"] == 2 * M * J
    np.testing.assert_array_equal(main.n_train, n - n2)
    h = n // 2
    np.testing.assert_array_equal(half.n_train, h - n2)
    np.testing.assert_array_equal(half.test.sum("example"), n2)
    for m in range(M):
        sides = []
        for s in (0, 1):
            g = half.isel(split=((half.half == m) & (half.side == s)).values)
            assert g.sizes["split"] == J
            used = (g.train | g.test).any("split").values
            assert used.sum() == h  # all J inner splits live inside one half of size floor(n/2)
            # each inner split uses the whole half
            np.testing.assert_array_equal((g.train | g.test).sum("example"), h)
            sides.append(used)
        assert not (sides[0] & sides[1]).any()  # halves are disjoint
        assert (sides[0] | sides[1]).sum() == 2 * h  # odd n: exactly one example left out


def test_conservative_z_rejects_large_test_size():
    with pytest.raises(DesignError, match=r"n_test` = 50 must be < 50"):
        designs.conservative_z(100, 50)


def test_bootstrap_structure():
    d = designs.bootstrap(60, 6, J=5, R=4, seed=0)
    _common_checks(d, 60)
    rep = d.isel(split=(d.block == "replicate").values)
    assert rep.sizes["split"] == 20
    assert rep.replicate.values.tolist() == sorted(list(range(4)) * 5)
    np.testing.assert_array_equal(rep.test.sum("example"), 6)
    with pytest.raises(DesignError, match="`R` must be at least 2"):
        designs.bootstrap(60, 6, R=1)


def test_nadeau_bengio_has_every_block_and_cost():
    J, M, R = 3, 2, 2
    d = designs.nadeau_bengio(80, 8, J=J, M=M, R=R, seed=0)
    _common_checks(d, 80)
    counts = {b: int((d.block == b).sum()) for b in ("main", "half", "replicate", "5x2")}
    assert counts == {"main": J, "half": 2 * M * J, "replicate": R * J, "5x2": 10}
    assert d.sizes["split"] == J * (1 + 2 * M) + R * J + 10
    assert d.attrs == {
        "design": "nadeau_bengio",
        "n": 80,
        "seed": 0,
        "n_test": 8,
        "J": J,
        "M": M,
        "R": R,
    }


def test_stratified_nadeau_bengio():
    y = np.repeat([0, 1], [60, 40])
    d = designs.nadeau_bengio(100, 10, J=2, M=2, R=2, stratify=y, seed=0)
    _common_checks(d, 100)
    main = d.isel(split=(d.block == "main").values)
    for row in main.test.values:
        np.testing.assert_array_equal(np.bincount(y[row]), [6, 4])


def test_combine_and_select_blocks():
    a = designs.resampled(40, 4, J=3, seed=0)
    b = designs.conservative_z(40, 4, J=2, M=2, seed=1)
    with pytest.raises(DesignError, match="block 'main' comes from design 0 and design 1"):
        designs.combine(a, b)
    c = designs.combine(a, designs.select_blocks(b, exclude=["main"]))
    _common_checks(c, 40)
    assert c.sizes["split"] == 3 + 8
    assert c.attrs["seed"] == -1 and c.attrs["component_seeds"] == [0, 1]
    with pytest.raises(DesignError, match="over n = 50"):
        designs.combine(a, designs.five_by_two(50, seed=0))
    with pytest.raises(DesignError, match="unknown block 'halves'"):
        designs.select_blocks(b, ["halves"])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: designs.resampled(10, 10), r"n_test` = 10 leaves no training"),
        (lambda: designs.resampled(10, 0.2), r"`n_test` must be an int.*round\(f \* n\)"),
        (lambda: designs.resampled(10, 2, J=0), r"`J` must be at least 1"),
        (lambda: designs.resampled(10, 2, n_train=9), r"exceeds the n = 10"),
        (lambda: designs.kfold(5, 6), r"`K` = 6 folds"),
        (lambda: designs.kfold(5, 1), r"`K` must be at least 2"),
        (lambda: designs.holdout(10, 2, seed=-1), r"`seed` must be at least 0"),
        (lambda: designs.holdout(10, 2, stratify=[0, 1]), r"`stratify` must hold one class"),
        (lambda: designs.holdout(True, 2), r"`n` must be an int"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(DesignError, match=match):
        call()


def test_from_folds_equals_kfold_and_validates():
    from cvstats.errors import DesignError

    d = designs.kfold(12, 3, repeats=2, seed=5)
    fold_of = d.fold.values.reshape(2, 3)[:, :, None] * d.test.values.reshape(2, 3, 12)
    fold_of = fold_of.sum(axis=1)
    got = designs.from_folds(fold_of, seed=5)
    xr.testing.assert_identical(got, d)
    one = designs.from_folds(np.array([0, 1, 1, 0]))
    assert one.sizes["split"] == 2 and one.attrs["repeats"] == 1
    with pytest.raises(DesignError, match="no example in fold 1"):
        designs.from_folds([[0, 2, 2, 0]])
    with pytest.raises(DesignError, match="single fold"):
        designs.from_folds([0, 0, 0])
    with pytest.raises(DesignError, match="integer fold labels"):
        designs.from_folds([0.0, 1.0])
    with pytest.raises(DesignError, match="negative"):
        designs.from_folds([-1, 0, 1])
