"""The reader's view: default summary, verdicts, the recommendation behind them.

Each verdict is checked against numbers computed here independently (scipy's
t quantile on the split means, the Nadeau–Bengio correction written out), and
each design/target pair against the method ``docs/choosing-a-method.md``
promises.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from sklearn.model_selection import GroupShuffleSplit, TimeSeriesSplit

import cvstats
from cvstats import designs
from cvstats.inference.recommend import LEARNER_ORDER, MODEL_ORDER, REASONS, recommend
from cvstats.inference.registry import METHODS
from cvstats.results.verdict import (
    Verdict,
    parse_weights,
    pvalue_text,
    readable_label,
    result_verdict,
    short_title,
)

ROOT = Path(__file__).resolve().parents[2]
N = 200


def _losses(design, shifts, seed=0, zero_one=True):
    """0/1 (or continuous) losses with model m's error rate 0.2 + shifts[m]."""
    rng = np.random.default_rng(seed)
    shape = (design.sizes["split"], N, len(shifts))
    u = rng.random(shape)
    if zero_one:
        return (u < 0.2 + np.asarray(shifts)).astype(float)
    return u + np.asarray(shifts)


def _cube(design, shifts, models=("logreg", "tree"), seed=0, zero_one=True):
    name = "zero_one" if zero_one else "loss"
    cube = cvstats.from_arrays(
        _losses(design, shifts, seed, zero_one), design=design, models=list(models), name=name
    )
    if zero_one:
        cube.attrs["loss"] = "zero_one"
    return cube


@pytest.fixture(scope="module")
def nb_cube():
    d = designs.nadeau_bengio(N, n_test=20, J=8, M=3, R=4, seed=1)
    return _cube(d, [0.0, 0.15, 0.02], models=("logreg", "tree", "nb"))


# --- the default view ------------------------------------------------------------


def score_cube(design, models=("a", "b"), seed=0, greater_is_better=True, **kw):
    """A score cube of ``design``: scores 0.8 +- 0.01, one column per model."""
    rng = np.random.default_rng(seed)
    scores = 0.8 + 0.01 * rng.standard_normal((design.sizes["split"], len(models)))
    return cvstats.from_scores(
        scores, greater_is_better=greater_is_better, design=design, models=list(models), **kw
    )


def test_default_summary_width_and_no_intercept_test(nb_cube):
    table = cvstats.compare("zero_one ~ model", nb_cube)
    text = table.summary().as_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    comparisons = text.split("Per-model estimates")[0]
    assert "Intercept" not in text and "model[T." not in text
    assert "tree − logreg" in comparisons and "nb − logreg" in comparisons
    # one row per contrast and method
    rows = [line for line in comparisons.splitlines() if "− logreg" in line]
    assert len(rows) == 2 * len(table.results)
    # per-model block: every model, with an interval, not a test
    block = text.split("Per-model estimates")[1].split("Verdict:")[0]
    for model in ("logreg", "tree", "nb"):
        assert re.search(rf"^\s*{model}\s+\S+\s+\[", block, re.M), block
    assert "95% CI" in text and "[0.025" not in text
    assert "Verdict:" in text


def test_levels_are_the_recommended_method_on_each_model(nb_cube):
    table = cvstats.compare("zero_one ~ model", nb_cube)
    direct = cvstats.corrected_resampled_t(nb_cube)
    assert table.levels.method == "corrected_resampled_t"
    np.testing.assert_allclose(table.levels.estimate.values, direct.estimate.values)
    np.testing.assert_allclose(table.levels.conf_int()[0].values, direct.conf_int()[0].values)


def test_full_summary_keeps_every_row(nb_cube):
    table = cvstats.compare("zero_one ~ model", nb_cube)
    full = table.summary(full=True).as_text()
    assert full.count("corrected_resampled_t") >= 3  # levels are tested there
    assert "95% CI" in full and "[0.025" not in full
    assert "tree − logreg" in full and "model[T.tree]" not in full


def test_default_summary_within_width_with_extra_dim_and_long_names():
    d = designs.resampled(N, 20, J=6, seed=0)
    models = ("a_rather_long_model_name_one", "another_quite_long_model_name")
    cubes = [_cube(d, [0.0, 0.05 * k], models=models, seed=k) for k in range(3)]
    import xarray as xr

    cube = xr.concat(cubes, dim="dataset").assign_coords(dataset=["d0", "d1", "d2"])
    table = cvstats.compare("zero_one ~ model", cube)
    text = table.summary().as_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    verdict = str(table.verdict())
    assert verdict.count("dataset = ") == 3


# --- sentences against independent numbers ------------------------------------------


def test_verdict_numbers_match_an_independent_computation():
    d = designs.resampled(N, 40, J=10, seed=3)
    cube = _cube(d, [0.0, 0.25], seed=3)
    diff = cube.sel(model="tree") - cube.sel(model="logreg")
    means = diff.mean("example").values  # one mean per split
    J, n2, n1 = len(means), 40, N - 40
    est = means.mean()
    se = np.sqrt((1 / J + n2 / n1) * means.var(ddof=1))
    t = est / se
    p = 2 * stats.t.sf(abs(t), J - 1)
    half = stats.t.ppf(0.975, J - 1) * se
    verdict = str(cvstats.compare("zero_one ~ model", cube).verdict())
    dec = max(0, 1 - int(np.floor(np.log10(100 * half))))  # two digits of the half-width
    points = f"{100 * abs(est):.{dec}f}"
    assert f"tree has {points} points more error than logreg" in verdict
    low, high = f"{100 * (est - half):.{dec}f}", f"{100 * (est + half):.{dec}f}"
    assert f"95% CI {low.replace('-', '−')} to {high.replace('-', '−')}" in verdict
    assert pvalue_text(p, 0.05) in verdict and "corrected resampled t" in verdict
    better = "evidence that logreg generalizes better than tree" in verdict
    assert better == (p < 0.05)
    assert f"when trained on {n1} examples" in verdict


def test_no_evidence_wording():
    d = designs.resampled(N, 20, J=5, seed=0)
    cube = _cube(d, [0.0, 0.0], seed=5)
    res = cvstats.corrected_resampled_t(cvstats.pairwise(cube))
    if float(res.pvalue.values[0]) < 0.05:  # pragma: no cover - depends on the seed
        pytest.skip("this seed happens to reject")
    assert "no evidence that either generalizes better when trained on 180 examples" in str(
        res.verdict() if hasattr(res, "verdict") else result_verdict(res)
    )


# --- the recommended method per design and target -----------------------------------


@pytest.mark.parametrize(
    ("design", "target", "method", "answers"),
    [
        (designs.resampled(N, 20, J=6, seed=0), "learner", "corrected_resampled_t", True),
        (designs.resampled(N, 20, J=6, seed=0), "model", "resampled_t", True),
        (designs.kfold(N, 5, repeats=3, seed=0), "learner", "corrected_repeated_kfold_t", True),
        (designs.kfold(N, 5, seed=0), "model", "bayle_cv", True),
        (designs.five_by_two(N, seed=0), "learner", "dietterich_5x2cv", True),
        (designs.bootstrap(N, 20, J=4, R=5, seed=0), "learner", "corrected_resampled_t", True),
        (designs.holdout(N, 20, seed=0), "learner", "holdout_t", False),
        (designs.holdout(N, 20, seed=0), "model", "holdout_t", True),
    ],
    ids=[
        "resampled-learner",
        "resampled-model",
        "repeated-kfold-learner",
        "kfold-model",
        "5x2-learner",
        "bootstrap-learner",
        "holdout-learner",
        "holdout-model",
    ],
)
def test_recommended_method_per_design_and_target(design, target, method, answers):
    cube = _cube(design, [0.0, 0.1])
    table = cvstats.compare("zero_one ~ model", cube, target=target)
    rec = table.recommendation()
    assert (rec.method, rec.answers_target) == (method, answers)
    verdict = str(table.verdict())
    if answers:
        assert "Caveat" not in verdict
    else:
        assert verdict.startswith("Caveat: this design cannot answer the learner question")
    if target == "model" or not answers:
        assert "as trained on these data" in verdict
    else:
        assert "generalizes better" in verdict or "when trained on" in verdict
    if method.startswith("dietterich"):
        assert f"trained on {N // 2} examples" in verdict
    # the summary's target is the one the verdict's method answers
    text = " ".join(table.summary().as_text().split())
    assert ("Target: the learners" in text) == (target == "learner" and answers)
    if not answers:
        assert f"the verdict comes from {method}, which answers for the models" in verdict


def test_caveat_when_the_methods_named_exclude_the_learner_ones(nb_cube):
    table = cvstats.compare("zero_one ~ model", nb_cube, methods=["resampled_t"])
    verdict = str(table.verdict())
    assert verdict.startswith("Caveat: none of the methods named is valid for the learner")


def _group_shuffle_cube(seed=2):
    """A score cube of GroupShuffleSplit: random splits of groups, of unequal test sizes."""
    groups = np.repeat(np.arange(12), [40, 30, 25, 20, 18, 15, 14, 12, 10, 8, 5, 3])
    splitter = GroupShuffleSplit(n_splits=8, test_size=0.25, random_state=seed)
    d = designs.from_splitter(splitter, np.zeros((N, 1)), groups=groups)
    assert len(set(d.n_test.values.tolist())) > 1 and d.attrs["partition"] == 0
    return score_cube(d, seed=seed)


def test_caveat_when_the_learner_methods_were_left_out_for_the_cube():
    # random splits of unequal test sizes: the corrected t needs n1= and n2=, so compare
    # leaves it out with a note; the caveat must say so, not blame `methods` (none named)
    # nor the design (which can answer the learner question once the sizes are stated)
    cube = _group_shuffle_cube()
    table = cvstats.compare(cvstats.pairwise(cube))
    assert "corrected_resampled_t" in table.left_out
    assert any(n.startswith("corrected_resampled_t left out") for n in table.notes)
    verdict = str(table.verdict())
    assert verdict.startswith("Caveat: the methods valid for the learner question"), verdict
    assert "(corrected_resampled_t) were left out" in verdict and "`methods`" not in verdict
    # the caveat names the method the verdict falls back to and the target it answers
    assert (
        "the verdict comes from resampled_t, which answers for the models trained on these "
        "data (target 'model'; liberal for the learners)" in verdict
    )
    # named methods: the user's choice, the caveat of before
    named = cvstats.compare(cvstats.pairwise(cube), methods=["resampled_t"])
    assert named.left_out == ()
    assert str(named.verdict()).startswith("Caveat: none of the methods named is valid")


def test_the_target_line_agrees_with_the_method_of_a_fallback():
    # the learners were asked about, but only a method for the models could run: the
    # summary's "Target:" line names the target the verdict's method answers
    cube = _group_shuffle_cube(seed=3)
    text = " ".join(cvstats.compare(cvstats.pairwise(cube)).summary().as_text().split())
    assert "Verdict from resampled_t" in text
    assert "Target: the learners" not in text
    assert (
        "Target: the models trained on these data (conditional error), not the learners asked "
        "about" in text
    )
    # the sizes stated: the corrected t runs, decides, and the target is the learners again
    stated = cvstats.compare(cvstats.pairwise(cube), n1=150, n2=50)
    assert stated.recommendation().method == "corrected_resampled_t"
    direct = cvstats.corrected_resampled_t(cvstats.pairwise(cube), n1=150, n2=50)
    np.testing.assert_allclose(
        stated.results["corrected_resampled_t"].pvalue.values, direct.pvalue.values, rtol=1e-12
    )
    text = " ".join(stated.summary().as_text().split())
    assert "Target: the learners (unconditional error" in text
    assert "n1 = 150, n2 = 50 as given, used by resampled_t, corrected_resampled_t" in text


def test_disagreement_is_reported():
    # many splits, a true difference: the liberal resampled t rejects, the corrected t may not
    d = designs.resampled(N, 20, J=25, seed=2)
    for seed in range(40):
        cube = _cube(d, [0.0, 0.03], seed=seed)
        table = cvstats.compare(
            "zero_one ~ model", cube, methods=["resampled_t", "corrected_resampled_t"]
        )
        naive = float(table.results["resampled_t"].pvalue.values[1])
        corrected = float(table.results["corrected_resampled_t"].pvalue.values[1])
        if naive < 0.05 <= corrected:
            break
    else:  # pragma: no cover
        pytest.fail("no seed where the resampled t rejects and the corrected t does not")
    verdict = str(table.verdict())
    assert "no evidence that either generalizes better" in verdict
    # the resampled t is liberal for the learners: it stays in the table, never in the verdict
    assert "Disagreeing" not in verdict and "resampled_t†" not in verdict
    assert "resampled_t" in set(table.to_frame()["method"])
    assert (
        "resampled_t (liberal for the learners, or about another training size) are in the "
        "table only" in " ".join(table.summary().as_text().split())
    )


def test_disagreeing_lines_name_only_methods_valid_for_the_target():
    # every method of a Nadeau–Bengio design: the verdict's corrected t is checked against
    # the other methods for n1μ (conservative Z, corrected bootstrap), never against the
    # methods liberal for the learners nor the 5x2 methods (training size n/2)
    d = designs.nadeau_bengio(N, n_test=20, J=6, M=3, R=3, seed=4)
    valid = {"conservative_z", "corrected_bootstrap_t"}
    listed, hidden = set(), set()
    for seed in range(30):
        table = cvstats.compare("zero_one ~ model", _cube(d, [0.0, 0.07], seed=seed))
        frame = table.to_frame()
        rows = frame[frame["contrast"] == "tree − logreg"].set_index("method")
        mine = rows.loc["corrected_resampled_t", "pvalue"] < 0.05
        differ = {m for m, p in rows["pvalue"].items() if np.isfinite(p) and (p < 0.05) != mine}
        line = next((x for x in str(table.verdict()).splitlines() if "Disagreeing" in x), "")
        named = set(re.findall(r"(\w+)[†‡]* \(p", line))
        assert named == differ & valid, (seed, line, differ)
        listed |= named
        hidden |= differ - valid
        if listed and hidden & {"resampled_t", "bootstrap_t"} and hidden & {"dietterich_5x2cv"}:
            break
    assert listed, "no seed where a valid method disagrees"
    assert hidden & {"resampled_t", "bootstrap_t"} and "dietterich_5x2cv" in hidden, hidden


@pytest.mark.parametrize("greater_is_better", [True, False])
def test_score_cube_respects_the_direction(greater_is_better):
    d = designs.kfold(N, 5, repeats=4, seed=0)
    rng = np.random.default_rng(0)
    scores = 0.8 + 0.01 * rng.standard_normal((d.sizes["split"], 2))
    # "knn" scores 0.05 higher on every split, give or take 0.002
    scores[:, 1] = scores[:, 0] + 0.05 + 0.002 * rng.standard_normal(d.sizes["split"])
    cube = cvstats.from_scores(
        scores, greater_is_better=greater_is_better, design=d, models=["logreg", "knn"]
    )
    cube.attrs["metric"] = "roc_auc"
    verdict = str(cvstats.compare(f"{cube.name} ~ model", cube).verdict())
    assert re.search(r"knn has 0\.05\d* higher roc_auc than logreg", verdict), verdict
    better, worse = ("knn", "logreg") if greater_is_better else ("logreg", "knn")
    assert f"evidence that {better} generalizes better than {worse}" in verdict


def test_bayesian_verdict_decides_at_095():
    d = designs.resampled(N, 20, J=10, seed=0)
    cube = _cube(d, [0.0, 0.3], seed=1)
    res = cvstats.bayesian_correlated_t(cvstats.pairwise(cube), rope=0.01)
    text = str(result_verdict(res))
    assert text.startswith("logreg − tree: posterior mean −")
    p_better = float(re.search(r"P\(logreg better\) = ([0-9.]+)", text).group(1))
    assert abs(p_better - float(res.p_left.values[0])) < 0.005
    assert ("decision: logreg better" in text) == (float(res.p_left.values[0]) >= 0.95)


def test_result_verdict_on_a_model_cube_gives_levels(nb_cube):
    text = str(result_verdict(cvstats.corrected_resampled_t(nb_cube)))
    assert text.splitlines()[0].startswith("logreg's error is ")
    assert "% CI" in text and "evidence" not in text


def test_verdict_displays_itself():
    v = Verdict("a <b>\n  c")
    assert repr(v) == "a <b>\n  c" and "&lt;b&gt;" in v._repr_html_()


def test_table_repr_is_short(nb_cube):
    table = cvstats.compare("zero_one ~ model", nb_cube)
    lines = repr(table).splitlines()
    assert len(lines) <= 20 and lines[0].startswith("<ComparisonTable 'zero_one ~ model'")
    assert "<ul" in table._repr_html_()


# --- small pieces --------------------------------------------------------------------


def test_labels_people_read():
    assert parse_weights("-1*a b + 1*c-d") == [(-1.0, "a b"), (1.0, "c-d")]
    assert readable_label("model[T.b]", "-1*a + 1*b") == "b − a"
    assert readable_label("x", "0.5*a + 0.5*b - 1*c") == "0.5 a + 0.5 b − c"
    assert readable_label("free text", "not weights") == "free text"
    assert short_title("Dietterich 5x2cv t (original)") == "Dietterich 5x2cv t"
    # a first word with a capital inside is a name, kept as written; others are lowered
    assert short_title("Giacomini–White (rolling)") == "Giacomini–White"
    assert short_title("LeCun test") == "LeCun test"
    assert short_title("Hold-out t (z reference)") == "hold-out t"
    assert pvalue_text(0.0499, 0.05) == "p = 0.0499" and pvalue_text(0.19, 0.05) == "p = 0.19"


def test_every_method_has_a_place_in_one_order():
    assert set(LEARNER_ORDER) | set(MODEL_ORDER) == set(METHODS)
    assert not set(LEARNER_ORDER) & set(MODEL_ORDER)
    assert all(METHODS[n].target == "learner" for n in LEARNER_ORDER)
    assert all(METHODS[n].target == "model" for n in MODEL_ORDER)
    assert set(REASONS) == set(METHODS)
    with pytest.raises(cvstats.errors.ArgumentError, match="unknown method"):
        recommend(["nope"])


def test_docs_render_the_same_order():
    # the page renders the order from the declarations (tests/architecture/test_registry_docs.py)
    text = (ROOT / "docs" / "choosing-a-method.md").read_text(encoding="utf-8")
    section = text.split("## How the verdict picks its method")[1]
    assert "```{cvstats-registry} order" in section


def test_default_summary_renders_in_every_format(nb_cube):
    smry = cvstats.compare("zero_one ~ model", nb_cube).summary()
    latex = smry.as_latex()  # statsmodels alone cannot merge tables of different widths
    assert latex.count("\\begin{tabular}") == 2 and "Verdict" in latex
    assert smry.as_html().count("<table") == 2 and smry.as_csv()
    assert smry._repr_latex_() == latex


# --- fixes found on the way (issue 15, point 7) ---------------------------------------


def test_a_cube_collected_with_the_log_loss_is_named_and_compared_as_such():
    from sklearn.datasets import load_breast_cancer
    from sklearn.naive_bayes import GaussianNB

    X, y = load_breast_cancer(return_X_y=True)
    d = designs.resampled(len(y), 56, J=3, seed=0)
    learners = {"nb": GaussianNB(), "nb_smooth": GaussianNB(var_smoothing=1e-3)}
    cube = cvstats.collect(learners, X, y, d, loss="log", progress=False)
    assert cube.name == "log"
    table = cvstats.compare("log ~ model", cube, methods=["corrected_resampled_t"])
    assert "log loss" in str(table.verdict())
    with pytest.raises(cvstats.errors.FormulaError, match="'log'"):
        cvstats.compare("loss ~ model", cube)


def test_the_rho_of_repeated_kfold_is_worded_one_way():
    """ρ = 1/K is the correction's assumed correlation, not fit_rho's average correlation."""
    direction = METHODS["corrected_repeated_kfold_t"].direction
    assert "the correction's n2/n1 = 1/(K-1) as a correlation" in direction
    bayes_doc = cvstats.bayesian_correlated_t.__doc__
    assert "not the\n    average correlation" in bayes_doc and "(R - 1)/(K R - 1)" in bayes_doc
    beyond = (ROOT / "docs" / "beyond.md").read_text(encoding="utf-8")
    assert "*assumed* correlation" in beyond and "$(R-1)/(KR-1)$" in beyond


def test_a_null_other_than_zero_and_a_one_sided_test_are_worded():
    d = designs.resampled(N, 40, J=10, seed=3)
    cube = _cube(d, [0.0, 0.25], seed=3)
    shifted = str(cvstats.compare("zero_one ~ model", cube, mu0=0.01).verdict())
    assert "that the difference differs from 1 point." in shifted
    one_sided = str(cvstats.compare("zero_one ~ model", cube, alternative="greater").verdict())
    assert "95% lower bound" in one_sided and "95% CI" not in one_sided


# --- verdicts across datasets, against their numbers computed here --------------------


def test_rank_verdicts_against_scipy():
    import pandas as pd

    rng = np.random.default_rng(4)
    errors = pd.DataFrame(
        rng.random((12, 3)) * 0.05 + np.array([0.10, 0.20, 0.11]),
        columns=["a", "b", "c"],
        index=pd.Index([f"d{i}" for i in range(12)], name="dataset"),
    )
    friedman = cvstats.friedman_test(errors, greater_is_better=False)
    ranks = errors.rank(axis=1).mean()  # lower error, rank 1
    k, n = 3, len(errors)
    chi2 = 12 * n / (k * (k + 1)) * ((ranks**2).sum() - k * (k + 1) ** 2 / 4)
    ff = (n - 1) * chi2 / (n * (k - 1) - chi2)
    p_id = stats.f.sf(ff, k - 1, (k - 1) * (n - 1))
    cd = stats.studentized_range.ppf(0.95, k, np.inf) / np.sqrt(2) * np.sqrt(k * (k + 1) / (6 * n))
    text = str(friedman.verdict())
    assert pvalue_text(p_id, 0.05) in text and ("differ" in text) == (p_id < 0.05)
    pairs = [
        f"{x} < {y}"
        for x in ranks.sort_values().index
        for y in ranks.index
        if ranks[y] - ranks[x] > cd
    ]
    assert all(p in text for p in pairs) and pairs  # b is worse than a and c here
    w = cvstats.wilcoxon_test(errors, "a", "b", greater_is_better=False)
    p_w = stats.wilcoxon(errors["a"] - errors["b"]).pvalue
    assert f"Wilcoxon signed-rank, {pvalue_text(p_w, 0.05)}" in str(w.verdict())
    assert "evidence that a is better" in str(w.verdict())


@pytest.mark.parametrize(("rho", "word"), [(0.0, "below ρ0"), (0.5, "above ρ0")])
def test_fit_rho_verdict_says_where_rho_lies(rho, word):
    """Gaussian equicorrelated split means with a known ρ (Lemma 2) on many datasets."""
    d = designs.resampled(N, 20, J=15, seed=0)
    rng = np.random.default_rng(1)
    n_sets, J = 400, d.sizes["split"]
    common = rng.standard_normal((n_sets, 1, 1, 1)) * np.sqrt(rho)
    own = rng.standard_normal((n_sets, J, 1, 1)) * np.sqrt(1 - rho)
    losses = 0.01 * rng.standard_normal((n_sets, J, N, 2)) + common + own
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b"], extra_dims=["dataset"])
    fit = cvstats.fit_rho(cube)
    text = str(fit.verdict())
    assert text.count(word) == 2, text
    low = float(fit.to_frame().query("quantity == 'rho'")["ci_lower"].iloc[0])
    assert (low > 0.1) == (word == "above ρ0")


@pytest.mark.parametrize(("repeats", "words"), [(1, "1 repeat"), (3, "3 repeats")])
def test_repeats_are_counted_in_words(repeats, words):
    d = designs.kfold(N, 5, repeats=repeats, seed=0)
    cube = score_cube(d, seed=1)
    res = cvstats.corrected_repeated_kfold_t(cvstats.pairwise(cube))
    assert res.title.endswith(f"(Bouckaert & Frank), {words}"), res.title
    verdict = str(cvstats.compare(cvstats.pairwise(cube)).verdict())
    assert f"corrected repeated 5-fold t, {words}" in verdict, verdict
    assert "1 repeats" not in verdict


def test_a_cube_of_models_as_it_is_says_each_model_is_tested_on_its_own():
    d = designs.kfold(N, 5, repeats=2, seed=0)
    cube = score_cube(d, seed=3)
    cube.name = "roc_auc"
    verdict = str(cvstats.compare(cube).verdict())
    assert verdict.startswith("Caveat: each model is tested on its own against mu0 = 0"), verdict
    assert "cvstats.compare(cvstats.pairwise(cube))" in verdict
    assert "cvstats.compare('roc_auc ~ model', cube)" in verdict
    # the results are those of the methods on the cube, as before
    table = cvstats.compare(cube, methods=["corrected_repeated_kfold_t"])
    alone = cvstats.corrected_repeated_kfold_t(cube)
    np.testing.assert_array_equal(
        table.results["corrected_repeated_kfold_t"].to_frame()["estimate"],
        alone.to_frame()["estimate"],
    )
    # one model, or a contrast cube: no such caveat
    for one in (cube.isel(model=[0]), cvstats.pairwise(cube)):
        assert "tested on its own" not in str(cvstats.compare(one).verdict())


def test_summary_writes_models_short_when_labels_are_too_long():
    d = designs.kfold(N, 5, repeats=2, seed=0)
    names = [f"logisticregression__C={c}" for c in ("0.01", "0.1", "1")]
    cube = score_cube(d, names, seed=4)
    text = cvstats.compare(cvstats.pairwise(cube)).summary().as_text()
    assert "m1 − m2" in text and "m1 − m3" in text and "m2 − m3" in text, text
    assert (
        "Models (names too long for the tables): m1 = logisticregression__C=0.01; "
        "m2 = logisticregression__C=0.1; m3 = logisticregression__C=1." in " ".join(text.split())
    )
    assert max(len(line) for line in text.splitlines()) <= 100
    # the verdict keeps the full names
    assert "logisticregression__C=0.1 has" in text
    # short names that fit: unchanged, no legend
    plain = cube.assign_coords(model=["a", "b", "c"])
    text = cvstats.compare(cvstats.pairwise(plain)).summary().as_text()
    assert "a − b" in text and "Models (" not in text


@pytest.mark.parametrize("greater_is_better", [True, False])
def test_a_result_on_scores_names_a_score_not_a_loss(greater_is_better):
    d = designs.kfold(N, 5, repeats=2, seed=0)
    cube = score_cube(d, seed=5, greater_is_better=greater_is_better, name="auc")
    way = "larger" if greater_is_better else "smaller"
    for res in (
        cvstats.corrected_repeated_kfold_t(cvstats.pairwise(cube)),
        cvstats.bayesian_correlated_t(cvstats.pairwise(cube), rope=0.01),
    ):
        text = res.summary().as_text()
        assert re.search(rf"Score:\s+auc \({way} is better\)", text), text
        assert "Loss:" not in text
    losses = np.random.default_rng(6).random((d.sizes["split"], N, 2))
    loss_cube = cvstats.from_arrays(losses, design=d, models=["a", "b"], name="zero_one")
    text = cvstats.corrected_repeated_kfold_t(cvstats.pairwise(loss_cube)).summary().as_text()
    assert "Loss:" in text and "Score:" not in text


def test_notes_on_many_comparisons_and_leave_one_out():
    d = designs.kfold(N, 5, repeats=2, seed=0)
    cube = score_cube(d, ["a", "b", "c"], seed=7)
    many = cvstats.compare(cvstats.pairwise(cube), alpha=0.1, adjust=None)
    assert any(
        n.startswith("3 comparisons, each tested at level 0.1 with no adjustment")
        for n in many.notes
    )
    assert "3 comparisons, each tested" in many.summary().as_text()
    # adjusted (the default): no such note, the verdict says over what
    adjusted = cvstats.compare(cvstats.pairwise(cube), alpha=0.1)
    assert not any("comparisons, each tested" in n for n in adjusted.notes)
    assert "p-values Holm-adjusted over 3 comparisons (each method's)" in str(adjusted.verdict())
    # two models, one comparison: no such note
    one = cvstats.compare(cvstats.pairwise(cube.isel(model=[0, 1])))
    assert not any("comparisons, each tested" in n for n in one.notes)
    # leave-one-out: one example per test set
    n = 30
    loo = designs.kfold(n, n, seed=0)
    assert (loo["test"].sum("example").values == 1).all()
    cube = cvstats.from_scores(
        np.random.default_rng(7).integers(0, 2, (n, 2)).astype(float),
        greater_is_better=True,
        design=loo,
        models=["a", "b"],
    )
    notes = cvstats.compare(cvstats.pairwise(cube)).notes
    assert any(n.startswith("every split tests one example (leave-one-out)") for n in notes)
    assert not any("leave-one-out" in n for n in one.notes)


def test_methods_left_out_for_one_reason_share_a_note():
    d = designs.from_splitter(TimeSeriesSplit(4), np.zeros((N, 1)))
    cube = score_cube(d, seed=8)
    with pytest.raises(cvstats.ArgumentError, match="no method applies") as err:
        cvstats.compare(cvstats.pairwise(cube))
    text = str(err.value)
    assert "resampled_t, corrected_resampled_t left out: each pools the splits" in text
    assert text.count("pools the splits as exchangeable") == 1


def test_a_negated_loss_is_worded_as_the_loss():
    # scikit-learn's neg_* scorers: the sentences speak of the loss, as for the loss itself
    d = designs.kfold(N, 5, repeats=3, seed=0)
    rng = np.random.default_rng(9)
    mse = np.stack([3000 + 300 * rng.standard_normal(15), 3200 + 300 * rng.standard_normal(15)], 1)
    kw = {"design": d, "models": ["ols", "ridge"]}
    neg = cvstats.from_scores(-mse, greater_is_better=True, name="neg_mean_squared_error", **kw)
    loss = cvstats.from_scores(mse, greater_is_better=False, name="mean_squared_error", **kw)
    for make in (
        lambda c: cvstats.compare(cvstats.pairwise(c)).verdict(),
        lambda c: cvstats.compare(f"{c.name} ~ model", c).verdict(),
        lambda c: cvstats.bayesian_correlated_t(cvstats.pairwise(c), rope=50).verdict(),
    ):
        got, want = str(make(neg)), str(make(loss))
        assert got == want, (got, want)
    # one-sided: "greater" on the negated values is "less" on the loss
    got = cvstats.compare(cvstats.pairwise(neg), alternative="greater").verdict()
    want = cvstats.compare(cvstats.pairwise(loss), alternative="less").verdict()
    assert str(got) == str(want) and "upper bound" in str(got)
    text = str(cvstats.compare(cvstats.pairwise(neg)).verdict())
    assert "lower mean_squared_error" in text or "higher mean_squared_error" in text
    assert "neg_" not in text


def test_review_cases_of_the_new_notes_and_short_names():
    d = designs.kfold(N, 5, repeats=2, seed=0)
    # a hand-built contrast cube whose weights are numbers: no crash, the count is said
    cube = score_cube(d, ["a", "b", "c"], seed=10)
    pairs = cvstats.pairwise(cube)
    pairs = pairs.assign_coords(weights=("contrast", [1.0, 2.0, 3.0]))
    assert any(n.startswith("3 comparisons") for n in cvstats.compare(pairs, adjust=None).notes)
    # extra dims: the count is per element of them
    stacked = xr.concat([cvstats.pairwise(cube)] * 2, dim="dataset")
    assert any(
        n.startswith("3 comparisons (for each dataset)")
        for n in cvstats.compare(stacked, adjust=None).notes
    )
    # a cube of models with long names: short names and a legend there too
    names = ["logisticregression__C=0.01__penalty=l2", "logisticregression__C=0.01__penalty=l1"]
    own = score_cube(d, names, seed=11)
    text = cvstats.compare(own).summary().as_text()
    assert "Models (names too long for the tables): m1 = " + names[0] in " ".join(text.split())
    # a model named like a short name: another prefix
    clash = score_cube(d, ["m2", "logisticregression__C=0.01__penalty=l1"], seed=12)
    text = cvstats.compare(cvstats.pairwise(clash)).summary().as_text()
    assert "M1 = m2; M2 = logisticregression" in " ".join(text.split()), text
    # long codings of short names: no short names (they would not shorten anything)
    short = score_cube(d, ["lr", "rf", "nb"], seed=13)
    text = cvstats.compare(f"{short.name} ~ C(model, contr.helmert)", short).summary().as_text()
    assert "Models (" not in text
    # a cube whose name is no identifier: the caveat suggests only the call that works
    odd = score_cube(d, seed=14, name="test-auc")
    verdict = str(cvstats.compare(odd).verdict())
    assert "cvstats.compare(cvstats.pairwise(cube))." in verdict and "~ model" not in verdict


def test_bayesian_verdict_ropes_empty_and_asymmetric():
    # the default rope is empty: not a region "within ±0.0"; an asymmetric rope is shown by
    # its two ends, not as ±(the larger end)
    d = designs.kfold(120, K=6, repeats=2, seed=9)
    rng = np.random.default_rng(9)
    errors = (rng.random((d.sizes["split"], 120, 2)) < np.array([0.2, 0.3])).astype(float)
    cube = cvstats.from_arrays(errors, design=d, models=["p", "q"], name="zero_one")
    diff = cvstats.pairwise(cube)
    plain = str(cvstats.bayesian_correlated_t(diff).verdict())
    assert "±0" not in plain and "equivalent" not in plain
    assert "(no rope: pass rope= for practical equivalence)" in plain
    res = cvstats.bayesian_correlated_t(diff, rope=(-0.03, 0.01))
    text = str(res.verdict())
    assert "P(equivalent within [−3, 1] points) = " in text
    p_rope = float(res.p_rope.squeeze())
    assert f"within [−3, 1] points) = {p_rope:.2f}" in text
    level = str(cvstats.bayesian_correlated_t(cube.sel(model=["p"]), rope=(0.1, 0.25)).verdict())
    assert "P(within [10%, 25%]) = " in level
