"""Cube-level cross-checks against other libraries on identical inputs (issue 7).

The kernels are checked against the same peers on plain arrays in
tests/kernels/; here the inputs are cubes (built by ``cvstats.collect`` from
real scikit-learn classifiers where the peer fits models itself) and the
results come from the public methods.

Peers and their conventions (documented where they differ from ours):

* **scipy** ``ttest_rel`` on the two models' split means (resampled t, k-fold
  t) or test losses (hold-out t, ``variant="t"``) equals our test on the
  contrast ``A - B``: a paired t test is the one-sample t of the differences.
* **statsmodels** ``mcnemar``: ``table[0, 1]``/``table[1, 0]`` are the two
  discordant cells; its exact ``statistic`` is ``min(n10, n01)`` where ours is
  ``n10`` (the p-values agree); with ``correction=True`` it applies
  ``(|n10 - n01| - 1)² / (n10 + n01)`` literally, like ours.
* **mlxtend** ``paired_ttest_resampled``, ``paired_ttest_kfold_cv``,
  ``paired_ttest_5x2cv``, ``combined_ftest_5x2cv`` draw their own splits; they
  are made to use the cube's splits by replacing ``train_test_split`` /
  ``KFold`` in ``mlxtend.evaluate.ttest`` and ``mlxtend.evaluate.f_test``.
  mlxtend works with *scores* (accuracy = 1 - zero-one loss) and the
  difference ``score_A - score_B = -(L_A - L_B)``: its t is minus ours for the
  loss contrast ``A - B``, its p-values and F equal ours.
  ``mlxtend.evaluate.mcnemar_table`` has ``tb[0, 1]`` = (A right, B wrong) =
  our ``n01`` and ``tb[1, 0]`` = our ``n10``; ``mcnemar(tb, corrected=False)``
  returns the chi-square, the square of our z.
* **baycomp** ``CorrelatedTTest(x, y, runs=r)`` (Corani & Benavoli) computes,
  on ``diff = y - x`` over ``n = r·K`` folds, ``mean(diff)``, ``var =
  S²_diff (1/n + 1/(K - 1))`` with ``K = n / runs`` — Nadeau & Bengio's
  correction with ``ρ = 1/K`` (``ρ/(1-ρ) = 1/(K-1)``) — and ``df = n - 1``: a
  Student posterior with scale ``sqrt(var)``. That is exactly our corrected
  repeated k-fold t (docs/theory.md §4, Bouckaert & Frank): scale = our standard
  error. Fed *scores* ``x = acc_A``, ``y = acc_B``, ``diff = L_A - L_B`` is our
  contrast ``A - B`` (same sign). Its posterior probabilities are our
  one-sided p-values: ``P(diff > 0) = p_less``, ``P(diff < 0) = p_greater``.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

import cvstats
from cvstats import designs

N = 200
LEARNERS = {
    "nb": GaussianNB(),
    "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
}


@pytest.fixture(scope="module")
def data():
    return make_classification(
        n_samples=N, n_features=6, n_informative=3, flip_y=0.15, random_state=0
    )


def collect(design, data):
    X, y = data
    return cvstats.collect(LEARNERS, X, y, design, loss="zero_one", progress=False)


def split_means(cube: xr.DataArray, block: str = "main") -> np.ndarray:
    """Test means of the block's splits, (*extra, split, model), by plain numpy."""
    sel = cube.block.values == block
    return np.nanmean(cube.values[..., sel, :, :], axis=-2)


def split_indices(design: xr.Dataset, positions) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (np.flatnonzero(design.train.values[p]), np.flatnonzero(design.test.values[p]))
        for p in positions
    ]


def _queue_train_test_split(pairs):
    """A stand-in for sklearn's train_test_split that returns the given splits in order."""
    queue = list(pairs)

    def fake(X, y, **kwargs):
        train, test = queue.pop(0)
        return X[train], X[test], y[train], y[test]

    return fake, queue


# ---------------------------------------------------------------------------
# scipy
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def random_cube():
    """Three datasets, each with its own random splits; squared-error-like losses."""
    J, n, n2 = 8, 60, 12
    masks = np.stack([designs.resampled(n, n2, J=J, seed=10 + k).test.values for k in range(3)])
    rng = np.random.default_rng(7)
    losses = rng.gamma(2.0, 1.0, (3, J, n, 2)) + rng.normal(0, 0.4, (3, J, 1, 2))
    return cvstats.from_arrays(
        np.abs(losses),
        masks,
        n_train=n - n2,
        extra_dims=["dataset"],
        models=["a", "b"],
        name="squared",
    )


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_resampled_t_is_scipy_ttest_rel_on_split_means(random_cube, alternative):
    means = split_means(random_cube)  # (dataset, J, model)
    ref = st.ttest_rel(means[..., 0], means[..., 1], axis=-1, alternative=alternative)
    res = cvstats.resampled_t(
        cvstats.pairwise(random_cube), alternative=alternative, alpha=0.1
    )  # contrast "a - b"
    np.testing.assert_allclose(res.statistic.values[:, 0], ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(res.pvalue.values[:, 0], ref.pvalue, rtol=1e-10)
    np.testing.assert_array_equal(res.df.values[:, 0], ref.df)
    low, high = res.conf_int()
    ci = ref.confidence_interval(0.9)
    np.testing.assert_allclose(low.values[:, 0], ci.low, rtol=1e-12)
    np.testing.assert_allclose(high.values[:, 0], ci.high, rtol=1e-12)
    # and ttest_1samp on each model's split means is the test of that model
    one = st.ttest_1samp(means, 1.9, axis=-2, alternative=alternative)
    res1 = cvstats.resampled_t(random_cube, mu0=1.9, alternative=alternative)
    np.testing.assert_allclose(res1.statistic.values, one.statistic, rtol=1e-12)
    np.testing.assert_allclose(res1.pvalue.values, one.pvalue, rtol=1e-10)


def test_kfold_t_is_scipy_ttest_rel_on_fold_means():
    d = designs.kfold(53, 6, seed=3)  # folds of 8 and 9 examples
    losses = np.random.default_rng(3).gamma(2.0, 1.0, (6, 53, 2))
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b"])
    means = split_means(cube)
    ref = st.ttest_rel(means[:, 0], means[:, 1])
    res = cvstats.kfold_t(cvstats.pairwise(cube))
    np.testing.assert_allclose(float(res.statistic.squeeze()), ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(float(res.pvalue.squeeze()), ref.pvalue, rtol=1e-10)


def test_holdout_t_reference_t_is_scipy_ttest_rel_on_test_losses():
    masks = np.stack([designs.holdout(80, 25, seed=20 + k).test.values for k in range(4)])
    losses = np.random.default_rng(4).normal(1.0, 1.0, (4, 1, 80, 2))
    cube = cvstats.from_arrays(
        losses, masks, n_train=55, extra_dims=["dataset"], models=["a", "b"]
    )
    res = cvstats.holdout_t(cvstats.pairwise(cube), variant="t")
    for k in range(4):
        test = masks[k, 0]
        ref = st.ttest_rel(losses[k, 0, test, 0], losses[k, 0, test, 1])
        np.testing.assert_allclose(float(res.statistic[k, 0]), ref.statistic, rtol=1e-12)
        np.testing.assert_allclose(float(res.pvalue[k, 0]), ref.pvalue, rtol=1e-10)


# ---------------------------------------------------------------------------
# statsmodels: McNemar, vectorized over datasets and through contrasts/compare
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zero_one_cube():
    """Five datasets, each with its own hold-out split of 70 test examples."""
    masks = np.stack([designs.holdout(150, 70, seed=30 + k).test.values for k in range(5)])
    rng = np.random.default_rng(8)
    truth = rng.random((5, 1, 150, 1))
    losses = truth < [0.25, 0.35]  # correlated errors ...
    losses ^= rng.random((5, 1, 150, 2)) < 0.1  # ... that are not identical
    return cvstats.from_arrays(
        losses.astype(float),
        masks,
        n_train=80,
        extra_dims=["dataset"],
        models=["a", "b"],
        name="zero_one",
    )


def _statsmodels_table(a, b):
    return [
        [np.sum((a == 0) & (b == 0)), np.sum((a == 0) & (b == 1))],
        [np.sum((a == 1) & (b == 0)), np.sum((a == 1) & (b == 1))],
    ]


@pytest.mark.parametrize(
    ("variant", "exact", "correction"),
    [("z", False, False), ("corrected", False, True), ("exact", True, False)],
)
def test_mcnemar_matches_statsmodels_per_dataset(zero_one_cube, variant, exact, correction):
    res = cvstats.mcnemar(zero_one_cube, variant=variant)
    via_contrast = cvstats.mcnemar(cvstats.pairwise(zero_one_cube), variant=variant)
    via_compare = cvstats.compare(
        "zero_one ~ model", zero_one_cube, methods=["mcnemar"], target="model"
    )
    for k in range(5):
        row = zero_one_cube.isel(dataset=k, split=0)
        test = row.notnull().values[:, 0]
        a, b = row.values[test, 0], row.values[test, 1]
        sm = sm_mcnemar(_statsmodels_table(a, b), exact=exact, correction=correction)
        np.testing.assert_allclose(float(res.pvalue[k]), sm.pvalue, rtol=1e-10)
        np.testing.assert_allclose(float(via_contrast.pvalue[k, 0]), sm.pvalue, rtol=1e-10)
        if variant == "z":
            np.testing.assert_allclose(float(res.statistic[k]) ** 2, sm.statistic, rtol=1e-12)
            pv = via_compare.results["mcnemar"].pvalue.sel(contrast="model[T.b]")[k]
            # compare's contrast is b - a: the same two-sided p-value
            np.testing.assert_allclose(float(pv), sm.pvalue, rtol=1e-10)
        elif variant == "corrected":
            np.testing.assert_allclose(float(res.statistic[k]), sm.statistic, rtol=1e-12)
        else:  # statsmodels reports min(n10, n01), we report n10
            n10 = np.sum((a == 1) & (b == 0))
            assert float(res.statistic[k]) == n10
            assert sm.statistic == min(n10, np.sum((a == 0) & (b == 1)))


@pytest.mark.parametrize("alternative", ["less", "greater"])
def test_one_sided_exact_mcnemar_is_scipy_binomtest(zero_one_cube, alternative):
    res = cvstats.mcnemar(zero_one_cube, variant="exact", alternative=alternative)
    for k in range(5):
        row = zero_one_cube.isel(dataset=k, split=0)
        test = row.notnull().values[:, 0]
        a, b = row.values[test, 0], row.values[test, 1]
        n10, n01 = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
        ref = st.binomtest(n10, n10 + n01, 0.5, alternative=alternative)
        np.testing.assert_allclose(float(res.pvalue[k]), ref.pvalue, rtol=1e-10)


# ---------------------------------------------------------------------------
# mlxtend, fed the cube's own splits
# ---------------------------------------------------------------------------


@pytest.fixture
def mlxtend_eval():
    pytest.importorskip("mlxtend")
    return (
        importlib.import_module("mlxtend.evaluate.ttest"),
        importlib.import_module("mlxtend.evaluate.f_test"),
        importlib.import_module("mlxtend.evaluate.mcnemar"),
    )


def test_paired_ttest_5x2cv_and_combined_f_on_the_cubes_halves(data, mlxtend_eval, monkeypatch):
    ttest, f_test, _ = mlxtend_eval
    X, y = data
    design = designs.five_by_two(N, seed=3)
    cube = collect(design, data)
    diff = cvstats.pairwise(cube)  # "nb - tree"
    ours_t = cvstats.dietterich_5x2cv(diff)
    ours_f = cvstats.combined_5x2cv_f(diff)
    # mlxtend's loop m = 0..4: fit on X_1, score X_2 (our side 0), then the reverse (side 1)
    side0 = [
        int(np.flatnonzero((design.half.values == m) & (design.side.values == 0))[0])
        for m in range(5)
    ]
    pairs = split_indices(design, side0)
    fake, queue = _queue_train_test_split(pairs)
    monkeypatch.setattr(ttest, "train_test_split", fake)
    t_ml, p_ml = ttest.paired_ttest_5x2cv(
        clone(LEARNERS["nb"]), clone(LEARNERS["tree"]), X, y, scoring="accuracy"
    )
    assert queue == []  # all five replications used
    fake, queue = _queue_train_test_split(pairs)
    monkeypatch.setattr(f_test, "train_test_split", fake)
    f_ml, pf_ml = f_test.combined_ftest_5x2cv(
        clone(LEARNERS["nb"]), clone(LEARNERS["tree"]), X, y, scoring="accuracy"
    )
    # scores: mlxtend's t is minus ours for the loss contrast nb - tree
    np.testing.assert_allclose(float(ours_t.statistic.squeeze()), -t_ml, rtol=1e-9)
    np.testing.assert_allclose(float(ours_t.pvalue.squeeze()), p_ml, rtol=1e-9)
    np.testing.assert_allclose(float(ours_f.statistic.squeeze()), f_ml, rtol=1e-9)
    np.testing.assert_allclose(float(ours_f.pvalue.squeeze()), pf_ml, rtol=1e-9)


def test_paired_ttest_resampled_on_the_cubes_splits(data, mlxtend_eval, monkeypatch):
    ttest, _, _ = mlxtend_eval
    X, y = data
    J, n2 = 12, 40
    design = designs.resampled(N, n2, J=J, seed=4)
    cube = collect(design, data)
    fake, queue = _queue_train_test_split(split_indices(design, range(J)))
    monkeypatch.setattr(ttest, "train_test_split", fake)
    t_ml, p_ml = ttest.paired_ttest_resampled(
        clone(LEARNERS["nb"]), clone(LEARNERS["tree"]), X, y, num_rounds=J, test_size=n2
    )
    assert queue == []
    ours = cvstats.resampled_t(cvstats.pairwise(cube))
    np.testing.assert_allclose(float(ours.statistic.squeeze()), -t_ml, rtol=1e-9)
    np.testing.assert_allclose(float(ours.pvalue.squeeze()), p_ml, rtol=1e-9)


def test_paired_ttest_kfold_cv_on_the_cubes_folds(data, mlxtend_eval, monkeypatch):
    ttest, _, _ = mlxtend_eval
    X, y = data
    K = 10
    design = designs.kfold(N, K, seed=5)
    cube = collect(design, data)
    folds = split_indices(design, range(K))

    class CubeFolds:
        def __init__(self, n_splits, **kwargs):
            assert n_splits == K

        def split(self, X):
            yield from folds

    monkeypatch.setattr(ttest, "KFold", CubeFolds)
    t_ml, p_ml = ttest.paired_ttest_kfold_cv(
        clone(LEARNERS["nb"]), clone(LEARNERS["tree"]), X, y, cv=K
    )
    ours = cvstats.kfold_t(cvstats.pairwise(cube))
    np.testing.assert_allclose(float(ours.statistic.squeeze()), -t_ml, rtol=1e-9)
    np.testing.assert_allclose(float(ours.pvalue.squeeze()), p_ml, rtol=1e-9)


def test_mlxtend_mcnemar_on_a_holdout_split(data, mlxtend_eval):
    _, _, mc = mlxtend_eval
    X, y = data
    design = designs.holdout(N, 80, seed=6)
    cube = collect(design, data)
    ((train, test),) = split_indices(design, [0])
    preds = {
        name: clone(est).fit(X[train], y[train]).predict(X[test]) for name, est in LEARNERS.items()
    }
    # identical inputs: the cube holds exactly these predictions' 0/1 losses
    for name, pred in preds.items():
        np.testing.assert_array_equal(cube.sel(model=name).values[0, test], pred != y[test])
    tb = mc.mcnemar_table(y_target=y[test], y_model1=preds["nb"], y_model2=preds["tree"])
    n10 = int(np.sum((preds["nb"] != y[test]) & (preds["tree"] == y[test])))
    assert tb[1, 0] == n10  # tb[1, 0]: model 1 wrong, model 2 right
    chi2_corr, p_corr = mc.mcnemar(tb, corrected=True)
    chi2, p = mc.mcnemar(tb, corrected=False)
    _, p_exact = mc.mcnemar(tb, exact=True)
    z = cvstats.mcnemar(cube, variant="z")
    corrected = cvstats.mcnemar(cube, variant="corrected")
    exact = cvstats.mcnemar(cube, variant="exact")
    np.testing.assert_allclose(z.statistic**2, chi2, rtol=1e-12)
    np.testing.assert_allclose(z.pvalue, p, rtol=1e-10)
    np.testing.assert_allclose(corrected.statistic, chi2_corr, rtol=1e-12)
    np.testing.assert_allclose(corrected.pvalue, p_corr, rtol=1e-10)
    np.testing.assert_allclose(exact.pvalue, p_exact, rtol=1e-10)


# ---------------------------------------------------------------------------
# baycomp's correlated t test: posterior scale = corrected repeated k-fold t's stderr
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "K", "repeats"), [(N, 10, 1), (N, 5, 3), (N - 3, 4, 2)])
def test_baycomp_correlated_ttest_scale_is_the_corrected_stderr(data, n, K, repeats):
    baycomp = pytest.importorskip("baycomp")
    X, y = data
    design = designs.kfold(n, K, repeats=repeats, seed=7)
    cube = cvstats.collect(
        LEARNERS, X[:n], y[:n], design, loss="zero_one", progress=False
    )  # n = 197: folds of unequal sizes
    accuracy = 1.0 - split_means(cube)  # (r·K, model), in split order
    posterior = baycomp.CorrelatedTTest(accuracy[:, 0], accuracy[:, 1], runs=repeats)
    diff = cvstats.pairwise(cube)  # "nb - tree" = acc_tree - acc_nb = baycomp's y - x
    ours = cvstats.corrected_repeated_kfold_t(diff)
    np.testing.assert_allclose(posterior.mean, float(ours.estimate.squeeze()), rtol=1e-10)
    np.testing.assert_allclose(np.sqrt(posterior.var), float(ours.stderr.squeeze()), rtol=1e-10)
    assert posterior.df == float(ours.df.squeeze()) == repeats * K - 1
    # the formula of docs/theory.md §9, written out: S² (1/(r K) + ρ/(1 - ρ)) with ρ = 1/K
    rho = 1 / K
    s2 = np.var(accuracy[:, 1] - accuracy[:, 0], ddof=1)
    expected = np.sqrt((1 / (repeats * K) + rho / (1 - rho)) * s2)
    np.testing.assert_allclose(float(ours.stderr.squeeze()), expected, rtol=1e-10)
    # flat-prior posterior probabilities are our one-sided p-values
    p_left, p_right = posterior.probs()
    less = cvstats.corrected_repeated_kfold_t(diff, alternative="less")
    greater = cvstats.corrected_repeated_kfold_t(diff, alternative="greater")
    np.testing.assert_allclose(p_right, float(less.pvalue.squeeze()), rtol=1e-9)
    np.testing.assert_allclose(p_left, float(greater.pvalue.squeeze()), rtol=1e-9)
