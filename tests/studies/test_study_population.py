"""The survey's Algorithm 1 (docs/studies.md §F): learners, folds, runner, analysis."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from cvstats.across.conditional import cv_bias, cv_estimates, variance_decomposition  # noqa: E402
from cvstats.errors import ArgumentError, DesignError  # noqa: E402
from cvstats.studies.cli import main  # noqa: E402
from cvstats.studies.learners import (  # noqa: E402
    GaussianNaiveBayes,
    NearestNeighbours,
    SklearnLearner,
    get_learner,
    sq_distances,
)
from cvstats.studies.population import (  # noqa: E402
    Population,
    compute_samples,
    letter_population,
    run_population,
    stratified_folds,
    synthetic_population,
    to_cube,
)
from cvstats.studies.population_analysis import (  # noqa: E402
    bias_table,
    convergence_figure,
    decomposition_table,
    population_report,
    running_estimates,
    unconditional_error,
    winner_tables,
)

SMALL = {"N": 60, "folds": (2, 5), "repetitions": 4}


@pytest.fixture(scope="module")
def letter():
    return letter_population()


@pytest.fixture(scope="module")
def synthetic():
    return synthetic_population(3000)


def _sample(pop, n, seed=0):
    rng = np.random.default_rng(seed)
    idx = rng.choice(pop.size, n, replace=False)
    rest = np.setdiff1d(np.arange(pop.size), idx)
    return pop.X[idx], pop.y[idx], pop.X[rest], pop.y[rest]


def _sklearn_oof(make, X, y, folds):
    out = np.empty(folds.shape, dtype=np.int64)
    for r, f in enumerate(folds):
        for k in np.unique(f):
            te = f == k
            out[r, te] = make().fit(X[~te], y[~te]).predict(X[te])
    return out


def _random_folds(rng, n, K, R):
    return np.stack([rng.permutation(np.arange(n) % K) for _ in range(R)])


# --------------------------------------------------------------------------
# batched learners against scikit-learn
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "K"), [(300, 10), (300, 30), (60, 2)])
def test_naive_bayes_equals_gaussiannb(letter, n, K):
    X, y, Xr, _ = _sample(letter, n, seed=K)
    folds = _random_folds(np.random.default_rng(1), n, K, 3)
    if n == 60:  # with 26 classes and 30 training examples classes are missing
        assert any(len(np.unique(y[f != 0])) < 26 for f in folds)
    got = GaussianNaiveBayes().oof_predict(X, y, folds, 26, np.random.default_rng(0))
    np.testing.assert_array_equal(got, _sklearn_oof(GaussianNB, X, y, folds))
    full = GaussianNaiveBayes().fit_predict(X, y, Xr, 26, np.random.default_rng(0))
    np.testing.assert_array_equal(full, GaussianNB().fit(X, y).predict(Xr))


def test_naive_bayes_equals_gaussiannb_continuous(synthetic):
    X, y, Xr, _ = _sample(synthetic, 200)
    folds = _random_folds(np.random.default_rng(2), 200, 10, 3)
    got = GaussianNaiveBayes().oof_predict(X, y, folds, 2, np.random.default_rng(0))
    np.testing.assert_array_equal(got, _sklearn_oof(GaussianNB, X, y, folds))
    full = GaussianNaiveBayes().fit_predict(X, y, Xr, 2, np.random.default_rng(0))
    np.testing.assert_array_equal(full, GaussianNB().fit(X, y).predict(Xr))


@pytest.mark.parametrize("k", [1, 4, 10])
def test_knn_equals_kneighborsclassifier_without_distance_ties(letter, k):
    X, y, Xr, _ = _sample(letter, 240, seed=k)
    rng = np.random.default_rng(k)
    X = X + rng.normal(scale=1e-3, size=X.shape)  # continuous: no distance ties
    Xr = Xr[:3000] + rng.normal(scale=1e-3, size=Xr[:3000].shape)
    folds = _random_folds(rng, 240, 5, 3)
    learner = NearestNeighbours(k)
    got = learner.oof_predict(X, y, folds, 26, rng)
    np.testing.assert_array_equal(got, _sklearn_oof(lambda: KNeighborsClassifier(k), X, y, folds))
    full = learner.fit_predict(X, y, Xr, 26, rng)
    np.testing.assert_array_equal(full, KNeighborsClassifier(k).fit(X, y).predict(Xr))


def test_knn_breaks_distance_ties_by_position(letter):
    """Integer features: equals a direct reference (lexsort on distance, then position)."""
    X, y, Xr, _ = _sample(letter, 150, seed=3)
    folds = _random_folds(np.random.default_rng(3), 150, 3, 2)
    got = NearestNeighbours(4).oof_predict(X, y, folds, 26, np.random.default_rng(0))
    ties = 0
    for r, f in enumerate(folds):
        for i in range(150):
            train = np.flatnonzero(f != f[i])
            d = ((X[train] - X[i]) ** 2).sum(axis=1)
            order = train[np.lexsort((train, d))][:4]
            ties += int(np.sort(d)[3] == np.sort(d)[4])
            votes = np.bincount(y[order], minlength=26)
            assert got[r, i] == int(np.argmax(votes))
    assert ties > 20  # the rule is exercised


def test_sq_distances_exact_on_integers():
    a = np.array([[0.0, 3.0], [1.0, 1.0]])
    b = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 5.0]])
    np.testing.assert_array_equal(sq_distances(a, b), [[9.0, 5.0, 8.0], [2.0, 0.0, 17.0]])


def test_sklearn_learner_is_seeded_and_reproducible(letter):
    X, y, _, _ = _sample(letter, 120)
    folds = _random_folds(np.random.default_rng(0), 120, 4, 2)
    tree = SklearnLearner("dt", DecisionTreeClassifier(max_features=4))
    a = tree.oof_predict(X, y, folds, 26, np.random.default_rng(5))
    b = tree.oof_predict(X, y, folds, 26, np.random.default_rng(5))
    c = tree.oof_predict(X, y, folds, 26, np.random.default_rng(6))
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()  # random feature subsets: the seed matters


def test_get_learner_names_and_errors():
    assert [get_learner(n).name for n in ("nb", "4nn", "10nn", "lr", "dt", "rf")] == [
        "nb", "4nn", "10nn", "lr", "dt", "rf"]  # fmt: skip
    with pytest.raises(ArgumentError, match="unknown learner 'svm'"):
        get_learner("svm")
    with pytest.raises(ArgumentError, match="needs `name`"):
        get_learner(object())
    with pytest.raises(ArgumentError, match="k must be|`k` must be"):
        NearestNeighbours(0)


def test_knn_refuses_k_above_training_size():
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, 0, 1, 0, 1])
    folds = np.array([[0, 1, 0, 1, 0, 1]])
    with pytest.raises(ArgumentError, match="only 3 examples"):
        NearestNeighbours(4).oof_predict(X, y, folds, 2, np.random.default_rng(0))


# --------------------------------------------------------------------------
# folds
# --------------------------------------------------------------------------


def test_stratified_folds_are_balanced_partitions(letter):
    _, y, _, _ = _sample(letter, 300)
    folds = stratified_folds(np.random.default_rng(0), y, 30, 20)
    for f in folds:
        sizes = np.bincount(f, minlength=30)
        assert sizes.min() >= 1 and sizes.max() - sizes.min() <= 1
        table = np.zeros((26, 30), dtype=int)
        np.add.at(table, (y, f), 1)
        assert (table.max(axis=1) - table.min(axis=1) <= 1).all()


def test_stratified_allocation_matches_sklearn(synthetic):
    _, y, _, _ = _sample(synthetic, 203)
    K = 10
    ours = stratified_folds(np.random.default_rng(1), y, K, 1)[0]
    skf = np.empty(203, dtype=int)
    for k, (_, te) in enumerate(StratifiedKFold(K, shuffle=True, random_state=0).split(y, y)):
        skf[te] = k

    def allocation(f):
        t = np.zeros((K, 2), dtype=int)
        np.add.at(t, (f, y), 1)
        return sorted(map(tuple, t))

    assert allocation(ours) == allocation(skf)


def test_folds_uniform_and_seeded():
    y = np.repeat([0, 1], 10)
    a = stratified_folds(np.random.default_rng(3), y, 4, 2000)
    b = stratified_folds(np.random.default_rng(3), y, 4, 2000)
    np.testing.assert_array_equal(a, b)
    share = (a == 0).mean(axis=0)  # every example equally likely in fold 0
    assert np.abs(share - 0.25).max() < 0.04
    plain = stratified_folds(np.random.default_rng(3), None, 3, 5, n=10)
    assert all(sorted(np.bincount(f)) == [3, 3, 4] for f in plain)


# --------------------------------------------------------------------------
# runner
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run(tmp_path_factory, letter):
    out = tmp_path_factory.mktemp("pop")
    return run_population(letter, ["nb", "4nn"], 6, out, batch_size=4, **SMALL), out


def test_conditional_error_is_the_error_on_the_rest_of_the_population(run, letter):
    ds, _ = run
    for s in (0, 5):
        idx = ds["index"].sel(sample=s).values
        assert len(np.unique(idx)) == SMALL["N"]
        rest = np.setdiff1d(np.arange(letter.size), idx)
        model = GaussianNB().fit(letter.X[idx], letter.y[idx])
        expect = np.mean(model.predict(letter.X[rest]) != letter.y[rest])
        assert float(ds["conditional"].sel(sample=s, model="nb")) == pytest.approx(expect, 1e-15)


def test_cv_is_the_mean_of_out_of_fold_losses(run, letter):
    ds, _ = run
    np.testing.assert_allclose(ds["cv"].values, ds["loss"].mean("example").values, rtol=1e-15)
    s, k, r = 2, 5, 3
    idx = ds["index"].sel(sample=s).values
    fold = ds["fold"].sel(sample=s, k=k, repetition=r).values
    X, y = letter.X[idx], letter.y[idx]
    nb = _sklearn_oof(GaussianNB, X, y, fold[None])[0]
    np.testing.assert_array_equal(ds["loss"].sel(sample=s, k=k, repetition=r, model="nb"),
                                  (nb != y).astype(np.int8))  # fmt: skip


def test_to_cube_gives_the_same_estimates_through_cvstats(run):
    ds, _ = run
    for k in SMALL["folds"]:
        cube = to_cube(ds, k)
        assert cube.sizes["split"] == k * SMALL["repetitions"]
        est = cv_estimates(cube)
        np.testing.assert_allclose(est.values, ds["cv"].sel(k=k).values, rtol=1e-14)
        a = cv_bias(cube, ds["conditional"], dataset_dim="sample")
        b = cv_bias(ds["cv"].sel(k=k, drop=True), ds["conditional"], dataset_dim="sample")
        xr.testing.assert_allclose(a.dataset.drop_attrs(), b.dataset.drop_attrs())
        c = variance_decomposition(cube, dataset_dim="sample")
        d = variance_decomposition(ds["cv"].sel(k=k, drop=True), dataset_dim="sample")
        xr.testing.assert_allclose(c.dataset.drop_attrs(), d.dataset.drop_attrs())
    with pytest.raises(ArgumentError, match="was not run"):
        to_cube(ds, 7)


def test_resume_batch_size_n_jobs_and_learner_set_do_not_change_results(run, tmp_path, letter):
    ds, out = run
    stamp = {f.name: f.stat().st_mtime_ns for f in out.glob("*-batch*.nc")}
    again = run_population(letter, ["nb", "4nn"], 6, out, batch_size=4, **SMALL)
    assert {f.name: f.stat().st_mtime_ns for f in out.glob("*-batch*.nc")} == stamp
    xr.testing.assert_identical(again, ds)
    other = run_population(letter, ["nb", "4nn"], 6, tmp_path / "b", batch_size=1, n_jobs=2,
                           **SMALL)  # fmt: skip
    xr.testing.assert_identical(other.drop_attrs(), ds.drop_attrs())
    alone = run_population(letter, ["4nn"], 3, tmp_path / "c", **SMALL)
    xr.testing.assert_identical(alone["cv"], ds["cv"].sel(model=["4nn"]).isel(sample=slice(3)))
    # an interrupted batch (removed file) is recomputed identically
    first = sorted(out.glob("*-batch*.nc"))[0]
    first.unlink()
    xr.testing.assert_identical(run_population(letter, ["nb", "4nn"], 6, out, batch_size=4,
                                               **SMALL), ds)  # fmt: skip


def test_resume_with_more_or_fewer_samples(tmp_path, synthetic):
    kw = {"N": 30, "folds": (2,), "repetitions": 2, "batch_size": 4}
    run_population(synthetic, ["nb"], 6, tmp_path / "a", **kw)
    more = run_population(synthetic, ["nb"], 8, tmp_path / "a", **kw)  # partial batch redone
    assert more["sample"].values.tolist() == list(range(8))
    xr.testing.assert_identical(more, run_population(synthetic, ["nb"], 8, tmp_path / "b", **kw))
    fewer = run_population(synthetic, ["nb"], 3, tmp_path / "a", **kw)
    assert fewer["sample"].values.tolist() == [0, 1, 2]
    xr.testing.assert_identical(fewer["cv"], more["cv"].isel(sample=slice(3)))


def test_seeds_do_not_depend_on_other_k_or_repetitions(synthetic):
    learners = [GaussianNaiveBayes(), SklearnLearner("dt", DecisionTreeClassifier(max_features=1))]
    a = compute_samples(synthetic, learners, [2], N=40, folds=[2, 4], repetitions=3, seed=1)
    b = compute_samples(synthetic, learners, [2], N=40, folds=[4], repetitions=2, seed=1)
    xr.testing.assert_identical(a.sel(k=[4]).isel(repetition=slice(2)), b)


def test_leave_one_out_with_more_than_127_folds(letter):
    ds = compute_samples(letter, [GaussianNaiveBayes()], [0], N=150, folds=[150],
                         repetitions=1, seed=0)  # fmt: skip
    fold = ds["fold"].values[0, 0, 0]
    assert sorted(fold.tolist()) == list(range(150))
    idx = ds["index"].values[0]
    X, y = letter.X[idx], letter.y[idx]
    loo = _sklearn_oof(GaussianNB, X, y, fold[None].astype(np.int64))[0]
    np.testing.assert_array_equal(ds["loss"].values[0, 0, 0, :, 0], (loo != y).astype(np.int8))


def test_to_cube_when_k_does_not_divide_n(tmp_path, synthetic):
    ds = run_population(synthetic, ["nb"], 4, tmp_path, N=41, folds=(4,), repetitions=3)
    cube = to_cube(ds, 4)
    np.testing.assert_allclose(cv_estimates(cube).values, ds["cv"].sel(k=4).values, rtol=1e-14)


def test_seed_changes_samples(tmp_path, synthetic):
    a = run_population(synthetic, ["nb"], 2, tmp_path / "a", N=40, folds=(2,), repetitions=2)
    b = run_population(synthetic, ["nb"], 2, tmp_path / "b", N=40, folds=(2,), repetitions=2,
                       seed=1)  # fmt: skip
    assert (a["index"].values != b["index"].values).any()


def test_run_population_errors(tmp_path, synthetic):
    with pytest.raises(ArgumentError, match="leaves no test population"):
        run_population(synthetic, ["nb"], 2, tmp_path, N=3000)
    with pytest.raises(ArgumentError, match="`folds` must be distinct ints"):
        run_population(synthetic, ["nb"], 2, tmp_path, N=20, folds=(2, 30))
    with pytest.raises(ArgumentError, match="distinct names"):
        run_population(synthetic, ["nb", "nb"], 2, tmp_path, N=20, folds=(2,))
    with pytest.raises(ArgumentError, match="unknown population"):
        run_population("iris", ["nb"], 2, tmp_path)
    with pytest.raises(ArgumentError, match="`n_samples` must be an int >= 2"):
        run_population(synthetic, ["nb"], 1, tmp_path)
    with pytest.raises(ArgumentError, match="`n_jobs` must be a non-zero int"):
        run_population(synthetic, ["nb"], 2, tmp_path, n_jobs=0)
    with pytest.raises(ArgumentError, match="`seed` must be an int >= 0"):
        run_population(synthetic, ["nb"], 2, tmp_path, seed=-1)
    with pytest.raises(ArgumentError, match="`N` must be an int >= 4"):
        compute_samples(synthetic, [GaussianNaiveBayes()], [0], N=2, folds=[2], repetitions=1,
                        seed=0)  # fmt: skip
    with pytest.raises(ArgumentError, match="NaN or inf"):
        Population("bad", np.array([[np.nan], [1.0]]), np.array([0, 1]))
    with pytest.raises(ArgumentError, match="integers 0..C-1"):
        Population("bad", np.zeros((2, 1)), np.array([0.5, 1.0]))


def test_compute_samples_is_independent_of_the_batch(synthetic):
    learners = [GaussianNaiveBayes()]
    kw = {"N": 30, "folds": [3], "repetitions": 2, "seed": 4}
    both = compute_samples(synthetic, learners, [0, 1], **kw)
    one = compute_samples(synthetic, learners, [1], **kw)
    xr.testing.assert_identical(both.sel(sample=[1]), one)


# --------------------------------------------------------------------------
# analysis
# --------------------------------------------------------------------------


def test_running_estimates_and_bias_table_by_hand(run):
    ds, _ = run
    runs = running_estimates(ds)
    np.testing.assert_allclose(runs.isel(repetition=-1), ds["cv"].mean("repetition"))
    np.testing.assert_allclose(runs.isel(repetition=0), ds["cv"].isel(repetition=0))
    table = bias_table(ds, repetitions=[1, 4])
    assert list(table.index.names) == ["k", "repetitions", "model"]
    est = ds["cv"].sel(k=5, model="nb").isel(repetition=slice(0, 4)).mean("repetition").values
    ec = ds["conditional"].sel(model="nb").values
    row = table.loc[(5, 4, "nb")]
    assert row["bias"] == pytest.approx(np.mean(est - ec))
    assert row["rmse_c"] == pytest.approx(np.sqrt(np.mean((est - ec) ** 2)))
    assert row["rmse_u"] == pytest.approx(np.sqrt(np.mean((est - ec.mean()) ** 2)))
    assert row["corr"] == pytest.approx(np.corrcoef(est, ec)[0, 1])
    with pytest.raises(ArgumentError, match="must lie in"):
        bias_table(ds, repetitions=[5])


def test_winner_tables_count_by_hand(run):
    ds, _ = run
    frame, tables = winner_tables(ds, repetitions=[1, 4])
    errors = ds["loss"].astype(int)  # integer counts: exact ties
    ec = ds["conditional"]
    true_worse = (ec.sel(model="nb") > ec.sel(model="4nn")).values
    for k in SMALL["folds"]:
        for r in (1, 4):
            count = errors.sel(k=k).isel(repetition=slice(0, r)).sum(("repetition", "example"))
            cv_worse = (count.sel(model="nb") > count.sel(model="4nn")).values
            row = frame.loc[("nb", "4nn", k, r)]
            cells = {
                "cv_worse_true_worse": cv_worse & true_worse,
                "cv_worse_true_not": cv_worse & ~true_worse,
                "cv_not_true_worse": ~cv_worse & true_worse,
                "cv_not_true_not": ~cv_worse & ~true_worse,
            }
            for name, mask in cells.items():
                assert row[name] == mask.sum(), name

            def ratio(num, den):
                return num.sum() / den.sum() if den.sum() else np.nan

            np.testing.assert_equal(
                [row["P(a worse | CV a worse)"], row["P(a not worse | CV a not worse)"],
                 row["P(CV a worse | a worse)"], row["P(CV a not worse | a not worse)"]],
                [ratio(cv_worse & true_worse, cv_worse), ratio(~cv_worse & ~true_worse, ~cv_worse),
                 ratio(cv_worse & true_worse, true_worse),
                 ratio(~cv_worse & ~true_worse, ~true_worse)],
            )  # fmt: skip
            assert row["agreement"] == pytest.approx(np.mean(cv_worse == true_worse))
            ties = (count.sel(model="nb") == count.sel(model="4nn")).values
            assert row["ties_cv"] == ties.sum()
            assert tables[("nb", "4nn", k, r)].n_datasets == 6


def test_winner_tables_see_exact_ties():
    """Equal error counts are ties even where float means would differ in the last bit."""
    S, R, N = 3, 30, 300
    rng = np.random.default_rng(0)
    loss = np.zeros((S, 1, R, N, 2), dtype=np.int8)
    for s in range(S):
        for r in range(R):
            loss[s, 0, r, rng.choice(N, 7 + r % 5, replace=False), 0] = 1
            loss[s, 0, r, rng.choice(N, 7 + (r + 1) % 5, replace=False), 1] = 1
    ds = xr.Dataset(
        {"loss": (("sample", "k", "repetition", "example", "model"), loss),
         "cv": (("sample", "k", "repetition", "model"), loss.mean(axis=3)),
         "conditional": (("sample", "model"), [[0.1, 0.2], [0.2, 0.1], [0.1, 0.1]])},
        coords={"sample": range(S), "k": [10], "repetition": range(1, R + 1),
                "model": ["a", "b"]},
    )  # fmt: skip
    frame, _ = winner_tables(ds, repetitions=[R])
    assert frame["ties_cv"].iloc[0] == S  # same total count for both models in every sample


def test_decomposition_against_closed_forms(run, tmp_path):
    ds, _ = run
    dec = decomposition_table(ds)
    for k in SMALL["folds"]:
        for m in ("nb", "4nn"):
            x = ds["cv"].sel(k=k, model=m).values  # (samples, R)
            R = x.shape[1]
            c = x - x.mean()
            within = x.var(axis=1, ddof=1).mean()  # E_T[Var_π]: Lemma 1.3
            cross = ((c.sum(1) ** 2 - (c**2).sum(1)) / (R * (R - 1))).mean()
            assert dec.loc[(k, m), "internal"] == pytest.approx(within, rel=1e-10)
            assert dec.loc[(k, m), "sample"] == pytest.approx(cross, rel=1e-10)
            assert dec.loc[(k, m), "total"] == pytest.approx((c**2).mean(), rel=1e-10)


def test_report_and_figure(run, tmp_path):
    ds, _ = run
    rep = population_report(ds, tmp_path)
    assert all(p.exists() for p in rep["paths"])
    assert isinstance(rep["winners"], pd.DataFrame) and rep["population"]["name"] == "letter"
    fig = convergence_figure(ds, samples=[1, 3])
    assert len(fig.axes) == 2 * len(SMALL["folds"])
    with pytest.raises(ArgumentError, match="not samples"):
        convergence_figure(ds, samples=[99])


def test_estimates_input_errors(run):
    ds, _ = run
    est = ds["cv"].sel(k=2).copy()
    est[0, 0, 0] = np.nan
    with pytest.raises(ArgumentError, match="hold NaN"):
        cv_bias(est, ds["conditional"], dataset_dim="sample")
    with pytest.raises(DesignError, match="at least 2 repetitions"):
        variance_decomposition(ds["cv"].sel(k=2).isel(repetition=[0]), dataset_dim="sample")
    with pytest.raises(ArgumentError, match="last dim"):
        cv_bias(ds["cv"].sel(k=2).transpose("model", ...), ds["conditional"],
                dataset_dim="sample")  # fmt: skip


def test_cli_population(tmp_path, capsys):
    code = main(["study", "population", "--population", "synthetic", "--learners", "nb", "10nn",
                 "--samples", "3", "--N", "40", "--folds", "2", "4", "--repetitions", "2",
                 "--out", str(tmp_path), "--quiet"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "εu" in out and "Winner tables" in out and "sample_fraction" in out
    assert (tmp_path / "population-synthetic1-N40-convergence.png").exists()


def test_unconditional_error_by_hand(run):
    ds, _ = run
    table = unconditional_error(ds)
    ec = ds["conditional"].sel(model="4nn").values
    assert table.loc["4nn", "eps_u"] == pytest.approx(ec.mean())
    assert table.loc["4nn", "se"] == pytest.approx(ec.std(ddof=1) / np.sqrt(len(ec)))
    assert table.loc["4nn", "sd_eps_c"] == pytest.approx(ec.std(ddof=1))


def test_synthetic_population_follows_problem_2():
    pop = synthetic_population(20_000, simulation=2, seed=3)
    assert pop.n_classes == 2 and abs(pop.y.mean() - 0.5) < 0.015
    for cls, mean, var in ((0, 0.0, 1.0), (1, 1.0, 1 / 6)):
        x = pop.X[pop.y == cls]
        np.testing.assert_allclose(x.mean(axis=0), [mean, mean], atol=0.03)
        np.testing.assert_allclose(x.var(axis=0), [var, var], rtol=0.05)
        assert abs(np.corrcoef(x.T)[0, 1]) < 0.03
    again = synthetic_population(20_000, simulation=2, seed=3)
    assert again.params()["sha"] == pop.params()["sha"]
