"""The automatic choice of test (autorank's rule) and the one report across datasets.

The reference numbers were recorded from autorank 1.3.0 (Herbold 2020; pip install
autorank, with scipy 1.17.1 and statsmodels 0.15.0) in a separate virtualenv: autorank is
not a test dependency. Each table is autorank's own example, regenerated here with
numpy's legacy generator exactly as autorank generates it (``np.random.seed(42)`` then
``np.random.normal(mean, std, 50)`` per population, clipped at [0, 1] where autorank
clips): ``readme`` is the example of its README and examples/example.py; the others are
the set-ups of its tests/test_autorank.py (``test_autorank_normal_homoscedactic_two``,
``..._nonnormal_homoscedactic_two``, ``..._normal_homsocedactic``,
``..._normal_heteroscedactic``), which cover its other branches. Recorded with::

    res = autorank(data, alpha=0.05, verbose=False)               # and effect_size="cliff_delta"
    res.omnibus, res.posthoc, res.all_normal, res.homoscedastic, res.homogeneity_test,
    res.pval_homogeneity, res.pvalue, res.cd, res.pvals_shapiro, res.rankdf

autorank 1.3.0 sorts its ``rankdf`` worst first when larger is better and measures the
effect sizes against that first row (its pull request #46), so its effect sizes are
those of ``pop_0`` minus each population: compared here with ``reference="pop_0"``.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import scipy.stats as st  # noqa: E402
import xarray as xr  # noqa: E402
from statsmodels.stats.anova import AnovaRM  # noqa: E402
from test_ranks import DEMSAR  # noqa: E402

import cvstats  # noqa: E402
from cvstats import ArgumentError  # noqa: E402
from cvstats.across.auto import choose_test, compare_datasets  # noqa: E402


def autorank_table(means, std, clip):
    """autorank's example data: ``np.random.seed(42)``, then one normal draw per population."""
    rs = np.random.RandomState(42)  # the legacy stream np.random.seed(42) resets
    stds = std if isinstance(std, list) else [std] * len(means)
    cols = {}
    for i, (mean, sd) in enumerate(zip(means, stds, strict=True)):
        x = rs.normal(mean, sd, 50)
        cols[f"pop_{i}"] = x.clip(0, 1) if clip else x
    return pd.DataFrame(cols)


TABLES = {
    "readme": ([0.2, 0.3, 0.5, 0.8, 0.85, 0.9], 0.3, True),
    "two_normal": ([0.3, 0.7], 0.15, True),
    "two_nonnormal": ([0.2, 0.5], 0.3, True),
    "anova": ([0.2, 0.3, 0.5, 0.55, 0.6, 0.6, 0.9], 0.2, False),
    "hetero": (
        [0.2, 0.3, 0.5, 0.8, 0.85, 0.9],
        [0.05, 0.1, 0.5, 0.1, 0.05, 0.05],
        False,
    ),
}

#: autorank 1.3.0's decisions and statistics on its examples (see the module docstring).
#: ``pvalue`` of "wilcoxon" is autorank's one-sided p-value (larger median first).
AUTORANK = {
    "readme": dict(
        omnibus="friedman",
        posthoc="nemenyi",
        all_normal=False,
        homoscedastic=True,
        homogeneity_test="levene",
        pval_homogeneity=0.2663177301695557,
        pvalue=2.3412212612346733e-28,
        cd=1.0662484349869374,
        shapiro=[
            1.6466104612021975e-05,
            0.06051504449339993,
            0.13884814824960318,
            0.00010031072286680596,
            2.066475146536526e-06,
            1.5319447962186687e-06,
        ],
        meanrank=[5.40, 4.71, 3.95, 2.47, 2.29, 2.18],
        cliff_delta=[-0.3632, -0.5944, -0.936, -0.928, -0.9192],
    ),
    "two_normal": dict(
        omnibus="ttest",
        posthoc=None,
        all_normal=True,
        homoscedastic=True,
        homogeneity_test="bartlett",
        pval_homogeneity=0.6475305363217561,
        pvalue=3.057011486646296e-22,
        cd=None,
        shapiro=[0.6722075649027175, 0.261613749065352],
        meanrank=[2.0, 1.0],
        cohen_d=[-3.217218173377854],
        cliff_delta=[-0.9696],
    ),
    "two_nonnormal": dict(
        omnibus="wilcoxon",
        posthoc=None,
        all_normal=False,
        homoscedastic=True,
        homogeneity_test="levene",
        pval_homogeneity=0.24105121548054972,
        pvalue=2.6550397436153617e-09,
        cd=None,
        shapiro=[1.6466104612021975e-05, 0.5759369465271603],
        meanrank=[1.82, 1.18],
        cliff_delta=[-0.6784],
    ),
    "anova": dict(
        omnibus="anova",
        posthoc="tukeyhsd",
        all_normal=True,
        homoscedastic=True,
        homogeneity_test="bartlett",
        pval_homogeneity=0.18280552638695624,
        pvalue=1.1448239945534968e-59,
        cd=None,
        shapiro=[
            0.6722075649027175,
            0.2616137490653665,
            0.4534324297894248,
            0.11842379112477919,
            0.09121526618966937,
            0.8238774870349455,
            0.7912931418736755,
        ],
        meanrank=[6.52, 5.60, 4.22, 3.70, 3.32, 3.30, 1.34],
        cohen_d=[
            -0.8217447856409619,
            -1.7287163836539843,
            -2.253364293234722,
            -2.3392703522317673,
            -2.1827831865667346,
            -4.38238993156508,
        ],
        cliff_delta=[-0.4568, -0.7808, -0.9064, -0.9104, -0.8736, -1.0],
    ),
    "hetero": dict(
        omnibus="friedman",
        posthoc="nemenyi",
        all_normal=True,
        homoscedastic=False,
        homogeneity_test="bartlett",
        pval_homogeneity=6.656663471248427e-108,
        pvalue=7.982087620791919e-35,
        cd=1.0662484349869374,
        shapiro=[
            0.672207564902695,
            0.2616137490653665,
            0.4534324297894248,
            0.11842379112477919,
            0.09121526618966655,
            0.8238774870349204,
        ],
        meanrank=[5.54, 4.82, 4.06, 2.68, 2.26, 1.64],
        cohen_d=[
            -1.613069129001674,
            -0.8089205837814065,
            -8.691275035998688,
            -13.167205723733682,
            -14.065663483842549,
        ],
        cliff_delta=[-0.7728, -0.3864, -1.0, -1.0, -1.0],
    ),
}
#: autorank's names of its tests -> cvstats's.
NAMES = {
    "ttest": "paired_t",
    "wilcoxon": "wilcoxon",
    "anova": "rm_anova",
    "friedman": "friedman",
    "tukeyhsd": "tukey_hsd",
    "nemenyi": "nemenyi",
    None: None,
}


@pytest.fixture(scope="module", params=sorted(TABLES))
def case(request):
    return request.param, autorank_table(*TABLES[request.param]), AUTORANK[request.param]


def test_reproduces_autorank_decision_and_statistics(case):
    name, table, ref = case
    res = choose_test(table, greater_is_better=True)
    assert res.test == NAMES[ref["omnibus"]]
    assert res.posthoc == NAMES[ref["posthoc"]]
    assert res.all_normal is ref["all_normal"]
    assert res.homoscedastic is ref["homoscedastic"]
    assert res.homogeneity_test == ref["homogeneity_test"]
    assert float(res.homogeneity_pvalue) == pytest.approx(ref["pval_homogeneity"], rel=1e-9)
    np.testing.assert_allclose(res.normality_pvalue.values, ref["shapiro"], rtol=1e-9)
    assert res.alpha_normality == pytest.approx(0.05 / table.shape[1])
    # autorank's Wilcoxon p-value is one-sided towards the larger median: half the two-sided
    factor = 2.0 if res.test == "wilcoxon" else 1.0
    assert float(res.pvalue) == pytest.approx(factor * ref["pvalue"], rel=1e-9)
    if ref["cd"] is not None:
        # autorank's q_alpha is statsmodels' qsturng, an interpolated approximation of the
        # studentized range quantile; cvstats's is scipy's studentized_range.ppf: they agree
        # to 1.3e-5 relative (k = 6)
        assert float(res.friedman.critical_difference) == pytest.approx(ref["cd"], rel=2e-5)
    average = cvstats.friedman_test(table, greater_is_better=True).average_ranks
    np.testing.assert_allclose(average.to_numpy(), ref["meanrank"], rtol=1e-12)


def test_effect_sizes_match_autorank(case):
    """Against autorank's first row (pop_0, see the module docstring)."""
    name, table, ref = case
    res = compare_datasets(table, reference="pop_0", n_samples=200, seed=0, greater_is_better=True)
    frame = res.to_frame().set_index("model")
    others = [f"pop_{i}" for i in range(1, table.shape[1])]
    np.testing.assert_allclose(frame.loc[others, "cliffs_delta"], ref["cliff_delta"], atol=1e-12)
    if "cohen_d" in ref:
        np.testing.assert_allclose(frame.loc[others, "cohens_d"], ref["cohen_d"], rtol=1e-12)
    # autorank's headline: Cohen's d for normal data, Akinshin's gamma otherwise
    assert res.headline_effect == ("cohens_d" if ref["all_normal"] else "akinshin_gamma")
    gamma = [
        cvstats.effect_size(table, "pop_0", m, greater_is_better=True).akinshin_gamma
        for m in others
    ]
    np.testing.assert_allclose(frame.loc[others, "akinshin_gamma"], np.asarray(gamma, float))


def test_readme_effect_sizes_against_the_best():
    # autorank's README (the release before 1.3.0, which ranked best first) prints Cliff's
    # delta of pop_5 minus each: -0.024, 0.1364, 0.6424, 0.8516, 0.9192
    table = autorank_table(*TABLES["readme"])
    res = compare_datasets(table, n_samples=200, seed=0, greater_is_better=True)
    assert res.reference == "pop_5"
    frame = res.to_frame()
    assert frame["model"].tolist() == [f"pop_{i}" for i in (5, 4, 3, 2, 1, 0)]
    np.testing.assert_allclose(
        frame["cliffs_delta"].iloc[1:], [-0.024, 0.1364, 0.6424, 0.8516, 0.9192], atol=1e-12
    )
    assert frame["delta_magnitude"].tolist()[1:] == [
        "negligible",
        "negligible",
        "large",
        "large",
        "large",
    ]


# autorank 1.3.0 on Demšar's (2006) Table 6 (the edited table of test_ranks.DEMSAR):
# every learner passes Shapiro-Wilk at 0.05/4 and Bartlett's p is 0.9937, so autorank
# runs the repeated-measures ANOVA, p = 0.009412040266779326 (recorded as above).
DEMSAR_AUTORANK = dict(
    shapiro={
        "C4.5": 0.026881095857682315,
        "C4.5+m": 0.03241116456978776,
        "C4.5+cf": 0.020837726178648593,
        "C4.5+m+cf": 0.03377159693214577,
    },
    pval_homogeneity=0.9937032917829052,
    pvalue=0.009412040266779326,
)


def test_demsar_example():
    res = choose_test(DEMSAR, greater_is_better=True)
    assert (res.test, res.posthoc, res.all_normal, res.homoscedastic) == (
        "rm_anova",
        "tukey_hsd",
        True,
        True,
    )
    shapiro = DEMSAR_AUTORANK["shapiro"]
    np.testing.assert_allclose(
        res.normality_pvalue.sel(model=list(shapiro)), list(shapiro.values())
    )
    assert float(res.homogeneity_pvalue) == pytest.approx(DEMSAR_AUTORANK["pval_homogeneity"])
    assert float(res.pvalue) == pytest.approx(DEMSAR_AUTORANK["pvalue"], rel=1e-9)
    assert (float(res.df1), float(res.df2)) == (3.0, 39.0)
    # the report's ranks and critical difference are Demšar's (§3.2.2-3.2.3): R_j and CD 1.25
    rep = compare_datasets(DEMSAR, n_samples=500, seed=0, greater_is_better=True)
    np.testing.assert_allclose(rep.average_rank.round(3), [1.964, 2.000, 2.893, 3.143])
    assert rep.reference == "C4.5+m+cf"
    assert float(rep.friedman.critical_difference) == pytest.approx(1.25, abs=0.005)
    # with ties ignored, the Friedman statistic of Demšar's §3.2.2 (9.28); with scipy's
    # tie correction (the default, autorank's), scipy's
    plain = compare_datasets(
        DEMSAR, tie_correction=False, n_samples=500, seed=0, greater_is_better=True
    )
    assert float(plain.friedman.statistic) == pytest.approx(9.28, abs=0.005)
    ref = st.friedmanchisquare(*[DEMSAR[c] for c in DEMSAR])
    assert float(rep.friedman.statistic) == pytest.approx(ref.statistic, rel=1e-12)


def test_rm_anova_and_tukey_by_hand():
    """F from the two-way decomposition; Tukey's q on the ANOVA's residual mean square."""
    rng = np.random.default_rng(11)
    table = pd.DataFrame(
        rng.normal([0.70, 0.72, 0.80, 0.81], 0.04, size=(12, 4)) + rng.normal(0, 0.1, (12, 1)),
        columns=["w", "x", "y", "z"],
    )
    res = choose_test(table, greater_is_better=True)
    assert res.test == "rm_anova"
    y = table.to_numpy()
    N, k = y.shape
    grand, rows, cols = y.mean(), y.mean(1, keepdims=True), y.mean(0)
    ss_model = N * np.sum((cols - grand) ** 2)
    ss_error = np.sum((y - rows - cols + grand) ** 2)
    df1, df2 = k - 1, (N - 1) * (k - 1)
    F = (ss_model / df1) / (ss_error / df2)
    assert float(res.statistic) == pytest.approx(F, rel=1e-10)
    assert float(res.pvalue) == pytest.approx(st.f.sf(F, df1, df2), rel=1e-8)
    long = table.stack().rename("s").reset_index()
    aov = AnovaRM(long, "s", "level_0", within=["level_1"]).fit().anova_table
    assert float(res.statistic) == pytest.approx(aov["F Value"].iloc[0], rel=1e-10)
    tukey = res.posthoc_table.set_index(["model_a", "model_b"])
    se = np.sqrt(ss_error / df2 / N)
    q = abs(cols[0] - cols[2]) / se  # w vs y
    assert tukey.loc[("w", "y"), "statistic"] == pytest.approx(q, rel=1e-12)
    assert tukey.loc[("w", "y"), "pvalue"] == pytest.approx(
        st.studentized_range.sf(q, k, df2), rel=1e-6
    )
    assert tukey.loc[("w", "y"), "mean_difference"] == pytest.approx(cols[0] - cols[2])
    assert tukey.loc[("w", "y"), "significant"]
    assert not tukey.loc[("y", "z"), "significant"]


def test_tukey_uses_the_pairing_autorank_ignores():
    """Datasets differ far more than learners: the paired error separates the learners,
    the independent-groups Tukey (statsmodels' pairwise_tukeyhsd, autorank's) does not."""
    rng = np.random.default_rng(3)
    base = rng.normal(0.75, 0.1, (15, 1))
    table = pd.DataFrame(
        base + [0.0, 0.02, 0.04] + rng.normal(0, 0.005, (15, 3)), columns=["p", "q", "r"]
    )
    res = choose_test(table, greater_is_better=True)
    assert res.test == "rm_anova"
    assert res.posthoc_table["significant"].all()
    independent = st.tukey_hsd(*[table[c].to_numpy() for c in table])
    assert (independent.pvalue[np.triu_indices(3, 1)] > 0.05).all()


def test_paired_t_and_wilcoxon_are_scipys():
    rng = np.random.default_rng(4)
    normal = pd.DataFrame({"u": rng.normal(0.8, 0.05, 20), "v": rng.normal(0.78, 0.05, 20)})
    res = choose_test(normal, greater_is_better=True)
    assert res.test == "paired_t"
    ref = st.ttest_rel(normal[res.reference], normal[res.other])
    assert float(res.statistic) == pytest.approx(ref.statistic, rel=1e-12)
    assert float(res.pvalue) == pytest.approx(ref.pvalue, rel=1e-12)
    assert float(res.df1) == 19.0
    skewed = pd.DataFrame({"u": rng.exponential(1.0, 20), "v": rng.exponential(1.4, 20)})
    res = choose_test(skewed, greater_is_better=False)
    assert res.test == "wilcoxon" and not res.all_normal
    ref = st.wilcoxon(skewed["u"], skewed["v"])
    assert float(res.pvalue) == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.wilcoxon.model_a == res.reference


def test_a_loss_table_ranks_the_smallest_first():
    rng = np.random.default_rng(5)
    err = pd.DataFrame(rng.exponential([0.10, 0.20, 0.30], size=(10, 3)), columns=list("abc"))
    res = compare_datasets(err, n_samples=500, seed=1, greater_is_better=False)
    mirrored = compare_datasets(-err, n_samples=500, seed=1, greater_is_better=True)
    assert res.reference == mirrored.reference == err.mean().idxmin()
    xr.testing.assert_equal(res.average_rank, mirrored.average_rank)
    assert res.choice.test == mirrored.choice.test == "friedman"
    a, b = res.to_frame(), mirrored.to_frame()
    np.testing.assert_allclose(a["cohens_d"], -b["cohens_d"])
    np.testing.assert_allclose(a["p_reference_better"], b["p_reference_better"])
    assert "smallest value" in str(res.verdict())


def test_bayesian_part_is_the_signed_rank_test_against_the_reference():
    rng = np.random.default_rng(6)
    acc = pd.DataFrame(rng.normal([0.8, 0.79, 0.7], 0.03, size=(9, 3)), columns=list("abc"))
    res = compare_datasets(acc, rope=0.01, n_samples=3000, seed=7, greater_is_better=True)
    gen = np.random.default_rng(7)
    ref = res.reference
    for post, other in zip(res.bayesian, res.to_frame()["model"].iloc[1:], strict=True):
        direct = cvstats.bayesian_signed_rank_test(
            acc, ref, other, rope=0.01, n_samples=3000, seed=gen, greater_is_better=True
        )
        assert (post.model_a, post.model_b) == (ref, other)
        assert post.probabilities() == direct.probabilities()
    row = res.to_frame().iloc[1]
    assert row["p_reference_better"] == float(res.bayesian[0].p_left)
    assert res.seed == 7 and res.rope == 0.01


def test_report_says_why_and_plots_the_cd_diagram():
    table = autorank_table(*TABLES["readme"])
    res = compare_datasets(table, rope=0.02, n_samples=500, seed=0, greater_is_better=True)
    text = str(res.verdict())
    assert "Levene" in text and "p = 0.266" in text and "not normal: pop_0" in text
    assert "Friedman test with Nemenyi test" in text and "Akinshin's γ" in text
    assert "pop_5 vs pop_4" in text and "rope ±0.02" in text
    choice = res.choice.to_frame()
    assert choice["step"].tolist() == ["normality"] * 6 + ["homogeneity", "test"]
    assert choice["decision"].iloc[-1] == "differ"
    frame = res.to_frame()
    # Nemenyi: pop_5 is within the CD of pop_4 and pop_3, beyond it from pop_2, pop_1, pop_0
    assert frame["significant"].tolist() == [False, False, False, True, True, True]
    for export in (res.to_latex(), res.to_markdown(), res.to_html(), str(res.summary())):
        assert "Friedman test" in export and "0.9192" in export
    ax = res.plot()
    assert "CD = 1.07" in [t.get_text() for t in ax.texts]
    plt.close("all")


def test_a_constant_learner_is_not_normal_and_levene_decides():
    rng = np.random.default_rng(8)
    table = pd.DataFrame(rng.normal(0.8, 0.05, (8, 3)), columns=list("abc"))
    table["d"] = 0.5
    res = choose_test(table, greater_is_better=True)
    assert np.isnan(float(res.normality_pvalue.sel(model="d")))
    assert not bool(res.normal.sel(model="d"))
    assert res.homogeneity_test == "levene" and res.test == "friedman"
    assert "d constant" in res.reasons[0]


def test_bad_inputs():
    rng = np.random.default_rng(9)
    good = pd.DataFrame(rng.normal(0.8, 0.05, (6, 3)), columns=list("abc"))
    with pytest.raises(ArgumentError, match="at least 2 datasets"):
        choose_test(good.iloc[:1], greater_is_better=True)
    with pytest.raises(ArgumentError, match="at least 5 datasets .* got 4"):
        compare_datasets(good.iloc[:4], greater_is_better=True)
    ties = pd.DataFrame({"a": good["a"], "b": good["a"], "c": good["a"]})
    with pytest.raises(ArgumentError, match="ties everywhere"):
        choose_test(ties, greater_is_better=True)
    nan = good.copy()
    nan.iloc[2, 1] = np.nan
    with pytest.raises(ArgumentError, match="must be finite"):
        compare_datasets(nan, greater_is_better=True)
    with pytest.raises(ArgumentError, match="`greater_is_better` is required"):
        choose_test(good)
    with pytest.raises(ArgumentError, match="`reference` 'zz' is not a learner"):
        compare_datasets(good, reference="zz", greater_is_better=True)
    with pytest.raises(cvstats.CvstatsTypeError, match="`seed` must be"):
        compare_datasets(good, seed=-1, greater_is_better=True)
    with pytest.raises(ArgumentError, match="alpha"):
        choose_test(good, alpha=1.5, greater_is_better=True)
    # two learners equal on every dataset: the choice runs, the Bayesian test needs a rope
    twins = good.assign(d=good["a"])
    assert choose_test(twins, greater_is_better=True).n_models == 4
    with pytest.raises(ArgumentError, match="same score on every dataset and `rope` = 0"):
        compare_datasets(twins, reference="a", greater_is_better=True)
    res = compare_datasets(twins, reference="a", rope=0.01, n_samples=300, greater_is_better=True)
    assert res.to_frame().set_index("model").loc["d", "p_rope"] == 1.0


def test_direction_is_read_from_the_table():
    rng = np.random.default_rng(10)
    acc = xr.DataArray(
        rng.normal(0.8, 0.05, (7, 3)),
        dims=("dataset", "model"),
        coords={"model": ["a", "b", "c"]},
        name="accuracy",
    )
    res = compare_datasets(acc, n_samples=300, seed=0)
    assert res.greater_is_better is True
    assert res.reference == cvstats.friedman_test(acc).average_ranks.idxmin()
    with pytest.raises(ArgumentError, match="records the opposite"):
        compare_datasets(acc, greater_is_better=False)


def test_rank_report_still_works():
    rep = cvstats.rank_report(DEMSAR, greater_is_better=True)
    assert isinstance(rep, cvstats.RankReport)
