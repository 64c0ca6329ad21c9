"""One result contract: every result class, the same fields, shapes and reporting protocol.

For every result class: computed values are DataArrays (0-d for a scalar result),
intervals lie on a ``ci_bound`` dim with coordinates ``["lower", "upper"]``, and
``to_frame``/``to_markdown``/``to_latex``/``to_html``/``summary``/``str`` work,
with frames ending in the class's stable columns.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
import pkgutil
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

import cvstats  # noqa: E402
from cvstats import ArgumentError, designs, kernels  # noqa: E402
from cvstats.across.bayes_datasets import (  # noqa: E402
    bayesian_sign_test,
    bayesian_signed_rank_test,
)
from cvstats.across.conditional import cv_bias, variance_decomposition, winner_table  # noqa: E402
from cvstats.across.kfold_variance import (  # noqa: E402
    kfold_moments,
    kfold_statistics,
    quadratic_estimator_bias,
)
from cvstats.across.ranks import (  # noqa: E402
    friedman_test,
    pairwise_wilcoxon,
    rank_report,
    wilcoxon_test,
)
from cvstats.inference.bayes import bayesian_correlated_t  # noqa: E402
from cvstats.results import (  # noqa: E402
    BOUNDS,
    CI_BOUND,
    BayesianDatasetsResult,
    BayesianResult,
    ConfidenceInterval,
    EstimatesResult,
    FriedmanResult,
    InferenceResult,
    PairwiseResult,
    RankReport,
    Result,
    WilcoxonResult,
    WinnerTable,
    as_dataarray,
    bounds,
)

# ---------------------------------------------------------------------------
# one instance of every result class (several for the estimates)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cube(gamma_datasets_cube):
    """Three learners, 6 datasets, 8 random splits each."""
    return gamma_datasets_cube(6, ["a", "b", "c"])


def across_results(cube, models, fit_r_models=None):
    """``{label: result}``: the comparisons across datasets and the fits.

    The rank tests compare the corrected resampled t's estimates on ``cube`` (its first
    two learners are ``models``); the others run on two learners ``models`` over 30
    datasets, one 4-fold run each and 3 repeats of it (for ``cv_bias``), and ``fit_r``
    on a conservative-Z cube of ``fit_r_models`` (one unnamed learner when None).
    """
    rng = np.random.default_rng(5)
    one = designs.kfold(20, K=4, seed=0)
    e = rng.normal(size=(30, 1, 20, 2)) + rng.normal(size=(30, 1, 1, 1))
    single = cvstats.from_arrays(
        np.broadcast_to(e, (30, 4, 20, 2)), design=one, models=models, extra_dims=["dataset"]
    )
    rep = designs.kfold(20, K=4, repeats=3, seed=0)
    losses = rng.normal(size=(30, 12, 20, 2)) + rng.normal(size=(30, 1, 1, 1))
    repeated = cvstats.from_arrays(losses, design=rep, models=models, extra_dims=["dataset"])
    conditional = xr.DataArray(
        np.random.default_rng(6).normal(size=(30, 2)),
        dims=("dataset", "model"),
        coords={"model": models},
    )
    moments = kfold_moments(single)
    half = designs.conservative_z(40, 8, J=3, M=4, seed=0)
    n_fit_r = 1 if fit_r_models is None else len(fit_r_models)
    cz = cvstats.from_arrays(
        np.random.default_rng(7).normal(size=(10, half.sizes["split"], 40, n_fit_r)),
        design=half,
        models=fit_r_models,
        extra_dims=["dataset"],
    )
    T = xr.DataArray(np.random.default_rng(8).normal(size=(50, 6)), dims=("dataset", "split"))
    est = cvstats.corrected_resampled_t(cube).estimate
    with warnings.catch_warnings():  # short chains: a convergence warning is expected
        warnings.simplefilter("ignore", UserWarning)
        hierarchical = cvstats.bayesian_hierarchical_test(
            repeated, *models, rope=0.05, draws=100, warmup=50, seed=0
        )
    return {
        "friedman": friedman_test(est),
        "wilcoxon": wilcoxon_test(est, *models),
        "bayes_signed_rank": bayesian_signed_rank_test(
            est, *models, rope=0.05, n_samples=2000, seed=0
        ),
        "bayes_sign": bayesian_sign_test(est, *models, rope=0.05, n_samples=2000, seed=0),
        "hierarchical": hierarchical,
        "pairwise": pairwise_wilcoxon(est),
        "control": cvstats.control_test(est, models[0]),
        "effect_size": cvstats.effect_size(est, *models),
        "pairwise_matrix": cvstats.pairwise_matrix(est, rope=0.05),
        "choose_test": cvstats.choose_test(est),
        "compare_datasets": cvstats.compare_datasets(est, n_samples=2000, seed=0),
        "rank_report": rank_report(est, cvstats.corrected_resampled_t(cvstats.pairwise(cube))),
        "winner": winner_table(repeated, conditional, tuple(models)),
        "fit_lemma1": cvstats.fit_lemma1(T, "dataset", "split"),
        "fit_rho": cvstats.fit_rho(cube),
        "fit_r": cvstats.fit_r(cz),
        "kfold_statistics": kfold_statistics(single),
        "kfold_moments": moments,
        "quadratic": quadratic_estimator_bias("naive", moments),
        "cv_bias": cv_bias(repeated, conditional),
        "variance_decomposition": variance_decomposition(repeated),
    }


def eval_results(models):
    """``{label: result}``: the evaluations of fixed models ``models`` on a small benchmark.

    Thirty questions in ten passages (the fewest a clustered standard error takes), two
    generations each, 0/1 answers.
    """
    rng = np.random.default_rng(21)
    rows = [
        (q, m, g, q // 3, float(rng.random() < 0.5 + 0.1 * i))
        for q in range(30)
        for i, m in enumerate(models)
        for g in range(2)
    ]
    table = pd.DataFrame(rows, columns=["question", "model", "gen", "passage", "correct"])
    cube = cvstats.from_evals(
        table,
        question="question",
        model="model",
        score="correct",
        generation="gen",
        cluster="passage",
        greater_is_better=True,
    )
    difference = cvstats.eval_difference(cube)
    return {
        "eval_mean": cvstats.eval_mean(cube),
        "eval_difference": difference,
        "eval_plan": cvstats.plan_eval(difference, target_width=0.1, generations=[1, 2]),
    }


def selection_results(models):
    """``{label: result}``: BBC-CV, MCS and CVC of a 3-fold search, the second model the best."""
    losses = np.random.default_rng(22).random((1, 30, len(models)))
    losses[..., 1] -= 0.3
    cube = cvstats.from_arrays(
        np.repeat(losses, 3, axis=0), design=designs.kfold(30, K=3, seed=0), models=models
    )
    return {
        "bbc_cv": cvstats.bbc_cv(cube, n_boot=200, seed=0),
        "mcs": cvstats.model_confidence_set(cube, n_boot=200, seed=0),
        "cvc": cvstats.cv_confidence_set(cube, n_boot=200, seed=0),
    }


#: The classes of the results of :func:`selection_results`.
SELECTION_CLASSES = {
    "bbc_cv": cvstats.BBCResult,
    "mcs": cvstats.MCSResult,
    "cvc": cvstats.CVCResult,
}

#: The classes of the results of :func:`eval_results`.
EVAL_CLASSES = {
    "eval_mean": cvstats.EvalResult,
    "eval_difference": cvstats.EvalResult,
    "eval_plan": cvstats.EvalPlan,
}

#: The classes of the results of :func:`across_results`.
ACROSS_CLASSES = {
    "friedman": FriedmanResult,
    "wilcoxon": WilcoxonResult,
    "bayes_signed_rank": BayesianDatasetsResult,
    "bayes_sign": BayesianDatasetsResult,
    "hierarchical": cvstats.HierarchicalResult,
    "pairwise": PairwiseResult,
    "control": cvstats.ControlResult,
    "effect_size": cvstats.EffectSizeResult,
    "pairwise_matrix": cvstats.PairwiseMatrix,
    "choose_test": cvstats.ChosenTest,
    "compare_datasets": cvstats.DatasetsComparison,
    "rank_report": RankReport,
    "winner": WinnerTable,
    "fit_lemma1": EstimatesResult,
    "fit_rho": EstimatesResult,
    "fit_r": EstimatesResult,
    "kfold_statistics": EstimatesResult,
    "kfold_moments": EstimatesResult,
    "quadratic": EstimatesResult,
    "cv_bias": EstimatesResult,
    "variance_decomposition": EstimatesResult,
}


@pytest.fixture(scope="module")
def results(cube):
    """``{label: result}`` covering every result class."""
    one = cube.isel(dataset=0)
    scalar = cvstats.corrected_resampled_t(one.sel(model=["a"]))
    post = bayesian_correlated_t(one.sel(model=["a"]))
    return {
        "inference_0d": dataclasses.replace(
            scalar, estimate=0.5, stderr=0.1, statistic=5.0, df=9.0, pvalue=0.001
        ),
        "bayes_0d": dataclasses.replace(
            post,
            **{k: float(getattr(post, k).squeeze()) for k in post.value_fields},
        ),
        "inference": cvstats.corrected_resampled_t(one),
        "inference_scalar": scalar,
        "inference_5x2": cvstats.combined_5x2cv_f(
            cvstats.from_arrays(
                np.random.default_rng(9).random((10, 40, 2)),
                design=designs.five_by_two(40, seed=0),
                models=["a", "b"],
            )
        ),
        "bayes": bayesian_correlated_t(cvstats.pairwise(one), rope=0.05),
        "bayes_scalar": post,
        **across_results(cube, ["a", "b"]),
        **eval_results(["a", "b", "c"]),
        **selection_results(["a", "b", "c"]),
        "plan": cvstats.plan(cube, target_width=0.5, effect=0.4),
        "comparison": cvstats.compare(cvstats.pairwise(one)),
        "publication": cvstats.publication_table(
            cvstats.corrected_resampled_t(cvstats.pairwise(cube)).to_frame(),
            rows=["contrast"],
            columns=["dataset"],
            caption="Per dataset",
        ),
    }


CLASSES = {
    "inference_0d": InferenceResult,
    "bayes_0d": BayesianResult,
    "inference": InferenceResult,
    "inference_scalar": InferenceResult,
    "inference_5x2": InferenceResult,
    "bayes": BayesianResult,
    "bayes_scalar": BayesianResult,
    **ACROSS_CLASSES,
    **EVAL_CLASSES,
    **SELECTION_CLASSES,
    "plan": cvstats.PlanResult,
    "comparison": cvstats.ComparisonTable,
    "publication": cvstats.PublicationTable,
}
#: Results whose exports show a layout of their own, not the tidy frame as it is:
#: the comparison table (intervals as ``[low, high]``, readable headers) and the
#: publication table (rows by columns; its exports are tested in tests/reporting).
OWN_LAYOUT = {"comparison", "publication"}
#: Result classes with nothing to say in words: a publication table lays numbers out.
NO_VERDICT = {cvstats.PublicationTable}
WITH_INTERVAL = {
    "bbc_cv",
    "eval_mean",
    "eval_difference",
    "inference_0d",
    "bayes_0d",
    "inference",
    "inference_scalar",
    "inference_5x2",
    "bayes",
    "bayes_scalar",
    "fit_lemma1",
    "fit_rho",
    "fit_r",
    "kfold_moments",
    "cv_bias",
    "variance_decomposition",
}
WITH_PLOT = {  # InferenceResult: a forest plot (issue 15)
    "plan",
    "comparison",
    "bayes",
    "bayes_sign",
    "bayes_signed_rank",
    "hierarchical",
    "bayes_0d",
    "bayes_scalar",
    "friedman",
    "rank_report",
    "pairwise_matrix",
    "compare_datasets",
    "inference",
    "inference_0d",
    "inference_5x2",
    "inference_scalar",
    "mcs",
    "cvc",
}


#: The fields that may hold a bare float: options (the plan's targets), not computed values.
OPTIONS = (
    *("alpha", "mu0", "rho", "agreement", "rope", "prior"),
    *("target_width", "effect", "target_power", "knee_tolerance"),
)


def dims_of(result: Result) -> list[str]:
    """The dims a result's frame starts with."""
    if isinstance(result, InferenceResult):
        return [str(d) for d in result.estimate.dims]
    if isinstance(result, BayesianResult):
        return [str(d) for d in result.mean.dims]
    if isinstance(result, EstimatesResult):
        return [str(d) for d in result.dims if d != CI_BOUND]
    if isinstance(result, cvstats.PlanResult):  # the grid: one row per J and unit
        return ["J", *result.unit_dims]
    if isinstance(result, cvstats.ComparisonTable):  # the contrasts first
        dims = [str(d) for d in next(iter(result.results.values())).estimate.dims]
        return sorted(dims, key=lambda d: d != "contrast")
    if isinstance(result, cvstats.PublicationTable):
        return [*result.rows, *result.columns]
    if isinstance(result, cvstats.ControlResult):  # one row per learner other than the control
        return ["model"]
    if isinstance(result, cvstats.EvalResult):  # one row per model or pair of models
        return [str(d) for d in result.estimate.dims]
    if isinstance(result, cvstats.MCSResult | cvstats.CVCResult):  # one row per candidate
        return ["model"]
    if isinstance(result, cvstats.EvalPlan):  # one row per pair and number of generations
        return [str(d) for d in result.questions.dims]
    return []


def check_interval(ci: xr.DataArray) -> None:
    assert isinstance(ci, xr.DataArray)
    assert ci.dims[-1] == CI_BOUND
    assert ci[CI_BOUND].values.tolist() == ["lower", "upper"]
    lower, upper = (ci.sel({CI_BOUND: b}) for b in BOUNDS)
    ok = (lower <= upper) | lower.isnull() | upper.isnull()
    assert bool(ok.all())


# ---------------------------------------------------------------------------
# the contract, class by class
# ---------------------------------------------------------------------------


def result_classes() -> set[type]:
    """Every subclass of :class:`Result` that cvstats defines, found, not listed.

    Imports every module of the package first (a class exists once its module
    ran), then walks ``__subclasses__`` down; classes a test defines are left out.
    """
    for module in pkgutil.walk_packages(cvstats.__path__, "cvstats."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    found: set[type] = set()
    todo = [Result]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found and sub.__module__.startswith("cvstats."):
                found.add(sub)
                todo.append(sub)
    return found


def test_discovery_finds_the_result_classes():
    found = result_classes()
    assert {InferenceResult, BayesianResult, EstimatesResult, cvstats.PlanResult} <= found
    assert Result not in found


def test_every_label_is_covered(results):
    assert set(results) == set(CLASSES)


def test_every_result_class_has_an_example():
    """A new result class fails here until ``results`` holds an instance of it."""
    missing = sorted(c.__qualname__ for c in result_classes() - set(CLASSES.values()))
    assert missing == [], f"add an instance of {missing} to `results` and `CLASSES`"


def test_the_tables_derive_from_the_result_base():
    """The comparison and publication tables are results; the comparison table's exports are
    the base's (its own to_latex/to_markdown/to_html went)."""
    assert issubclass(cvstats.ComparisonTable, Result)
    assert issubclass(cvstats.PublicationTable, Result)
    own = {"to_latex", "to_markdown", "to_html", "__str__"} & set(vars(cvstats.ComparisonTable))
    assert own == set()


@pytest.mark.parametrize("label", ["comparison", "inference", "fit_rho"])
def test_an_empty_caption_is_no_caption(results, label):
    """One rule for every result's to_latex: ``caption=""`` leaves the caption out (the
    comparison table used to put its default caption back)."""
    latex = results[label].to_latex(caption="")
    assert "\\caption" not in latex and "\\begin{tabular}" in latex


def test_every_result_class_says_its_own_verdict():
    """Each class owns its wording: no class falls back on the base's empty verdict."""
    silent = sorted(
        c.__qualname__ for c in result_classes() - NO_VERDICT if c.verdict is Result.verdict
    )
    assert silent == [], f"{silent} define no verdict()"


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_class_and_base(results, label):
    res = results[label]
    assert type(res) is CLASSES[label]
    assert isinstance(res, Result)
    if CLASSES[label] is EstimatesResult:  # wraps its Dataset (issue 27): not a subclass
        assert not isinstance(res, xr.Dataset)
        assert type(res.dataset) is xr.Dataset
    else:
        assert dataclasses.is_dataclass(res)


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_values_are_dataarrays(results, label):
    res = results[label]
    if isinstance(res, EstimatesResult):
        for name in res.data_vars:
            assert isinstance(res[name], xr.DataArray)
        return
    for name in res.value_fields:
        value = getattr(res, name)
        assert isinstance(value, xr.DataArray), (label, name, type(value))
    # no field holds a bare float: numbers are DataArrays or options/counts
    for f in dataclasses.fields(res):
        value = getattr(res, f.name)
        if isinstance(value, float) and not isinstance(value, bool):
            assert f.name in OPTIONS, (label, f.name)


@pytest.mark.parametrize(
    "label", ["inference_0d", "bayes_0d", "friedman", "wilcoxon", "bayes_signed_rank"]
)
def test_scalar_results_are_0d_dataarrays(results, label):
    res = results[label]
    for name in res.value_fields:
        value = getattr(res, name)
        assert isinstance(value, xr.DataArray) and value.ndim == 0
        assert isinstance(float(value), float)
    assert len(res.to_frame()) in (1, 2)  # one row (Friedman: its two tests)


def test_unpacking_the_tuple_view_of_a_scalar_interval(results):
    res = results["inference_0d"]
    low, high = res.conf_int()
    assert low.ndim == 0 and high.ndim == 0
    assert float(low) < float(res.estimate) < float(high)
    assert res.to_frame()["ci_lower"].item() == float(low)


def test_numbers_given_as_floats_become_0d_dataarrays(results):
    res = results["inference_scalar"]
    fields = {f.name: getattr(res, f.name) for f in dataclasses.fields(res)}
    fields.update(estimate=0.5, stderr=0.1, statistic=5.0, df=np.float64(9.0), pvalue=0.001)
    made = InferenceResult(**fields)
    for name in made.value_fields:
        assert isinstance(getattr(made, name), xr.DataArray) and getattr(made, name).ndim == 0
    assert made.estimate.item() == 0.5 and made.df.item() == 9.0
    low, high = made.conf_int()
    assert float(low) == pytest.approx(0.5 - kernels.critical_value(9.0, res.alpha) * 0.1)
    with pytest.raises(cvstats.CvstatsTypeError, match="DataArray or a number"):
        InferenceResult(**{**fields, "estimate": "0.5"})


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_interval_has_ci_bound(results, label):
    res = results[label]
    if label not in WITH_INTERVAL:
        with pytest.raises(ArgumentError, match="has no interval"):
            res.interval()
        return
    ci = res.interval()
    check_interval(ci)
    if isinstance(res, EstimatesResult):
        assert ci.dims[0] == "quantity"
        for q in ci["quantity"].values.tolist():
            one = ci.sel(quantity=q, drop=True)
            stored = res[f"{q}_ci"].broadcast_like(one).transpose(*one.dims)
            np.testing.assert_array_equal(one.values, stored.values)
        for name in res.data_vars:
            if str(name).endswith("_ci"):
                check_interval(res[name])
        with pytest.raises(ArgumentError, match="rerun the fit"):
            res.interval(alpha=0.5 * res.attrs["alpha"])
        return
    # the tuple view holds the same numbers
    view = res.conf_int() if hasattr(res, "conf_int") else res.credible_interval()
    assert isinstance(view, ConfidenceInterval)
    low, high = view
    xr.testing.assert_identical(low, ci.sel(ci_bound="lower", drop=True))
    xr.testing.assert_identical(high, ci.sel(ci_bound="upper", drop=True))
    assert ci.dims[:-1] == res._value_arrays()[res.value_fields[0]].dims
    # another level: a narrower interval
    wide, narrow = res.interval(0.05), res.interval(0.5)
    assert bool(
        ((narrow.sel(ci_bound="lower") >= wide.sel(ci_bound="lower")) | wide.isnull().any()).all()
    )


def test_interval_numbers_are_the_kernels(results):
    res = results["inference"]
    low, high = kernels.conf_int(
        res.estimate.values, res.stderr.values, res.df.values, alpha=0.1, alternative="two-sided"
    )
    ci = res.interval(0.1)
    np.testing.assert_array_equal(ci.sel(ci_bound="lower").values, low)
    np.testing.assert_array_equal(ci.sel(ci_bound="upper").values, high)


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_frame_has_the_stable_columns(results, label):
    res = results[label]
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0
    dims = dims_of(res)
    stable = list(res.frame_columns)
    assert stable, label
    assert list(frame.columns[: len(dims)]) == dims
    assert list(frame.columns[len(dims) : len(dims) + len(stable)]) == stable
    if not isinstance(res, RankReport):  # the report adds its correction and counts
        assert list(frame.columns) == [*dims, *stable]
    # plain numbers in the frame, never DataArrays
    assert not any(isinstance(v, xr.DataArray) for v in frame.to_numpy().ravel())


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_reporting_protocol(results, label):
    res = results[label]
    md = res.to_markdown()
    assert isinstance(md, str) and "|" in md
    latex = res.to_latex()
    assert "\\begin{tabular}" in latex and "\\toprule" in latex and "\\caption{" in latex
    # pdflatex-safe: no raw Unicode symbol (Greek letters, minus signs, accents) is left
    assert latex.isascii(), sorted({c for c in latex if not c.isascii()})
    html = res.to_html()
    assert "<table" in html
    if label != "publication":  # the base's exports: caption first, another caption
        assert html.startswith("<p>") and "caption{Mine}" in res.to_latex(caption="Mine")
    smry = res.summary()
    assert "\\begin{" in smry.as_latex() and "<table" in smry.as_html()
    text = str(res)
    assert text == smry.as_text() or label == "publication"  # str: the table as laid out
    assert len(text.splitlines()) > 3
    # every column of the frame appears in the Markdown table's header
    header = md.split("\n\n", 1)[1].splitlines()[0]
    for col in res.to_frame().columns:
        assert str(col) in header or label in OWN_LAYOUT


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_plot_or_a_clear_error(results, label):
    res = results[label]
    if isinstance(res, EstimatesResult):
        # an EstimatesResult's plot: callable, and xarray's Dataset accessor (test_display)
        assert res.plot is not None
        return
    if label in WITH_PLOT:
        assert res.plot() is not None
        plt.close("all")
        return
    with pytest.raises(ArgumentError, match="has no plot"):
        res.plot()


def test_options_reach_the_frame(results):
    res = results["inference"]
    assert res.to_frame(alpha=0.1)["ci_lower"].tolist() == (
        res.interval(0.1).sel(ci_bound="lower").values.tolist()
    )
    assert (
        "90% CI low" in str(res.summary(0.1)) and "90% CI high" in res.summary(alpha=0.1).as_text()
    )
    assert res.to_markdown(alpha=0.1) != res.to_markdown()
    est = f"{res.estimate.values[0]:.2g}"
    assert f" {est} |" in res.to_markdown(precision=2)
    post = results["bayes"]
    assert post.to_frame(0.5)["ci_upper"].tolist() == (
        post.interval(0.5).sel(ci_bound="upper").values.tolist()
    )


# ---------------------------------------------------------------------------
# per class
# ---------------------------------------------------------------------------


def test_pairwise_values_over_contrast(results):
    pw = results["pairwise"]
    assert pw.pvalue_adjusted.dims == ("contrast",) and pw.reject.dtype == bool
    labels = [f"{t.model_a} - {t.model_b}" for t in pw.tests]
    assert pw.pvalue_adjusted["contrast"].values.tolist() == labels
    assert pw.pvalue_adjusted["model_a"].values.tolist() == [t.model_a for t in pw.tests]
    frame = pw.to_frame()
    np.testing.assert_array_equal(frame["pvalue_adjusted"], pw.pvalue_adjusted.values)
    np.testing.assert_array_equal(frame["reject"], pw.reject.values)


def test_wilcoxon_and_friedman_frames_hold_floats(results):
    w = results["wilcoxon"].to_frame()
    assert w["statistic"].dtype == float and w["pvalue"].dtype == float
    f = results["friedman"].to_frame()
    assert f["statistic"].dtype == float and f["df2"].tolist()[0] == np.inf


def test_winner_table_frame_cells(results):
    wt = results["winner"]
    frame = wt.to_frame()
    assert frame["count"].sum() == wt.n_datasets
    for row in frame.itertuples():
        assert wt.table.loc[row.cv, row.conditional] == row.count
    assert "Agreement" in str(wt)


def test_estimates_read_like_their_dataset(results, cube):
    fit = results["fit_rho"]
    assert not isinstance(fit, xr.Dataset)  # wraps it (xarray does not support subclasses)
    assert isinstance(fit["rho"], xr.DataArray)
    lower = fit["rho_ci"].sel(ci_bound="lower")
    assert lower.dims == ("model",)
    assert fit.rho_ci.ci_bound.values.tolist() == ["lower", "upper"]
    assert fit.model.values.tolist() == fit.coords["model"].values.tolist()
    assert set(fit.data_vars) >= {"rho", "rho_se", "rho_ci", "rho0"}
    assert fit.attrs["N"] == 6 and fit.sizes["model"] == 3 and "model" in fit.dims
    assert "rho" in fit and "rho" in list(fit) and len(fit) == len(fit.data_vars)
    assert float(fit.rho0) == pytest.approx(8 / 40)
    assert {"rho", "rho_ci", "model"} <= set(dir(fit))
    # selections and computations give a fit again, over the Dataset's values
    first = str(fit.model.values[0])
    for sub in (fit.sel(model=first), fit.isel(model=0), fit.isel(model=[0]).squeeze()):
        assert type(sub) is EstimatesResult
        xr.testing.assert_identical(sub.dataset, fit.dataset.sel(model=first))
    both = fit[["rho", "rho_ci"]]
    assert type(both) is EstimatesResult and both.quantities == ["rho"]
    assert type(fit.compute()) is EstimatesResult and fit.load() is fit
    # the plain Dataset
    plain = fit.to_dataset()
    assert type(plain) is xr.Dataset and plain is not fit.dataset
    xr.testing.assert_identical(plain, fit.dataset)
    assert EstimatesResult.from_dataset(plain).equals(fit)
    assert EstimatesResult.from_dataset(plain).identical(plain)
    assert EstimatesResult.from_dataset(fit) is fit
    # the same numbers as the plain Dataset would give
    again = cvstats.fit_rho(cube)
    assert again.identical(fit)
    # Dataset methods beyond those are the Dataset's, named in the error
    with pytest.raises(AttributeError, match=r"fit\.dataset\.rename"):
        fit.rename({"rho": "r"})
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = fit.nope


def test_estimates_concat_stacks_fits(results):
    """``xr.concat`` takes Datasets only: ``EstimatesResult.concat`` or the fits' Datasets."""
    fit = results["fit_rho"]
    other = fit.dataset.copy(deep=True)
    other["rho"] = other["rho"] + 0.25
    design = pd.Index(["first", "second"], name="design")
    both = EstimatesResult.concat([fit, other], design, coords="minimal", compat="override")
    assert type(both) is EstimatesResult and both.sizes["design"] == 2
    np.testing.assert_allclose(both.rho.sel(design="second") - both.rho.sel(design="first"), 0.25)
    plain = xr.concat([fit.dataset, other], design, coords="minimal", compat="override")
    xr.testing.assert_identical(both.dataset, plain)
    assert both.attrs == fit.attrs
    with pytest.raises(TypeError, match="can only concatenate"):
        xr.concat([fit, fit], dim="design")
    with pytest.raises(ArgumentError, match="`fits` is empty"):
        EstimatesResult.concat([], "design")
    with pytest.raises(TypeError, match=r"`fits` must be an xarray.Dataset .*got DataArray"):
        EstimatesResult.concat([fit, fit.rho], "design")
    with pytest.raises(TypeError, match=r"`dataset` must be an xarray.Dataset"):
        EstimatesResult({"rho": fit.rho})


def test_estimates_are_mutable_as_their_dataset(results):
    fit = EstimatesResult.from_dataset(results["fit_rho"].to_dataset())
    fit["twice"] = 2 * fit["rho"]
    assert "twice" in fit.dataset and "twice" in fit.quantities
    del fit["twice"]
    assert "twice" not in fit
    fit.attrs = {"alpha": 0.05, "method": "m"}
    assert fit.dataset.attrs == {"alpha": 0.05, "method": "m"}
    assert fit.to_frame()["quantity"].unique().tolist() == fit.quantities


def test_estimates_copies_do_not_share_their_dataset(results):
    fit = results["fit_lemma1"]
    for other in (copy.copy(fit), copy.deepcopy(fit), fit.copy(), fit.copy(deep=False)):
        assert type(other) is EstimatesResult and other.identical(fit)
        other.attrs["note"] = "changed"
        other["extra"] = 2 * other["pi"]
        assert "note" not in fit.attrs and "extra" not in fit


def test_publication_table_takes_a_fit(results):
    """A fit's ``q``/``q_ci`` pair fills the cells, as its Dataset's did."""
    fit = results["fit_rho"]
    design = pd.Index(["one", "two"], name="design")
    fits = EstimatesResult.concat([fit, fit], design, coords="minimal", compat="override")
    frame = cvstats.publication_table(fits, rows="model", columns="design", estimate="rho")
    frame = frame.to_frame().set_index(["model", "design"])
    for (model, _), row in frame.iterrows():
        ci = fit.rho_ci.sel(model=model).values
        assert row["estimate"] == pytest.approx(float(fit.rho.sel(model=model)))
        assert [row["ci_lower"], row["ci_upper"]] == pytest.approx(ci.tolist())


def test_estimates_pickle_and_netcdf(results, tmp_path):
    fit = results["fit_lemma1"]
    again = pickle.loads(pickle.dumps(fit))
    assert type(again) is EstimatesResult and again.identical(fit)
    path = tmp_path / "fit.nc"
    fit.to_netcdf(path)
    with xr.open_dataset(path) as stored:
        assert stored["pi"].equals(fit["pi"])
        assert EstimatesResult.from_dataset(stored).to_frame().equals(fit.to_frame())
    wide = fit.to_dataframe()
    assert "pi" in wide.columns


@pytest.mark.parametrize("label", ["fit_rho", "kfold_moments", "cv_bias", "fit_lemma1"])
def test_estimates_frame_is_tidy(results, label):
    res = results[label]
    frame = res.to_frame()
    for q in res.quantities:
        rows = frame[frame["quantity"] == q]
        est = res[q].broadcast_like(res[res.quantities[0]])
        np.testing.assert_array_equal(
            np.sort(rows["estimate"].to_numpy()), np.sort(est.values.astype(float).ravel())
        )
        if f"{q}_se" in res.data_vars:
            assert not rows["stderr"].isnull().all()
        else:
            assert rows["stderr"].isnull().all()
        if f"{q}_ci" in res.data_vars:
            lower = res[f"{q}_ci"].sel(ci_bound="lower").broadcast_like(est)
            np.testing.assert_array_equal(
                np.sort(rows["ci_lower"].to_numpy()), np.sort(lower.values.ravel())
            )
    assert not any(q.endswith(("_se", "_ci")) for q in frame["quantity"].unique())


def test_reexports_keep_old_imports():
    from cvstats.across import conditional, ranks
    from cvstats.inference import bayes
    from cvstats.results import bayes as rbayes
    from cvstats.results import conditional as rconditional
    from cvstats.results import ranks as rranks

    assert bayes.BayesianResult is rbayes.BayesianResult is cvstats.BayesianResult
    assert bayes.BAYES_FRAME_COLUMNS is rbayes.BAYES_FRAME_COLUMNS
    for name in (
        "FriedmanResult",
        "WilcoxonResult",
        "PairwiseResult",
        "ControlResult",
        "EffectSizeResult",
        "PairwiseMatrix",
        "RankReport",
    ):
        assert getattr(ranks, name) is getattr(rranks, name) is getattr(cvstats, name)
    assert ranks.cd_diagram is rranks.cd_diagram is cvstats.cd_diagram
    assert conditional.WinnerTable is rconditional.WinnerTable is cvstats.WinnerTable
    from cvstats.across.lemma1 import CI_BOUND as lemma_ci
    from cvstats.across.lemma1 import bounds as lemma_bounds

    assert lemma_ci == CI_BOUND and lemma_bounds is bounds


def test_as_dataarray():
    value = xr.DataArray([1.0, 2.0], dims="x", attrs={"a": 1})
    assert as_dataarray(value) is value
    bare = as_dataarray(value, keep_attrs=False)
    assert bare.attrs == {} and value.attrs == {"a": 1}
    for number in (0.25, np.float64(0.25), np.array(0.25), 3, np.int64(3), True):
        out = as_dataarray(number)
        assert out.ndim == 0 and out.item() == number
    for bad in ("x", [1.0], np.ones(2), None):
        with pytest.raises(cvstats.CvstatsTypeError):
            as_dataarray(bad)


def test_bounds_shape():
    ci = bounds(xr.DataArray([0.0, 1.0], dims="m"), xr.DataArray([2.0, 3.0], dims="m"))
    assert ci.dims == ("m", CI_BOUND) and ci[CI_BOUND].values.tolist() == list(BOUNDS)
    np.testing.assert_array_equal(ci.values, [[0.0, 2.0], [1.0, 3.0]])


def test_the_base_derives_a_frame_from_the_value_fields():
    from typing import ClassVar

    @dataclasses.dataclass(frozen=True)
    class Tiny(Result):
        name: str
        value: xr.DataArray
        other: xr.DataArray
        n: int

        frame_columns: ClassVar[tuple[str, ...]] = ("value", "other", "name", "n")
        value_fields: ClassVar[tuple[str, ...]] = ("value", "other")

        def __post_init__(self) -> None:
            self._coerce_values()

    tiny = Tiny("x", xr.DataArray([1.0, 2.0], dims="m", coords={"m": ["p", "q"]}), 3.0, 7)
    assert tiny.other.ndim == 0
    frame = tiny.to_frame()
    assert list(frame.columns) == ["m", "value", "other", "name", "n"]
    assert frame["other"].tolist() == [3.0, 3.0] and frame["n"].tolist() == [7, 7]
    assert "Tiny" in str(tiny) and "| p " in tiny.to_markdown()
    with pytest.raises(ArgumentError, match="Tiny has no plot"):
        tiny.plot()
    with pytest.raises(ArgumentError, match="Tiny has no interval"):
        tiny.interval()


# ---------------------------------------------------------------------------
# to_frame: the direct numpy frame equals xarray's Dataset.to_dataframe path
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_to_frame_fast_path_equals_the_dataset_path(results, label, monkeypatch):
    """results.base._product_frame builds frames without xarray; it must change nothing."""
    from cvstats.results import base

    built = []
    original = base._product_frame

    def spy(values, constants, columns=None):
        out = original(values, constants, columns)
        built.append(out is not None)
        return out

    monkeypatch.setattr(base, "_product_frame", spy)
    fast = results[label].to_frame()
    monkeypatch.setattr(base, "_product_frame", lambda values, constants, columns=None: None)
    slow = results[label].to_frame()
    pd.testing.assert_frame_equal(fast, slow)
    if label in ("inference", "inference_5x2", "bayes"):  # results over dims, in memory
        assert any(built), "the fast path did not run"


def test_comparison_frame_fast_path_equals_the_dataset_path(cube, monkeypatch):
    """Over datasets (a dim without an index) and contrasts (strings), every method."""
    from cvstats.results import base

    table = cvstats.compare(cvstats.pairwise(cube))
    fast = table.to_frame()
    monkeypatch.setattr(base, "_product_frame", lambda values, constants, columns=None: None)
    slow = table.to_frame()
    pd.testing.assert_frame_equal(fast, slow)
    assert {"dataset", "contrast"} <= set(fast.columns) and len(fast) > cube.sizes["dataset"]
