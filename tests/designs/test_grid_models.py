"""cvstats.designs.grid_models: a parameter grid as the learners of collect (issue 30, 3)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import cvstats
from cvstats.designs import grid_models
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError

GRID = [{"ridge__alpha": [0.03, 2.5, 40.0], "ridge__fit_intercept": [True, False]}]


def _data(n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, 3))
    return X, X @ [1.0, -0.5, 0.2] + rng.normal(size=n)


def test_labels_and_order_are_those_of_from_cv_results():
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), Ridge())
    cv = KFold(4, shuffle=True, random_state=3)
    search = GridSearchCV(pipe, GRID, cv=cv, scoring="neg_mean_squared_error").fit(X, y)
    cube = cvstats.from_cv_results(search, X=X, y=y)
    models = grid_models(pipe, GRID)
    assert list(models) == [str(m) for m in cube["model"].values]
    for params, est in zip(search.cv_results_["params"], models.values(), strict=True):
        got = est.get_params()
        assert all(got[k] == v for k, v in params.items())
        assert est is not pipe and not hasattr(est[-1], "coef_")  # unfitted clones


def test_collect_over_the_grid_feeds_the_selection_methods():
    X, y = _data(80)
    models = grid_models(Ridge(), {"alpha": [0.01, 1.0, 30.0, 300.0]})
    design = cvstats.designs.kfold(80, K=5, seed=1)
    cube = cvstats.collect(models, X, y, design, loss="squared", progress=False)
    res = cvstats.model_confidence_set(cube, statistic="max", n_boot=200)
    assert list(res.pvalue["model"].values) == list(models)
    assert "alpha=300" not in res.members  # far too much shrinkage on this signal


def test_repeated_labels_get_their_row():
    models = grid_models(Ridge(), [{"alpha": [0.5, 2.0]}, {"alpha": [0.5]}])
    assert list(models) == ["alpha=0.5 [candidate 0]", "alpha=2", "alpha=0.5 [candidate 2]"]


@pytest.mark.parametrize(
    ("estimator", "grid", "error", "match"),
    [
        ("ridge", {"alpha": [1.0]}, CvstatsTypeError, r"`estimator` must be a scikit-learn"),
        (Ridge(), {"alpah": [1.0]}, ArgumentError, r"`param_grid` names \['alpah'\]"),
        (Ridge(), {"alpha": 1.0}, CvstatsTypeError, r"`param_grid` must be a dict"),
        (Ridge(), {"alpha": []}, ArgumentError, r"`param_grid` .* non-empty list"),
        (Ridge(), [], ArgumentError, r"`param_grid` \[\] has no candidate"),
    ],
)
def test_bad_inputs_are_refused(estimator, grid, error, match):
    with pytest.raises(error, match=match):
        grid_models(estimator, grid)


@pytest.mark.parametrize(
    ("method", "name"),
    [
        (cvstats.bbc_cv, "BBC-CV"),
        (cvstats.model_confidence_set, "The model confidence set"),
        (cvstats.cv_confidence_set, "Cross-validation with confidence"),
    ],
)
def test_a_from_cv_results_cube_is_refused_with_the_reason_and_the_route(method, name):
    X, y = _data()
    cv = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(Ridge(), {"alpha": [0.1, 10.0]}, cv=cv).fit(X, y)
    scores = cvstats.from_cv_results(search, X=X, y=y)
    with pytest.raises(
        CubeError, match=rf"{name} needs per-example losses.*resamples.*grid_models"
    ):
        method(scores)
