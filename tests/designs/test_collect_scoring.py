"""Tests of cvstats.collect(..., scoring=...): scikit-learn scorers -> score cubes.

Every score is checked against an independent refit (scikit-learn's metric on
the refitted estimator, or ``cross_validate`` on the design's splits); the
direction of every scorer, the one fit per (split, model) however many metrics
and losses are asked, the errors of a failing scorer and the methods on the
cubes are tested too.
"""

from __future__ import annotations

import collections
import hashlib
import pickle

import numpy as np
import pytest
import xarray as xr
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    get_scorer,
    get_scorer_names,
    log_loss,
    make_scorer,
    roc_auc_score,
)
from sklearn.model_selection import KFold, cross_validate
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

import cvstats
from cvstats import designs
from cvstats.cube import is_greater_better, scores_from_losses
from cvstats.designs.collect import _BinaryRocAuc, _fast_score, collect
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, CvstatsWarning

N = 120


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(y), size=N, replace=False)
    return X[idx], y[idx]


@pytest.fixture(scope="module")
def design():
    return designs.resampled(N, n_test=30, J=5, seed=1)


def _logreg():
    return make_pipeline(StandardScaler(), LogisticRegression())


def _learners():
    return {"logreg": _logreg(), "tree": DecisionTreeClassifier(random_state=0)}


def _refit(estimator, X, y, design, s):
    """Refit `estimator` by hand on split position `s`; the fitted copy and the test data."""
    train = np.flatnonzero(design["train"].values[s])
    test = np.flatnonzero(design["test"].values[s])
    return clone(estimator).fit(X[train], y[train]), X[test], y[test]


def _cv(design):
    """The design's splits as a scikit-learn cv iterable."""
    return [
        (np.flatnonzero(tr), np.flatnonzero(te))
        for tr, te in zip(design["train"].values, design["test"].values, strict=True)
    ]


# --------------------------------------------------------------------------- correctness


def test_roc_auc_matches_refit(cancer, design):
    X, y = cancer
    cube = collect(_learners(), X, y, design, scoring="roc_auc", progress=False)

    cvstats.validate(cube)
    assert isinstance(cube, xr.DataArray)
    assert cube.dims == ("split", "model")
    assert cube.name == "roc_auc" and cube.attrs["metric"] == "roc_auc"
    assert cube.attrs["greater_is_better"] == 1 and is_greater_better(cube)
    assert cube.attrs["collect_seed"] == design.attrs["seed"]
    for key in ("design", "n", "seed"):
        assert cube.attrs[key] == design.attrs[key]
    assert list(cube["model"].values) == ["logreg", "tree"]
    np.testing.assert_array_equal(cube["n_test"].values, design["test"].sum("example").values)
    np.testing.assert_array_equal(cube["n_train"].values, design["n_train"].values)
    for s in range(design.sizes["split"]):
        est, X_test, y_test = _refit(_logreg(), X, y, design, s)
        # the Mann-Whitney form of the fast path: equal up to rounding (~1 ulp)
        auc = roc_auc_score(y_test, est.decision_function(X_test))
        assert cube.values[s, 0] == pytest.approx(auc, rel=0, abs=1e-12)
        est, X_test, y_test = _refit(DecisionTreeClassifier(random_state=0), X, y, design, s)
        auc = roc_auc_score(y_test, est.predict_proba(X_test)[:, 1])
        assert cube.values[s, 1] == pytest.approx(auc, rel=0, abs=1e-12)


def test_list_matches_cross_validate(cancer, design):
    X, y = cancer
    names = ["roc_auc", "f1_macro", "average_precision", "neg_log_loss", "accuracy"]
    scores = collect(_learners(), X, y, design, scoring=names, progress=False)

    assert isinstance(scores, xr.Dataset)
    assert list(scores.data_vars) == names
    for m, est in enumerate(_learners().values()):
        ref = cross_validate(est, X, y, cv=_cv(design), scoring=names)
        for metric in names:
            cube = scores[metric]
            cvstats.validate(cube)
            assert cube.name == metric and cube.attrs["metric"] == metric
            assert cube.attrs["greater_is_better"] == 1
            # equal up to rounding: roc_auc's fast path is the Mann-Whitney form
            np.testing.assert_allclose(cube.values[:, m], ref[f"test_{metric}"], atol=1e-12)


def test_dict_and_make_scorer(cancer, design):
    X, y = cancer
    f1 = make_scorer(f1_score, average="macro")
    scoring = {"auc": "roc_auc", "f1": f1}
    scores = collect(_learners(), X, y, design, scoring=scoring, progress=False)

    assert list(scores.data_vars) == ["auc", "f1"]
    assert scores["auc"].attrs["metric"] == "roc_auc"
    assert scores["f1"].attrs["metric"] == repr(f1)
    assert scores["f1"].attrs["metric"].startswith("make_scorer(f1_score")
    assert scores["f1"].attrs["greater_is_better"] == 1
    assert scores.attrs["collect_seed"] == design.attrs["seed"]
    for s in range(design.sizes["split"]):
        for m, est in enumerate(_learners().values()):
            fitted, X_test, y_test = _refit(est, X, y, design, s)
            expected = f1_score(y_test, fitted.predict(X_test), average="macro")
            assert scores["f1"].values[s, m] == expected


def test_set_is_sorted(cancer, design):
    X, y = cancer
    scores = collect(_learners(), X, y, design, scoring={"roc_auc", "accuracy"}, progress=False)
    assert list(scores.data_vars) == ["accuracy", "roc_auc"]


def test_single_make_scorer_name(cancer, design):
    X, y = cancer
    scorer = make_scorer(f1_score)
    cube = collect(_learners(), X, y, design, scoring=scorer, progress=False)
    assert cube.name == "score" and cube.attrs["metric"] == repr(scorer)
    assert cube.attrs["greater_is_better"] == 1
    named = collect(_learners(), X, y, design, scoring=scorer, name="f1", progress=False)
    assert named.name == "f1"
    np.testing.assert_array_equal(named.values, cube.values)


# --------------------------------------------------------------------------- direction


def test_every_scorer_name_is_greater_is_better_and_neg_names_are_negated():
    """The rule collect relies on: a scorer name's values are larger-is-better.

    scikit-learn applies the sign inside the scorer; a loss scorer's name starts
    with ``neg_``. (``_sign`` is read here only to check the rule; collect does
    not read it.)
    """
    for name in get_scorer_names():
        assert get_scorer(name)._sign == (-1 if name.startswith("neg_") else 1), name


def test_neg_log_loss_direction(cancer, design):
    X, y = cancer
    cube = collect(_learners(), X, y, design, scoring="neg_log_loss", progress=False)
    assert cube.attrs["greater_is_better"] == 1
    assert (cube.values <= 0).all()
    for s in range(design.sizes["split"]):
        est, X_test, y_test = _refit(_logreg(), X, y, design, s)
        expected = -log_loss(y_test, est.predict_proba(X_test), labels=[0, 1])
        assert cube.values[s, 0] == expected
    # the logistic regression's log loss is far smaller: its score is larger, i.e. better
    assert (cube.values[:, 0] > cube.values[:, 1]).all()
    contrast = cvstats.pairwise(cube)
    assert contrast.attrs["greater_is_better"] == 1


def test_make_scorer_of_a_loss_is_negated(cancer, design):
    X, y = cancer
    scorer = make_scorer(log_loss, greater_is_better=False, response_method="predict_proba")
    cube = collect(_learners(), X, y, design, scoring=scorer, name="nll", progress=False)
    ref = collect(_learners(), X, y, design, scoring="neg_log_loss", progress=False)
    assert cube.attrs["greater_is_better"] == 1
    np.testing.assert_array_equal(cube.values, ref.values)


def test_plain_callable_needs_direction(cancer, design):
    X, y = cancer

    def error_rate(estimator, X_test, y_test):
        return float(np.mean(estimator.predict(X_test) != y_test))

    with pytest.raises(
        ArgumentError, match="`greater_is_better` is required for the metric 'error_rate'"
    ) as info:
        collect(_learners(), X, y, design, scoring=error_rate, progress=False)
    assert "greater_is_better=True" in str(info.value)
    assert "make_scorer" in str(info.value)

    cube = collect(
        _learners(), X, y, design, scoring=error_rate, greater_is_better=False, progress=False
    )
    assert cube.name == "error_rate" and cube.attrs["metric"] == "error_rate"
    assert cube.attrs["greater_is_better"] == 0 and not is_greater_better(cube)
    accuracy = collect(_learners(), X, y, design, scoring="accuracy", progress=False)
    np.testing.assert_allclose(cube.values, 1 - accuracy.values, rtol=0, atol=1e-15)


def test_plain_callable_direction_by_name(cancer, design):
    X, y = cancer
    scoring = {
        "auc": "roc_auc",
        "err": lambda est, X_test, y_test: float(np.mean(est.predict(X_test) != y_test)),
        "acc": lambda est, X_test, y_test: float(np.mean(est.predict(X_test) == y_test)),
    }
    scores = collect(
        _learners(),
        X,
        y,
        design,
        scoring=scoring,
        greater_is_better={"err": False, "acc": True, "auc": True},
        progress=False,
    )
    assert [scores[k].attrs["greater_is_better"] for k in scoring] == [1, 0, 1]
    with pytest.raises(ArgumentError, match="required for the metric 'acc': 'acc' is a plain"):
        collect(
            _learners(), X, y, design, scoring=scoring, greater_is_better={"err": False},
            progress=False,
        )  # fmt: skip
    lam = collect(
        _learners(), X, y, design, scoring=scoring["acc"], greater_is_better=True, progress=False
    )
    assert lam.name == "score"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"scoring": "neg_log_loss", "greater_is_better": False},
            "`greater_is_better` is False for the metric 'neg_log_loss', but its values come "
            "from a scikit-learn scorer",
        ),
        (
            {"scoring": {"a": "accuracy"}, "greater_is_better": {"a": False}},
            "`greater_is_better` is False for the metric 'a'.*every scikit-learn scorer is "
            "greater-is-better",
        ),
        (
            {"scoring": {"a": "accuracy"}, "greater_is_better": {"b": True}},
            r"names the metric\(s\) \['b'\], which `scoring` does not have",
        ),
        ({"greater_is_better": True}, "but no `scoring` was given"),
    ],
)
def test_direction_contradictions(cancer, design, kwargs, match):
    X, y = cancer
    with pytest.raises(ArgumentError, match=match):
        collect(_learners(), X, y, design, progress=False, **kwargs)


# --------------------------------------------------------------------------- one fit


FITS: list[tuple[str, str]] = []


class CountingTree(DecisionTreeClassifier):
    def fit(self, X, y, **kwargs):
        FITS.append(("tree", hashlib.sha1(np.ascontiguousarray(X).tobytes()).hexdigest()))
        return super().fit(X, y, **kwargs)


class CountingLogReg(LogisticRegression):
    def fit(self, X, y, **kwargs):
        FITS.append(("logreg", hashlib.sha1(np.ascontiguousarray(X).tobytes()).hexdigest()))
        return super().fit(X, y, **kwargs)


def test_loss_and_scoring_from_one_fit(cancer, design):
    X, y = cancer
    X = StandardScaler().fit_transform(X)
    learners = {"logreg": CountingLogReg(), "tree": CountingTree(random_state=0)}
    FITS.clear()
    loss_cube, scores = collect(
        learners,
        X,
        y,
        design,
        loss="zero_one",
        scoring=["roc_auc", "neg_log_loss", "accuracy", "f1"],
        progress=False,
    )
    J = design.sizes["split"]
    assert len(FITS) == 2 * J
    counts = collections.Counter(FITS)
    assert set(counts.values()) == {1} and len(counts) == 2 * J

    cvstats.validate(loss_cube)
    assert loss_cube.name == "zero_one" and loss_cube.dims == ("split", "example", "model")
    assert isinstance(scores, xr.Dataset) and list(scores.data_vars)[0] == "roc_auc"
    # the same fits: the accuracy is 1 - the mean zero-one loss of each split
    mean_loss = scores_from_losses(loss_cube)
    np.testing.assert_allclose(scores["accuracy"].values, 1 - mean_loss.values, atol=1e-15)

    FITS.clear()
    lc, auc = collect(learners, X, y, design, loss="log", scoring="roc_auc", progress=False)
    assert len(FITS) == 2 * J
    assert isinstance(auc, xr.DataArray) and auc.name == "roc_auc" and lc.name == "log"


def test_neg_log_loss_is_minus_mean_log_loss_of_the_same_fits(cancer, design):
    X, y = cancer
    loss_cube, nll = collect(
        {"logreg": _logreg()}, X, y, design, loss="log", scoring="neg_log_loss", progress=False
    )
    np.testing.assert_allclose(-nll.values, scores_from_losses(loss_cube).values, rtol=1e-12)


def test_regression_scores_and_squared_loss():
    X, y = load_diabetes(return_X_y=True)
    design = designs.kfold(len(y), K=5, seed=2)
    learners = {"ols": LinearRegression()}
    loss_cube, scores = collect(
        learners,
        X,
        y,
        design,
        loss="squared",
        scoring=["r2", "neg_mean_squared_error"],
        progress=False,
    )
    mse = scores_from_losses(loss_cube).values
    np.testing.assert_allclose(-scores["neg_mean_squared_error"].values, mse, rtol=1e-12)
    ref = cross_validate(LinearRegression(), X, y, cv=_cv(design), scoring="r2")
    np.testing.assert_array_equal(scores["r2"].values[:, 0], ref["test_score"])


def test_scoring_alone_returns_no_loss_cube(cancer, design):
    X, y = cancer
    out = collect(_learners(), X, y, design, scoring="accuracy", progress=False)
    assert isinstance(out, xr.DataArray) and "example" not in out.dims
    default = collect(_learners(), X, y, design, progress=False)  # unchanged: zero_one losses
    assert default.name == "zero_one" and "example" in default.dims


# --------------------------------------------------------------------------- failing scorers


@pytest.fixture(scope="module")
def sorted_cancer(cancer):
    X, y = cancer
    order = np.argsort(y, kind="stable")
    return X[order], y[order]


def test_one_class_test_fold_raises(sorted_cancer):
    X, y = sorted_cancer
    design = designs.from_splitter(KFold(5), X, y)  # no shuffle: fold 0 holds class 0 only
    with pytest.raises(CubeError) as info:
        collect(_learners(), X, y, design, scoring="roc_auc", progress=False)
    message = str(info.value)
    assert "scorer 'roc_auc' failed for model 'logreg' on split 0" in message
    assert "1 distinct target value(s)" in message
    assert "stratified design" in message and "stratify=y" in message
    assert "Only one class is present in y_true" in message
    assert isinstance(info.value.__cause__, UndefinedMetricWarning)

    stratified = designs.kfold(len(y), K=5, stratify=y, seed=0)
    cube = collect(_learners(), X, y, stratified, scoring="roc_auc", progress=False)
    assert np.isfinite(cube.values).all()


def test_scorer_exception_is_chained(cancer, design):
    X, y = cancer

    def broken(estimator, X_test, y_test):
        raise RuntimeError("boom")

    with pytest.raises(CubeError, match=r"scorer 'broken' failed for model 'logreg' on split 0: "
                       r"it raised RuntimeError: boom") as info:  # fmt: skip
        collect(_learners(), X, y, design, scoring=broken, greater_is_better=True, progress=False)
    assert isinstance(info.value.__cause__, RuntimeError)

    with pytest.raises(CubeError, match="scorer 'neg_log_loss' failed for model 'svc'") as info:
        collect({"svc": SVC()}, X, y, design, scoring="neg_log_loss", progress=False)
    assert isinstance(info.value.__cause__, AttributeError)
    assert "predict_proba" in str(info.value)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (np.nan, "it returned nan"),
        (np.inf, "it returned inf"),
        ({"a": 1.0}, r"not one number \(for several metrics pass a dict of scorers\)"),
        ("0.5", "it returned str '0.5', not one number"),
        (True, "it returned bool"),
    ],
)
def test_scorer_bad_value(cancer, design, value, match):
    X, y = cancer

    def bad(estimator, X_test, y_test):
        return value

    with pytest.raises(CubeError, match=match):
        collect(_learners(), X, y, design, scoring=bad, greater_is_better=True, progress=False)


# --------------------------------------------------------------------------- argument errors


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"scoring": 3}, CvstatsTypeError, "`scoring` takes what scikit-learn's scoring="),
        ({"scoring": "auc_roc"}, ArgumentError, "'auc_roc' is not a scikit-learn scorer name"),
        ({"scoring": roc_auc_score}, ArgumentError, "looks like it is a metric function"),
        ({"scoring": []}, ArgumentError, "`scoring` is empty"),
        ({"scoring": ["accuracy", "accuracy"]}, ArgumentError, "more than once"),
        ({"scoring": ["accuracy", accuracy_score]}, CvstatsTypeError, "pass callables in a dict"),
        ({"scoring": {1: "accuracy"}}, CvstatsTypeError, "keys of a `scoring` dict"),
        ({"scoring": {"a": 3}}, CvstatsTypeError, "scorer 'a' must be a scorer name"),
        ({"scoring": {"fold": "accuracy"}}, ArgumentError, "metric name 'fold' is the name"),
        ({"scoring": {" ": "accuracy"}}, ArgumentError, "metric name ' ' is empty"),
        (
            {"scoring": ["accuracy", "roc_auc"], "name": "x"},
            ArgumentError,
            "name the metrics with the keys of a `scoring` dict",
        ),
        ({"scoring": "accuracy", "greater_is_better": "yes"}, CvstatsTypeError, "must be True"),
        (
            {"scoring": {"a": "accuracy"}, "greater_is_better": {"a": 1}},
            CvstatsTypeError,
            r"greater_is_better\['a'\] must be True or False",
        ),
    ],
)
def test_bad_scoring(cancer, design, kwargs, error, match):
    X, y = cancer
    with pytest.raises(error, match=match):
        collect(_learners(), X, y, design, progress=False, **kwargs)


def test_unknown_name_chains_sklearn_error(cancer, design):
    X, y = cancer
    with pytest.raises(ArgumentError) as info:
        collect(_learners(), X, y, design, scoring="auc_roc", progress=False)
    assert isinstance(info.value.__cause__, ValueError)


def test_callable_learner_refused(cancer, design):
    X, y = cancer

    def fit_predict(X_train, y_train, X_test):
        return np.zeros(len(X_test))

    with pytest.raises(CvstatsTypeError, match="learner 'f' is a fit_predict callable"):
        collect({"f": fit_predict}, X, y, design, scoring="accuracy", progress=False)


# --------------------------------------------------------------------------- methods


def test_methods_run_on_the_score_cubes(cancer, design):
    X, y = cancer
    scores = collect(
        _learners(), X, y, design, scoring=["roc_auc", "neg_log_loss"], progress=False
    )
    for metric in ("roc_auc", "neg_log_loss"):
        cube = scores[metric]
        cvstats.validate(cube)
        res = cvstats.corrected_resampled_t(cube)
        assert np.isfinite(res.estimate.values).all()
        diff = cvstats.corrected_resampled_t(cvstats.pairwise(cube))
        expected = (cube.sel(model="tree") - cube.sel(model="logreg")).mean().item()
        np.testing.assert_allclose(abs(diff.estimate.values), abs(expected), rtol=1e-12)
        table = cvstats.compare(f"{metric} ~ model", cube)
        frame = table.to_frame()
        assert "corrected_resampled_t" in set(frame["method"])


def test_kfold_score_cube_runs_kfold_tests(cancer):
    X, y = cancer
    design = designs.kfold(N, K=5, repeats=2, stratify=y, seed=3)
    cube = collect(_learners(), X, y, design, scoring="roc_auc", progress=False)
    cvstats.validate(cube)
    res = cvstats.corrected_repeated_kfold_t(cvstats.pairwise(cube))
    assert np.isfinite(res.statistic.values).all()


# --------------------------------------------------------------------------- reproducibility


def _random_learners():
    return {
        "tree": DecisionTreeClassifier(max_features="sqrt"),
        "logreg": _logreg(),
    }


def test_reproducible_with_a_seed(cancer, design):
    X, y = cancer
    a = collect(_random_learners(), X, y, design, scoring="roc_auc", seed=7, progress=False)
    b = collect(_random_learners(), X, y, design, scoring="roc_auc", seed=7, progress=False)
    xr.testing.assert_identical(a, b)
    assert a.attrs["collect_seed"] == 7
    c = collect(_random_learners(), X, y, design, scoring="roc_auc", seed=8, progress=False)
    assert not np.array_equal(a.sel(model="tree").values, c.sel(model="tree").values)
    # the seeds do not depend on what is asked: the same fits as a loss-only collect
    losses = collect(_random_learners(), X, y, design, seed=7, progress=False)
    acc = collect(_random_learners(), X, y, design, scoring="accuracy", seed=7, progress=False)
    np.testing.assert_allclose(acc.values, 1 - scores_from_losses(losses).values, atol=1e-15)


def test_n_jobs_does_not_change_scores(cancer, design):
    X, y = cancer
    scoring = ["roc_auc", "accuracy"]
    a = collect(_random_learners(), X, y, design, scoring=scoring, n_jobs=1, progress=False)
    b = collect(_random_learners(), X, y, design, scoring=scoring, n_jobs=2, progress=False)
    xr.testing.assert_identical(a, b)


def test_progress_bar_counts_fits(cancer, design, capsys):
    X, y = cancer
    collect(_learners(), X, y, design, loss="log", scoring=["roc_auc", "accuracy"])
    err = capsys.readouterr().err
    J = design.sizes["split"]
    assert "collect" in err and f"{2 * J}/{2 * J}" in err


def test_plain_callable_of_negated_values_with_false_is_checked_as_everywhere(cancer, design):
    # collect builds its score cubes with from_scores, so it runs the one negated-loss check
    # of from_scores and from_cv_results (cvstats.cube.score.check_not_negated)
    X, y = cancer

    def neg_error(estimator, X_test, y_test):  # a loss negated, like scikit-learn's neg_*
        return -float(np.mean(estimator.predict(X_test) != y_test)) - 0.01

    with pytest.raises(ArgumentError, match="metric 'neg_error'.*all <= 0.*reverse every"):
        collect(
            _learners(), X, y, design, scoring=neg_error, greater_is_better=False, progress=False
        )

    def minus_error(estimator, X_test, y_test):
        return neg_error(estimator, X_test, y_test)

    # another name: a plain callable may return a negative loss, so it is warned of
    with pytest.warns(CvstatsWarning, match="metric 'minus_error'.*all <= 0"):
        cube = collect(
            _learners(), X, y, design, scoring=minus_error, greater_is_better=False, progress=False
        )
    assert cube.attrs["greater_is_better"] == 0


# --------------------------------------------------------------------------
# the fast path of scoring="roc_auc": equal to scikit-learn's scorer, or its fallback
# --------------------------------------------------------------------------


class _PredictOnly(ClassifierMixin, BaseEstimator):
    """A stub classifier whose responses are columns of X: column 1 is P(classes_[1])."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return self.classes_[(np.asarray(X)[:, 1] > 0.5).astype(int)]


class _Proba(_PredictOnly):
    def predict_proba(self, X):
        p = np.asarray(X)[:, 1]
        return np.column_stack([1 - p, p])


class _ProbaAndDecision(_Proba):
    def decision_function(self, X):
        return np.asarray(X)[:, 0]


def _sklearn_or_error(estimator, X, y):
    """scikit-learn's "roc_auc" scorer's value, or its exception type."""
    try:
        return get_scorer("roc_auc")(estimator, X, y)
    except Exception as e:
        return type(e)


def _fast_or_fallback(estimator, X, y):
    """What collect computes for "roc_auc": the fast value, else sklearn's (None if it raises)."""
    return _fast_score(_BinaryRocAuc(), get_scorer("roc_auc"), estimator, X, y)


@pytest.mark.parametrize(
    "labels", [(0, 1), (-1, 1), ("no", "yes"), ("b", "a"), (False, True), (2.0, 5.0)]
)
def test_fast_roc_auc_equals_sklearns_scorer_with_ties(labels):
    rng = np.random.default_rng(abs(hash(str(labels))) % 2**32)
    fast = _BinaryRocAuc()
    for _ in range(150):
        n = int(rng.integers(4, 50))
        y = np.array(labels)[rng.integers(0, 2, n)]
        y[:2] = labels  # both classes in the test set
        # 0 to 2 decimals: from all scores tied in two values to few ties
        X = np.round(rng.random((n, 2)), int(rng.integers(0, 3)))
        for est in (_Proba().fit(X, y), _ProbaAndDecision().fit(X, y)):
            expected = _sklearn_or_error(est, X, y)
            assert fast(est, X, y) == pytest.approx(expected, rel=0, abs=1e-12)


def test_fast_roc_auc_hand_worked_ties_and_response_order():
    # positives score 0.4 and 0.8, negatives 0.1 and 0.4: pairs 1 + 1/2 + 1 + 1 of 4
    X = np.array([[0.9, 0.1], [0.1, 0.4], [0.0, 0.4], [0.2, 0.8]])
    y = np.array(["neg", "neg", "pos", "pos"])
    assert _BinaryRocAuc()(_Proba().fit(X, y), X, y) == 0.875
    # decision_function comes first (scikit-learn's order): column 0 ranks them otherwise,
    # negatives 0.9, 0.1 against positives 0.0, 0.2: one pair of four in order
    assert _BinaryRocAuc()(_ProbaAndDecision().fit(X, y), X, y) == 0.25
    assert get_scorer("roc_auc")(_ProbaAndDecision().fit(X, y), X, y) == 0.25
    # the positive class is classes_[1], the larger label: renaming flips the AUC
    flipped = np.where(y == "pos", "a", "b")
    assert _BinaryRocAuc()(_Proba().fit(X, flipped), X, flipped) == 0.125


def test_fast_roc_auc_equals_sklearn_on_fitted_models_and_random_test_sets(cancer):
    X, y = cancer
    rng = np.random.default_rng(3)
    fast = _BinaryRocAuc()
    models = [
        _logreg(),
        DecisionTreeClassifier(min_samples_leaf=5, random_state=0),  # tied leaf probabilities
        GaussianNB(),
        SVC(),
    ]
    for est in models:
        est.fit(X[:60], y[:60])
        for _ in range(40):
            test = rng.choice(np.arange(60, N), size=int(rng.integers(8, 50)), replace=False)
            X_test, y_test = X[test], y[test]
            if np.unique(y_test).size < 2:
                continue
            expected = get_scorer("roc_auc")(est, X_test, y_test)
            assert fast(est, X_test, y_test) == pytest.approx(expected, rel=0, abs=1e-12)


def _three_classes(n=90, seed=4):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    return rng.normal(size=(n, 3)) + y[:, None], y


@pytest.mark.parametrize(
    "case", ["multiclass", "binary_test_of_3_classes", "no_response", "nan_scores", "objects",
             "continuous_labels", "one_class"],
)  # fmt: skip
def test_fast_roc_auc_falls_back_to_sklearn(case):
    rng = np.random.default_rng(5)
    X, y = rng.random((30, 2)), np.repeat([0, 1], 15)
    est = _Proba().fit(X, y)
    if case == "multiclass":
        X, y = _three_classes()
        est = LogisticRegression().fit(X, y)
    elif case == "binary_test_of_3_classes":
        X3, y3 = _three_classes()
        est = LogisticRegression().fit(X3, y3)
        X, y = X3[y3 < 2], y3[y3 < 2]
    elif case == "no_response":
        est = _PredictOnly().fit(X, y)
    elif case == "nan_scores":
        X[3, 1] = np.nan
    elif case == "objects":
        y = np.array(["a", 1], dtype=object)[y]
        est = _Proba().fit(X, y.astype(str))
    elif case == "continuous_labels":
        y = y + 0.5
        est = _Proba().fit(X, y)
    else:
        y = np.zeros(30, dtype=int)
    assert _BinaryRocAuc()(est, X, y) is None
    expected = _sklearn_or_error(est, X, y)
    value = _fast_or_fallback(est, X, y)
    if isinstance(expected, type):  # sklearn raises: collect reports its error
        assert value is None
    else:
        assert value == expected


def test_multiclass_roc_auc_still_refused_with_sklearns_error():
    X, y = _three_classes()
    design = designs.kfold(len(y), K=3, stratify=y, seed=0)
    with pytest.raises(CubeError, match="scorer 'roc_auc' failed for model 'lr'") as info:
        collect({"lr": LogisticRegression()}, X, y, design, scoring="roc_auc", progress=False)
    assert isinstance(info.value.__cause__, ValueError)
    assert "multi_class" in str(info.value)


def test_roc_auc_name_takes_the_fast_path(cancer, design, monkeypatch):
    import sklearn.metrics._ranking as ranking

    calls = []
    roc_curve = ranking.roc_curve

    def counting(*args, **kwargs):
        calls.append(1)
        return roc_curve(*args, **kwargs)

    monkeypatch.setattr(ranking, "roc_curve", counting)
    X, y = cancer
    J = design.sizes["split"]
    # the control: scikit-learn's scorer object computes a ROC curve per split and model
    by_object = collect(
        _learners(), X, y, design, scoring={"auc": get_scorer("roc_auc")}, progress=False
    )
    assert len(calls) == 2 * J
    calls.clear()
    for scoring in ("roc_auc", {"auc": "roc_auc"}, ["accuracy", "roc_auc"]):
        scores = collect(_learners(), X, y, design, scoring=scoring, progress=False)
        assert not calls, scoring
        auc = scores if isinstance(scores, xr.DataArray) else scores[next(iter(scoring))]
        auc = scores["roc_auc"] if isinstance(scoring, list) else auc
        np.testing.assert_allclose(auc.values, by_object["auc"].values, rtol=0, atol=1e-12)


def test_fast_scorer_pickles():
    fast = pickle.loads(pickle.dumps(_BinaryRocAuc()))
    X = np.array([[0.0, 0.2], [0.0, 0.7]])
    assert fast(_Proba().fit(X, [0, 1]), X, np.array([0, 1])) == 1.0
