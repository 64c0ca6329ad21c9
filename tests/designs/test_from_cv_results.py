"""Tests of cvstats.designs.from_cv_results: score cubes from scikit-learn's CV results.

Real fits on a 150-row subsample of the breast-cancer data (small grids); every cube is
checked against the search's own ``split{k}_test_*`` columns (exact equality), the design
against the splitter's indices, and a corrected test is run on it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import xarray as xr
from scipy.stats import loguniform
from sklearn import model_selection as ms
from sklearn.datasets import load_breast_cancer, make_moons
from sklearn.exceptions import FitFailedWarning
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer, mean_absolute_error, roc_auc_score
from sklearn.model_selection import HalvingGridSearchCV
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils import resample

import cvstats
from cvstats.designs import from_cv_results
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, CvstatsWarning, DesignError


def _data() -> tuple[np.ndarray, np.ndarray]:
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(0).choice(len(y), 150, replace=False)
    # three weak features (texture, smoothness, symmetry): an ROC AUC near 0.88, no model
    # perfect, so that the differences of models vary over the splits
    return StandardScaler().fit_transform(X[rows][:, [1, 4, 8]]), y[rows]


X, Y = _data()
N = len(Y)
GRID = {"C": [0.01, 1.0], "class_weight": [None, "balanced"]}
LABELS = [
    "C=0.01, class_weight=None",
    "C=0.01, class_weight=balanced",
    "C=1, class_weight=None",
    "C=1, class_weight=balanced",
]


def logreg(**params) -> LogisticRegression:
    return LogisticRegression(max_iter=2000, **params)


def splitter_masks(cv, X=X, y=Y, groups=None) -> tuple[np.ndarray, np.ndarray]:
    """Train/test masks (split, example) straight from ``cv.split``."""
    pairs = list(cv.split(X, y, groups))
    train = np.zeros((len(pairs), len(X)), dtype=bool)
    test = np.zeros_like(train)
    for j, (tr, te) in enumerate(pairs):
        train[j, tr] = True
        test[j, te] = True
    return train, test


def split_columns(cv_results, key: str) -> np.ndarray:
    """The search's per-split scores, (split, candidate)."""
    k = 0
    cols = []
    while f"split{k}_test_{key}" in cv_results:
        cols.append(np.asarray(cv_results[f"split{k}_test_{key}"]))
        k += 1
    return np.stack(cols)


def check_design(cube: xr.DataArray, train: np.ndarray, test: np.ndarray) -> None:
    """The cube's split sizes are the masks', and so are its design's masks."""
    assert cube.sizes["split"] == test.shape[0]
    assert cube.attrs["n"] == test.shape[1]
    np.testing.assert_array_equal(cube.n_test.values, test.sum(axis=1))
    np.testing.assert_array_equal(cube.n_train.values, train.sum(axis=1))


def design_masks(cv, **kw) -> tuple[np.ndarray, np.ndarray]:
    d = cvstats.designs.from_splitter(cv, **kw)
    return d["train"].values, d["test"].values


@pytest.fixture(scope="module")
def grid_kfold():
    cv = ms.KFold(5, shuffle=True, random_state=0)
    return ms.GridSearchCV(logreg(), GRID, cv=cv, scoring="roc_auc").fit(X, Y), cv


@pytest.fixture(scope="module")
def grid_repeated():
    cv = ms.RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=1)
    return ms.GridSearchCV(logreg(), GRID, cv=cv).fit(X, Y), cv  # scoring=None: accuracy


@pytest.fixture(scope="module")
def halving():
    cv = ms.StratifiedKFold(3, shuffle=True, random_state=0)
    search = HalvingGridSearchCV(
        logreg(),
        {"C": [0.001, 0.01, 0.1, 1.0, 10.0, 100.0]},
        cv=cv,
        factor=3,
        min_resources=50,
        random_state=0,
        scoring="roc_auc",
    ).fit(X, Y)
    assert search.n_resources_ == [50, 150]
    return search, cv


def run_corrected(cube: xr.DataArray):
    res = cvstats.corrected_repeated_kfold_t(cvstats.pairwise(cube))
    assert np.isfinite(res.statistic.values).all()
    return res


# --------------------------------------------------------------------------
# searches
# --------------------------------------------------------------------------


def test_grid_search_kfold(grid_kfold):
    search, cv = grid_kfold
    cube = from_cv_results(search, X=X, y=Y)
    assert cube.name == "roc_auc" and cube.attrs["metric"] == "roc_auc"
    assert cube.attrs["greater_is_better"] == 1
    assert cube.attrs["source"] == "GridSearchCV.cv_results_"
    assert cube.dims == ("split", "model")
    assert cube.model.values.tolist() == LABELS
    assert cube.candidate.values.tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(cube.values, split_columns(search.cv_results_, "score"))
    train, test = splitter_masks(cv)
    check_design(cube, train, test)
    np.testing.assert_array_equal(design_masks(cv, n=N)[1], test)
    assert cube.fold.values.tolist() == [0, 1, 2, 3, 4]
    cvstats.validate(cube)
    run_corrected(cube)
    # the cv can be given too (the same splitter, rebuilt)
    again = from_cv_results(search, cv=ms.KFold(5, shuffle=True, random_state=0), n=N)
    xr.testing.assert_identical(again, cube)


def test_grid_search_repeated_stratified_default_score(grid_repeated):
    search, cv = grid_repeated
    cube = from_cv_results(search, X=X, y=Y)
    # scoring=None: LogisticRegression.score is ClassifierMixin.score, the accuracy
    assert cube.name == "accuracy" and cube.attrs["greater_is_better"] == 1
    assert cube.model.values.tolist() == LABELS
    np.testing.assert_array_equal(cube.values, split_columns(search.cv_results_, "score"))
    train, test = splitter_masks(cv)
    check_design(cube, train, test)
    assert cube.repeat.values.tolist() == [0] * 3 + [1] * 3
    assert cube.attrs["splitter"] == "RepeatedStratifiedKFold" and cube.attrs["seed"] == 1
    res = run_corrected(cube)
    assert res.n_splits == 6 and float(res.df.values[0]) == 5.0


def test_cv_results_dict_and_frame_with_cv(grid_kfold):
    search, cv = grid_kfold
    ref = from_cv_results(search, X=X, y=Y)
    for results in (search.cv_results_, pd.DataFrame(search.cv_results_)):
        cube = from_cv_results(results, cv=cv, X=X, metric="roc_auc")
        assert cube.attrs["source"] == "cv_results_"
        np.testing.assert_array_equal(cube.values, ref.values)
        assert cube.model.values.tolist() == LABELS
        np.testing.assert_array_equal(cube.n_test.values, ref.n_test.values)


def test_multi_metric_search():
    cv = ms.StratifiedKFold(5, shuffle=True, random_state=2)
    scoring = ["roc_auc", "accuracy", "neg_log_loss"]
    search = ms.GridSearchCV(logreg(), GRID, cv=cv, scoring=scoring, refit="roc_auc").fit(X, Y)
    ds = from_cv_results(search, X=X, y=Y)
    assert isinstance(ds, xr.Dataset) and list(ds.data_vars) == scoring
    train, test = splitter_masks(cv, y=Y)
    for name in scoring:
        cube = ds[name]
        assert cube.attrs["metric"] == name and cube.attrs["greater_is_better"] == 1
        np.testing.assert_array_equal(cube.values, split_columns(search.cv_results_, name))
        assert cube.model.values.tolist() == LABELS
        check_design(cube, train, test)
        run_corrected(cube)
    assert (ds["neg_log_loss"].values < 0).all()  # negated loss: greater is better
    one = from_cv_results(search, X=X, y=Y, metric="accuracy")
    xr.testing.assert_identical(one, ds["accuracy"])
    two = from_cv_results(search, X=X, y=Y, metric=["accuracy", "roc_auc"])
    assert list(two.data_vars) == ["accuracy", "roc_auc"]
    # a dict of scorers: keys name the cubes, the scorer names give the direction
    named = ms.GridSearchCV(
        logreg(),
        {"C": [0.01, 1.0]},
        cv=ms.KFold(2),
        refit=False,
        scoring={"auc": "roc_auc", "acc": "accuracy"},
    ).fit(X, Y)
    ds2 = from_cv_results(named, X=X, y=Y)
    assert list(ds2.data_vars) == ["auc", "acc"]
    assert ds2["auc"].attrs["metric"] == "roc_auc" and ds2["auc"].attrs["greater_is_better"] == 1


def test_randomized_search():
    cv = ms.RepeatedKFold(n_splits=3, n_repeats=2, random_state=3)
    search = ms.RandomizedSearchCV(
        logreg(),
        {"C": loguniform(1e-2, 1e1)},
        n_iter=3,
        cv=cv,
        random_state=0,
        scoring="neg_log_loss",
    ).fit(X, Y)
    cube = from_cv_results(search, X=X)
    labels = [f"C={p['C']:.6g}" for p in search.cv_results_["params"]]
    assert cube.model.values.tolist() == labels and len(set(labels)) == 3
    assert cube.name == "neg_log_loss" and cube.attrs["greater_is_better"] == 1
    np.testing.assert_array_equal(cube.values, split_columns(search.cv_results_, "score"))
    check_design(cube, *splitter_masks(cv))
    run_corrected(cube)


def test_halving_search_last_iteration(halving):
    search, cv = halving
    with pytest.warns(CvstatsWarning, match=r"iteration 1 \(2 candidates\).*iteration=k"):
        cube = from_cv_results(search, X=X, y=Y)
    last = np.flatnonzero(search.cv_results_["iter"] == 1)
    assert cube.candidate.values.tolist() == last.tolist()
    params = np.asarray(search.cv_results_["params"])[last]
    assert cube.model.values.tolist() == [f"C={p['C']:g}" for p in params]
    assert cube.attrs["iteration"] == 1 and cube.attrs["n_resources"] == N
    np.testing.assert_array_equal(cube.values, split_columns(search.cv_results_, "score")[:, last])
    check_design(cube, *splitter_masks(cv))  # all 150 examples: the base splits
    run_corrected(cube)
    xr.testing.assert_identical(from_cv_results(search, X=X, y=Y, iteration=-1), cube)


def test_halving_search_subsampled_iteration(halving):
    search, cv = halving
    cube = from_cv_results(search, X=X, y=Y, iteration=0)
    first = np.flatnonzero(search.cv_results_["iter"] == 0)
    assert cube.sizes["model"] == 6 and cube.attrs["n_resources"] == 50
    scores = split_columns(search.cv_results_, "score")[:, first]
    np.testing.assert_array_equal(cube.values, scores)
    # the subsamples scikit-learn draws (training and test sets, fraction 50/150, the
    # search's random_state), rebuilt here independently; refitting on them gives the scores
    design = cvstats.designs.from_splitter(cv, X, Y)
    assert cube.attrs["seed"] == design.attrs["seed"] == 0
    for k, (tr, te) in enumerate(cv.split(X, Y)):
        tr = resample(tr, replace=False, random_state=0, n_samples=int(50 / 150 * len(tr)))
        te = resample(te, replace=False, random_state=0, n_samples=int(50 / 150 * len(te)))
        assert cube.n_train.values[k] == len(tr) and cube.n_test.values[k] == len(te)
        for i, p in enumerate(np.asarray(search.cv_results_["params"])[first]):
            fit = logreg(**p).fit(X[tr], Y[tr])
            assert roc_auc_score(Y[te], fit.decision_function(X[te])) == scores[k, i]
    res = cvstats.corrected_resampled_t(cvstats.pairwise(cube, models=["C=0.1", "C=100"]))
    assert res.n1 == 33 and res.n2 == 16


# --------------------------------------------------------------------------
# cross_validate and cross_val_score
# --------------------------------------------------------------------------


def test_cross_validate_two_models_with_indices():
    cv = ms.StratifiedKFold(5, shuffle=True, random_state=4)
    models = {"logreg": logreg(), "svc": SVC(random_state=0)}
    runs = {
        name: ms.cross_validate(
            m, X, Y, cv=cv, scoring=["roc_auc", "accuracy"], return_indices=True
        )
        for name, m in models.items()
    }
    ds = from_cv_results(runs)  # no cv, no X: the indices are the design
    assert isinstance(ds, xr.Dataset) and list(ds.data_vars) == ["roc_auc", "accuracy"]
    train, test = splitter_masks(cv)
    for metric in ("roc_auc", "accuracy"):
        cube = ds[metric]
        assert cube.model.values.tolist() == ["logreg", "svc"]
        assert cube.attrs["greater_is_better"] == 1
        np.testing.assert_array_equal(
            cube.values, np.stack([runs[m][f"test_{metric}"] for m in models], axis=1)
        )
        check_design(cube, train, test)
        run_corrected(cube)
    # one model, one metric; and a cv given along must make the same splits
    one = from_cv_results(runs["svc"], metric="accuracy", cv=cv, X=X, y=Y)
    assert one.model.values.tolist() == ["model0"]
    np.testing.assert_array_equal(one.values[:, 0], runs["svc"]["test_accuracy"])


def test_cross_validate_shuffle_split_resampled_t():
    cv = ms.ShuffleSplit(6, test_size=30, random_state=5)
    runs = {
        c: ms.cross_validate(logreg(C=c), X, Y, cv=cv, scoring="roc_auc", return_indices=True)
        for c in (0.1, 1.0)
    }
    cube = from_cv_results({f"C={c}": r for c, r in runs.items()}, metric="roc_auc", n=N)
    check_design(cube, *splitter_masks(cv))
    res = cvstats.corrected_resampled_t(cvstats.pairwise(cube))
    assert res.n1 == 120 and res.n2 == 30


def test_cross_val_score_arrays():
    cv = ms.RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=6)
    scores = {
        "logreg": ms.cross_val_score(logreg(), X, Y, cv=cv, scoring="roc_auc"),
        "svc": ms.cross_val_score(SVC(random_state=0), X, Y, cv=cv, scoring="roc_auc"),
    }
    cube = from_cv_results(scores, cv=cv, X=X, y=Y, metric="roc_auc")
    assert cube.name == "roc_auc" and cube.attrs["greater_is_better"] == 1
    assert cube.model.values.tolist() == ["logreg", "svc"]
    np.testing.assert_array_equal(cube.values, np.stack(list(scores.values()), axis=1))
    check_design(cube, *splitter_masks(cv))
    run_corrected(cube)
    single = from_cv_results(scores["svc"], cv=cv, X=X, y=Y, greater_is_better=True)
    assert single.name == "score" and single.model.values.tolist() == ["model0"]


# --------------------------------------------------------------------------
# scikit-learn's gallery example "Statistical comparison of models using grid search"
# --------------------------------------------------------------------------


def test_gallery_example_corrected_t():
    # the example's data, grid and splitter (plot_grid_search_stats.py)
    Xm, ym = make_moons(noise=0.352, random_state=1, n_samples=100)
    param_grid = [
        {"kernel": ["linear"]},
        {"kernel": ["poly"], "degree": [2, 3]},
        {"kernel": ["rbf"]},
    ]
    cv = ms.RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0)
    search = ms.GridSearchCV(SVC(random_state=0), param_grid, scoring="roc_auc", cv=cv)
    search.fit(Xm, ym)

    # the example's computation: the two best-ranked models, their 100 fold differences,
    # the Nadeau-Bengio corrected std with n_train, n_test of the first split, t_{kr-1}
    res_ = search.cv_results_
    best, second = np.argsort(res_["rank_test_score"], kind="stable")[:2]
    scores = split_columns(res_, "score")
    differences = scores[:, best] - scores[:, second]
    kr = differences.shape[0]
    n_train, n_test = (len(idx) for idx in next(cv.split(Xm, ym)))
    corrected_std = np.sqrt((1 / kr + n_test / n_train) * np.var(differences, ddof=1))
    t_stat = np.mean(differences) / corrected_std
    p_two = 2 * scipy.stats.t.sf(np.abs(t_stat), df=kr - 1)
    p_right = scipy.stats.t.sf(np.abs(t_stat), df=kr - 1)  # what the example prints

    # cvstats, in three lines
    cube = from_cv_results(search, X=Xm, y=ym)
    top2 = cube.model.values[np.argsort(res_["rank_test_score"], kind="stable")[:2]]
    result = cvstats.corrected_repeated_kfold_t(cvstats.pairwise(cube, models=top2))

    assert result.statistic.values[0] == pytest.approx(t_stat, rel=1e-12)
    assert result.pvalue.values[0] == pytest.approx(p_two, rel=1e-10)
    assert result.df.values[0] == kr - 1 == 99
    one_sided = cvstats.corrected_repeated_kfold_t(
        cvstats.pairwise(cube, models=top2), alternative="greater" if t_stat > 0 else "less"
    )
    assert one_sided.pvalue.values[0] == pytest.approx(p_right, rel=1e-10)
    # Where the example and Bouckaert & Frank (2004) meet: the example's variance factor
    # 1/(kr) + n_test/n_train uses the sizes of the first split; B&F's corrected repeated
    # k-fold t uses 1/(kr) + 1/(k-1), i.e. rho0 = n2/n = 1/k (Nadeau & Bengio's rho0 with
    # n2/n1 = 1/(k-1)), and both refer t to t_{kr-1}. With n = 100 and k = 10 every fold
    # is 10/90, so n_test/n_train = 1/9 = 1/(k-1) exactly and the two coincide (as here);
    # when k does not divide n the example's factor is the first fold's (slightly larger
    # test fold) and differs from B&F's by O(1/n). The corrected resampled t (Nadeau &
    # Bengio, method 6) on the same 100 splits uses the cube's n2/n1 = 10/90: the same.
    resampled = cvstats.corrected_resampled_t(cvstats.pairwise(cube, models=top2))
    assert resampled.statistic.values[0] == pytest.approx(t_stat, rel=1e-12)
    assert resampled.pvalue.values[0] == pytest.approx(p_two, rel=1e-10)
    assert (resampled.n1, resampled.n2) == (n_train, n_test) == (90, 10)


# --------------------------------------------------------------------------
# errors, each naming its fix
# --------------------------------------------------------------------------


def test_error_sizes_unknown(grid_kfold):
    search, cv = grid_kfold
    with pytest.raises(ArgumentError, match="number of examples is unknown.*X=.*n="):
        from_cv_results(search)
    arrays = {"a": search.cv_results_["split0_test_score"][:5]}
    with pytest.raises(ArgumentError, match="number of examples is unknown"):
        from_cv_results(arrays, cv=cv, greater_is_better=True)
    with pytest.raises(ArgumentError, match="hold no indices.*cv="):
        from_cv_results(arrays, X=X, greater_is_better=True)


def test_error_results_without_split_columns(grid_kfold):
    search, _ = grid_kfold
    means = {k: v for k, v in search.cv_results_.items() if not k.startswith("split")}
    with pytest.raises(ArgumentError, match="no per-split test scores.*whole cv_results_"):
        from_cv_results(means, cv=search.cv, X=X, metric="roc_auc")
    with pytest.raises(ArgumentError, match="no per-split test scores.*return_indices=True"):
        from_cv_results({"fit_time": np.ones(5), "score_time": np.ones(5)})


def test_error_splitter_does_not_match(grid_kfold):
    search, _ = grid_kfold
    with pytest.raises(DesignError, match="not the GridSearchCV's own splitter"):
        from_cv_results(search, cv=ms.KFold(5, shuffle=True), X=X)
    with pytest.raises(DesignError, match="random_state = None.*int random_state"):
        from_cv_results(search.cv_results_, cv=ms.KFold(5, shuffle=True), X=X, metric="roc_auc")
    with pytest.raises(DesignError, match="makes 4 splits but .* hold 5"):
        from_cv_results(
            search.cv_results_, cv=ms.KFold(4, shuffle=True, random_state=0), X=X, metric="roc_auc"
        )
    run = ms.cross_validate(logreg(), X, Y, cv=ms.KFold(3), return_indices=True)
    with pytest.raises(DesignError, match="does not make the splits of the returned indices"):
        from_cv_results(
            run, cv=ms.KFold(3, shuffle=True, random_state=0), X=X, greater_is_better=True
        )


def test_error_halving_sizes_and_iterations(halving, grid_kfold):
    search, _ = halving
    with pytest.raises(DesignError, match="fitted on 150 examples.*X/y/n give 140"):
        from_cv_results(search, n=140, y=Y[:140], iteration=-1)
    with pytest.raises(ArgumentError, match="out of range.*iterations \\[0, 1\\]"):
        from_cv_results(search, X=X, y=Y, iteration=2)
    with pytest.raises(ArgumentError, match="come from iterations \\[0, 1\\]"):
        from_cv_results(search, X=X, y=Y, candidates=[0, 7])
    with pytest.raises(DesignError, match="pass the fitted search object"):
        from_cv_results(search.cv_results_, cv=search.cv, X=X, y=Y, metric="roc_auc", iteration=0)
    with pytest.raises(ArgumentError, match="`iteration` is for the results of a halving"):
        from_cv_results(grid_kfold[0], X=X, iteration=0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning")
@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
def test_error_nan_scores_name_candidate_and_split():
    cv = ms.KFold(3, shuffle=True, random_state=0)
    search = ms.GridSearchCV(logreg(), {"C": [1.0, -1.0]}, cv=cv, scoring="roc_auc")
    with pytest.warns(FitFailedWarning):
        search.fit(X, Y)
    with pytest.raises(
        CubeError,
        match=r"candidate 1 \('C=-1'\) has a NaN score in split 0 "
        r"\('split0_test_score'.*error_score='raise'.*candidates=\[0\]",
    ):
        from_cv_results(search, X=X)
    assert from_cv_results(search, X=X, candidates=[0]).model.values.tolist() == ["C=1"]
    run = ms.cross_validate(logreg(), X, Y, cv=cv, return_indices=True, scoring="roc_auc")
    run["test_score"][1] = np.nan
    with pytest.raises(
        CubeError,
        match=r"model 'b' has a NaN score in split 1.*metric is undefined on that split's test",
    ):
        from_cv_results(
            {
                "a": ms.cross_validate(
                    logreg(), X, Y, cv=cv, return_indices=True, scoring="roc_auc"
                ),
                "b": run,
            },
            metric="roc_auc",
        )


def test_error_models_with_different_splits():
    runs = {
        seed: ms.cross_validate(
            logreg(),
            X,
            Y,
            return_indices=True,
            scoring="roc_auc",
            cv=ms.KFold(3, shuffle=True, random_state=seed),
        )
        for seed in (0, 1)
    }
    with pytest.raises(DesignError, match="models '0' and '1' .* different splits"):
        from_cv_results(runs, metric="roc_auc")
    with pytest.raises(DesignError, match="different numbers of splits.*same cv"):
        from_cv_results(
            {"a": np.ones(5), "b": np.ones(4)}, cv=ms.KFold(5), X=X, greater_is_better=True
        )


def test_error_direction_never_guessed(grid_kfold):
    search, cv = grid_kfold
    # a bare test_score: not a scorer name
    with pytest.raises(
        ArgumentError, match="`greater_is_better` is required for the metric 'score'.*metric="
    ):
        from_cv_results(search.cv_results_, cv=cv, X=X)
    # a make_scorer scorer on the search: greater-is-better values by construction (it
    # negates a loss), as for collect's scoring=
    mae = make_scorer(mean_absolute_error, greater_is_better=False)
    custom = ms.GridSearchCV(logreg(), {"C": [0.01, 1.0]}, cv=cv, scoring=mae, refit=False)
    custom.fit(X, Y)
    cube = from_cv_results(custom, X=X)
    assert cube.name == "score" and (cube.values <= 0).all()
    assert cube.attrs["greater_is_better"] == 1
    xr.testing.assert_identical(cube, from_cv_results(custom, X=X, greater_is_better=True))
    # a plain callable scorer: its direction is unknown, and required
    plain = ms.GridSearchCV(
        logreg(), {"C": [0.01, 1.0]}, cv=cv, scoring=lambda est, X_, y_: 1.0, refit=False
    ).fit(X, Y)
    with pytest.raises(ArgumentError, match="custom scorer.*make_scorer"):
        from_cv_results(plain, X=X)
    per_metric = from_cv_results(
        custom, X=X, metric="neg_mae", greater_is_better={"neg_mae": True}
    )
    assert per_metric.name == "neg_mae" and per_metric.attrs["greater_is_better"] == 1
    # contradicting a scikit-learn scorer
    with pytest.raises(ArgumentError, match="every scikit-learn scorer is greater-is-better"):
        from_cv_results(search, X=X, greater_is_better=False)
    with pytest.raises(ArgumentError, match="search scored with 'roc_auc'"):
        from_cv_results(search, X=X, metric="accuracy")
    with pytest.raises(ArgumentError, match="names \\['accuracy'\\], not among the metrics"):
        from_cv_results(search, X=X, metric=["accuracy"])
    with pytest.raises(ArgumentError, match="names metric\\(s\\) \\['r2'\\]"):
        from_cv_results(custom, X=X, greater_is_better={"r2": True})


def test_error_inputs():
    with pytest.raises(ArgumentError, match="not fitted"):
        from_cv_results(ms.GridSearchCV(logreg(), GRID))
    with pytest.raises(CvstatsTypeError, match="`results` must be"):
        from_cv_results("roc_auc")
    with pytest.raises(ArgumentError, match="does not say which splitter.*StratifiedKFold"):
        from_cv_results({"a": np.ones(5)}, cv=5, X=X, greater_is_better=True)
    search = ms.GridSearchCV(logreg(), {"C": [0.1, 1.0]}, cv=3).fit(X, Y)
    with pytest.raises(ArgumentError, match="StratifiedKFold\\(3\\) on the class labels.*y="):
        from_cv_results(search, X=X)
    cube = from_cv_results(search, X=X, y=Y)  # check_cv's StratifiedKFold(3), as the search
    check_design(cube, *splitter_masks(ms.StratifiedKFold(3)))
    np.testing.assert_array_equal(cube.values, split_columns(search.cv_results_, "score"))


def test_error_false_for_negated_losses(grid_kfold):
    # greater_is_better=False for scikit-learn's negated losses would reverse every verdict:
    # a user reading "False for a loss or an error" passes it for neg_mean_squared_error
    _, cv = grid_kfold
    mae = make_scorer(mean_absolute_error, greater_is_better=False)  # returns -MAE
    custom = ms.GridSearchCV(logreg(), {"C": [0.01, 1.0]}, cv=cv, scoring=mae, refit=False)
    custom.fit(X, Y)
    # a make_scorer scorer: its values are greater-is-better, False is refused
    with pytest.raises(ArgumentError, match="every scikit-learn scorer is greater-is-better"):
        from_cv_results(custom, X=X, greater_is_better=False)
    runs = {
        name: ms.cross_validate(
            logreg(C=c), X, Y, cv=cv, scoring={"mae": mae, "neg_mae": mae}, return_indices=True
        )
        for name, c in {"weak": 0.01, "strong": 1.0}.items()
    }
    # a neg_* name: refused
    with pytest.raises(ArgumentError, match="metric 'neg_mae'.*all <= 0"):
        from_cv_results(runs, metric="neg_mae", greater_is_better={"neg_mae": False})
    # any other name: the scorer is unknown (a plain callable may return a negative loss),
    # so it is warned of, loudly, and the direction given is kept
    with pytest.warns(CvstatsWarning, match="metric 'mae'.*all <= 0.*negative log density"):
        wrong = from_cv_results(runs, metric="mae", greater_is_better={"mae": False})
    assert wrong.attrs["greater_is_better"] == 0
    right = from_cv_results(runs, metric="mae", greater_is_better={"mae": True})
    assert right.attrs["greater_is_better"] == 1
    # the loss itself (positive), lower is better: False is right and accepted silently
    positive = {name: {**run, "test_mae": -run["test_mae"]} for name, run in runs.items()}
    cube = from_cv_results(positive, metric="mae", greater_is_better={"mae": False})
    assert cube.attrs["greater_is_better"] == 0
    # the same comparison: estimates of opposite sign, the same p-values
    neg = cvstats.compare(cvstats.pairwise(right)).to_frame()
    pos = cvstats.compare(cvstats.pairwise(cube)).to_frame()
    np.testing.assert_allclose(pos["estimate"], -neg["estimate"], rtol=1e-12)
    np.testing.assert_allclose(pos["pvalue"], neg["pvalue"], rtol=1e-12)
    assert (neg["estimate"].abs() > 0).all()


def test_error_fold_scores_with_label_columns():
    # a table of fold scores with a fold (or model) column: that column is not a model
    cv = ms.KFold(5, shuffle=True, random_state=0)
    scores = {m: ms.cross_val_score(logreg(C=c), X, Y, cv=cv) for m, c in (("a", 0.1), ("b", 1))}
    wide = pd.DataFrame({"fold": np.arange(5), **scores})
    kw = {"cv": cv, "X": X, "y": Y, "greater_is_better": True}
    with pytest.raises(CvstatsTypeError, match=r"DataFrame\) has the column\(s\) \['fold'\]"):
        from_cv_results(wide, **kw)
    with pytest.raises(CvstatsTypeError, match=r"dict\) has the column\(s\) \['fold'\]"):
        from_cv_results({"fold": np.arange(5.0), **scores}, **kw)
    long = wide.melt(id_vars="fold", var_name="model", value_name="accuracy")
    with pytest.raises(CvstatsTypeError, match=r"\['fold', 'model'\].*cvstats.from_scores"):
        from_cv_results(long, **kw)
    # a frame saved with its index and read back: the index is not a model
    saved = pd.DataFrame(scores).reset_index().rename(columns={"index": "Unnamed: 0"})
    with pytest.raises(CvstatsTypeError, match=r"\['Unnamed: 0'\]"):
        from_cv_results(saved, **kw)
    # the fold as the index: one column per model, as from the dict
    cube = from_cv_results(wide.set_index("fold"), **kw)
    xr.testing.assert_identical(cube, from_cv_results(scores, **kw))
    assert cube.model.values.tolist() == ["a", "b"]
    # a model that is named like a label, with scores for values: a model
    named = from_cv_results({"baseline": scores["a"], "model": scores["b"]}, **kw)
    assert named.model.values.tolist() == ["baseline", "model"]


def test_default_score_when_the_grid_swaps_the_final_estimator():
    from sklearn.pipeline import Pipeline
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    pipe = Pipeline([("scale", StandardScaler()), ("clf", logreg())])
    cv = ms.KFold(3, shuffle=True, random_state=0)
    both = {"clf": [logreg(), DecisionTreeClassifier(max_depth=2, random_state=0)]}
    search = ms.GridSearchCV(pipe, both, cv=cv).fit(X, Y)  # scoring=None: accuracy for both
    cube = from_cv_results(search, X=X)
    assert cube.name == "accuracy" and cube.attrs["greater_is_better"] == 1
    np.testing.assert_array_equal(cube.values, split_columns(search.cv_results_, "score"))
    # a classifier and a regressor: the candidates' scores are not one metric
    mixed = {"clf": [logreg(), DecisionTreeRegressor(max_depth=2, random_state=0)]}
    search = ms.GridSearchCV(pipe, mixed, cv=cv).fit(X, Y)
    with pytest.raises(ArgumentError, match="own `score` method.*not all a classifier") as err:
        from_cv_results(search, X=X)
    assert "custom scorer" not in str(err.value)


def test_error_cv_other_than_the_search_s_own():
    # another splitter with the search's number of splits rebuilt other splits silently
    own = ms.ShuffleSplit(n_splits=4, test_size=0.15, random_state=3)
    search = ms.GridSearchCV(logreg(), {"C": [0.05, 2.0]}, cv=own, scoring="roc_auc").fit(X, Y)
    for other in (
        ms.ShuffleSplit(n_splits=4, test_size=0.4, random_state=3),  # other sizes
        ms.ShuffleSplit(n_splits=4, test_size=0.15, random_state=4),  # another seed
        ms.KFold(4, shuffle=True, random_state=3),  # another class
    ):
        with pytest.raises(DesignError, match="own splitter ShuffleSplit.*test_size=0.15") as e:
            from_cv_results(search, cv=other, X=X, y=Y)
        assert " ".join(repr(other).split()) in str(e.value)  # both named
    # an int: the StratifiedKFold check_cv makes of it, not the search's ShuffleSplit
    with pytest.raises(DesignError, match="StratifiedKFold\\(n_splits=4.*own splitter Shuffle"):
        from_cv_results(search, cv=4, X=X, y=Y)
    # the same splitter (another instance): accepted, the search's splits
    same = from_cv_results(
        search, cv=ms.ShuffleSplit(n_splits=4, test_size=0.15, random_state=3), X=X, y=Y
    )
    np.testing.assert_array_equal(same.n_test.values, [23] * 4)
    check_design(same, *splitter_masks(own))
    # an int cv: what check_cv makes of it for a classifier, StratifiedKFold(k)
    search = ms.GridSearchCV(logreg(), {"C": [0.05, 2.0]}, cv=4).fit(X, Y)
    cube = from_cv_results(search, cv=ms.StratifiedKFold(4), X=X, y=Y)
    check_design(cube, *splitter_masks(ms.StratifiedKFold(4)))
    assert from_cv_results(search, cv=4, X=X, y=Y).identical(cube)
    with pytest.raises(DesignError, match="own splitter StratifiedKFold"):
        from_cv_results(search, cv=ms.KFold(4), X=X, y=Y)  # check_cv stratifies: not this
    with pytest.raises(DesignError, match="StratifiedKFold\\(n_splits=4, random_state=None"):
        from_cv_results(search, cv=ms.StratifiedKFold(4, shuffle=True, random_state=0), X=X, y=Y)
    with pytest.raises(DesignError, match="own splitter"):
        from_cv_results(search, cv=ms.RepeatedKFold(n_splits=2, n_repeats=2, random_state=0), X=X)


def test_error_indices_beyond_the_data_without_n():
    run = ms.cross_validate(logreg(), X, Y, cv=ms.KFold(4), return_indices=True)
    assert from_cv_results(run, greater_is_better=True).attrs["n"] == N  # every index used
    test = [t.copy() for t in run["indices"]["test"]]
    test[2][-1] = 250_003  # one test index beyond the 150 examples
    bad = {**run, "indices": {"train": run["indices"]["train"], "test": test}}
    with pytest.raises(ArgumentError, match="largest index 250003.*pass n= the number"):
        from_cv_results(bad, greater_is_better=True)
    with pytest.raises(DesignError):  # with the number of examples: the index is out of range
        from_cv_results(bad, n=N, greater_is_better=True)


def test_error_scores_given_as_text():
    # from_scores refuses strings; so do the readers of scikit-learn's results
    run = ms.cross_validate(logreg(), X, Y, cv=ms.KFold(3), return_indices=True)
    text = {**run, "test_score": np.array([f"{v:.3f}" for v in run["test_score"]])}
    with pytest.raises(ArgumentError, match="results\\['test_score'\\] must hold numbers.*str"):
        from_cv_results(text, greater_is_better=True)
    search = ms.GridSearchCV(logreg(), {"C": [0.05, 2.0]}, cv=ms.KFold(3)).fit(X, Y)
    res = dict(search.cv_results_)
    res["split1_test_score"] = res["split1_test_score"].astype(object)
    res["split1_test_score"][1] = "0.875"
    with pytest.raises(ArgumentError, match="'split1_test_score' must hold numbers.*'0.875'"):
        from_cv_results(res, cv=ms.KFold(3), X=X, metric="accuracy")


def test_cv_results_saved_as_csv(tmp_path):
    # the docs say a saved cv_results_ works: its `params` column comes back as text
    cv = ms.StratifiedKFold(3, shuffle=True, random_state=5)
    grid = {"C": [0.03, 3.0], "fit_intercept": [True, False]}
    search = ms.GridSearchCV(logreg(), grid, cv=cv, scoring="average_precision").fit(X, Y)
    path = tmp_path / "cv_results.csv"
    pd.DataFrame(search.cv_results_).to_csv(path)
    saved = pd.read_csv(path)
    assert isinstance(saved["params"][0], str)
    cube = from_cv_results(saved, cv=cv, X=X, y=Y, metric="average_precision")
    direct = from_cv_results(search, X=X, y=Y)
    assert cube.model.values.tolist() == direct.model.values.tolist()
    assert cube.model.values.tolist()[1] == "C=0.03, fit_intercept=False"
    np.testing.assert_array_equal(cube.values, direct.values)
    # params a literal cannot spell (an estimator): the param_* columns label the rows
    saved["params"] = [f"{{'C': {c}, 'est': LogisticRegression()}}" for c in saved["param_C"]]
    labels = from_cv_results(saved, cv=cv, X=X, y=Y, metric="average_precision").model
    assert labels.values.tolist()[0] == "C=0.03, fit_intercept=True"
