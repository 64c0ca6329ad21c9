"""Rank tests across datasets vs. Demšar (2006), scipy and statsmodels."""

from itertools import combinations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import scipy.stats as st  # noqa: E402
import xarray as xr  # noqa: E402
from statsmodels.stats.multitest import multipletests  # noqa: E402

import cvstats  # noqa: E402
from cvstats import ArgumentError, CvstatsTypeError  # noqa: E402
from cvstats.across.ranks import (  # noqa: E402
    FriedmanResult,
    cd_diagram,
    friedman_test,
    pairwise_wilcoxon,
    rank_report,
    rank_table,
    wilcoxon_test,
)
from cvstats.kernels import ranks as kr  # noqa: E402

# AUCs of C4.5 and three variants on 14 datasets as printed in Demšar (2006), Table 6.
DEMSAR_PRINTED = pd.DataFrame(
    [
        [0.763, 0.768, 0.771, 0.798],
        [0.599, 0.591, 0.590, 0.569],
        [0.954, 0.971, 0.968, 0.967],
        [0.628, 0.661, 0.654, 0.657],
        [0.882, 0.888, 0.886, 0.898],
        [0.936, 0.931, 0.916, 0.931],
        [0.661, 0.668, 0.609, 0.685],
        [0.583, 0.583, 0.563, 0.625],
        [0.775, 0.838, 0.866, 0.875],
        [1.000, 1.000, 1.000, 1.000],
        [0.940, 0.962, 0.965, 0.962],
        [0.619, 0.666, 0.614, 0.669],
        [0.972, 0.981, 0.975, 0.975],
        [0.957, 0.978, 0.946, 0.970],
    ],
    columns=["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"],
    index=[f"ds{i}" for i in range(14)],
)
# The printed values do not give the paper's rank sums 44, 28, 40.5, 27.5 (average ranks
# 3.143, 2.000, 2.893, 1.964, from which §3.2.2 computes chi2_F and F_F): they give 44, 28, 41,
# 27 (test_demsar_printed_table). The published sums need C4.5+cf and C4.5+m+cf tied on one
# more dataset; one cell edited, cmc's C4.5+cf 0.654 -> 0.657, gives exactly them, so that the
# paper's statistics can be checked from a table.
DEMSAR = DEMSAR_PRINTED.copy()
DEMSAR.loc["ds3", "C4.5+cf"] = 0.657


def test_demsar_worked_example():
    res = friedman_test(DEMSAR, greater_is_better=True)
    np.testing.assert_allclose(res.ranks.sum().to_numpy(), [44, 28, 40.5, 27.5])
    np.testing.assert_allclose(res.average_ranks.round(3), [3.143, 2.000, 2.893, 1.964])
    # Demšar (2006), §3.2.2: chi2_F = 9.28, F_F = 3.69, (3, 39) df; §3.2.3: q = 2.569, CD = 1.25
    assert res.statistic == pytest.approx(9.28, abs=0.005)
    assert res.iman_davenport == pytest.approx(3.69, abs=0.005)
    assert (res.iman_davenport_df1, res.iman_davenport_df2) == (3, 39)
    assert res.q_alpha == pytest.approx(2.569, abs=5e-4)
    assert res.critical_difference == pytest.approx(1.25, abs=0.005)
    # the F critical value F(3, 39) at 0.05 is 2.85 < 3.69: reject
    assert res.iman_davenport_pvalue < 0.05
    assert res.pvalue == pytest.approx(st.chi2.sf(res.statistic, 3))
    frame = res.to_frame()
    assert list(frame.columns) == ["test", "statistic", "df1", "df2", "pvalue"]
    # no pair differs by CD = 1.25 (Demšar: C4.5 vs C4.5+m+cf, 1.18, is not significant)
    assert not res.nemenyi()["significant"].any()
    assert "Nemenyi CD" in str(res)


def test_demsar_printed_table():
    # Table 6 as printed, unedited: rank sums 44, 28, 41, 27, so (with N = 14, k = 4)
    # chi2_F = 12N/(k(k+1)) (sum R_j^2 - k(k+1)^2/4) = 8.4 * 230/196 = 69/7 = 9.857 and
    # F_F = (N-1) chi2_F / (N(k-1) - chi2_F) = 897/225 = 3.987, p = 0.014 on (3, 39) df;
    # CD = 1.25 as above, and still no pair differs by it (largest: 1.214)
    res = friedman_test(DEMSAR_PRINTED, greater_is_better=True)
    ranks = DEMSAR_PRINTED.apply(
        lambda row: st.rankdata(-row.to_numpy()), axis=1, result_type="expand"
    )
    np.testing.assert_allclose(ranks.sum().to_numpy(), [44, 28, 41, 27])
    np.testing.assert_allclose(res.ranks.sum().to_numpy(), [44, 28, 41, 27])
    np.testing.assert_allclose(res.average_ranks.round(3), [3.143, 2.000, 2.929, 1.929])
    assert res.statistic == pytest.approx(69 / 7, rel=1e-12)
    assert res.iman_davenport == pytest.approx(897 / 225, rel=1e-12)
    assert res.iman_davenport_pvalue == pytest.approx(st.f.sf(897 / 225, 3, 39), rel=1e-10)
    assert round(float(res.iman_davenport_pvalue), 3) == 0.014
    assert res.critical_difference == pytest.approx(1.25, abs=0.005)
    nemenyi = res.nemenyi()
    assert nemenyi["rank_difference"].abs().max() == pytest.approx(17 / 14, rel=1e-12)
    assert not nemenyi["significant"].any()
    # the one edited cell is the only difference from the table of the worked example
    assert (DEMSAR_PRINTED != DEMSAR).to_numpy().sum() == 1


def test_friedman_agrees_with_scipy_on_raw_data():
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.random((9, 5)), columns=list("abcde"))
    res = friedman_test(table, greater_is_better=False)
    ref = st.friedmanchisquare(*[table[c] for c in table])
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    # with ties scipy applies the tie correction; so do we on request
    tied = friedman_test(DEMSAR, greater_is_better=True, tie_correction=True)
    ref = st.friedmanchisquare(*[-DEMSAR[c] for c in DEMSAR])
    assert tied.statistic == pytest.approx(ref.statistic, rel=1e-12)


def test_ranks_direction_and_ties():
    table = pd.DataFrame({"a": [0.1, 0.3], "b": [0.2, 0.3], "c": [0.1, 0.1]})
    np.testing.assert_array_equal(
        rank_table(table, greater_is_better=False).to_numpy(), [[1.5, 3, 1.5], [2.5, 2.5, 1]]
    )
    np.testing.assert_array_equal(
        rank_table(table, greater_is_better=True).to_numpy(), [[2.5, 1, 2.5], [1.5, 1.5, 3]]
    )


def test_kernel_vectorized_equals_loop():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 4, size=(3, 7, 4)).astype(float)  # many ties
    ranks = kr.rank_scores(scores, greater_is_better=False)
    out = kr.friedman(ranks, tie_correction=True)
    for i in range(3):
        one = kr.friedman(kr.rank_scores(scores[i], greater_is_better=False), tie_correction=True)
        np.testing.assert_allclose(out.chi2[i], one.chi2)
        np.testing.assert_allclose(out.f[i], one.f)
        ref = st.friedmanchisquare(*scores[i].T)
        np.testing.assert_allclose(one.chi2, ref.statistic)


def test_wilcoxon_and_holm_agree_with_scipy_and_statsmodels():
    rng = np.random.default_rng(2)
    table = pd.DataFrame(rng.random((12, 4)), columns=list("wxyz"))
    table["x"] -= 0.3
    res = wilcoxon_test(table, "w", "x", greater_is_better=False)
    ref = st.wilcoxon(table["w"] - table["x"])
    assert (res.statistic, res.pvalue) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
    assert res.wins + res.ties + res.losses == 12
    assert res.wins == int((table["w"] < table["x"]).sum())
    pw = pairwise_wilcoxon(table, alpha=0.05, greater_is_better=False)
    raw = [st.wilcoxon(table[a] - table[b]).pvalue for a, b in combinations(table.columns, 2)]
    reject, adjusted, _, _ = multipletests(raw, alpha=0.05, method="holm")
    frame = pw.to_frame()
    np.testing.assert_allclose(frame["pvalue"], raw)
    np.testing.assert_allclose(frame["pvalue_adjusted"], adjusted)
    np.testing.assert_array_equal(frame["reject"], reject)
    assert list(frame[["model_a", "model_b"]].itertuples(index=False, name=None)) == list(
        combinations("wxyz", 2)
    )


def test_wilcoxon_all_equal_is_not_significant():
    table = pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": [0.1, 0.2, 0.3]})
    res = wilcoxon_test(table, "a", "b", greater_is_better=False)
    assert np.isnan(res.statistic) and res.pvalue == 1.0 and res.ties == 3


@pytest.fixture(scope="module")
def datasets_cube(gamma_datasets_cube):
    """Three learners on 8 simulated datasets, 10 resampling splits each."""
    return gamma_datasets_cube(8, ["a", "b", "c"], n=60, n_test=12, J=10)


def test_dataarray_table_and_report(datasets_cube):
    est = cvstats.corrected_resampled_t(datasets_cube).estimate
    res = friedman_test(est)
    frame = est.to_pandas()
    ref = friedman_test(frame, greater_is_better=False)
    assert res.statistic == ref.statistic
    assert list(res.average_ranks.index) == ["a", "b", "c"]
    per = cvstats.corrected_resampled_t(cvstats.pairwise(datasets_cube))
    report = rank_report(est, per, alpha=0.05)
    out = report.to_frame()
    assert len(out) == 3
    for row in out.itertuples():
        label = f"{row.model_a} - {row.model_b}"
        e = per.estimate.sel(contrast=label).values
        sig = per.pvalue.sel(contrast=label).values <= 0.05
        assert row.significant_wins == int((sig & (e < 0)).sum())
        assert row.significant_losses == int((sig & (e > 0)).sum())
        assert row.not_significant == int((~sig).sum())
    assert {"nemenyi_significant", "wilcoxon_pvalue_holm"} <= set(out.columns)
    # the same through a ComparisonTable
    table = cvstats.compare(cvstats.pairwise(datasets_cube))
    out2 = rank_report(est, table).to_frame()
    pd.testing.assert_frame_equal(out, out2)
    assert "Friedman test" in str(report)
    # one cube per dataset: a mapping of dataset names to per-dataset results
    pair = cvstats.pairwise(datasets_cube)
    mapping = {
        str(name): cvstats.corrected_resampled_t(pair.sel(dataset=name))
        for name in pair["dataset"].values
    }
    out3 = rank_report(est, mapping).to_frame()
    pd.testing.assert_frame_equal(out, out3)


def test_cd_diagram_draws():
    res = friedman_test(DEMSAR, greater_is_better=True)
    ax = cd_diagram(res)
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("C4.5+m+cf (1.96") for t in texts)
    assert any("CD = 1.25" in t for t in texts)
    assert isinstance(res, FriedmanResult) and res.plot() is not None
    plt.close("all")


def test_errors(datasets_cube):
    with pytest.raises(CvstatsTypeError, match="`table` must be a wide pandas DataFrame"):
        friedman_test([[1, 2], [3, 4]], greater_is_better=False)
    with pytest.raises(ArgumentError, match="2-d DataArray over"):
        friedman_test(xr.DataArray(np.ones((2, 2, 2)), dims=("dataset", "model", "x")))
    with pytest.raises(ArgumentError, match="must be finite"):
        friedman_test(pd.DataFrame({"a": [1.0, np.nan], "b": [1.0, 2.0]}), greater_is_better=False)
    with pytest.raises(ArgumentError, match="at least 2 datasets"):
        friedman_test(pd.DataFrame({"a": [1.0], "b": [2.0]}), greater_is_better=False)
    with pytest.raises(ArgumentError, match=r"unknown learner\(s\) \['q'\]"):
        wilcoxon_test(DEMSAR, "C4.5", "q", greater_is_better=True)
    with pytest.raises(CvstatsTypeError, match="must be a FriedmanResult"):
        cd_diagram(DEMSAR)
    est = cvstats.corrected_resampled_t(datasets_cube).estimate
    with pytest.raises(ArgumentError, match="no contrast of `per_dataset`"):
        rank_report(est, cvstats.corrected_resampled_t(datasets_cube))


# --------------------------------------------------------------------------
# the direction: read from the data, refused when unknown (issue 26, point 1)
# --------------------------------------------------------------------------

MODELS = ["mid", "good", "bad"]


@pytest.fixture(scope="module")
def accuracy_cube():
    """Accuracies of three learners on 12 datasets, 'good' best and 'bad' worst on each."""
    d = cvstats.designs.resampled(90, 30, J=6, seed=11)
    rng = np.random.default_rng(12)
    level = rng.uniform(0.6, 0.8, size=(12, 1, 1))  # dataset difficulty
    acc = level + np.array([0.0, 0.06, -0.07]) + rng.normal(0, 0.01, size=(12, 6, 3))
    return cvstats.cube.from_scores(
        acc,
        greater_is_better=True,
        design=d,
        models=MODELS,
        metric="accuracy",
        name="accuracy",
        extra_dims=["dataset"],
        extra_coords={"dataset": [f"set{i}" for i in range(12)]},
    )


def test_score_estimates_rank_the_highest_first(accuracy_cube):
    est = cvstats.corrected_resampled_t(accuracy_cube).estimate
    assert est.attrs["greater_is_better"] == 1  # the methods keep the cube's direction
    res = friedman_test(est)
    assert res.greater_is_better and res.higher_is_better
    # ranks: 1 for the largest accuracy, as scipy ranks the negated values
    expected = st.rankdata(-est.transpose("dataset", "model").values, axis=1)
    np.testing.assert_array_equal(res.ranks.to_numpy(), expected)
    assert res.average_ranks.to_dict() == {"mid": 2.0, "good": 1.0, "bad": 3.0}
    # the same as the error rates 1 - accuracy read as losses
    errors = pd.DataFrame(1 - est.transpose("dataset", "model").values, columns=MODELS)
    loss_res = friedman_test(errors, greater_is_better=False)
    pd.testing.assert_series_equal(res.average_ranks, loss_res.average_ranks)
    verdict = str(res.verdict())
    assert "Best average rank: good (1.00); worst: bad (3.00)" in verdict
    assert "rank 1 is the highest value" in verdict and "good < bad" in verdict
    nem = res.nemenyi().set_index(["model_a", "model_b"])
    assert nem.loc[("good", "bad"), "rank_difference"] == -2.0
    assert nem.loc[("good", "bad"), "significant"]
    assert "largest value" in str(res)


def test_score_wilcoxon_and_report_call_the_highest_better(accuracy_cube):
    est = cvstats.corrected_resampled_t(accuracy_cube).estimate
    w = wilcoxon_test(est, "good", "bad")
    assert (w.wins, w.ties, w.losses) == (12, 0, 0)
    assert "evidence that good is better" in str(w.verdict())
    pw = pairwise_wilcoxon(est)
    assert "good better than bad" in str(pw.verdict())
    per = cvstats.corrected_resampled_t(cvstats.pairwise(accuracy_cube))
    out = rank_report(est, per).to_frame().set_index(["model_a", "model_b"])
    for (a, b), row in out.iterrows():
        e = per.estimate.sel(contrast=f"{a} - {b}").values
        sig = per.pvalue.sel(contrast=f"{a} - {b}").values <= 0.05
        assert row.significant_wins == int((sig & (e > 0)).sum())  # a higher accuracy wins
        assert row.significant_losses == int((sig & (e < 0)).sum())
    assert out.loc[("good", "bad"), "significant_wins"] == 12
    assert out.loc[("good", "bad"), "wins"] == 12


def test_cd_diagram_puts_the_best_score_at_rank_one(accuracy_cube):
    res = friedman_test(cvstats.corrected_resampled_t(accuracy_cube).estimate)
    ax = cd_diagram(res)
    placed = {t.get_text().split(" (")[0]: t for t in ax.texts if " (" in t.get_text()}
    assert placed["good"].get_text() == "good (1.00)" and placed["good"].get_ha() == "right"
    assert placed["bad"].get_text() == "bad (3.00)" and placed["bad"].get_ha() == "left"
    plt.close("all")


def test_direction_from_names_and_frame_attrs():
    values = np.array([[0.9, 0.7], [0.8, 0.6], [0.85, 0.8]])
    for name, best in (("roc_auc", "a"), ("neg_log_loss", "a"), ("zero_one", "b"), ("mse", "b")):
        table = xr.DataArray(values, dims=("dataset", "model"), coords={"model": ["a", "b"]})
        res = friedman_test(table.rename(name))
        assert res.average_ranks.idxmin() == best, name
    frame = pd.DataFrame(values, columns=["a", "b"])
    frame.attrs["greater_is_better"] = 1
    assert friedman_test(frame).average_ranks.idxmin() == "a"


def test_unknown_direction_is_refused(accuracy_cube):
    frame = pd.DataFrame({"a": [0.9, 0.8, 0.7], "b": [0.6, 0.5, 0.4]})
    unnamed = xr.DataArray(
        frame.to_numpy(), dims=("dataset", "model"), coords={"model": ["a", "b"]}
    )
    for call in (
        friedman_test,
        rank_table,
        lambda t: wilcoxon_test(t, "a", "b"),
        pairwise_wilcoxon,
        rank_report,
    ):
        for t in (frame, unnamed, unnamed.rename("my_metric")):
            with pytest.raises(ArgumentError, match=r"`greater_is_better` is required"):
                call(t)
    # given against what the data record
    est = cvstats.corrected_resampled_t(accuracy_cube).estimate
    with pytest.raises(ArgumentError, match=r"records the opposite \(its attr greater_is_better"):
        friedman_test(est, greater_is_better=False)
    with pytest.raises(ArgumentError, match="must be True or False"):
        friedman_test(frame, greater_is_better="yes")
    # per-dataset tests of a metric pointing the other way
    errors = cvstats.cube.from_scores(
        1 - accuracy_cube.values,
        greater_is_better=False,
        design=cvstats.designs.resampled(90, 30, J=6, seed=11),
        models=MODELS,
        metric="error",
        extra_dims=["dataset"],
        extra_coords={"dataset": accuracy_cube["dataset"].values},
    )
    per = cvstats.corrected_resampled_t(cvstats.pairwise(errors))
    with pytest.raises(ArgumentError, match="rank_report: .*`per_dataset` records the opposite"):
        rank_report(est, per)


def test_higher_is_better_is_the_old_name():
    frame = pd.DataFrame({"a": [0.9, 0.8, 0.7], "b": [0.6, 0.5, 0.4], "c": [0.7, 0.9, 0.1]})
    new = friedman_test(frame, greater_is_better=True)
    for func in (friedman_test, rank_table, pairwise_wilcoxon, rank_report):
        with pytest.warns(FutureWarning, match="`higher_is_better=` is now called"):
            func(frame, higher_is_better=True)
    with pytest.warns(FutureWarning, match="wilcoxon_test: `higher_is_better=`"):
        w = wilcoxon_test(frame, "a", "b", higher_is_better=True)
    assert w.wins == 3
    with pytest.warns(FutureWarning, match="`higher_is_better=`"):
        old = friedman_test(frame, higher_is_better=True)
    pd.testing.assert_series_equal(old.average_ranks, new.average_ranks)
    with pytest.raises(ArgumentError, match="give `greater_is_better` only"):
        friedman_test(frame, greater_is_better=True, higher_is_better=True)
    with pytest.warns(FutureWarning, match="rank_scores: `higher_is_better=`"):
        ranks = kr.rank_scores(frame.to_numpy(), higher_is_better=True)
    np.testing.assert_array_equal(ranks, new.ranks.to_numpy())


def test_direction_of_reads_results_and_refuses_other_types(accuracy_cube):
    from cvstats.across.ranks import direction_of

    assert direction_of(cvstats.corrected_resampled_t(accuracy_cube)) is True
    frame = pd.DataFrame({"estimate": [0.1, 0.2], "b": [0.3, 0.4]})  # a column is no result
    with pytest.raises(ArgumentError, match="`greater_is_better` is required"):
        direction_of(frame)
    with pytest.raises(CvstatsTypeError, match="`table` must be an xarray.DataArray"):
        direction_of([[0.1, 0.2]])


def test_wilcoxon_names_the_learner_ahead_by_signed_ranks_not_wins():
    # 40 datasets, lower is better: a wins 21 by little and loses 19 by much (more wins),
    # so the signed ranks put b ahead, significantly
    diff = np.concatenate([-np.linspace(0.001, 0.021, 21), np.linspace(0.2, 0.3, 19)])
    b = np.linspace(0.1, 0.3, 40)
    table = pd.DataFrame({"a": b + diff, "b": b})
    res = cvstats.wilcoxon_test(table, "a", "b", greater_is_better=False)
    assert (res.wins, res.losses) == (21, 19)
    ref = st.wilcoxon(table["a"] - table["b"])
    assert float(res.pvalue) == pytest.approx(ref.pvalue) and ref.pvalue < 0.05
    assert res.rank_sums == (231.0, 589.0)  # ranks 1..21 where a is better, 22..40 where worse
    assert "evidence that b is better" in str(res.verdict())
    pairs = cvstats.pairwise_wilcoxon(table, greater_is_better=False)
    assert str(pairs.verdict()).startswith("b better than a")
    flipped = cvstats.wilcoxon_test(1 - table, "a", "b", greater_is_better=True)
    assert "evidence that b is better" in str(flipped.verdict())


def test_rank_report_method_is_one_name():
    # issue 27: `method=` takes one method (a list is `compare(methods=[...])`'s form)
    frame = pd.DataFrame({"a": [0.3, 0.2, 0.4, 0.1], "b": [0.5, 0.4, 0.45, 0.3]})
    frame.attrs["greater_is_better"] = False
    with pytest.raises(CvstatsTypeError, match=r"`method` must be one method name .*kfold_t"):
        rank_report(frame, method=["kfold_t"])
    # a method without per-dataset tests to pick it from is not silently ignored
    with pytest.raises(ArgumentError, match=r"`method` \('kfold_t'\) picks .* no `per_dataset`"):
        rank_report(frame, method="kfold_t")
