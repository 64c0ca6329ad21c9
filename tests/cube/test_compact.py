"""The compact form (cvstats.cube.compact): lossless, validated, accepted by the methods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cvstats
from cvstats import designs
from cvstats.cube.compact import (
    EXAMPLE_INDEX,
    SLOT,
    compact_cube,
    from_compact,
    is_compact,
    open_compact,
    save_compact,
    to_compact,
)
from cvstats.errors import CubeError
from cvstats.studies import METHOD_NAMES

FIELDS = ("estimate", "stderr", "statistic", "df", "pvalue")
#: the resampling method functions: every method of docs/theory.md §4 (the studies' list) but
#: the hold-out t and the t4/t5 variants (options of dietterich_5x2cv, not functions)
METHODS = [
    m for m in METHOD_NAMES if m not in ("holdout_t", "dietterich_5x2cv_t4", "dietterich_5x2cv_t5")
]


def _cube(design, n_datasets=0, *, seed=0, dtype=float, per_dataset=False, **kwargs):
    rng = np.random.default_rng(seed)
    S, n = design.sizes["split"], design.sizes["example"]
    shape = (n_datasets, S, n, 2) if n_datasets else (S, n, 2)
    losses = rng.random(shape).astype(dtype)
    extra = ["dataset"] if n_datasets else []
    if per_dataset:  # each dataset its own test sets: shift the design's masks per dataset
        mask = np.stack([np.roll(design["test"].values, k, axis=-1) for k in range(n_datasets)])
        design = design.drop_vars(["train", "test"]).assign(
            train=(("split", "example"), np.zeros((S, n), bool)),
            test=(("split", "example"), np.zeros((S, n), bool)),
        )
        return cvstats.from_arrays(
            losses,
            mask,
            models=["a", "b"],
            extra_dims=extra,
            n_train=design["n_train"].values,
            splits={
                c: design[c].values
                for c in ("block", "half", "side", "replicate", "repeat", "fold")
            },
            attrs=dict(design.attrs),
            **kwargs,
        )
    return cvstats.from_arrays(
        losses, design=design, models=["a", "b"], extra_dims=extra, **kwargs
    )


@pytest.fixture(scope="module")
def nb():
    return _cube(designs.nadeau_bengio(60, n_test=6, J=5, M=3, R=3, seed=0), 3)


# --------------------------------------------------------------------------
# round trip
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: _cube(designs.nadeau_bengio(60, n_test=6, J=5, M=3, R=3, seed=0)),
        lambda: _cube(designs.nadeau_bengio(60, n_test=6, J=5, M=3, R=3, seed=0), 3),
        lambda: _cube(designs.resampled(30, 5, J=4, seed=1), 3, per_dataset=True),
        lambda: _cube(designs.kfold(42, 4, repeats=2, seed=0), 2),  # unequal folds: padded
        lambda: _cube(designs.resampled(20, 4, J=3, seed=2), dtype=np.float32),
        lambda: _cube(
            designs.resampled(20, 4, J=3, seed=2), examples=[f"x{i}" for i in range(20)]
        ),
        lambda: cvstats.pairwise(_cube(designs.conservative_z(40, 4, J=3, M=2, seed=0), 2)),
    ],
    ids=[
        "nb",
        "nb-datasets",
        "per-dataset-masks",
        "kfold-unequal",
        "float32",
        "str-labels",
        "contrast",
    ],
)
def test_round_trip_identical(make):
    cube = make()
    compact = to_compact(cube)
    assert is_compact(compact) and is_compact(compact_cube(compact))
    cc = compact_cube(compact)
    assert cc.dims[-3:] == ("split", SLOT, cube.dims[-1])
    cvstats.validate(cc)
    back = from_compact(compact)
    xr.testing.assert_identical(back, cube)
    assert back.dtype == cube.dtype
    np.testing.assert_array_equal(back.isnull().values, cube.isnull().values)


def test_kfold_padding_documented():
    """Folds of 11 and 10 examples: 11 slots, the 10-example folds padded with one NaN."""
    cc = compact_cube(to_compact(_cube(designs.kfold(42, 4, seed=0))))
    assert cc.sizes[SLOT] == 11
    n_test = (cc[EXAMPLE_INDEX] >= 0).sum(SLOT).values
    assert sorted(n_test.tolist()) == [10, 10, 11, 11]
    assert int(cc.isnull().any("model").sum()) == 2


def test_compact_cube_alone_expands_with_default_labels(nb):
    back = from_compact(compact_cube(to_compact(nb)))
    xr.testing.assert_identical(back, nb.drop_vars("in_train"))


@settings(
    max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    n=st.integers(8, 40),
    frac=st.floats(0.1, 0.45),
    J=st.integers(1, 4),
    kind=st.sampled_from(["resampled", "kfold", "conservative_z", "bootstrap", "holdout"]),
    n_datasets=st.integers(0, 2),
    seed=st.integers(0, 2**16),
)
def test_round_trip_property(n, frac, J, kind, n_datasets, seed):
    n_test = max(1, int(frac * n))
    if kind == "resampled":
        d = designs.resampled(n, n_test, J=J, seed=seed)
    elif kind == "kfold":
        d = designs.kfold(n, min(J + 1, n), seed=seed)
    elif kind == "conservative_z":
        d = designs.conservative_z(n, max(1, min(n_test, n // 2 - 1)), J=J, M=2, seed=seed)
    elif kind == "bootstrap":
        d = designs.bootstrap(n, n_test, J=J, R=2, seed=seed)
    else:
        d = designs.holdout(n, n_test, seed=seed)
    cube = _cube(d, n_datasets, seed=seed)
    xr.testing.assert_identical(from_compact(to_compact(cube)), cube)


# --------------------------------------------------------------------------
# the methods accept it
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", METHODS)
def test_methods_equal_on_compact(nb, name):
    dense = getattr(cvstats, name)(nb)
    compact = getattr(cvstats, name)(compact_cube(to_compact(nb)))
    for field in FIELDS:
        np.testing.assert_allclose(
            np.asarray(getattr(compact, field)), np.asarray(getattr(dense, field)), rtol=1e-12
        )
    assert compact.n1 == dense.n1 and compact.n2 == dense.n2


@pytest.mark.parametrize("name", ["kfold_t", "corrected_repeated_kfold_t"])
def test_kfold_methods_on_compact(name):
    cube = _cube(designs.kfold(42, 4, repeats=1 if name == "kfold_t" else 2, seed=0), 2)
    dense = getattr(cvstats, name)(cube)
    compact = getattr(cvstats, name)(compact_cube(to_compact(cube)))
    for field in FIELDS:
        np.testing.assert_allclose(
            np.asarray(getattr(compact, field)), np.asarray(getattr(dense, field)), rtol=1e-12
        )


def test_compare_on_compact_dataset(nb):
    """compare takes the compact Dataset (the formula names its variable) or its cube."""
    want = cvstats.compare("loss ~ model", nb).to_frame()
    for data in (to_compact(nb), compact_cube(to_compact(nb))):
        got = cvstats.compare("loss ~ model", data).to_frame()
        pd.testing.assert_frame_equal(got, want, rtol=1e-12)


def test_fits_on_compact(nb):
    cc = compact_cube(to_compact(nb))
    xr.testing.assert_allclose(
        cvstats.fit_rho(cc).dataset, cvstats.fit_rho(nb).dataset, rtol=1e-12
    )
    xr.testing.assert_allclose(cvstats.fit_r(cc).dataset, cvstats.fit_r(nb).dataset, rtol=1e-12)


def test_per_example_functions_need_the_dense_cube():
    cube = _cube(designs.kfold(40, 4, seed=0), 3)
    cc = compact_cube(to_compact(cube))
    with pytest.raises(CubeError, match="needs the dense cube.*from_compact"):
        cvstats.kfold_statistics(cc)
    st_dense = cvstats.kfold_statistics(cube)
    dense_again = cvstats.kfold_statistics(from_compact(to_compact(cube)))
    xr.testing.assert_allclose(dense_again.dataset, st_dense.dataset)


def test_compact_is_smaller(nb):
    no_5x2 = designs.select_blocks(
        designs.nadeau_bengio(200, n_test=20, J=5, M=3, R=3, seed=0), exclude=["5x2"]
    )
    cube = _cube(no_5x2, 2)
    compact = to_compact(cube)
    assert compact.nbytes < cube.nbytes / 4
    assert compact_cube(compact).sizes[SLOT] == 20


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------


def _with(cc, values=None, index=None):
    out = cc.copy(deep=True)
    if values is not None:
        out = out.copy(data=values)
    if index is not None:
        out = out.assign_coords({EXAMPLE_INDEX: (out[EXAMPLE_INDEX].dims, index)})
    return out


def test_validate_compact_errors(nb):
    cc = compact_cube(to_compact(nb))
    cvstats.validate(cc)
    idx = cc[EXAMPLE_INDEX].values

    bad = idx.copy()
    bad[0, 0, 1] = bad[0, 0, 0]
    with pytest.raises(CubeError, match="repeated or unsorted"):
        cvstats.validate(_with(cc, index=bad))
    bad = idx.copy()
    bad[0, 0, 0] = 10_000
    with pytest.raises(CubeError, match="n_examples"):
        cvstats.validate(_with(cc, index=bad))
    values = cc.values.copy()
    values[0, 0, 0, 1] = np.nan
    with pytest.raises(CubeError, match="NaN exactly on the padding"):
        cvstats.validate(_with(cc, values=values))
    values = cc.values.copy()
    values[0, 0, 0, 0] = np.inf
    with pytest.raises(CubeError, match="infinite"):
        cvstats.validate(_with(cc, values=values))
    with pytest.raises(CubeError, match="example_index"):
        cvstats.validate(cc.drop_vars(EXAMPLE_INDEX))
    # a half-split whose two sides share an example
    half = np.flatnonzero((nb["block"].values == "half") & (nb["half"].values == 0))
    s0 = half[nb["side"].values[half] == 0][0]
    s1 = half[nb["side"].values[half] == 1][0]
    bad = idx.copy()
    bad[0, s1] = bad[0, s0]
    with pytest.raises(CubeError, match="disjoint"):
        cvstats.validate(_with(cc, index=bad))
    # a main-block split with one test example fewer (padding at its end)
    bad, values = idx.copy(), cc.values.copy()
    n2 = int((idx[0, 0] >= 0).sum())
    bad[:, 0, n2 - 1] = -1
    values[:, 0, n2 - 1] = np.nan
    with pytest.raises(CubeError, match="different test sizes"):
        cvstats.validate(_with(cc, values=values, index=bad))
    bad = idx.copy()
    bad[0, 0, 0] = -1
    values = cc.values.copy()
    values[0, 0, 0] = np.nan
    with pytest.raises(CubeError, match="padding slot"):
        cvstats.validate(_with(cc, values=values, index=bad))


def test_validate_compact_kfold_cover():
    cube = _cube(designs.kfold(40, 4, seed=0))
    cc = compact_cube(to_compact(cube))
    idx = cc[EXAMPLE_INDEX].values.copy()
    idx[1] = idx[0]  # fold 1 tests fold 0's examples again
    with pytest.raises(CubeError, match="exactly once per repeat"):
        cvstats.validate(_with(cc, index=np.sort(idx, axis=-1)))


def test_to_compact_refuses_compact(nb):
    with pytest.raises(CubeError, match="compact already"):
        to_compact(compact_cube(to_compact(nb)))
    with pytest.raises(CubeError, match="not a compact Dataset"):
        compact_cube(nb.to_dataset())


# --------------------------------------------------------------------------
# storage
# --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_save_open_compact(nb, tmp_path, suffix):
    compact = to_compact(nb)
    path = save_compact(compact, tmp_path / f"c{suffix}")
    back = open_compact(path)
    xr.testing.assert_identical(from_compact(back), nb)
    lazy = open_compact(path, chunks={"dataset": 1})
    cc = compact_cube(lazy)
    assert cc.chunks is not None
    res = cvstats.corrected_resampled_t(cc)
    np.testing.assert_allclose(
        res.statistic.values, cvstats.corrected_resampled_t(nb).statistic, rtol=1e-12
    )
    lazy.close()
    with pytest.raises(cvstats.StorageError, match="already exists"):
        save_compact(compact, path)


def test_holdout_methods_accept_the_compact_form():
    d = designs.holdout(200, 60, seed=0)
    rng = np.random.default_rng(0)
    losses = (rng.random((3, 1, 200, 2)) < [0.2, 0.3]).astype(float)
    cube = cvstats.from_arrays(
        losses, design=d, models=["a", "b"], name="zero_one", extra_dims=["dataset"]
    )
    compact = cvstats.to_compact(cube)["zero_one"]
    assert "slot" in compact.dims
    for method in (
        lambda c: cvstats.holdout_t(c, mu0=0.2),
        lambda c: cvstats.mcnemar(c, variant="exact"),
        lambda c: cvstats.mcnemar(c, variant="z"),
    ):
        dense, small = method(cube), method(compact)
        for field in ("estimate", "stderr", "statistic", "pvalue"):
            np.testing.assert_array_equal(getattr(small, field), getattr(dense, field))
        assert small.n2 == dense.n2 == 60


# --------------------------------------------------------------------------
# unequal test sizes, stated by `n_test` (as the dense form accepts them)
# --------------------------------------------------------------------------


def _unequal_cube(n_datasets=0):
    """Main, replicate and half blocks whose splits differ in test size, stated by n_test."""
    n, rng = 60, np.random.default_rng(0)
    rows = []  # (block, half, side, replicate, test indices, training indices)

    def draw(pool, size, block, half=-1, side=-1, replicate=-1):
        perm = rng.permutation(pool)
        rows.append((block, half, side, replicate, perm[:size], perm[size:]))

    for size in (10, 12, 9, 11):
        draw(np.arange(n), size, "main")
    for r in range(3):
        for size in (11, 10, 12, 9):
            draw(np.arange(n), size, "replicate", replicate=r)
    for m in range(3):
        perm = rng.permutation(n)
        for side, pool in enumerate((perm[: n // 2], perm[n // 2 :])):
            for size in (6, 7, 5, 6):
                draw(pool, size, "half", half=m, side=side)
    mask = np.zeros((len(rows), n), dtype=bool)
    for j, row in enumerate(rows):
        mask[j, row[4]] = True
    shape = (len(rows), n, 2) if not n_datasets else (n_datasets, len(rows), n, 2)
    cols = ("block", "half", "side", "replicate")
    return cvstats.from_arrays(
        np.random.default_rng(1).random(shape),
        mask,
        models=["a", "b"],
        extra_dims=("dataset",) if n_datasets else (),
        splits={
            **{c: np.array([r[i] for r in rows]) for i, c in enumerate(cols)},
            "n_train": np.array([len(r[5]) for r in rows]),
        },
        attrs={"design": "user", "n": n, "seed": -1},
    )


def _odd_five_by_two():
    """mlxtend's 5x2 halves on an odd n: the halves test 30 and 31 examples."""
    n, rng = 61, np.random.default_rng(2)
    rows = []
    for m in range(5):
        perm = rng.permutation(n)
        d1, d2 = perm[: n // 2], perm[n // 2 :]
        rows += [(m, 0, d2, d1), (m, 1, d1, d2)]
    mask = np.zeros((10, n), dtype=bool)
    for j, row in enumerate(rows):
        mask[j, row[2]] = True
    return cvstats.from_arrays(
        np.random.default_rng(3).random((10, n, 2)),
        mask,
        models=["a", "b"],
        splits={
            "block": np.array(["5x2"] * 10),
            "half": np.array([r[0] for r in rows]),
            "side": np.array([r[1] for r in rows]),
            "n_train": np.array([len(r[3]) for r in rows]),
        },
        attrs={"design": "user", "n": n, "seed": -1},
    )


UNEQUAL = {
    "main-replicate-half": lambda: _unequal_cube(),
    "main-replicate-half-datasets": lambda: _unequal_cube(3),
    "5x2-odd-n": _odd_five_by_two,
    "contrast": lambda: cvstats.pairwise(_unequal_cube()),
}


def _run_every_method(cube):
    """Every registered method the cube's design supports; sizes stated where one is needed."""
    from cvstats.inference.registry import METHODS as SPECS
    from cvstats.inference.registry import design_kinds

    out = {}
    for name, spec in SPECS.items():
        if spec.design not in design_kinds(cube) or spec.zero_one or spec.needs == "examples":
            continue
        kwargs = dict(spec.fixed)
        if spec.cube_refusal(cube) is not None:  # one n1 and one n2: state them
            kwargs.update({"rho": 0.2} if "rho" in spec.options else {"n1": 30, "n2": 9})
        out[name] = spec.func(cube, **kwargs).to_frame()
    return out


@pytest.mark.parametrize("name", list(UNEQUAL))
def test_unequal_sizes_round_trip_and_identical_results(name, tmp_path):
    cube = UNEQUAL[name]()
    assert "n_test" in cube.coords
    compact = to_compact(cube)
    cc = compact_cube(compact)
    assert cc.sizes[SLOT] == int(cube["n_test"].max())  # the shorter splits padded
    cvstats.validate(cc)
    xr.testing.assert_identical(from_compact(compact), cube)
    dense_results, compact_results = _run_every_method(cube), _run_every_method(cc)
    assert dense_results and list(dense_results) == list(compact_results)
    for method, frame in dense_results.items():
        pd.testing.assert_frame_equal(compact_results[method], frame, obj=method)
    back = open_compact(save_compact(compact, tmp_path / "unequal.nc"))
    xr.testing.assert_identical(from_compact(back), cube)


def test_unequal_sizes_without_n_test_are_refused_in_compact_form_too():
    cc = compact_cube(to_compact(_unequal_cube()))
    with pytest.raises(CubeError, match="does not state its test sizes.*n_test"):
        cvstats.validate(cc.drop_vars("n_test"))
    with pytest.raises(CubeError, match="does not state its test sizes"):
        cvstats.validate(from_compact(to_compact(_unequal_cube())).drop_vars("n_test"))


def test_compact_slots_must_match_the_stated_sizes():
    cube = _unequal_cube(2)
    cc = compact_cube(to_compact(cube))
    idx, values = cc[EXAMPLE_INDEX].values.copy(), cc.values.copy()
    n2 = int(cube["n_test"].values[0])
    idx[1, 0, n2 - 1] = -1  # dataset 1 lost a test loss of split 0
    values[1, 0, n2 - 1] = np.nan
    with pytest.raises(CubeError, match=r"split 0 tests 9 example\(s\).*states 10"):
        cvstats.validate(_with(cc, values=values, index=idx))
    with pytest.raises(CubeError, match="`n_test` must lie on the `split` dim|must hold ints"):
        cvstats.validate(cc.assign_coords(n_test=cc["n_test"].astype(float)))


def test_compact_half_splits_fit_in_a_half_split_by_split():
    cube = _unequal_cube()
    half = np.flatnonzero(cube["block"].values == "half")
    n_train = cube["n_train"].values.copy()
    n_train[half[1]] = 30 - int(cube["n_test"].values[half[1]]) + 1  # one split too large
    cc = compact_cube(to_compact(cube)).assign_coords(n_train=("split", n_train))
    with pytest.raises(CubeError, match=r"above floor\(n/2\) = 30"):
        cvstats.validate(cc)


def test_compact_nested_block_is_checked_as_the_dense_one():
    d = designs.nested_cv(30, 4, seed=0)
    cube = cvstats.from_arrays(
        np.random.default_rng(0).random((d.sizes["split"], 30, 2)), design=d, models=["a", "b"]
    )
    cc = compact_cube(to_compact(cube))
    cvstats.validate(cc)
    nested = np.flatnonzero(cube["block"].values == "nested")
    main = np.flatnonzero(cube["block"].values == "main")
    idx, values = cc[EXAMPLE_INDEX].values.copy(), cc.values.copy()
    # the first nested split tests fold 0 and half of another fold only
    size = int((idx[main[0]] >= 0).sum())
    idx[nested[0]] = -1
    values[nested[0]] = np.nan
    idx[nested[0], :size] = idx[main[0], :size]
    values[nested[0], :size] = 0.5
    cc = _with(cc, values=values, index=idx).assign_coords(n_test=("split", (idx >= 0).sum(-1)))
    with pytest.raises(CubeError, match="must test exactly two whole folds"):
        cvstats.validate(cc)
