"""Tests of cvstats.collect: learners x design -> loss cube."""

from __future__ import annotations

import zlib

import joblib
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import xarray as xr
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from cvstats import designs
from cvstats.cube import validate
from cvstats.designs.collect import collect
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, DesignError


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer(return_X_y=True)


@pytest.fixture(scope="module")
def diabetes():
    return load_diabetes(return_X_y=True)


def _logreg():
    return make_pipeline(StandardScaler(), LogisticRegression())


def _manual_losses(estimator, X, y, design, s, loss):
    """Refit `estimator` by hand on split position `s` of `design`; per-example losses."""
    train = np.flatnonzero(design["train"].values[s])
    test = np.flatnonzero(design["test"].values[s])
    est = clone(estimator).fit(X[train], y[train])
    return test, loss(y[test], est.predict(X[test]))


def _expected_seed(root, split_label, model_name):
    """The random_state collect documents for an estimator left at random_state=None."""
    seq = np.random.SeedSequence(root, spawn_key=(split_label, zlib.crc32(model_name.encode())))
    return int(seq.generate_state(1)[0])


# --------------------------------------------------------------------------- correctness


def test_classifiers_match_manual_refits(cancer):
    X, y = cancer
    design = designs.resampled(len(y), n_test=57, J=6, seed=1)
    learners = {"tree": DecisionTreeClassifier(random_state=0), "logreg": _logreg()}
    cube = collect(learners, X, y, design, progress=False)

    validate(cube)
    assert cube.dims == ("split", "example", "model")
    assert cube.name == "zero_one"
    assert list(cube["model"].values) == ["tree", "logreg"]
    assert cube.dtype == np.float64
    for key in ("design", "n", "seed"):
        assert cube.attrs[key] == design.attrs[key]
    assert cube.attrs["loss"] == "zero_one"
    assert cube.attrs["collect_seed"] == design.attrs["seed"]

    for s in (0, 3, 5):
        for m, est in enumerate(learners.values()):
            test, expected = _manual_losses(
                est, X, y, design, s, lambda t, p: (t != p).astype(float)
            )
            np.testing.assert_array_equal(cube.values[s, test, m], expected)


@pytest.mark.parametrize(
    ("loss", "fn"),
    [("squared", lambda t, p: (p - t) ** 2), ("absolute", lambda t, p: np.abs(p - t))],
)
def test_regressors_match_manual_refits(diabetes, loss, fn):
    X, y = diabetes
    design = designs.kfold(len(y), K=5, repeats=2, seed=2)
    learners = {"ols": LinearRegression(), "ridge": Ridge(alpha=0.5)}
    cube = collect(learners, X, y, design, loss=loss, progress=False)
    assert cube.name == loss and cube.attrs["loss"] == loss
    for s in (0, 4, 9):
        for m, est in enumerate(learners.values()):
            test, expected = _manual_losses(est, X, y, design, s, fn)
            np.testing.assert_array_equal(cube.values[s, test, m], expected)


def test_nan_exactly_off_test_sets_and_in_train(iris):
    X, y = iris
    design = designs.nadeau_bengio(len(y), n_test=15, J=3, M=2, R=2, seed=3)
    cube = collect({"tree": DecisionTreeClassifier()}, X, y, design, progress=False)
    test = design["test"].values
    np.testing.assert_array_equal(np.isnan(cube.values[..., 0]), ~test)
    np.testing.assert_array_equal(cube["in_train"].values, design["train"].values)
    for coord in ("block", "half", "side", "replicate", "repeat", "fold", "n_train"):
        np.testing.assert_array_equal(cube[coord].values, design[coord].values)


def test_log_loss_matches_sklearn(iris):
    X, y = iris
    design = designs.resampled(len(y), n_test=30, J=3, seed=4)
    cube = collect({"logreg": _logreg()}, X, y, design, loss="log", progress=False)
    assert cube.name == "log"
    for s in range(3):
        train = np.flatnonzero(design["train"].values[s])
        test = np.flatnonzero(design["test"].values[s])
        proba = _logreg().fit(X[train], y[train]).predict_proba(X[test])
        expected = [
            log_loss([t], [p], labels=[0, 1, 2]) for t, p in zip(y[test], proba, strict=True)
        ]
        np.testing.assert_allclose(cube.values[s, test, 0], expected, rtol=1e-12)


def test_log_loss_class_missing_from_training_set(iris):
    # one example of class 2: on splits where it is tested but not trained on, the
    # tree gives it probability 0, clipped to eps (a finite loss), and the probability
    # columns of the two fitted classes are mapped to the right classes.
    X, y = iris
    keep = np.r_[0:100, 120]
    X, y = X[keep], y[keep]
    design = designs.resampled(len(y), n_test=20, J=10, seed=5)
    rare = len(y) - 1
    splits = np.flatnonzero(design["test"].values[:, rare])
    assert splits.size > 0
    cube = collect(
        {"tree": DecisionTreeClassifier(random_state=0)}, X, y, design, loss="log",
        progress=False,
    )  # fmt: skip
    np.testing.assert_allclose(cube.values[splits, rare, 0], -np.log(np.finfo(float).eps))
    s = splits[0]
    train = np.flatnonzero(design["train"].values[s])
    test = np.flatnonzero(design["test"].values[s])
    tree = DecisionTreeClassifier(random_state=0).fit(X[train], y[train])
    proba = np.zeros((test.size, 3))
    proba[:, :2] = tree.predict_proba(X[test])
    expected = [log_loss([t], [p], labels=[0, 1, 2]) for t, p in zip(y[test], proba, strict=True)]
    np.testing.assert_allclose(cube.values[s, test, 0], expected, rtol=1e-12)


def test_callable_learner(iris):
    X, y = iris

    def nearest_centroid(X_train, y_train, X_test):
        classes = np.unique(y_train)
        centroids = np.stack([X_train[y_train == c].mean(axis=0) for c in classes])
        dist = ((X_test[:, None, :] - centroids[None]) ** 2).sum(axis=-1)
        return classes[dist.argmin(axis=1)]

    def uniform_proba(X_train, y_train, X_test):
        return np.full((len(X_test), 3), 1 / 3)

    design = designs.kfold(len(y), K=5, seed=6)
    cube = collect({"centroid": nearest_centroid}, X, y, design, progress=False)
    for s in range(5):
        train = np.flatnonzero(design["train"].values[s])
        test = np.flatnonzero(design["test"].values[s])
        pred = nearest_centroid(X[train], y[train], X[test])
        np.testing.assert_array_equal(cube.values[s, test, 0], (pred != y[test]).astype(float))

    cube = collect({"uniform": uniform_proba}, X, y, design, loss="log", progress=False)
    np.testing.assert_allclose(cube.values[design["test"].values, 0], np.log(3))


def test_callable_loss(diabetes):
    X, y = diabetes

    def pinball(y_true, y_pred):
        diff = y_true - y_pred
        return np.maximum(0.9 * diff, -0.1 * diff)

    design = designs.holdout(len(y), n_test=100, seed=7)
    cube = collect({"ols": LinearRegression()}, X, y, design, loss=pinball, progress=False)
    assert cube.name == "pinball" and cube.attrs["loss"] == "pinball"
    test, expected = _manual_losses(LinearRegression(), X, y, design, 0, pinball)
    np.testing.assert_array_equal(cube.values[0, test, 0], expected)


def test_name_overrides_cube_name(iris):
    X, y = iris
    design = designs.holdout(len(y), n_test=30, seed=0)
    cube = collect({"tree": DecisionTreeClassifier()}, X, y, design, name="err", progress=False)
    assert cube.name == "err" and cube.attrs["loss"] == "zero_one"


def test_dataframe_and_sparse_inputs(iris):
    X, y = iris
    design = designs.kfold(len(y), K=3, seed=8)
    learners = {"tree": DecisionTreeClassifier(random_state=0)}
    ref = collect(learners, X, y, design, progress=False)
    frame = pd.DataFrame(X, columns=list("abcd"), index=np.arange(len(y))[::-1])
    for X_alt, y_alt in (
        (frame, pd.Series(y, index=frame.index)),
        (sp.csr_matrix(X), list(y)),
        (sp.coo_matrix(X), y),
        (X.tolist(), y),
    ):
        cube = collect(learners, X_alt, y_alt, design, progress=False)
        xr.testing.assert_identical(cube, ref)


# --------------------------------------------------------------------------- user objects


def test_user_estimator_not_mutated(iris):
    X, y = iris
    tree = DecisionTreeClassifier()
    pipe = _logreg()
    params = {"tree": tree.get_params(), "pipe": pipe.get_params(deep=False)}
    design = designs.kfold(len(y), K=3, seed=0)
    collect({"tree": tree, "pipe": pipe}, X, y, design, progress=False)
    assert tree.get_params() == params["tree"]
    assert tree.random_state is None
    assert not hasattr(tree, "tree_")
    assert pipe.get_params(deep=False) == params["pipe"]
    assert not hasattr(pipe[-1], "coef_")


# --------------------------------------------------------------------------- reproducibility


def _forest():
    return RandomForestClassifier(n_estimators=3, max_depth=3)


def test_random_state_derived_from_seed_sequence(cancer):
    X, y = cancer
    design = designs.resampled(len(y), n_test=57, J=3, seed=9)
    cube = collect({"forest": _forest()}, X, y, design, seed=123, progress=False)
    assert cube.attrs["collect_seed"] == 123
    for s, label in enumerate(design["split"].values.tolist()):
        est = _forest().set_params(random_state=_expected_seed(123, label, "forest"))
        test, expected = _manual_losses(est, X, y, design, s, lambda t, p: (t != p) * 1.0)
        np.testing.assert_array_equal(cube.values[s, test, 0], expected)


def test_nested_random_state_is_set(cancer):
    X, y = cancer
    design = designs.holdout(len(y), n_test=57, seed=10)
    pipe = make_pipeline(StandardScaler(), _forest())
    a = collect({"p": pipe}, X, y, design, progress=False)
    b = collect({"p": pipe}, X, y, design, progress=False)
    xr.testing.assert_identical(a, b)
    seed = _expected_seed(10, 0, "p")
    est = make_pipeline(StandardScaler(), _forest()).set_params(
        randomforestclassifier__random_state=seed
    )
    test, expected = _manual_losses(est, X, y, design, 0, lambda t, p: (t != p) * 1.0)
    np.testing.assert_array_equal(a.values[0, test, 0], expected)


def test_same_seed_identical_other_seed_differs(cancer):
    X, y = cancer
    design = designs.resampled(len(y), n_test=57, J=4, seed=11)
    learners = {"forest": _forest(), "tree": DecisionTreeClassifier(max_features=3)}
    a = collect(learners, X, y, design, progress=False)
    b = collect(learners, X, y, design, progress=False)
    c = collect(learners, X, y, design, seed=11, progress=False)
    d = collect(learners, X, y, design, seed=12, progress=False)
    xr.testing.assert_identical(a, b)
    xr.testing.assert_identical(a, c)  # default seed = the design's seed
    assert not np.array_equal(a.values, d.values, equal_nan=True)
    # a model's losses do not depend on the other learners or their order
    e = collect({"tree": learners["tree"]}, X, y, design, progress=False)
    xr.testing.assert_identical(e.sel(model="tree"), a.sel(model="tree"))


def test_explicit_random_state_kept(cancer):
    X, y = cancer
    design = designs.resampled(len(y), n_test=57, J=2, seed=12)
    est = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=42)
    a = collect({"f": est}, X, y, design, seed=1, progress=False)
    b = collect({"f": est}, X, y, design, seed=2, progress=False)
    xr.testing.assert_equal(a, b)
    for s in range(2):
        test, expected = _manual_losses(est, X, y, design, s, lambda t, p: (t != p) * 1.0)
        np.testing.assert_array_equal(a.values[s, test, 0], expected)


def test_unknown_design_seed_draws_and_records_entropy(iris):
    X, y = iris
    design = designs.resampled(len(y), n_test=30, J=2, seed=0)
    design.attrs["seed"] = -1
    cube = collect({"forest": _forest()}, X, y, design, progress=False)
    root = cube.attrs["collect_seed"]
    assert isinstance(root, int) and root >= 0
    again = collect({"forest": _forest()}, X, y, design, seed=root, progress=False)
    np.testing.assert_array_equal(cube.values, again.values)


def test_n_jobs_does_not_change_result(cancer):
    X, y = cancer
    design = designs.resampled(len(y), n_test=57, J=4, seed=13)
    learners = {"forest": _forest(), "logreg": _logreg()}
    a = collect(learners, X, y, design, n_jobs=1, progress=False)
    b = collect(learners, X, y, design, n_jobs=2, progress=False)
    xr.testing.assert_identical(a, b)


def test_dask_backend_matches_sequential(cancer):
    distributed = pytest.importorskip("distributed")
    X, y = cancer
    design = designs.resampled(len(y), n_test=57, J=3, seed=14)
    learners = {"forest": _forest(), "tree": DecisionTreeClassifier()}
    ref = collect(learners, X, y, design, n_jobs=1, progress=False)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
        joblib.parallel_backend("dask"),
        distributed.get_task_stream(client) as stream,
    ):
        cube = collect(learners, X, y, design, progress=False)
    assert len(stream.data) > 0  # the fits really ran on the dask cluster
    xr.testing.assert_identical(cube, ref)
    assert np.array_equal(cube.values, ref.values, equal_nan=True)


# --------------------------------------------------------------------------- progress


def test_progress_bar(iris, capsys):
    X, y = iris
    design = designs.kfold(len(y), K=3, seed=0)
    collect({"tree": DecisionTreeClassifier()}, X, y, design, progress=True)
    err = capsys.readouterr().err
    assert "collect" in err and "3/3" in err
    collect({"tree": DecisionTreeClassifier()}, X, y, design, progress=False)
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- errors


@pytest.fixture(scope="module")
def small(iris):
    X, y = iris
    return X, y, designs.kfold(len(y), K=3, seed=0)


@pytest.mark.parametrize(
    ("learners", "match"),
    [
        ({}, "`learners` is empty"),
        ([DecisionTreeClassifier()], "`learners` must be a dict"),
        ({1: DecisionTreeClassifier()}, "`learners` keys must be str model names, got 1"),
        ({"tree": DecisionTreeClassifier}, r"pass DecisionTreeClassifier\(\) instead"),
        ({"x": 3}, "learner 'x' must be a scikit-learn estimator .* got an object of type int"),
    ],
)
def test_bad_learners(small, learners, match):
    X, y, design = small
    with pytest.raises(CvstatsTypeError, match=match):
        collect(learners, X, y, design, progress=False)


def test_log_loss_needs_predict_proba(small):
    X, y, design = small
    with pytest.raises(CvstatsTypeError, match="learner 'svc' .* has no predict_proba"):
        collect({"svc": SVC()}, X, y, design, loss="log", progress=False)


def test_unknown_loss(small):
    X, y, design = small
    with pytest.raises(ArgumentError, match=r"`loss` must be one of \['absolute', 'log'"):
        collect({"tree": DecisionTreeClassifier()}, X, y, design, loss="hinge", progress=False)


def test_loss_callable_wrong_shape(small):
    X, y, design = small

    def mean_error(y_true, y_pred):
        return np.array([np.mean(y_true != y_pred)])

    with pytest.raises(CubeError, match=r"loss 'mean_error' returned shape \(1,\) for model"):
        collect({"tree": DecisionTreeClassifier()}, X, y, design, loss=mean_error, progress=False)


def test_learner_callable_wrong_shape(small):
    X, y, design = small

    def constant(X_train, y_train, X_test):
        return np.zeros(3)

    def bad_proba(X_train, y_train, X_test):
        return np.full((len(X_test), 2), 0.5)

    with pytest.raises(CubeError, match="learner 'const' returned predictions of shape"):
        collect({"const": constant}, X, y, design, progress=False)
    with pytest.raises(
        CubeError, match=r"learner 'bad' returned probabilities of shape \(50, 2\)"
    ):
        collect({"bad": bad_proba}, X, y, design, loss="log", progress=False)


def test_non_finite_predictions(small):
    X, y, design = small

    def nan_predictions(X_train, y_train, X_test):
        return np.full(len(X_test), np.nan)

    with pytest.raises(CubeError, match="loss 'squared' is NaN or infinite on 50 test example"):
        collect({"nan": nan_predictions}, X, y, design, loss="squared", progress=False)


def test_learner_exception_gets_context(small):
    X, y, design = small

    def broken(X_train, y_train, X_test):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom") as info:
        collect({"broken": broken}, X, y, design, progress=False)
    assert any("model 'broken' on split" in note for note in info.value.__notes__)


def test_length_mismatch(small):
    X, y, design = small
    with pytest.raises(DesignError, match="`X` has 149 rows and `y` has 149, but the design"):
        collect({"tree": DecisionTreeClassifier()}, X[1:], y[1:], design, progress=False)


def test_bad_design(small):
    X, y, design = small
    with pytest.raises(CvstatsTypeError, match="`design` must be an xarray.Dataset"):
        collect({"tree": DecisionTreeClassifier()}, X, y, design["test"], progress=False)
    with pytest.raises(DesignError, match="`design` has no 'train' variable"):
        collect({"t": DecisionTreeClassifier()}, X, y, design.drop_vars("train"), progress=False)
    empty = design.copy(deep=True)
    empty["test"][0] = False
    with pytest.raises(DesignError, match=r"1 split\(s\) with an empty test set"):
        collect({"tree": DecisionTreeClassifier()}, X, y, empty, progress=False)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"seed": 1.5}, CvstatsTypeError, "`seed` must be a non-negative int or None"),
        ({"seed": -3}, DesignError, "`seed` must be a non-negative int or None, got -3"),
        ({"name": 3}, CvstatsTypeError, "`name` must be a str or None"),
    ],
)
def test_bad_options(small, kwargs, error, match):
    X, y, design = small
    with pytest.raises(error, match=match):
        collect({"tree": DecisionTreeClassifier()}, X, y, design, progress=False, **kwargs)


# --------------------------------------------------------------------------- checks before fits


class CountingTree(DecisionTreeClassifier):
    """A tree that counts its fits (class-level: clones share the count)."""

    fits = 0

    def fit(self, X, y, sample_weight=None, check_input=True):
        type(self).fits += 1
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


def _bad_designs(n):
    """Designs invalid for data of `n` examples, each with the error it must raise."""
    kfold = designs.kfold(n, K=3, seed=0)
    out = {}
    out["another-n"] = (designs.kfold(n + 10, K=3, seed=0), DesignError, "design has n = 160")
    from_splitter = designs.from_splitter([([0, 1, 2], [3, 4])], n=n - 1)
    out["splitter-of-another-n"] = (from_splitter, DesignError, "design has n = 149")
    overlap = kfold.copy(deep=True)
    overlap["train"][0, int(np.argmax(kfold.test.values[0]))] = True
    overlap = overlap.assign_coords(n_train=("split", overlap.train.sum("example").values))
    out["test-meets-train"] = (overlap, CubeError, r"losses are present for training examples")
    out["n_train-disagrees"] = (
        kfold.assign_coords(n_train=("split", kfold.n_train.values + 1)),
        CubeError,
        r"split 0 has n_train = 101 but `in_train` marks 100",
    )
    broken = kfold.copy(deep=True)
    broken["test"][1] = broken["test"][0].values  # fold 1 tests fold 0 again
    broken["train"][1] = ~broken["test"][0].values
    out["not-a-partition"] = (broken, CubeError, "does not test every example exactly once")
    out["unknown-block"] = (
        kfold.assign_coords(block=("split", ["main", "main", "extra"])),
        CubeError,
        "split 2 has block 'extra'",
    )
    out["duplicated-split-labels"] = (
        kfold.assign_coords(split=[0, 0, 1]),
        CubeError,
        "`split` coordinate has duplicated label 0",
    )
    out["missing-attr"] = (
        kfold.drop_attrs().assign_attrs(n=n),
        CubeError,
        r"lacks the attr\(s\) \['design', 'seed'\]",
    )
    half = designs.conservative_z(n, 10, J=2, M=2, seed=0)
    big = half.n_train.values.copy()
    big[half.block.values == "half"] = n // 2  # no room for the test set inside a half
    out["half-too-large"] = (half.assign_coords(n_train=("split", big)), CubeError, "n_train")
    return out


BAD = _bad_designs(150)


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("what", ["loss", "scoring", "both"])
def test_an_invalid_design_is_refused_before_any_fit(iris, case, what):
    X, y = iris
    design, error, match = BAD[case]
    kwargs = {
        "loss": {"loss": "zero_one"},
        "scoring": {"scoring": "accuracy"},
        "both": {"loss": "zero_one", "scoring": ["accuracy", "f1_macro"]},
    }[what]
    CountingTree.fits = 0
    with pytest.raises(error, match=match) as info:
        collect({"tree": CountingTree(random_state=0)}, X, y, design, progress=False, **kwargs)
    assert CountingTree.fits == 0
    if error is CubeError:
        assert any("before any model was fitted" in note for note in info.value.__notes__)


def test_a_cube_name_clashing_with_a_coordinate_is_refused_before_any_fit(iris):
    X, y = iris
    CountingTree.fits = 0
    with pytest.raises(CubeError, match="named 'fold' like one of its coordinates"):
        collect(
            {"tree": CountingTree()},
            X,
            y,
            designs.kfold(len(y), K=3, seed=0),
            name="fold",
            progress=False,
        )
    assert CountingTree.fits == 0


def test_a_valid_design_fits_once_per_split_and_model(iris):
    X, y = iris
    CountingTree.fits = 0
    collect(
        {"a": CountingTree(), "b": CountingTree(max_depth=2)},
        X,
        y,
        designs.kfold(len(y), K=3, seed=0),
        scoring="accuracy",
        loss="zero_one",
        progress=False,
    )
    assert CountingTree.fits == 6
