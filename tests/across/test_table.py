"""Tables of the comparisons across datasets in the forms people hold them (issue 28, point 1).

One reader (:mod:`cvstats.across.table`) takes a wide or long pandas table, a
Series over ``(dataset, model)``, a DataArray, a cube with a ``dataset`` dim and
the per-dataset results of a cvstats method; every form must give the numbers
of the same wide table, checked against scipy on per-dataset means computed
here with numpy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import xarray as xr

import cvstats
from cvstats import ArgumentError, CvstatsTypeError, designs
from cvstats.across.ranks import direction_of
from cvstats.across.table import read_table
from cvstats.results import EstimatesResult

N_DATASETS, J, N, N_TEST = 7, 6, 30, 6
MODELS = ["lasso", "forest", "knn"]


@pytest.fixture(scope="module")
def losses_and_design():
    """Absolute-error losses (dataset, split, example, model) and their random splits."""
    d = designs.resampled(N, N_TEST, J=J, seed=11)
    rng = np.random.default_rng(12)
    scale = np.array([1.0, 0.8, 1.2]) * rng.uniform(0.5, 2.0, size=(N_DATASETS, 1, 1, 1))
    return rng.exponential(1.0, size=(N_DATASETS, J, N, 3)) * scale, d


@pytest.fixture(scope="module")
def cube(losses_and_design):
    losses, d = losses_and_design
    return cvstats.from_arrays(
        losses,
        design=d,
        models=MODELS,
        extra_dims=["dataset"],
        extra_coords={"dataset": [f"uci{i}" for i in range(N_DATASETS)]},
        name="absolute",
    )


@pytest.fixture(scope="module")
def means(losses_and_design):
    """The per-dataset CV means by hand: each split's test mean, averaged over the splits."""
    losses, d = losses_and_design
    test = d.test.values  # (split, example)
    split_means = (losses * test[None, :, :, None]).sum(2) / test.sum(1)[None, :, None]
    return split_means.mean(1)  # (dataset, model)


def wide_of(means):
    frame = pd.DataFrame(means, columns=MODELS, index=[f"uci{i}" for i in range(N_DATASETS)])
    frame.index.name = "dataset"
    return frame


def long_of(means, score="mae"):
    return wide_of(means).stack().rename(score).reset_index().rename(columns={"level_1": "model"})


def test_every_form_gives_the_friedman_test_of_the_means(cube, means):
    expected = scipy.stats.friedmanchisquare(*means.T)  # no ties: scipy's = Demšar's χ²_F
    wide = wide_of(means)
    long = long_of(means)
    est = cvstats.corrected_resampled_t(cube)
    forms = {
        "wide": wide,
        "long": long,
        "long shuffled": long.sample(frac=1.0, random_state=0),
        "series": long.set_index(["dataset", "model"])["mae"],
        "dataarray": xr.DataArray(
            means, dims=("dataset", "model"), coords={"dataset": wide.index, "model": MODELS}
        ),
        "cube": cube,
        "compact cube": cvstats.to_compact(cube),
        "dask cube": cube.chunk({"dataset": 3}),
        "inference result": est,
        "estimates result": EstimatesResult.from_dataset(xr.Dataset({"mu": est.estimate})),
    }
    for label, table in forms.items():
        res = cvstats.friedman_test(table, greater_is_better=False)
        assert float(res.statistic) == pytest.approx(expected.statistic, rel=1e-12), label
        assert float(res.pvalue) == pytest.approx(expected.pvalue, rel=1e-10), label
        frame = read_table(table).loc[wide.index, MODELS]
        np.testing.assert_allclose(frame.to_numpy(), means, rtol=1e-12)
        if label != "long shuffled":  # the input's order, not sorted
            assert list(res.average_ranks.index) == MODELS, label


def test_long_tables_keep_the_order_of_first_appearance():
    long = pd.DataFrame(
        {
            "dataset": ["z", "z", "a", "a", "m", "m"],
            "model": ["svm", "nb", "nb", "svm", "svm", "nb"],
            "accuracy": [0.9, 0.8, 0.7, 0.75, 0.6, 0.65],
        }
    )
    frame = read_table(long)
    assert list(frame.index) == ["z", "a", "m"] and list(frame.columns) == ["svm", "nb"]
    np.testing.assert_array_equal(frame["nb"], [0.8, 0.7, 0.65])


def test_every_function_takes_the_new_forms(cube, means):
    long = long_of(means)
    for table in (long, cube):
        wil = cvstats.wilcoxon_test(table, "lasso", "forest", greater_is_better=False)
        diff = means[:, 0] - means[:, 1]
        assert float(wil.pvalue) == pytest.approx(scipy.stats.wilcoxon(diff).pvalue)
        pairs = cvstats.pairwise_wilcoxon(table, greater_is_better=False)
        assert len(pairs.tests) == 3
        control = cvstats.control_test(table, "forest", greater_is_better=False)
        assert control.rank_difference["model"].values.tolist() == ["lasso", "knn"]
        eff = cvstats.effect_size(table, "lasso", "knn", greater_is_better=False)
        x, y = means[:, 0], means[:, 2]
        pooled = np.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2)
        assert float(eff.cohens_d) == pytest.approx((x.mean() - y.mean()) / pooled)
        sign = cvstats.bayesian_sign_test(
            table, "lasso", "forest", n_samples=500, seed=0, greater_is_better=False
        )
        assert (sign.wins, sign.losses) == (int((diff < 0).sum()), int((diff > 0).sum()))
        rank = cvstats.bayesian_signed_rank_test(
            table, "lasso", "forest", n_samples=500, seed=0, greater_is_better=False
        )
        assert rank.n_datasets == N_DATASETS
        assert cvstats.rank_report(table, greater_is_better=False).friedman.n_datasets == 7


def test_the_direction_is_read_from_every_form(cube, means):
    # a loss cube's attrs and its method's estimate: smaller is better
    assert cvstats.friedman_test(cube).greater_is_better is False
    assert cvstats.friedman_test(cvstats.corrected_resampled_t(cube)).greater_is_better is False
    # a long table's score column names the metric
    assert direction_of(long_of(means, "accuracy")) is True
    assert direction_of(long_of(means, "log_loss")) is False
    assert direction_of(long_of(means, "mae").set_index(["dataset", "model"])["mae"]) is False
    with pytest.raises(ArgumentError, match=r"`greater_is_better` is required.*'my_score'"):
        cvstats.friedman_test(long_of(means, "my_score"))
    with pytest.raises(ArgumentError, match="records the opposite"):
        cvstats.friedman_test(long_of(means, "mae"), greater_is_better=True)
    # a score cube records greater_is_better: the largest mean ranks first
    rng = np.random.default_rng(3)
    d = designs.resampled(N, N_TEST, J=J, seed=11)
    auc = rng.uniform(0.6, 0.9, size=(N_DATASETS, J, 3))
    scores = cvstats.from_scores(
        auc,
        design=d,
        models=MODELS,
        metric="roc_auc",
        greater_is_better=True,
        extra_dims=["dataset"],
    )
    res = cvstats.friedman_test(scores)
    assert res.greater_is_better is True
    by_hand = pd.DataFrame(auc.mean(1), columns=MODELS)
    expected = cvstats.friedman_test(by_hand, greater_is_better=True)
    assert float(res.statistic) == pytest.approx(float(expected.statistic))
    np.testing.assert_allclose(res.average_ranks.to_numpy(), expected.average_ranks.to_numpy())


def test_bad_tables_name_the_cells(cube, means):
    long = long_of(means)
    twice = pd.concat([long, long.iloc[[4]]])
    with pytest.raises(
        ArgumentError, match=r"one score per \(dataset, model\).*\('uci1', 'forest'\)"
    ):
        cvstats.friedman_test(twice, greater_is_better=False)
    missing = long.drop(index=5)  # uci1, knn
    with pytest.raises(ArgumentError, match=r"has none for \('uci1', 'knn'\)"):
        cvstats.friedman_test(missing, greater_is_better=False)
    nan = long.assign(mae=long["mae"].where(long.index != 2))
    with pytest.raises(ArgumentError, match=r"finite numbers.*\('uci0', 'knn'\)"):
        cvstats.friedman_test(nan, greater_is_better=False)
    wide = wide_of(means)
    wide.iloc[3, 1] = np.inf
    with pytest.raises(ArgumentError, match=r"must be finite.*\('uci3', 'forest'\)"):
        cvstats.friedman_test(wide, greater_is_better=False)
    with pytest.raises(ArgumentError, match=r"at least 2 datasets.*1 dataset\(s\)"):
        cvstats.friedman_test(long[long["dataset"] == "uci0"], greater_is_better=False)
    with pytest.raises(ArgumentError, match="at least 2 datasets"):
        cvstats.friedman_test(cube.isel(dataset=[0]), greater_is_better=False)
    with pytest.raises(ArgumentError, match="exactly one score column.*'mae', 'rmse'"):
        cvstats.friedman_test(long.assign(rmse=1.0), greater_is_better=False)
    with pytest.raises(ArgumentError, match=r"no column 'model'.*set_index\('dataset'\)"):
        cvstats.friedman_test(wide.reset_index(), greater_is_better=False)
    with pytest.raises(ArgumentError, match="MultiIndex with the levels"):
        cvstats.friedman_test(long.set_index(["dataset", "model"])["mae"].droplevel(0))
    with pytest.raises(ArgumentError, match="contrast cube"):
        cvstats.friedman_test(cvstats.pairwise(cube))
    with pytest.raises(ArgumentError, match="over \\('dataset', 'contrast'\\)"):
        cvstats.friedman_test(cvstats.corrected_resampled_t(cvstats.pairwise(cube)))
    with pytest.raises(ArgumentError, match="cube without a 'dataset' dim"):
        cvstats.friedman_test(cube.isel(dataset=0))
    two = EstimatesResult.from_dataset(xr.Dataset({"a": wide.to_xarray().to_array("model")}))
    two["b"] = two["a"]
    with pytest.raises(ArgumentError, match=r"quantities \['a', 'b'\]; pick one"):
        cvstats.friedman_test(two, greater_is_better=False)
    with pytest.raises(CvstatsTypeError, match="`table` must be a wide pandas DataFrame"):
        cvstats.friedman_test({"a": [1.0]}, greater_is_better=False)
    with pytest.raises(CvstatsTypeError, match=r"pass one of its results, e\.g\. table\.results"):
        cvstats.friedman_test(cvstats.compare(cube), greater_is_better=False)


def test_fractions_mixed_with_percentages_of_a_bounded_metric_are_refused():
    acc = pd.DataFrame({"svm": [0.91, 0.85, 0.77], "nb": [0.88, 86.0, 0.79]})
    acc.attrs["metric"] = "accuracy"
    with pytest.raises(ArgumentError, match=r"mix fractions.*percentages.*\('1', 'nb'\)"):
        cvstats.friedman_test(acc)
    long = acc.stack().rename("balanced_accuracy").reset_index()
    long.columns = ["dataset", "model", "balanced_accuracy"]
    with pytest.raises(ArgumentError, match="mix fractions"):
        cvstats.wilcoxon_test(long, "svm", "nb")
    with pytest.raises(ArgumentError, match=r"lie in \[0, 1\].*\('2', 'svm'\)"):
        cvstats.friedman_test(acc.assign(svm=[91.0, 85.0, 177.0], nb=[88.0, 86.0, 79.0]))
    # one scale throughout: percentages are accepted (ranks do not see the scale)
    percent = acc.assign(svm=[91.0, 85.0, 77.0], nb=[88.0, 86.0, 79.0])
    fractions = percent / 100
    fractions.attrs["metric"] = "accuracy"
    assert float(cvstats.friedman_test(percent).statistic) == float(
        cvstats.friedman_test(fractions).statistic
    )
    # a metric of unknown range is not checked: its values may straddle 1
    mse = pd.DataFrame({"a": [0.5, 3.0, 0.9], "b": [0.7, 2.5, 1.2]})
    assert cvstats.friedman_test(mse, greater_is_better=False).n_datasets == 3
