"""Evaluations of fixed models: each number against an independent computation.

The clustered standard error against statsmodels' OLS on a constant with
``cov_type="cluster"``; the variance components against a one-way ANOVA by
hand (pandas); the binomial intervals against scipy; the bootstrap against
``scipy.stats.bootstrap`` called directly; Holm against ``multipletests``; the
plan against a simulation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import statsmodels.api as sm
from statsmodels.stats.multitest import multipletests

import cvstats
from cvstats import ArgumentError, CubeError, DesignError
from cvstats.kernels.evals import cluster_stderr, eval_moments


def benchmark(n_docs=12, per_doc=4, generations=3, skill=(0.55, 0.6, 0.75), seed=2):
    """A table of 0/1 answers: documents share a difficulty, models differ in skill."""
    rng = np.random.default_rng(seed)
    rows = []
    for doc in range(n_docs):
        hard = rng.normal(0, 1.0)
        for k in range(per_doc):
            q = f"d{doc}-{k}"
            easy = rng.normal(0, 0.7) - hard
            for m, s in enumerate(skill):
                p = 1 / (1 + np.exp(-(easy + np.log(s / (1 - s)))))
                for g in range(generations):
                    rows.append((q, f"m{m}", g, f"doc{doc}", float(rng.random() < p)))
    return pd.DataFrame(rows, columns=["question", "model", "gen", "doc", "right"])


@pytest.fixture(scope="module")
def table():
    return benchmark()


def unclustered(table, **kw):
    """The benchmark's cube, its questions taken as independent (or clustered by ``kw``)."""
    columns = {"question": "question", "model": "model", "score": "right", "generation": "gen"}
    return cvstats.from_evals(table, **columns, **kw, greater_is_better=True)


@pytest.fixture(scope="module")
def cube(table):
    return unclustered(table, cluster="doc")


def per_question(table, model):
    """Each question's mean score of one model, and its document (pandas, independently)."""
    sub = table[table.model == model]
    means = sub.groupby("question", sort=False)["right"].mean()
    docs = sub.groupby("question", sort=False)["doc"].first()
    return means, docs


@pytest.mark.parametrize("pair", [("m0", "m2"), ("m1", "m0")])
def test_clustered_stderr_of_a_difference_equals_statsmodels(table, cube, pair):
    a, b = pair
    res = cvstats.eval_difference(cube, models=[a, b])
    ma, docs = per_question(table, a)
    mb, _ = per_question(table, b)
    d = (ma - mb).to_numpy()
    fit = sm.OLS(d, np.ones(len(d))).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(docs)[0]}
    )
    assert float(res.estimate[0]) == pytest.approx(fit.params[0], abs=1e-12)
    assert float(res.stderr[0]) == pytest.approx(fit.bse[0], rel=1e-10)
    iid = sm.OLS(d, np.ones(len(d))).fit()
    assert float(res.stderr_iid[0]) == pytest.approx(iid.bse[0], rel=1e-10)
    assert float(res.df[0]) == docs.nunique() - 1
    assert res.n_clusters == 12 and res.n_questions == 48 and res.n_generations == 3


def test_without_clusters_the_stderr_is_the_iid_one(table):
    cube = unclustered(table)
    res = cvstats.eval_mean(cube)
    means, _ = per_question(table, "m1")
    fit = sm.OLS(means.to_numpy(), np.ones(len(means))).fit()
    row = res.to_frame().set_index("model").loc["m1"]
    assert row.stderr == pytest.approx(fit.bse[0], rel=1e-10)
    assert row.stderr == row.stderr_iid and row.df == 47 and row.n_clusters == 0
    low, high = fit.conf_int(0.05)[0]
    assert (row.ci_lower, row.ci_upper) == pytest.approx((low, high), rel=1e-10)


def test_one_question_per_cluster_gives_the_iid_stderr_up_to_the_small_sample_factor():
    x = np.random.default_rng(4).normal(size=(2, 15))
    m = eval_moments(x, np.arange(15))
    # statsmodels' correction C/(C-1) with C = Q: sum e² / (Q (Q-1)), the iid variance
    assert m.stderr == pytest.approx(m.stderr_iid, rel=1e-12)


def test_variance_components_are_the_one_way_anova_of_generations(table, cube):
    res = cvstats.eval_mean(cube)
    for model in ("m0", "m2"):
        sub = table[table.model == model]
        groups = sub.groupby("question")["right"]
        within = groups.var(ddof=1).mean()  # the ANOVA's mean square within (equal sizes)
        between = groups.mean().var(ddof=1) - within / 3
        row = res.to_frame().set_index("model").loc[model]
        assert row.var_within == pytest.approx(within, rel=1e-12)
        assert row.var_between == pytest.approx(between, rel=1e-12)


def test_components_recover_the_simulated_ones():
    rng = np.random.default_rng(11)
    q, g = 4000, 5
    x = rng.normal(0, np.sqrt(0.3), size=(1, q)) + rng.normal(0, np.sqrt(0.8), size=(g, q))
    m = eval_moments(x)
    assert m.var_between == pytest.approx(0.3, abs=0.05)
    assert m.var_within == pytest.approx(0.8, abs=0.03)


def test_a_difference_is_the_difference_of_the_means_and_its_sign_follows_the_score(cube):
    means = cvstats.eval_mean(cube).estimate
    diff = cvstats.eval_difference(cube)
    assert diff.estimate.contrast.values.tolist() == ["m0 - m1", "m0 - m2", "m1 - m2"]
    expected = [
        float(means.sel(model=a) - means.sel(model=b))
        for a, b in (("m0", "m1"), ("m0", "m2"), ("m1", "m2"))
    ]
    np.testing.assert_allclose(diff.estimate.values, expected, rtol=1e-12)
    assert "m2 scores better" in diff.verdict().splitlines()[1]


def test_holm_over_the_pairs_equals_multipletests(cube):
    res = cvstats.eval_difference(cube)
    expected = multipletests(res.pvalue.values, method="holm")[1]
    np.testing.assert_allclose(res.pvalue_adjusted.values, expected, rtol=1e-12)
    raw = cvstats.eval_difference(cube, adjust=None)
    np.testing.assert_array_equal(raw.pvalue_adjusted.values, raw.pvalue.values)
    assert raw.adjust == "none" and res.adjust == "holm"


def test_the_t_pvalue_is_the_clustered_t_test(table, cube):
    res = cvstats.eval_difference(cube, models=["m2", "m0"], mu0=0.05)
    t = (float(res.estimate[0]) - 0.05) / float(res.stderr[0])
    assert float(res.statistic[0]) == pytest.approx(t)
    assert float(res.pvalue[0]) == pytest.approx(2 * scipy.stats.t.sf(abs(t), 11), rel=1e-12)


def small_benchmark(correct):
    """One 0/1 answer per question of one model."""
    frame = pd.DataFrame({"q": range(len(correct)), "model": "solo", "ok": correct})
    return cvstats.from_evals(
        frame, question="q", model="model", score="ok", greater_is_better=True
    )


@pytest.mark.parametrize("method", ["clopper-pearson", "wilson"])
def test_binomial_intervals_of_a_small_benchmark(method):
    correct = [1] * 17 + [0] * 3  # 85% of 20 questions: too few for the normal approximation
    res = cvstats.eval_mean(small_benchmark(correct), interval=method, mu0=0.6, alpha=0.1)
    low, high = res.ci.values[0]
    if method == "clopper-pearson":  # scipy's exact interval, independently
        ci = scipy.stats.binomtest(17, 20).proportion_ci(0.9, method="exact")
        assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-10)
        assert float(res.pvalue[0]) == pytest.approx(scipy.stats.binomtest(17, 20, 0.6).pvalue)
    else:  # Wilson's score interval by hand
        z, p, n = scipy.stats.norm.ppf(0.95), 0.85, 20
        centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
        assert (low, high) == pytest.approx((centre - half, centre + half), rel=1e-10)
        score_z = (p - 0.6) / np.sqrt(0.6 * 0.4 / n)
        assert float(res.pvalue[0]) == pytest.approx(2 * scipy.stats.norm.sf(score_z))
    assert res.interval_method == method
    with pytest.raises(ArgumentError, match="computed from the data; call the function again"):
        res.interval(0.2)


def test_binomial_intervals_refuse_generations_clusters_and_grades(cube):
    with pytest.raises(ArgumentError, match=r"needs one 0/1 answer per question .*3 generation"):
        cvstats.eval_mean(cube, interval="wilson")
    graded = small_benchmark([0.5, 1.0, 0.0])
    with pytest.raises(ArgumentError, match=r"non-0/1 scores"):
        cvstats.eval_mean(graded, interval="clopper-pearson")
    with pytest.raises(ArgumentError, match=r"`interval` must be one of \['t', 'bootstrap'\]"):
        cvstats.eval_difference(cube, interval="wilson")


def test_the_bootstrap_interval_is_scipys_bca_on_question_means(table):
    cube = unclustered(table)
    res = cvstats.eval_difference(cube, models=["m2", "m1"], interval="bootstrap", seed=5)
    ma, _ = per_question(table, "m2")
    mb, _ = per_question(table, "m1")
    boot = scipy.stats.bootstrap(
        ((ma - mb).to_numpy(),),
        np.mean,
        method="BCa",
        n_resamples=9999,
        rng=np.random.default_rng(5),
    )
    ci = boot.confidence_interval
    np.testing.assert_allclose(res.ci.values[0], [ci.low, ci.high], rtol=1e-12)


def test_the_cluster_bootstrap_resamples_whole_documents(table, cube):
    res = cvstats.eval_difference(cube, models=["m2", "m1"], interval="bootstrap", seed=5)
    ma, docs = per_question(table, "m2")
    mb, _ = per_question(table, "m1")
    by_doc = (ma - mb).groupby(docs.to_numpy(), sort=False).agg(["sum", "size"])
    boot = scipy.stats.bootstrap(
        (by_doc["sum"].to_numpy(), by_doc["size"].to_numpy(float)),
        lambda s, n, axis: s.sum(axis) / n.sum(axis),
        paired=True,
        vectorized=True,
        method="BCa",
        n_resamples=9999,
        rng=np.random.default_rng(5),
    )
    ci = boot.confidence_interval
    np.testing.assert_allclose(res.ci.values[0], [ci.low, ci.high], rtol=1e-12)
    t = cvstats.eval_difference(cube, models=["m2", "m1"])
    assert res.ci.values[0, 0] < float(t.estimate[0]) < res.ci.values[0, 1]


def test_refusals(cube):
    loss_cube = cvstats.from_arrays(
        np.random.default_rng(0).random((3, 10, 2)),
        np.ones((3, 10), bool),
        n_train=1,
        attrs={"n": 11},
    )
    with pytest.raises(ArgumentError, match=r"design 'user'.*read by cvstats.from_evals"):
        cvstats.eval_mean(loss_cube)
    one_doc = cube.assign_coords(group=("example", ["same"] * cube.sizes["example"]))
    with pytest.raises(DesignError, match=r"at least 10 clusters .*G = 1 cluster\(s\)"):
        cvstats.eval_difference(one_doc)
    with pytest.raises(CubeError, match=r"has 1 question \('0' in column 'q'\).*at least 2"):
        small_benchmark([1])  # before: a cube with the placeholder n = 2, refused by eval_mean
    with pytest.raises(DesignError, match=r"1 question\(s\); a standard error needs at least 2"):
        eval_moments(np.ones((2, 1)))
    with pytest.raises(ArgumentError, match=r"`adjust` must be a statsmodels"):
        cvstats.eval_difference(cube, adjust="tukey")
    with pytest.raises(ArgumentError, match=r"`n_resamples` must be an int >= 100, got 5"):
        cvstats.eval_mean(cube, interval="bootstrap", n_resamples=5)
    with pytest.raises(ArgumentError, match=r"`alpha` must be"):
        cvstats.eval_mean(cube, alpha=1.5)


def test_the_t_interval_at_another_level_is_recomputed(cube):
    res = cvstats.eval_mean(cube)
    wide = res.interval(0.01)
    half = float(res.stderr[0]) * scipy.stats.t.ppf(0.995, float(res.df[0]))
    assert float(wide[0, 1]) == pytest.approx(float(res.estimate[0]) + half, rel=1e-12)
    assert wide.attrs["alpha"] == 0.01


def test_cluster_stderr_refuses_fewer_clusters_than_every_grouped_method():
    # one rule (cvstats.kernels.cluster.MIN_GROUPS = 10, Cameron & Miller 2015, §VI)
    x = np.random.default_rng(5).normal(size=27)
    with pytest.raises(DesignError, match=r"at least 10 clusters .*G = 1 cluster\(s\)"):
        cluster_stderr([0.1, 0.2], [0, 0])
    with pytest.raises(DesignError, match=r"at least 10 clusters .*G = 9 cluster\(s\)"):
        cluster_stderr(x, np.arange(27) % 9)
    ten = np.arange(27) % 10
    fit = sm.OLS(x, np.ones(27)).fit(cov_type="cluster", cov_kwds={"groups": ten})
    assert cluster_stderr(x, ten) == pytest.approx(fit.bse[0], rel=1e-10)


def test_the_evals_route_refuses_too_few_clusters_for_every_interval(table):
    # 8 documents of 6 questions: a clustered t with 7 df was given before
    few = unclustered(benchmark(n_docs=8, per_doc=6, seed=6), cluster="doc")
    rule = r"at least 10 clusters .*G = 8 cluster\(s\); add clusters .*drop `cluster=`"
    for call in (
        lambda: cvstats.eval_mean(few),
        lambda: cvstats.eval_mean(few, interval="bootstrap", n_resamples=100),
        lambda: cvstats.eval_difference(few),
        lambda: cvstats.compare(cvstats.pairwise(few)),
    ):
        with pytest.raises(DesignError, match=rule):
            call()
    assert cvstats.eval_mean(few.drop_vars("group")).n_clusters == 0  # the fix the message names


# ---------------------------------------------------------------------------
# the plan, checked by simulation
# ---------------------------------------------------------------------------


def simulate(q, g, between, within, effect, reps, rng):
    """``reps`` benchmarks of ``q`` questions, ``g`` generations: estimate, stderr, df."""
    mu = effect + rng.normal(0, np.sqrt(between), size=(reps, 1, q))
    x = mu + rng.normal(0, np.sqrt(within), size=(reps, g, q))
    means = x.mean(axis=1)
    se = means.std(axis=1, ddof=1) / np.sqrt(q)
    return means.mean(axis=1), se, q - 1


def test_plan_in_questions_reaches_the_power_by_simulation():
    between, within, effect = 0.02, 0.2, 0.04
    plan = cvstats.plan_eval(
        var_between=between, var_within=within, effect=effect, power=0.8, generations=[1, 3]
    )
    rng = np.random.default_rng(12)
    reps = 4000
    for g in (1, 3):
        q = int(plan.questions.sel(generations=g))
        est, se, df = simulate(q, g, between, within, effect, reps, rng)
        rejected = np.abs(est / se) > scipy.stats.t.ppf(0.975, df)
        # 3 Monte Carlo standard errors of a power of 0.8 over 4000 runs: 0.019
        assert rejected.mean() == pytest.approx(0.8, abs=0.019), (g, q)
    assert int(plan.questions.sel(generations=3)) < int(plan.questions.sel(generations=1))


def test_plan_in_questions_reaches_the_width_by_simulation():
    between, within = 0.05, 0.15
    plan = cvstats.plan_eval(
        var_between=between, var_within=within, target_width=0.03, generations=[2]
    )
    q = int(plan.questions.sel(generations=2))
    est, se, df = simulate(q, 2, between, within, 0.0, 4000, np.random.default_rng(13))
    half_widths = scipy.stats.t.ppf(0.975, df) * se
    # the half-width at the planned variance is reached; the simulated ones scatter around it
    assert np.median(half_widths) == pytest.approx(0.03, rel=0.02)


def test_plan_from_a_pilot_uses_its_components_and_design_effect(cube):
    pilot = cvstats.eval_difference(cube, models=["m2", "m0"])
    plan = cvstats.plan_eval(pilot, target_width=0.05, generations=[1, 4])
    deff = (float(pilot.stderr[0]) / float(pilot.stderr_iid[0])) ** 2
    assert float(plan.design_effect[0]) == pytest.approx(deff)
    var = deff * (max(float(pilot.var_between[0]), 0) + float(pilot.var_within[0]) / 4)
    q = int(plan.questions.sel(contrast="m2 - m0", generations=4))

    def half_width(q):  # 4 questions per passage in the pilot: ceil(q / 4) - 1 df
        return scipy.stats.t.ppf(0.975, -(-q // 4) - 1) * np.sqrt(var / q)

    assert half_width(q) <= 0.05 < half_width(q - 1)
    assert "questions for half-width 0.05" in plan.verdict()
    many = cvstats.plan_eval(var_between=0.05, var_within=0.1, target_width=0.05, cluster_size=25)
    few = cvstats.plan_eval(var_between=0.05, var_within=0.1, target_width=0.05)
    assert int(many.questions[0]) > int(few.questions[0])  # fewer clusters, fewer df


def test_a_clustered_plan_has_the_clusters_the_clustered_stderr_needs(cube):
    # a loose target is met by a handful of questions; clustered, the route then refuses
    # the benchmark (fewer than MIN_GROUPS = 10 clusters), so the plan has 10 clusters
    loose = {"var_between": 0.05, "var_within": 0.1, "target_width": 0.3}
    assert int(cvstats.plan_eval(**loose).questions[0]) < 10  # independent questions
    clustered = cvstats.plan_eval(**loose, cluster_size=6)
    assert int(clustered.questions[0]) == 60
    odd = cvstats.plan_eval(**loose, cluster_size=2.3)  # 10 clusters of 2.3: 23 questions
    assert int(odd.questions[0]) == 23
    pilot = cvstats.eval_difference(cube, models=["m2", "m0"])  # 12 documents of 4
    plan = cvstats.plan_eval(pilot, target_width=0.4, generations=[1, 3])
    assert (plan.questions == 40).all()


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"var_between": 0.1}, r"give one target: `target_width`"),
        ({"var_between": 0.1, "target_width": 0.1, "effect": 0.1}, r"give one target"),
        ({"target_width": 0.1}, r"give a `pilot`, or the components"),
        (
            {"var_between": -1.0, "target_width": 0.1},
            r"`var_between` must be a finite number >= 0",
        ),
        (
            {"var_between": 0.1, "target_width": 0.0},
            r"`target_width` must be a finite number > 0, got 0",
        ),
        ({"var_between": 0.1, "effect": 0.1, "power": 1}, r"`power` must be a float in \(0, 1\)"),
        ({"var_between": 0.1, "target_width": 0.1, "generations": [0]}, r"distinct ints >= 1"),
        (
            {"var_between": 0.1, "target_width": 0.1, "generations": [2]},
            r"`var_within` is unknown",
        ),
        (
            {"var_between": 0.1, "target_width": 1e-5, "max_questions": 100},
            r"more than `max_questions`",
        ),
    ],
)
def test_plan_refusals(kw, match):
    with pytest.raises(ArgumentError, match=match):
        cvstats.plan_eval(**kw)


def test_a_loss_reads_the_other_way_and_names_the_same_better_model(table, cube):
    errors = table.assign(wrong=1.0 - table["right"])
    columns = {"question": "question", "model": "model", "generation": "gen", "cluster": "doc"}
    loss = cvstats.from_evals(errors, **columns, score="wrong", greater_is_better=False)
    by_loss = cvstats.eval_difference(loss, models=["m0", "m2"])
    by_score = cvstats.eval_difference(cube, models=["m0", "m2"])
    assert float(by_loss.estimate[0]) == pytest.approx(-float(by_score.estimate[0]))
    assert float(by_loss.stderr[0]) == pytest.approx(float(by_score.stderr[0]))
    assert "m2 scores better on wrong" in by_loss.verdict()
    assert "m2 scores better on right" in by_score.verdict()


def test_the_learner_methods_refuse_a_cube_of_fixed_models(cube):
    """Before: they ran the corrected resampled t with n2/n1 = questions / 1 on it."""
    for call in (
        lambda: cvstats.corrected_resampled_t(cube),
        lambda: cvstats.holdout_t(cube.isel(split=[0])),
    ):
        with pytest.raises(DesignError, match=r"holds fixed models' answers.*eval_difference"):
            call()
    # before: plan ran, with ρ0 = n2/(n1 + n2) from the placeholder n_train = 1
    with pytest.raises(DesignError, match=r"^plan is about learners.*Use cvstats.plan_eval"):
        cvstats.plan(cvstats.pairwise(cube), target_width=0.1)


def test_compare_runs_the_evals_analysis_on_a_cube_of_fixed_models():
    """Before: compare refused the cube (DesignError); now it tabulates the paired t."""
    table = benchmark(n_docs=15, per_doc=3, generations=2, skill=(0.5, 0.7, 0.72), seed=9)
    cube = unclustered(table, cluster="doc")
    res = cvstats.compare(cvstats.pairwise(cube), adjust="bonferroni")
    want = cvstats.eval_difference(cube, adjust="bonferroni")
    assert res.kind == "difference" and list(res.estimate["contrast"].values) == [
        "m0 - m1",
        "m0 - m2",
        "m1 - m2",
    ]
    for name in ("estimate", "stderr", "pvalue", "pvalue_adjusted", "ci", "var_within"):
        np.testing.assert_allclose(getattr(res, name), getattr(want, name), rtol=1e-12)
    # independently: statsmodels' clustered OLS of the per-question differences, Bonferroni
    m0, docs = per_question(table, "m0")
    m1, _ = per_question(table, "m1")
    fit = sm.OLS((m0 - m1).to_numpy(), np.ones(len(m0))).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(docs)[0]}
    )
    assert float(res.stderr[0]) == pytest.approx(fit.bse[0], rel=1e-10)
    p = 2 * scipy.stats.t.sf(abs(fit.params[0] / fit.bse[0]), 14)
    assert float(res.pvalue_adjusted[0]) == pytest.approx(min(1.0, 3 * p), rel=1e-10)
    assert "m2 scores better on right" in res.verdict()
    assert "| m0 - m2" in res.to_markdown()
    # a cube of models as it is: each model's own score against mu0 (in the cube's units)
    levels = cvstats.compare(cube, mu0=-0.5)  # the cube holds minus the score
    own = cvstats.eval_mean(cube, mu0=0.5)
    assert levels.kind == "mean"
    for name in ("estimate", "stderr", "pvalue", "ci"):
        np.testing.assert_allclose(getattr(levels, name), getattr(own, name), rtol=1e-12)


def test_compare_refuses_what_a_cube_of_fixed_models_cannot_take(cube):
    pairs = cvstats.pairwise(cube)
    with pytest.raises(ArgumentError, match=r"`methods` given .*holds fixed models' answers"):
        cvstats.compare(pairs, methods=["corrected_resampled_t"])
    with pytest.raises(ArgumentError, match=r"`n1`, `n2` given .*no training or test sizes"):
        cvstats.compare(pairs, n1=10, n2=5)
    with pytest.raises(ArgumentError, match=r"`alternative` = 'less', .*two-sided tests only"):
        cvstats.compare(pairs, alternative="less")
    with pytest.raises(ArgumentError, match=r"not differences of two models .*pairwise\(cube\)"):
        cvstats.compare("minus_right ~ model", cube)
    with pytest.raises(ArgumentError, match=r"one benchmark .*extra dims"):
        cvstats.compare(cvstats.pairwise(cube.expand_dims(bench=["x", "y"])))


def test_a_saved_cube_gives_the_same_result(cube, tmp_path):
    cvstats.save(cube, tmp_path / "evals.nc")
    again = cvstats.open_cube(tmp_path / "evals.nc").load()
    assert again["group"].values.tolist() == cube["group"].values.tolist()
    first, second = cvstats.eval_difference(cube), cvstats.eval_difference(again)
    np.testing.assert_array_equal(first.stderr.values, second.stderr.values)
    np.testing.assert_array_equal(first.estimate.values, second.estimate.values)


def test_clustered_intervals_cover_where_the_iid_ones_do_not():
    """Monte Carlo: 30 passages of 6 questions sharing most of their variance.

    The iid interval treats 180 questions as independent and under-covers; the
    clustered one (t with 29 df) is near 95%. Tolerance: 3 Monte Carlo standard
    errors over 2000 runs (0.015 at 0.95).
    """
    rng = np.random.default_rng(17)
    reps, n_docs, per_doc = 2000, 30, 6
    codes = np.repeat(np.arange(n_docs), per_doc)
    doc = rng.normal(0, 1.0, size=(reps, n_docs))[:, codes]
    x = doc + rng.normal(0, 0.5, size=(reps, n_docs * per_doc))
    covered = {"clustered": 0, "iid": 0}
    for row in x:
        m = eval_moments(row[None, :], codes)
        t_c = scipy.stats.t.ppf(0.975, m.df)
        covered["clustered"] += abs(m.estimate) <= t_c * m.stderr
        t_i = scipy.stats.t.ppf(0.975, row.size - 1)
        covered["iid"] += abs(m.estimate) <= t_i * m.stderr_iid
    assert covered["clustered"] / reps == pytest.approx(0.95, abs=0.015)
    assert covered["iid"] / reps < 0.7
