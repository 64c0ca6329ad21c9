import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402
from scipy import stats  # noqa: E402

import cvstats  # noqa: E402
from cvstats import ArgumentError, FormulaError, designs  # noqa: E402
from cvstats.cli import main  # noqa: E402
from cvstats.results import FRAME_COLUMNS  # noqa: E402
from cvstats.studies import METHOD_NAMES  # noqa: E402


@pytest.fixture(scope="module")
def cube():
    d = designs.nadeau_bengio(100, 10, J=5, M=3, R=3, seed=4)
    rng = np.random.default_rng(4)
    losses = rng.random((d.sizes["split"], 100, 3)) + np.array([0.0, 0.1, 0.3])
    return cvstats.from_arrays(losses, design=d, models=["ols", "ridge", "tree"], name="loss")


#: compare's default methods on a Nadeau–Bengio cube: every method of docs/theory.md §4
#: (the studies' list, kept apart from the registry compare reads) but the hold-out t
ALL_LEARNER = [m for m in METHOD_NAMES if m != "holdout_t"]


def test_compare_rows_equal_direct_method_calls(cube):
    table = cvstats.compare("loss ~ model", cube)
    frame = table.to_frame()
    assert list(frame.columns) == ["contrast", *FRAME_COLUMNS, "pvalue_raw", "note"]
    assert list(table.results) == ALL_LEARNER
    assert len(frame) == 3 * len(ALL_LEARNER)
    # contrasts keep the formula's order (labelled as the summary labels them), methods the
    # table's order
    assert list(pd.unique(frame["contrast"])) == ["ols", "ridge − ols", "tree − ols"]
    assert frame["method"].tolist()[: len(ALL_LEARNER)] == ALL_LEARNER
    # a row equals the method run on the contrast directly (contrast = tree - ols)
    diff = (cube.sel(model="tree") - cube.sel(model="ols")).expand_dims(model=["d"], axis=-1)
    direct = cvstats.conservative_z(diff)
    row = frame[(frame.contrast == "tree − ols") & (frame.method == "conservative_z")]
    np.testing.assert_allclose(row["statistic"], direct.statistic.values.ravel(), rtol=1e-12)
    np.testing.assert_allclose(row["ci_upper"], direct.conf_int().high.values.ravel(), rtol=1e-12)


def test_learner_target_flags_liberal_methods(cube):
    frame = cvstats.compare("loss ~ model", cube).to_frame()
    flagged = set(frame.loc[frame.note == "liberal for the learner", "method"])
    assert flagged == {"resampled_t", "bootstrap_t"}
    text = cvstats.compare("loss ~ model", cube).summary(full=True).as_text()
    assert "Note: resampled_t, bootstrap_t: liberal for the learner." in text


def test_model_target_restricts_to_conditional_methods(cube):
    table = cvstats.compare("loss ~ model", cube, target="model")
    assert list(table.results) == ["resampled_t", "bootstrap_t"]
    assert (table.to_frame().note == "conditional error of the models at hand").all()
    with pytest.raises(ArgumentError, match=r"\['conservative_z'\] infer the unconditional"):
        cvstats.compare("loss ~ model", cube, target="model", methods=["conservative_z"])


def test_methods_by_name_and_errors(cube):
    table = cvstats.compare("loss ~ 0 + model", cube, methods=["corrected_resampled_t"])
    assert table.to_frame().contrast.tolist() == ["ols", "ridge", "tree"]
    with pytest.raises(ArgumentError, match="unknown method"):
        cvstats.compare("loss ~ model", cube, methods=["t_test"])
    with pytest.raises(ArgumentError, match="`target` must be one of"):
        cvstats.compare("loss ~ model", cube, target="both")
    with pytest.raises(FormulaError):
        cvstats.compare("loss ~ learner", cube)
    with pytest.raises(ArgumentError, match="two-sided only"):
        cvstats.compare("loss ~ model", cube, methods=["combined_5x2cv_f"], alternative="greater")


def test_pairwise_and_dataset_of_cubes(cube):
    table = cvstats.compare(cvstats.pairwise(cube), methods=["corrected_resampled_t"])
    assert table.to_frame().contrast.tolist() == ["ols − ridge", "ols − tree", "ridge − tree"]
    ds = xr.Dataset({"loss": cube, "other": cube * 2})
    a = cvstats.compare("other ~ model", ds, methods=["resampled_t"]).to_frame()
    b = cvstats.compare("loss ~ model", cube, methods=["resampled_t"]).to_frame()
    np.testing.assert_allclose(a.estimate, 2 * b.estimate, rtol=1e-12)
    np.testing.assert_allclose(a.statistic, b.statistic, rtol=1e-12)


def test_extra_dims_are_rows(cube):
    stacked = xr.concat([cube, cube + 0.5], dim="dataset").drop_vars("in_train")
    frame = cvstats.compare("loss ~ model", stacked, methods=["resampled_t"]).to_frame()
    assert list(frame.columns[:2]) == ["contrast", "dataset"]
    assert len(frame) == 3 * 2


def test_exports(cube):
    table = cvstats.compare("loss ~ model", cube)
    latex = table.to_latex()
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    assert "corrected\\_resampled\\_t" in latex  # escaped
    assert "μ" not in latex and "$\\mu$" in latex  # pdflatex-safe
    assert latex.isascii(), sorted({c for c in latex if not c.isascii()})
    # pairwise contrasts are labelled "a − b" (U+2212), which pdflatex rejects: set as math
    pairs = cvstats.compare(cvstats.pairwise(cube)).to_latex()
    assert pairs.isascii() and " $-$ " in pairs, sorted({c for c in pairs if not c.isascii()})
    assert "loss \\textasciitilde{} model" in latex
    md = table.to_markdown()
    assert md.splitlines()[0].startswith("loss ~ model: 9 methods")
    assert "| contrast" in md
    html = table.to_html()
    assert "<table" in html and "conservative_z" in html
    assert table.to_frame().equals(table.to_frame())  # deterministic: no timestamps


def test_plot_draws_every_interval(cube):
    table = cvstats.compare("loss ~ model", cube, methods=["resampled_t", "combined_5x2cv_f"])
    ax = table.plot()
    assert len(ax.get_yticklabels()) == 6
    # one interval line per finite interval (3 resampled t rows); F has none
    assert len(ax.collections[0].get_segments()) == 3
    matplotlib.pyplot.close(ax.figure)


def test_mcnemar_in_compare_uses_pairwise_contrasts():
    d = designs.holdout(200, 60, seed=0)
    rng = np.random.default_rng(0)
    losses = (rng.random((1, 200, 3)) < [0.1, 0.2, 0.3]).astype(float)
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b", "c"], name="zero_one")
    table = cvstats.compare(
        "zero_one ~ model", cube, methods=["holdout_t", "mcnemar"], target="model"
    )
    mc = table.results["mcnemar"]
    assert mc.estimate.contrast.values.tolist() == ["model[T.b]", "model[T.c]"]
    direct = cvstats.mcnemar(cube, models=["b", "a"])
    np.testing.assert_allclose(float(mc.pvalue.sel(contrast="model[T.b]")), direct.pvalue)


def test_cli_table_formats(cube, tmp_path, capsys):
    path = tmp_path / "cube.nc"
    cvstats.save(cube, path)
    for fmt, marker in [
        ("text", "Comparisons: loss ~ model"),
        ("latex", "\\toprule"),
        ("markdown", "| contrast"),
        ("html", "<table"),
    ]:
        assert main(["table", str(path), "--format", fmt, "--methods", "conservative_z"]) == 0
        assert marker in capsys.readouterr().out
    assert main(["table", str(path), "--formula", "loss ~ 0 + model", "--target", "model"]) == 0
    out = capsys.readouterr().out
    assert "No comparison between models" in out and "conservative_z" not in out
    assert "tree" in out and "model[tree]" not in out  # labels people read


def test_caption_counts_methods_in_words(cube):
    one = cvstats.compare("loss ~ model", cube, methods=["resampled_t"])
    two = cvstats.compare("loss ~ model", cube, methods=["resampled_t", "corrected_resampled_t"])
    assert "loss ~ model: 1 method, H0" in one.to_markdown()
    assert "loss ~ model: 2 methods, H0" in two.to_markdown()


def test_summary_repr_is_its_text(cube):
    # a notebook's text/plain view: the table itself, not statsmodels' class name in quotes
    smry = cvstats.compare("loss ~ model", cube).summary()
    assert repr(smry) == smry.as_text()
    assert not repr(smry).startswith("<class")


# --- GroupKFold: folds of unequal sizes ---------------------------------------------------


@pytest.fixture(scope="module")
def grouped():
    """Zero-one losses of three classifiers on GroupKFold(5) over 14 groups of unequal size."""
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.naive_bayes import GaussianNB
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_classification(n_samples=260, n_features=6, flip_y=0.1, random_state=3)
    sizes = [60, 45, 35, 30, 20, 15, 12, 10, 9, 8, 6, 5, 3, 2]
    groups = np.random.default_rng(3).permutation(np.repeat(np.arange(14), sizes))
    design = designs.from_splitter(GroupKFold(5), X, y, groups=groups)
    learners = {
        "logreg": LogisticRegression(),
        "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
        "nb": GaussianNB(),
    }
    return cvstats.collect(learners, X, y, design, loss="zero_one", progress=False)


def _corrected_fold_t(diff, n1, n2):
    """The corrected t of one K-fold run's fold means, written out (Nadeau & Bengio 2003)."""
    mu = np.nanmean(np.asarray(diff.values), axis=1)  # (K,) fold means
    K = mu.size
    t = mu.mean() / np.sqrt((1 / K + n2 / n1) * mu.var(ddof=1))
    return t, 2 * stats.t.sf(abs(t), K - 1)


def test_groupkfold_keeps_the_corrected_t_with_the_mean_sizes(grouped):
    n_test = np.asarray((~np.isnan(grouped.isel(model=0))).sum("example").values)
    assert n_test.max() - n_test.min() > 1  # folds of very different sizes
    n, K = grouped.sizes["example"], n_test.size
    assert n_test.sum() == n  # one repeat partitions the examples: mean test size n/K
    table = cvstats.compare("zero_one ~ model", grouped)
    assert "corrected_repeated_kfold_t" in table.results and not table.left_out
    assert table.recommendation().method == "corrected_repeated_kfold_t"
    frame = table.to_frame()
    for model in ("tree", "nb"):
        diff = grouped.sel(model=model) - grouped.sel(model="logreg")
        t, p = _corrected_fold_t(diff, n - n / K, n / K)
        row = frame[(frame.contrast == f"{model} − logreg")].set_index("method")
        row = row.loc["corrected_repeated_kfold_t"]
        np.testing.assert_allclose(row["statistic"], t, rtol=1e-10)
        np.testing.assert_allclose(row["pvalue_raw"], p, rtol=1e-10)
        assert (row["n1"], row["n2"]) == (round(n - n / K), round(n / K))
    # the notes say which sizes were used; the verdict speaks of the mean training size
    note = next(x for x in table.notes if x.startswith("the folds test"))
    assert f"the mean test size is n/K = {n / K:.4g}" in note and "corrected_repeated" in note
    assert f"when trained on {round(n - n / K)} examples" in str(table.verdict())


def test_compare_passes_n1_and_n2_to_the_methods_that_take_them(grouped):
    table = cvstats.compare("zero_one ~ model", grouped, n1=200, n2=40)
    diff = grouped.sel(model="tree") - grouped.sel(model="logreg")
    t, _ = _corrected_fold_t(diff, 200, 40)
    frame = table.to_frame().set_index(["contrast", "method"])
    np.testing.assert_allclose(
        frame.loc[("tree − logreg", "corrected_repeated_kfold_t"), "statistic"], t, rtol=1e-10
    )
    assert frame.loc[("tree − logreg", "kfold_t"), "n1"] == 200  # reported by the k-fold t
    assert frame.loc[("tree − logreg", "bayle_cv"), "n1"] != 200  # bayle_cv takes no sizes
    assert "n1 = 200, n2 = 40 as given, used by kfold_t, corrected_repeated_kfold_t" in " ".join(
        table.notes
    )
    with pytest.raises(ArgumentError, match="`n1` must be a positive int"):
        cvstats.compare("zero_one ~ model", grouped, n1=0)
    with pytest.raises(ArgumentError, match="`n1` \\+ `n2` = 250 \\+ 40 exceeds"):
        cvstats.compare("zero_one ~ model", grouped, n1=250, n2=40)


# --- multiple comparisons -------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_datasets(cube):
    """The module's cube and another draw of the same design, stacked over `dataset`."""
    rng = np.random.default_rng(11)
    other = cube.copy(data=np.where(np.isnan(cube.values), np.nan, rng.random(cube.shape)))
    other = other + np.array([0.0, 0.05, 0.02])
    return xr.concat([cube, other], dim="dataset").assign_coords(dataset=["d1", "d2"])


@pytest.mark.parametrize("adjust", ["holm", "bonferroni", "hochberg", "fdr_bh"])
def test_pvalues_are_adjusted_per_method_and_dataset(two_datasets, adjust):
    from statsmodels.stats.multitest import multipletests

    table = cvstats.compare(cvstats.pairwise(two_datasets), adjust=adjust)
    frame = table.to_frame()
    method = "simes-hochberg" if adjust == "hochberg" else adjust
    for (name, _), rows in frame.groupby(["method", "dataset"]):
        raw = table.results[name].pvalue.sel(dataset=rows["dataset"].iloc[0])
        np.testing.assert_allclose(rows["pvalue_raw"], raw.values, rtol=1e-12)
        want = multipletests(rows["pvalue_raw"].to_numpy(), method=method)[1]
        np.testing.assert_allclose(rows["pvalue"], want, rtol=1e-12)
    verdict = str(table.verdict())
    label = {"holm": "Holm", "bonferroni": "Bonferroni", "hochberg": "Simes-Hochberg"}
    name = label.get(adjust, "FDR Benjamini-Hochberg")
    assert f"{name}-adjusted over 3 comparisons (each method's, within each dataset)" in verdict
    assert f"{name}-adjusted p" in verdict


def test_no_adjustment_and_one_comparison_leave_the_pvalues_as_they_are(cube, two_datasets):
    raw = cvstats.compare(cvstats.pairwise(two_datasets), adjust=None)
    frame = raw.to_frame()
    np.testing.assert_array_equal(frame["pvalue"], frame["pvalue_raw"])
    assert "adjusted" not in str(raw.verdict())
    one = cvstats.compare(cvstats.pairwise(cube.isel(model=[0, 2])))
    frame = one.to_frame()
    np.testing.assert_array_equal(frame["pvalue"], frame["pvalue_raw"])
    assert "adjusted" not in str(one.verdict()) and "adjusted" not in one.to_markdown()
    with pytest.raises(ArgumentError, match="`adjust` must be a statsmodels multipletests"):
        cvstats.compare(cvstats.pairwise(cube), adjust="tukey")


def test_adjustment_leaves_out_the_levels_and_is_shown_everywhere(cube):
    from statsmodels.stats.multitest import multipletests

    table = cvstats.compare("loss ~ model", cube)  # Intercept (= ols) and two differences
    frame = table.to_frame()
    rows = frame[frame.method == "corrected_resampled_t"].set_index("contrast")
    # the family is the two differences, not the level of ols
    want = multipletests(rows.loc[["ridge − ols", "tree − ols"], "pvalue_raw"], method="holm")[1]
    np.testing.assert_allclose(rows.loc[["ridge − ols", "tree − ols"], "pvalue"], want)
    assert "Holm-adjusted over 2 comparisons" in table.to_markdown().splitlines()[0]
    text = table.summary().as_text()
    assert "Holm p" in text and "Holm-adjusted over 2 comparisons" in " ".join(text.split())
    full = table.summary(full=True).as_text()
    assert "raw p-value" in full


# --- one set of labels, one notion of a test ---------------------------------------------


def _markdown_rows(md):
    lines = [x for x in md.splitlines() if x.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [
        dict(zip(head, (c.strip() for c in x.strip("|").split("|")), strict=True))
        for x in lines[2:]
    ]


def test_every_export_labels_alike_and_tests_no_level(cube):
    table = cvstats.compare("loss ~ model", cube)
    frame = table.to_frame()
    # the summary's labels, in to_frame too; the level of ols is an estimate, not a test
    assert list(pd.unique(frame["contrast"])) == ["ols", "ridge − ols", "tree − ols"]
    level = frame[frame.contrast == "ols"]
    assert level[["pvalue", "pvalue_raw", "statistic"]].isna().all().all()
    intervals = level.loc[level.method != "combined_5x2cv_f", ["estimate", "ci_lower", "ci_upper"]]
    assert np.isfinite(intervals.to_numpy()).all()  # (Alpaydın's F gives no interval)
    tests = frame[frame.contrast != "ols"]
    assert np.isfinite(tests["pvalue"]).all()
    exports = {
        "latex": table.to_latex(),
        "markdown": table.to_markdown(),
        "html": table.to_html(),
        "summary": table.summary().as_text(),
        "full": table.summary(full=True).as_text(),
    }
    for name, text in exports.items():
        assert "Intercept" not in text and "[T." not in text, name
        assert "tree − ols" in text or "tree $-$ ols" in text, name
    # the markdown table: no p-value for the level, one for each comparison
    for row in _markdown_rows(table.to_markdown()):
        assert (row["p-value"] == "") == (row["contrast"] == "ols"), row
    assert (
        "ols: one model's own level: an estimate with its interval, not a test"
        in (exports["markdown"])
    )
