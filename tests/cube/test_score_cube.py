"""The score cube (``cvstats.cube.score``): one value per split and model.

Validation (one test per rule, each matching its message), the dispatch of
:func:`cvstats.validate`, the construction routes of :func:`from_scores` (array
with a design or explicit sizes, tidy table), :func:`scores_from_losses`, the
save/open round trip (netCDF and zarr, eager and lazy) and formulas and
pairwise differences on score cubes.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import cvstats
from cvstats import ArgumentError, CubeError, CvstatsWarning, FormulaError, StorageError, designs
from cvstats.cube import (
    from_scores,
    in_test,
    is_greater_better,
    is_score,
    scores_from_losses,
    validate,
    validate_score,
)
from cvstats.cube.compact import to_compact
from cvstats.cube.formula import contrast_matrix, contrasts, pairwise
from cvstats.studies import METHOD_NAMES

N = 40


def loss_cube(design: xr.Dataset, n_models: int = 2, seed: int = 0) -> xr.DataArray:
    rng = np.random.default_rng(seed)
    losses = rng.gamma(2.0, 1.0, size=(design.sizes["split"], design.sizes["example"], n_models))
    return cvstats.from_arrays(losses, design=design, models=list("abc")[:n_models])


def kfold_scores() -> xr.DataArray:
    d = designs.kfold(30, K=3, seed=0)
    auc = np.array([[0.81, 0.78], [0.85, 0.80], [0.79, 0.79]])
    return from_scores(auc, design=d, models=["a", "b"], name="roc_auc", greater_is_better=True)


def nb_scores() -> xr.DataArray:
    """A score cube of every block but nested (main, half, replicate, 5x2)."""
    return scores_from_losses(loss_cube(designs.nadeau_bengio(N, 4, J=3, M=2, R=2, seed=0)))


def block_splits(cube: xr.DataArray, block: str) -> np.ndarray:
    return np.asarray(cube["block"].values) == block


def with_coord(cube: xr.DataArray, name: str, where: np.ndarray, value) -> xr.DataArray:
    values = np.asarray(cube[name].values).copy()
    values[where] = value
    return cube.assign_coords({name: ("split", values)})


# ---------------------------------------------------------------------------
# validation: one case per rule
# ---------------------------------------------------------------------------


def _nan(cube: xr.DataArray) -> xr.DataArray:
    out = cube.copy(deep=True)
    out[2, 1] = np.nan
    return out


def _inf(cube: xr.DataArray) -> xr.DataArray:
    out = cube.copy(deep=True)
    out[1, 0] = np.inf
    return out


KFOLD_CASES = {
    "no name": (lambda c: c.rename(None), r"has no name; name it after its metric"),
    "empty name": (lambda c: c.rename(" "), r"the metric name that formulas use"),
    "named like a coordinate": (lambda c: c.rename("fold"), "like one of its coordinates"),
    "dims order": (lambda c: c.transpose("model", "split"), r"must end with \['split', 'model'\]"),
    "missing model dim": (
        lambda c: c.rename(model="learner"),
        r"lacks the dim\(s\) \['model'\].*read as a score cube",
    ),
    "empty dim": (lambda c: c.isel(model=[]), "dim 'model' has length 0"),
    "int dtype": (lambda c: (c * 100).astype(int), "scores must be floating point.*astype"),
    "float16": (lambda c: c.astype(np.float16), "float16 are not supported"),
    "complex": (lambda c: c.astype(complex), "must be real numbers"),
    "duplicate split": (
        lambda c: c.assign_coords(split=[0, 0, 1]),
        "`split` coordinate has duplicated label 0",
    ),
    "float split labels": (
        lambda c: c.assign_coords(split=[0.0, 1.0, 2.0]),
        "`split` coordinate must hold ints",
    ),
    "int model labels": (
        lambda c: c.assign_coords(model=[0, 1]),
        "`model` coordinate must hold model names",
    ),
    "missing n": (lambda c: c.drop_attrs().assign_attrs(design="x", seed=0), r"attr\(s\) \['n'\]"),
    "missing direction": (
        lambda c: (
            c.assign_attrs(greater_is_better=None)
            .drop_attrs()
            .assign_attrs(design="kfold", n=30, seed=0, metric="roc_auc")
        ),
        "lacks the attr `greater_is_better`.*never guessed.*greater_is_better=True",
    ),
    "direction 2": (
        lambda c: c.assign_attrs(greater_is_better=2),
        r"`greater_is_better` must be 1 .* or 0 .* got 2",
    ),
    "direction str": (
        lambda c: c.assign_attrs(greater_is_better="yes"),
        r"`greater_is_better` must be 1 .* got 'yes'",
    ),
    "metric missing": (
        lambda c: c.assign_attrs(metric=""),
        r"attr `metric` must name its metric",
    ),
    "split coordinate missing": (
        lambda c: c.drop_vars("fold"),
        r"lacks the split coordinate\(s\) \['fold'\]",
    ),
    "n_test missing": (
        lambda c: c.drop_vars("n_test"),
        r"lacks the coordinate `n_test`.*from_scores\(\.\.\., n_test=\.\.\.\)",
    ),
    "n_test floats": (
        lambda c: c.assign_coords(n_test=("split", [10.0, 10.0, 10.0])),
        "coordinate `n_test` must hold ints",
    ),
    "n_test not on split": (
        lambda c: c.assign_coords(n_test=10),
        "`n_test` must lie on the `split` dim alone",
    ),
    "n_test zero": (
        lambda c: with_coord(c, "n_test", 1, 0),
        r"split 1 in block 'main' has n_test = 0 < 1",
    ),
    "n_train + n_test > n": (
        lambda c: with_coord(c, "n_test", 2, 11),
        r"split 2 .* n_train \+ n_test = 20 \+ 11 = 31 > n = 30",
    ),
    "fold twice": (
        lambda c: with_coord(c, "fold", 1, 0),
        "split 1 repeats fold 0 of repeat 0 of the k-fold main block",
    ),
    "folds test more than n": (
        lambda c: c.assign_coords(n_train=("split", [5, 5, 5]), n_test=("split", [12, 12, 12])),
        "the folds of a k-fold repeat test 36 examples in all, more than n = 30",
    ),
    "NaN score": (
        _nan,
        r"holds 1 NaN score\(s\) \(first at split 2, model 'b'\).*a split's score must exist",
    ),
    "infinite score": (_inf, r"holds 1 infinite score\(s\) \(first at split 1, model 'a'\)"),
}


@pytest.mark.parametrize("case", list(KFOLD_CASES))
def test_validation_rules_kfold(case):
    mutate, match = KFOLD_CASES[case]
    cube = mutate(kfold_scores())
    with pytest.raises(CubeError, match=match):
        validate_score(cube)
    with pytest.raises(CubeError, match=match):  # the dispatch of cvstats.validate
        validate(cube)


def _half(c):
    sel = block_splits(c, "half")
    return with_coord(c, "half", np.flatnonzero(sel)[0], -1)


def _half_size(c):
    return with_coord(c, "n_test", block_splits(c, "half"), 10)


def _resampled_size(c):
    return with_coord(c, "n_test", np.flatnonzero(block_splits(c, "main"))[1], 3)


def _five_by_two_sides(c):
    sel = block_splits(c, "5x2")
    return with_coord(with_coord(c, "n_train", sel, 10), "n_test", sel, 21)


NB_CASES = {
    "half = -1 in block half": (_half, "in block 'half' has half = -1"),
    "half block over n/2": (_half_size, r"block 'half' has n_train \+ n_test above floor"),
    "5x2 sides over n": (_five_by_two_sides, r"two sides of half-split 0 test 42 > n = 40"),
}


@pytest.mark.parametrize("case", list(NB_CASES))
def test_validation_rules_blocks(case):
    mutate, match = NB_CASES[case]
    with pytest.raises(CubeError, match=match):
        validate(mutate(nb_scores()))


def test_different_n2_in_a_block_is_accepted():
    # a score cube states its test sizes, so the splits of a block may differ in size; the
    # methods whose formula needs one n2 refuse them (tests/inference/test_unequal_sizes.py)
    validate(_resampled_size(nb_scores()))


def test_validation_rules_repeats_and_nested():
    repeated = scores_from_losses(loss_cube(designs.kfold(N, 4, repeats=2, seed=1)))
    last = np.flatnonzero(np.asarray(repeated["repeat"].values) == 1)[0]
    shrunk = with_coord(repeated, "n_test", last, 9)
    with pytest.raises(CubeError, match="repeats of the k-fold main block test different"):
        validate(shrunk)
    nested = scores_from_losses(loss_cube(designs.nested_cv(N, 4, seed=2)))
    validate(nested)
    first = np.flatnonzero(block_splits(nested, "nested"))[0]
    with pytest.raises(CubeError, match="in block 'nested' has n_test = 13, which is not"):
        validate(with_coord(nested, "n_test", first, 13))


def test_not_a_score_cube():
    with pytest.raises(CubeError, match="must be an xarray.DataArray"):
        validate_score(np.ones((3, 2)))
    cube = loss_cube(designs.resampled(N, 4, J=3, seed=0))
    with pytest.raises(CubeError, match="has no `example` or `slot` dim"):
        validate_score(cube)
    # a loss cube whose example dim has another name is read as a score cube: say so
    with pytest.raises(CubeError, match="read as a score cube"):
        validate(cube.rename(example="obs"))


def test_dispatch_and_form():
    scores = kfold_scores()
    loss = loss_cube(designs.kfold(30, K=3, seed=0))
    assert is_score(scores) and not is_score(loss) and not is_score(np.ones(3))
    assert not is_score(to_compact(loss)[loss.name])
    validate(scores)
    validate(loss)
    validate(to_compact(loss)[loss.name])
    validate(scores.chunk({"split": 1}))  # a dask-backed score cube


def test_is_greater_better():
    cube = kfold_scores()
    assert is_greater_better(cube) is True
    assert is_greater_better(cube.assign_attrs(greater_is_better=np.int64(0))) is False
    assert is_greater_better(cube.assign_attrs(greater_is_better=np.True_)) is True
    validate(cube.assign_attrs(greater_is_better=False))
    with pytest.raises(CubeError, match="no attr `greater_is_better`"):
        is_greater_better(cube.drop_attrs())


def test_in_test_refuses_a_score_cube():
    with pytest.raises(CubeError, match="needs per-example losses.*score cube.*cvstats.collect"):
        in_test(kfold_scores())


# ---------------------------------------------------------------------------
# construction
# ---------------------------------------------------------------------------


def test_from_scores_with_design():
    d = designs.nadeau_bengio(N, 4, J=3, M=2, R=2, seed=0)
    values = np.random.default_rng(0).random((d.sizes["split"], 3))
    cube = from_scores(values, design=d, models=["x", "y", "z"], greater_is_better=True)
    assert cube.dims == ("split", "model") and cube.name == "score"
    np.testing.assert_array_equal(cube.values, values)
    np.testing.assert_array_equal(cube["n_test"], d["test"].sum("example"))
    for c in ("block", "half", "side", "replicate", "repeat", "fold", "n_train", "split"):
        np.testing.assert_array_equal(cube[c].values, d[c].values)
    assert cube.attrs["design"] == "nadeau_bengio" and cube.attrs["n"] == N
    assert cube.attrs["greater_is_better"] == 1 and cube.attrs["metric"] == "score"
    assert type(cube.attrs["greater_is_better"]) is int
    with pytest.raises(CubeError, match=r"pass either `design` or \['n_test'\]"):
        from_scores(values, design=d, n_test=4, greater_is_better=True)
    with pytest.raises(CubeError, match="`scores` has 2 splits but the design has"):
        from_scores(values[:2], design=d, greater_is_better=True)


def test_from_scores_explicit_sizes():
    values = np.arange(12.0).reshape(2, 3, 2)  # (dataset, split, model)
    cube = from_scores(
        values,
        n_test=[5, 5, 6],
        n_train=[11, 11, 10],
        extra_dims=["dataset"],
        extra_coords={"dataset": ["iris", "wine"]},
        models=["a", "b"],
        name="mse",
        metric="mean squared error",
        greater_is_better=False,
        splits={"block": ["main"] * 3, "repeat": [0, 0, 0], "fold": [0, 1, 2]},
    )
    assert cube.dims == ("dataset", "split", "model")
    assert cube["n_test"].values.tolist() == [5, 5, 6]
    assert cube.attrs == {
        "design": "user",
        "n": 16,
        "seed": -1,
        "greater_is_better": 0,
        "metric": "mean squared error",
    }
    # random splits (no fold) of one block may differ in size too: a score cube states them
    # (the methods whose formula needs one n2 refuse them: tests/inference/test_unequal_sizes)
    random = from_scores(values[0], n_test=[5, 5, 6], n_train=20, greater_is_better=False)
    assert random["n_test"].values.tolist() == [5, 5, 6]
    assert (random["fold"] == -1).all()
    ints = from_scores(np.array([[1, 0], [0, 1]]), n_test=3, n_train=3, greater_is_better=True)
    assert ints.dtype == np.float64 and ints.attrs["n"] == 6
    lazy = from_scores(
        da.from_array(np.ones((3, 2)), chunks=1), n_test=2, n_train=4, greater_is_better=True
    )
    assert lazy.chunks is not None


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ArgumentError, r"`greater_is_better` is required.*greater_is_better=True"),
        ({"greater_is_better": "yes"}, ArgumentError, "must be True or False"),
        (
            {"greater_is_better": True},
            CubeError,
            r"test-set size of each split is needed.*pass `n_test`",
        ),
        (
            {"greater_is_better": True, "n_test": 3},
            CubeError,
            "training-set size of each split is needed",
        ),
        (
            {"greater_is_better": True, "n_test": 3, "n_train": 4, "models": ["a"]},
            CubeError,
            "`models` must name the 2 models",
        ),
        (
            {"greater_is_better": True, "n_test": [3, 3], "n_train": 4},
            CubeError,
            r"`n_test` must be an int or hold one value per split \(3\)",
        ),
        (
            {"greater_is_better": True, "n_test": 2.5, "n_train": 4},
            CubeError,
            "`n_test` must be an int or one int per split",
        ),
        (
            {"greater_is_better": True, "n_test": 3, "n_train": 4, "extra_dims": ["d"]},
            CubeError,
            r"has 2 dims but 3 are expected",
        ),
    ],
)
def test_from_scores_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        from_scores(np.ones((3, 2)), **kwargs)


def test_from_scores_refuses_bad_values():
    with pytest.raises(CubeError, match=r"NaN score\(s\) \(first at split 1, model 'model0'\)"):
        from_scores(np.array([[1.0], [np.nan]]), n_test=2, n_train=3, greater_is_better=True)
    with pytest.raises(CubeError, match="must be real numbers"):
        from_scores(np.ones((2, 1), dtype=complex), n_test=2, n_train=3, greater_is_better=True)
    with pytest.raises(CubeError, match="must be real numbers"):
        from_scores(np.ones((2, 1), dtype=bool), n_test=2, n_train=3, greater_is_better=True)


def tidy() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "split": [2, 2, 0, 0, 1, 1],
            "model": ["a", "b"] * 3,
            "score": [0.9, 0.8, 0.85, 0.7, 0.8, 0.75],
            "n_test": 10,
            "n_train": 20,
            "fold": [2, 2, 0, 0, 1, 1],
            "repeat": 0,
        }
    )


def test_from_scores_frame():
    cube = from_scores(tidy(), greater_is_better=True, name="accuracy")
    assert cube["split"].values.tolist() == [2, 0, 1]  # order of first appearance
    assert cube.sel(split=0, model="b").item() == 0.7
    assert cube["n_test"].values.tolist() == [10, 10, 10]
    assert cube.attrs["n"] == 30
    # with a design: the splits in the design's order, its coordinates and sizes
    d = designs.kfold(30, K=3, seed=0)
    on_design = from_scores(tidy().drop(columns=["fold"]), design=d, greater_is_better=True)
    assert on_design["split"].values.tolist() == [0, 1, 2]
    assert on_design.sel(split=2, model="a").item() == 0.9
    assert on_design.attrs["design"] == "kfold"
    # extra dims from columns
    two = pd.concat([tidy().assign(dataset="x"), tidy().assign(dataset="y")])
    extra = from_scores(two, extra_dims=["dataset"], greater_is_better=True)
    assert extra.dims == ("dataset", "split", "model")


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda df: df.drop(columns="score"), r"lacks the column\(s\) \['score'\]"),
        (lambda df: df.iloc[:0], "has no rows"),
        (lambda df: df.iloc[1:], r"no row for \{'split': 2, 'model': 'a'\}"),
        (lambda df: pd.concat([df, df.iloc[:1]]), r"more than one score for \{'split': 2"),
        (lambda df: df.assign(score=np.nan), "NaN or infinite scores"),
        (lambda df: df.assign(score="x"), "must hold real numbers"),
        (lambda df: df.assign(split=df["split"] + 0.5), "must hold int split labels"),
        (lambda df: df.assign(n_test=[10, 9, 10, 10, 10, 10]), "'n_test' varies within split 2"),
        (lambda df: df.assign(model=[None, "b"] * 3), "column 'model' has 3 row"),
    ],
)
def test_from_scores_frame_errors(mutate, match):
    with pytest.raises(CubeError, match=match):
        from_scores(mutate(tidy()), greater_is_better=True)


def test_from_scores_frame_against_design():
    d = designs.kfold(30, K=3, seed=0)
    with pytest.raises(CubeError, match="column 'n_test' gives split 0 the value 9"):
        from_scores(tidy().assign(n_test=[10, 10, 9, 9, 10, 10]), design=d, greater_is_better=1)
    with pytest.raises(CubeError, match=r"split\(s\) \[7\] that the design does not have"):
        from_scores(tidy().assign(split=[7, 7, 0, 0, 1, 1]), design=d, greater_is_better=1)
    with pytest.raises(CubeError, match=r"no row for the design's split\(s\) \[2\]"):
        from_scores(tidy().iloc[2:], design=d, greater_is_better=True)
    with pytest.raises(CubeError, match="`models` is for an array"):
        from_scores(tidy(), models=["a", "b"], greater_is_better=True)


# ---------------------------------------------------------------------------
# scores_from_losses
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "design",
    [
        designs.nadeau_bengio(N, 4, J=3, M=2, R=2, seed=0),
        designs.kfold(N + 1, 4, repeats=2, seed=1),  # folds of 10 and 11 examples
        designs.nested_cv(N, 4, seed=2),
        designs.holdout(N, 8, seed=3),
    ],
    ids=["nadeau_bengio", "uneven_kfold", "nested", "holdout"],
)
def test_scores_from_losses(design):
    cube = loss_cube(design, n_models=3)
    scores = scores_from_losses(cube)
    validate(scores)
    np.testing.assert_array_equal(scores.values, cube.mean("example").values)
    np.testing.assert_array_equal(scores["n_test"], cube.isel(model=0).notnull().sum("example"))
    assert scores.name == cube.name and scores.attrs["metric"] == "mean loss"
    assert scores.attrs["greater_is_better"] == 0
    assert {k: v for k, v in scores.attrs.items() if k not in ("metric", "greater_is_better")} == (
        cube.attrs
    )
    assert "in_train" not in scores.coords
    # the compact form gives the same score cube
    compact = to_compact(cube)
    assert scores_from_losses(compact).identical(scores)
    assert scores_from_losses(compact[cube.name]).identical(scores)
    assert scores_from_losses(cube, name="avg").name == "avg"


def test_scores_from_losses_lazy_and_refusals():
    cube = loss_cube(designs.resampled(N, 4, J=4, seed=0))
    lazy = scores_from_losses(cube.chunk({"split": 2}))
    assert lazy.chunks is not None
    xr.testing.assert_identical(lazy.compute(), scores_from_losses(cube))
    with pytest.raises(CubeError, match="is a score cube already"):
        scores_from_losses(scores_from_losses(cube))
    with pytest.raises(CubeError, match="has no name"):
        scores_from_losses(cube.rename(None))


# ---------------------------------------------------------------------------
# storage
# ---------------------------------------------------------------------------


def as_saved(cube: xr.DataArray) -> xr.DataArray:
    return cube.assign_attrs(schema_version=1, cvstats_version=cvstats.__version__)


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
@pytest.mark.parametrize("make", [kfold_scores, nb_scores], ids=["from_scores", "from_losses"])
def test_save_open_round_trip(tmp_path, suffix, make):
    cube = make()
    path = cvstats.save(cube, tmp_path / f"scores{suffix}")
    back = cvstats.open_cube(path)
    xr.testing.assert_identical(back, as_saved(cube))
    assert is_greater_better(back) == is_greater_better(cube)
    for name in ("n_test", "n_train", "split"):
        assert back[name].dtype == np.int64
    lazy = cvstats.open_cube(path, chunks={"split": 2})
    assert lazy.chunks is not None
    xr.testing.assert_identical(lazy.compute(), as_saved(cube))
    lazy.close()


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_save_bool_direction(tmp_path, suffix):
    cube = kfold_scores().assign_attrs(greater_is_better=True)
    back = cvstats.open_cube(cvstats.save(cube, tmp_path / f"s{suffix}"))
    assert back.attrs["greater_is_better"] == 1 and is_greater_better(back) is True
    assert cube.attrs["greater_is_better"] is True  # the cube itself is not modified


def test_save_refuses_and_open_checks_a_broken_score_cube(tmp_path):
    broken = _nan(kfold_scores())
    with pytest.raises(CubeError, match="NaN score"):
        cvstats.save(broken, tmp_path / "bad.nc")
    dataset = broken.to_dataset()
    dataset.attrs = {"schema_version": 1, "cvstats_variable": "roc_auc"}
    dataset.to_netcdf(tmp_path / "bad.nc", engine="h5netcdf")
    with pytest.raises(CubeError, match="breaks the schema: the score cube holds 1 NaN"):
        cvstats.open_cube(tmp_path / "bad.nc")
    dataset = kfold_scores().isel(model=0).to_dataset()  # (split,) alone: no cube
    dataset.attrs = {"schema_version": 1, "cvstats_variable": "roc_auc"}
    dataset.to_netcdf(tmp_path / "one.nc", engine="h5netcdf")
    with pytest.raises(StorageError, match=r"\(\*extra, split, model\) \(a score cube\)"):
        cvstats.open_cube(tmp_path / "one.nc")


# ---------------------------------------------------------------------------
# formulas and pairwise differences
# ---------------------------------------------------------------------------


def test_formula_on_a_score_cube():
    cube = kfold_scores()
    diff = contrasts("roc_auc ~ model", cube)
    assert diff.dims == ("split", "contrast")
    assert diff["contrast"].values.tolist() == ["Intercept", "model[T.b]"]
    np.testing.assert_allclose(diff.sel(contrast="model[T.b]"), cube[:, 1] - cube[:, 0])
    assert diff.attrs["greater_is_better"] == 1 and diff.attrs["metric"] == "roc_auc"
    assert diff.attrs["formula"] == "roc_auc ~ model"
    np.testing.assert_array_equal(diff["n_test"], cube["n_test"])
    validate(diff)
    assert is_score(diff)
    W = contrast_matrix("roc_auc ~ C(model, contr.sum)", cube)
    assert W.dims == ("contrast", "model")
    with pytest.raises(FormulaError, match="'loss' but the cube is named 'roc_auc'"):
        contrasts("loss ~ model", cube)


def test_pairwise_and_compare_on_a_score_cube():
    cube = nb_scores().pipe(lambda c: c.assign_coords(model=["a", "b"]))
    pairs = pairwise(cube)
    assert pairs.dims == ("split", "contrast")
    assert pairs["contrast"].values.tolist() == ["a - b"]
    np.testing.assert_allclose(pairs.sel(contrast="a - b"), cube[:, 0] - cube[:, 1])
    validate(pairs)
    table = cvstats.compare("loss ~ model", cube)
    # every method of docs/theory.md §4 (the studies' list) but the hold-out t
    assert set(table.results) == set(METHOD_NAMES) - {"holdout_t"}
    assert cvstats.compare(pairs).results.keys() == table.results.keys()


# --------------------------------------------------------------------------
# metric ranges: a bounded scikit-learn scorer's values stay in its range
# --------------------------------------------------------------------------


def test_metric_range_of_the_scikit_learn_scorers():
    from sklearn.metrics import get_scorer_names

    from cvstats.cube.score import metric_range

    assert metric_range("roc_auc") == (0.0, 1.0) and metric_range("f1_weighted") == (0.0, 1.0)
    assert metric_range("matthews_corrcoef") == (-1.0, 1.0)
    assert metric_range("r2") == (-np.inf, 1.0)
    assert metric_range("mutual_info_score") == (0.0, np.inf)
    negated = [n for n in get_scorer_names() if n.startswith("neg_")]
    assert negated and all(metric_range(n) == (-np.inf, 0.0) for n in negated)
    assert metric_range("mean zero_one") is None and metric_range("my_metric") is None
    assert metric_range("neg_my_loss") is None  # not a scikit-learn scorer


@pytest.mark.parametrize(
    ("metric", "values", "match"),
    [
        ("roc_auc", [[81.0, 78.0], [85.0, 80.0], [79.0, 79.0]], r"divide them by 100"),
        ("accuracy", [[0.8, -0.1], [0.85, 0.8], [0.79, 0.79]], r"first -0.1 at split 0"),
        ("neg_log_loss", [[0.3, -0.2], [-0.4, -0.5], [-0.3, -0.1]], r"\(-inf, 0\].*negate"),
        ("r2", [[0.8, 1.5], [0.85, 0.8], [0.79, 0.79]], r"\(-inf, 1\]"),
        ("matthews_corrcoef", [[0.8, 0.5], [0.85, -1.2], [0.79, 0.79]], r"\[-1, 1\]"),
    ],
)
def test_scores_outside_the_metric_range_are_refused(metric, values, match):
    d = designs.kfold(30, K=3, seed=0)
    with pytest.raises(CubeError, match=f"metric is '{metric}', a scikit-learn scorer.*{match}"):
        from_scores(np.array(values), design=d, name="s", metric=metric, greater_is_better=True)
    cube = from_scores(
        np.array(values), design=d, name="s", metric="my_metric", greater_is_better=True
    )
    with pytest.raises(CubeError, match="cube.attrs\\['metric'\\]"):
        validate(cube.assign_attrs(metric=metric))


def test_scores_inside_the_range_pass():
    d = designs.kfold(30, K=3, seed=0)
    edges = np.array([[0.0, 1.0], [1.0 + 1e-12, 0.5], [0.2, 0.3]])  # rounding slack
    from_scores(edges, design=d, name="roc_auc", greater_is_better=True)
    from_scores(-np.abs(edges) - 5, design=d, name="r2", greater_is_better=True)
    from_scores(-edges, design=d, name="neg_brier_score", greater_is_better=True)


def test_a_contrast_of_scores_has_its_own_range():
    cube = kfold_scores()  # roc_auc
    diff = pairwise(cube, models=["b", "a"])
    assert float(diff.min()) < 0  # a difference of AUCs may be negative
    validate(diff)
    validate(contrasts("roc_auc ~ model", cube))


def test_a_loss_cube_carrying_a_score_attr_is_refused():
    cube = loss_cube(designs.resampled(N, 8, J=3, seed=0))
    with pytest.raises(CubeError, match="has an `example` dim but carries the score-cube attr"):
        validate(cube.assign_attrs(greater_is_better=1))
    with pytest.raises(CubeError, match=r"cube.attrs.pop\('greater_is_better'\)"):
        cvstats.resampled_t(cube.assign_attrs(greater_is_better=1))


def test_a_one_model_score_cube_is_valid_for_per_model_inference():
    one = kfold_scores().sel(model=["a"])
    validate(one)
    res = cvstats.kfold_t(one, mu0=0.5)  # is the AUC above chance?
    assert float(res.estimate.squeeze()) == pytest.approx((0.81 + 0.85 + 0.79) / 3)
    with pytest.raises(ArgumentError, match="at least two distinct models"):
        pairwise(one)


# --------------------------------------------------------------------------
# the direction of a metric: one rule (collect and from_cv_results share it)
# --------------------------------------------------------------------------


def test_metric_direction_rule():
    from sklearn.metrics import log_loss, make_scorer

    from cvstats.cube.score import is_sklearn_scorer, metric_direction

    assert is_sklearn_scorer("roc_auc") and is_sklearn_scorer("neg_log_loss")
    assert is_sklearn_scorer(make_scorer(log_loss, greater_is_better=False))
    assert not is_sklearn_scorer("error_rate") and not is_sklearn_scorer(lambda e, X, y: 0.0)
    assert metric_direction("roc_auc", None, sklearn_scorer=True) == 1
    assert metric_direction("roc_auc", True, sklearn_scorer=True) == 1
    assert metric_direction("err", False, sklearn_scorer=False) == 0
    assert metric_direction("acc", True, sklearn_scorer=False) == 1
    with pytest.raises(ArgumentError, match="every scikit-learn scorer is greater-is-better"):
        metric_direction("neg_log_loss", False, sklearn_scorer=True)
    with pytest.raises(
        ArgumentError, match="required for the metric 'err': it is mine, .* never guesses.*HINT"
    ):
        metric_direction("err", None, sklearn_scorer=False, unknown="it is mine", hint=" HINT")


def test_collect_and_from_cv_results_share_the_direction_rule():
    from cvstats.cube import score
    from cvstats.designs import collect, cv_results

    assert collect.metric_direction is score.metric_direction
    assert cv_results.metric_direction is score.metric_direction
    assert collect.is_sklearn_scorer is cv_results.is_sklearn_scorer is score.is_sklearn_scorer
    for module in (collect, cv_results):  # no scorer list or scorer classes of their own
        own = [n for n in vars(module) if "scorer_names" in n or "scorer_types" in n]
        assert own == [], (module.__name__, own)


# --- the direction data record about themselves (issue 26, point 1) -----------------


def test_name_direction_table():
    from sklearn.metrics import get_scorer_names

    from cvstats.cube.score import name_direction
    from cvstats.designs.losses import LOSSES

    # every scikit-learn scorer returns values where larger is better, neg_* included
    assert all(name_direction(n) == 1 for n in get_scorer_names())
    for name in ("accuracy", "AUC", "roc_auc", "f1", "R²", "r2", "balanced_accuracy"):
        assert name_direction(name) == 1, name
    for name in ("precision", "recall", "neg_mean_squared_error", "neg_log_loss"):
        assert name_direction(name) == 1, name
    # cvstats' losses (but the bare "log", which names no metric) and the usual losses
    assert all(name_direction(n) == 0 for n in LOSSES if n != "log")
    for name in ("zero_one", "squared", "log_loss", "mse", "MSE", "error_rate", "loss"):
        assert name_direction(name) == 0, name
    for name in ("score", "my_metric", "log", "", None, 3):
        assert name_direction(name) is None, name


def test_recorded_direction_of_cubes_and_estimates():
    from cvstats.cube.score import recorded_direction

    d = designs.kfold(20, K=4, seed=0)
    rng = np.random.default_rng(0)
    loss = cvstats.from_arrays(rng.random((4, 20, 2)), design=d)  # a loss cube: no loss attr
    assert "loss" not in loss.attrs
    est = cvstats.corrected_resampled_t(loss).estimate
    assert recorded_direction(est.attrs, est.name)[0] == 0
    scores = from_scores(rng.random((4, 2)), design=d, greater_is_better=True, name="custom")
    est = cvstats.corrected_resampled_t(cvstats.pairwise(scores)).estimate
    assert recorded_direction(est.attrs, est.name) == (1, "its attr greater_is_better = 1")
    assert recorded_direction({"loss": "log"})[0] == 0
    assert recorded_direction({"metric": "neg_brier_score"})[0] == 1
    assert recorded_direction({}, "custom") is None
    with pytest.raises(CubeError, match="must be 1"):
        recorded_direction({"greater_is_better": "yes"})


def test_from_scores_checks_negated_losses_as_collect_and_from_cv_results():
    # one check for the three readers of scores (cvstats.cube.score.check_not_negated):
    # False for a scikit-learn scorer's name, or for negated losses named neg_*, would
    # reverse every verdict
    d = designs.kfold(N, K=4, seed=1)
    rmse = np.random.default_rng(7).uniform(0.4, 0.9, size=(4, 2))
    for metric in ("neg_root_mean_squared_error", "neg_log_loss"):
        with pytest.raises(ArgumentError, match="every scikit-learn scorer is greater-is-better"):
            from_scores(-rmse, design=d, metric=metric, greater_is_better=False)
        assert (
            from_scores(-rmse, design=d, metric=metric, greater_is_better=True).attrs[
                "greater_is_better"
            ]
            == 1
        )
    # a neg_* name scikit-learn does not know: refused on values that are all <= 0
    with pytest.raises(ArgumentError, match="metric 'neg_rmse'.*all <= 0.*reverse every"):
        from_scores(-rmse, design=d, name="neg_rmse", greater_is_better=False)
    # any other name: warned of (a plain callable may return a negative loss)
    with pytest.warns(CvstatsWarning, match="metric 'rmse'.*all <= 0.*negative log density"):
        cube = from_scores(-rmse, design=d, name="rmse", greater_is_better=False)
    assert cube.attrs["greater_is_better"] == 0
    # the loss itself, lower is better: accepted silently
    assert (
        from_scores(rmse, design=d, name="rmse", greater_is_better=False).attrs[
            "greater_is_better"
        ]
        == 0
    )


def test_from_scores_takes_a_mapping_of_models():
    d = designs.kfold(N, K=3, seed=2)
    per_model = {"forest": [0.71, 0.74, 0.69], "ridge": np.array([0.66, 0.70, 0.72])}
    cube = from_scores(per_model, design=d, name="accuracy", greater_is_better=True)
    assert cube.model.values.tolist() == ["forest", "ridge"]
    np.testing.assert_array_equal(cube.values, np.column_stack(list(per_model.values())))
    with pytest.raises(CubeError, match="a mapping names the models by its keys"):
        from_scores(per_model, design=d, models=["a", "b"], greater_is_better=True)
    with pytest.raises(CubeError, match=r"all of one shape; got the shapes .*'ridge': \(2,\)"):
        from_scores(
            {"forest": [0.7, 0.7, 0.7], "ridge": [0.6, 0.7]}, design=d, greater_is_better=True
        )
