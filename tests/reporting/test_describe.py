"""cvstats.describe and CubeDescription; the ``cube.cvstats`` accessor."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import cvstats
from cvstats import CubeDescription, describe
from cvstats.errors import CubeError, CvstatsTypeError


def _cube(models=("a", "b", "c"), seed=0):
    d = cvstats.designs.conservative_z(40, 8, J=4, M=2, seed=seed)
    rng = np.random.default_rng(seed)
    losses = rng.random((d.sizes["split"], 40, len(models))) + np.arange(len(models))
    return cvstats.from_arrays(losses, design=d, models=list(models), name="sq")


@pytest.fixture(scope="module")
def cube():
    return _cube()


def _main_means(cube):
    main = cube.isel(split=(cube.block == "main").values)
    return main.mean("example").mean("split")


def test_dense_loss_cube(cube):
    desc = describe(cube)
    assert isinstance(desc, CubeDescription)
    assert (desc.name, desc.form, desc.metric, desc.greater_is_better) == (
        "sq",
        "loss cube",
        "sq",
        False,
    )
    assert (desc.design, desc.n, desc.seed) == ("conservative_z", 40, 0)
    assert dict(desc.sizes) == {"split": cube.sizes["split"], "example": 40, "model": 3}
    assert desc.models == ("a", "b", "c") and desc.unit == "model"
    np.testing.assert_allclose(desc.means, _main_means(cube).values)
    assert desc.mean_block == "main" and desc.averaged_over == ()
    assert desc.mean_label == "mean loss"
    assert [(b.block, b.splits, b.n_train, b.n_test) for b in desc.blocks] == [
        ("main", 4, (32,), (8,)),
        ("half", 2 * 2 * 4, (12,), (8,)),
    ]
    assert any("NaN pattern" in check for check in desc.checks)
    text = str(desc)
    lines = text.splitlines()
    assert lines[0] == "cube 'sq': loss cube (per-example losses; lower is better)"
    assert lines[1] == "design 'conservative_z', n = 40, seed = 0"
    assert lines[2] == f"dims: split = {cube.sizes['split']}, example = 40, model = 3"
    assert "  block  splits  n_train  n_test" in lines
    assert "  main        4       32       8" in lines
    assert "  half       16       12       8" in lines
    assert "mean loss over the main block" in text
    for model, value in zip("abc", desc.means, strict=True):
        assert f"  {model:<12} {value:.4f}" in lines
    assert "checks passed (cvstats.validate):" in lines


def test_to_frame(cube):
    frame = describe(cube).to_frame()
    assert frame.index.name == "block" and frame.index.tolist() == ["main", "half"]
    assert frame.columns.tolist() == [
        "splits",
        "n_train_min",
        "n_train_max",
        "n_test_min",
        "n_test_max",
    ]
    assert frame.loc["half"].tolist() == [16, 12, 12, 8, 8]
    assert all(dtype == np.int64 for dtype in frame.dtypes)


def test_description_is_frozen(cube):
    desc = describe(cube)
    with pytest.raises(AttributeError):
        desc.name = "other"


def test_html_escapes_hostile_names():
    hostile = "<script>alert('x')</script>"
    cube = _cube(models=(hostile, "b & c", '"q"'))
    cube.attrs["design"] = "<b>design</b>"
    page = describe(cube)._repr_html_()
    assert "<script>" not in page and "<b>design</b>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "b &amp; c" in page and "&quot;q&quot;" in page
    assert page.count("<table>") == 2


def test_score_cube_higher_is_better():
    scores = np.array([[0.80, 0.70], [0.90, 0.75], [0.85, 0.72]])
    cube = cvstats.from_scores(
        scores, n_test=10, n_train=40, greater_is_better=True, name="roc_auc", models=["x", "y"]
    )
    desc = describe(cube)
    assert desc.form == "score cube" and desc.greater_is_better is True
    assert desc.metric == "roc_auc" and desc.mean_label == "mean roc_auc, higher is better"
    np.testing.assert_allclose(desc.means, scores.mean(axis=0))
    assert desc.blocks[0].n_test == (10,) and desc.blocks[0].n_train == (40,)
    assert dict(desc.sizes) == {"split": 3, "model": 2}
    text = str(desc)
    assert text.splitlines()[0] == (
        "cube 'roc_auc': score cube (one roc_auc per split and model; higher is better)"
    )
    assert "seed = -1 (unknown)" in text
    assert "mean roc_auc over the main block" in text and "higher is better:" in text
    assert "every score finite" in desc.checks


def test_score_cube_lower_is_better():
    cube = cvstats.from_scores(
        np.array([[1.0, 2.0], [3.0, 4.0]]), n_test=5, n_train=20, greater_is_better=False,
        name="mse",
    )  # fmt: skip
    desc = describe(cube)
    assert desc.mean_label == "mean mse, lower is better"
    assert "lower is better" in str(desc).splitlines()[0]


def test_score_cube_from_cv_results():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import ShuffleSplit, cross_validate
    from sklearn.naive_bayes import GaussianNB
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:200], y[:200]
    cv = ShuffleSplit(4, test_size=40, random_state=0)
    runs = {
        name: cross_validate(est, X, y, cv=cv, scoring="roc_auc", return_indices=True)
        for name, est in {"nb": GaussianNB(), "tree": DecisionTreeClassifier()}.items()
    }
    cube = cvstats.from_cv_results(runs, metric="roc_auc", n=200)
    desc = describe(cube)
    assert desc.form == "score cube" and desc.greater_is_better
    assert desc.models == ("nb", "tree")
    np.testing.assert_allclose(desc.means, [runs[m]["test_score"].mean() for m in ("nb", "tree")])
    assert desc.blocks[0].n_test == (40,) and desc.blocks[0].n_train == (160,)


def test_extra_dims_are_averaged():
    cubes = [_cube(seed=s) for s in range(3)]
    stacked = xr.concat(cubes, dim=pd.Index(["d0", "d1", "d2"], name="dataset"))
    desc = describe(stacked)
    assert desc.averaged_over == ("dataset",)
    expected = np.mean([_main_means(c).values for c in cubes], axis=0)
    np.testing.assert_allclose(desc.means, expected)
    assert dict(desc.sizes)["dataset"] == 3
    assert "averaged over dataset" in str(desc)
    assert "averaged over dataset" in repr(desc)
    assert "dims (dataset, split, example, model)" in " ".join(desc.checks)


def test_compact_cube_and_dataset(cube):
    dense = describe(cube)
    compact = cvstats.to_compact(cube)
    for obj in (compact, cvstats.compact_cube(compact)):
        desc = describe(obj)
        assert desc.form == "compact loss cube"
        assert desc.blocks == dense.blocks
        np.testing.assert_allclose(desc.means, dense.means)
        assert desc.averaged_over == ()
        assert "slot" in dict(desc.sizes)


def test_unequal_test_sizes_and_no_main_block():
    d = cvstats.designs.kfold(7, 2, seed=0)  # folds of 4 and 3
    cube = cvstats.from_arrays(np.ones((2, 7, 1)), design=d, models=["m"])
    desc = describe(cube)
    assert desc.blocks[0].n_test == (3, 4) and desc.blocks[0].n_train == (3, 4)
    assert "  main        2      3/4     3/4" in str(desc).splitlines()
    d = cvstats.designs.five_by_two(20, seed=0)
    cube = cvstats.from_arrays(np.ones((10, 20, 2)), design=d, models=["a", "b"])
    desc = describe(cube)
    assert desc.mean_block == "5x2" and "over the 5x2 block" in str(desc)


def test_contrast_cube(cube):
    desc = describe(cvstats.pairwise(cube))
    assert desc.unit == "contrast" and desc.models == ("a - b", "a - c", "b - c")
    means = _main_means(cube).values
    np.testing.assert_allclose(desc.means, [means[0] - means[1], means[0] - means[2],
                                            means[1] - means[2]])  # fmt: skip


def test_repr_is_short_whatever_the_models():
    many = _cube(models=[f"model_{i}" for i in range(40)])
    text = repr(describe(many))
    assert len(text.splitlines()) <= 20
    assert text.startswith("<CubeDescription: cube 'sq'") and text.endswith(">")
    assert "... and 28 more models" in text
    tricky = _cube(models=("line\nbreak", "b"))
    assert len(repr(describe(tricky)).splitlines()) <= 8
    assert "line\\nbreak" in str(describe(tricky))


def test_invalid_input_raises(cube):
    with pytest.raises(CubeError):
        describe(cube.rename(None))
    with pytest.raises(CvstatsTypeError, match="pass one of its variables"):
        describe(xr.Dataset({"sq": cube}))


# --------------------------------------------------------------------------
# the accessor
# --------------------------------------------------------------------------


def test_accessor_describe_and_validate(cube):
    assert cube.cvstats.describe() == describe(cube)
    assert cube.cvstats.validate() is None
    with pytest.raises(CubeError):
        cube.drop_attrs().cvstats.validate()


def test_accessor_compare_defaults_to_name_tilde_model(cube):
    methods = ["corrected_resampled_t"]
    got = cube.cvstats.compare(methods=methods, alpha=0.1).to_frame()
    want = cvstats.compare("sq ~ model", cube, methods=methods, alpha=0.1).to_frame()
    pd.testing.assert_frame_equal(got, want)
    got = cube.cvstats.compare("sq ~ C(model, contr.sum)", methods=methods).to_frame()
    want = cvstats.compare("sq ~ C(model, contr.sum)", cube, methods=methods).to_frame()
    pd.testing.assert_frame_equal(got, want)


def test_accessor_pairwise(cube):
    pairs = cube.cvstats.pairwise()
    xr.testing.assert_identical(pairs, cvstats.pairwise(cube))
    assert cube.cvstats.pairwise(models=["c", "a"]).contrast.values.tolist() == ["c - a"]
    # a contrast cube is compared as it is
    got = pairs.cvstats.compare(methods=["conservative_z"]).to_frame()
    want = cvstats.compare(pairs, methods=["conservative_z"]).to_frame()
    pd.testing.assert_frame_equal(got, want)
