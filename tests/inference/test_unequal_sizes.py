"""Unequal test sizes inside a block: accepted wherever the method's formula allows them.

A 2-fold split of an odd number of examples gives halves that differ by one
example — mlxtend's ``paired_ttest_5x2cv`` on the 569 examples of the
breast-cancer data tests on 285 and 284 — and group splitters give test sets of
any size. Validation accepts such blocks (a loss cube states its sizes in the
``n_test`` coordinate, which ``from_arrays`` and ``from_frame`` add); the
methods whose formula does not use ``n2`` run on them unchanged (each split's
mean is over its own test set), and the methods whose formula uses one ``n1``
and one ``n2`` (the Nadeau–Bengio corrections) refuse them with a
``DesignError`` unless ``n1=`` and ``n2=`` state the sizes. Every statistic is
checked against the paper's formula computed here with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr

import cvstats
from cvstats.cube import from_scores, scores_from_losses
from cvstats.errors import CubeError, DesignError
from cvstats.inference.blocks import block_sizes

N_ODD = 569  # the breast-cancer data: 2-fold halves of 284 and 285
MODELS = ["a", "b"]


# --------------------------------------------------------------------------
# designs with unequal test sizes, built by hand
# --------------------------------------------------------------------------


def _cube(rows, n, losses=None, seed=0, extra=None):
    """A loss cube on ``rows`` of (block, half, side, replicate, test_idx, train_idx)."""
    S = len(rows)
    mask = np.zeros((S, n), dtype=bool)
    for j, row in enumerate(rows):
        mask[j, row[4]] = True
    if losses is None:
        shape = (S, n, len(MODELS)) if extra is None else (extra, S, n, len(MODELS))
        losses = np.random.default_rng(seed).random(shape)
    splits = {
        "block": [r[0] for r in rows],
        "half": np.array([r[1] for r in rows]),
        "side": np.array([r[2] for r in rows]),
        "replicate": np.array([r[3] for r in rows]),
        "n_train": np.array([len(r[5]) for r in rows]),
    }
    return cvstats.from_arrays(
        losses,
        mask,
        models=MODELS,
        splits=splits,
        extra_dims=() if extra is None else ("dataset",),
        attrs={"design": "user", "n": n, "seed": -1},
    )


def mlxtend_halves(n=N_ODD, seed=0):
    """The five replications of ``paired_ttest_5x2cv(..., random_seed=seed)`` on ``n`` examples.

    mlxtend draws ``train_test_split(X, y, test_size=0.5, random_state=randint)``
    five times: ``X_1`` (``n // 2`` examples) and ``X_2`` (the other ``n - n // 2``);
    it fits on ``X_1`` and scores ``X_2`` (our side 0), then the reverse (side 1).
    """
    from sklearn.model_selection import train_test_split

    rng = np.random.RandomState(seed)
    rows = []
    for m in range(5):
        randint = rng.randint(low=0, high=32767)
        d1, d2 = train_test_split(np.arange(n), test_size=0.5, random_state=randint)
        rows.append(("5x2", m, 0, -1, d2, d1))
        rows.append(("5x2", m, 1, -1, d1, d2))
    return rows


def random_rows(n, sizes, seed, block="main", replicate=-1, within=None):
    """Random splits of ``within`` (default all ``n`` examples) with the given test sizes."""
    rng = np.random.default_rng(seed)
    pool = np.arange(n) if within is None else np.asarray(within)
    rows = []
    for size in sizes:
        perm = rng.permutation(pool)
        rows.append((block, -1, -1, replicate, perm[:size], perm[size:]))
    return rows


def split_means(cube, rows):
    """Split means of the contrast ``a - b``, computed here from the test indices."""
    values = np.asarray(cube.values)
    diff = values[..., 0] - values[..., 1]  # (*extra, split, example)
    return np.stack([diff[..., j, row[4]].mean(axis=-1) for j, row in enumerate(rows)], axis=-1)


def stat(result):
    return np.asarray(result.statistic.squeeze().values)


# --------------------------------------------------------------------------
# the mlxtend case: 5x2 halves of 284 and 285
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def five_by_two():
    rows = mlxtend_halves()
    return rows, _cube(rows, N_ODD, seed=1)


def test_from_arrays_accepts_halves_differing_by_one(five_by_two):
    rows, cube = five_by_two
    assert cube["n_test"].values.tolist() == [285, 284] * 5
    assert cube["n_train"].values.tolist() == [284, 285] * 5
    cvstats.validate(cube)
    sizes = block_sizes(cube, "5x2", "test")
    assert not sizes.equal and (sizes.n2_min, sizes.n2_max) == (284, 285)
    assert sizes.n_splits == 10


def _dietterich(p):
    """Dietterich (1998): t = p_1^(1) / sqrt(mean_m s_m²), s_m² the two halves' squared spread."""
    p = p.reshape(5, 2)  # [m, side]: p_m^(1) (side 0), p_m^(2) (side 1)
    pbar = p.mean(axis=1)
    s2 = (p[:, 0] - pbar) ** 2 + (p[:, 1] - pbar) ** 2
    return p[0, 0] / np.sqrt(s2.mean()), p, s2


def test_dietterich_5x2cv_equals_the_formula(five_by_two):
    rows, cube = five_by_two
    t, p, s2 = _dietterich(split_means(cube, rows))
    res = cvstats.dietterich_5x2cv(cvstats.pairwise(cube))
    np.testing.assert_allclose(stat(res), t, rtol=1e-12)
    np.testing.assert_allclose(float(res.pvalue.squeeze()), 2 * st.t.sf(abs(t), 5), rtol=1e-10)
    # the variants: t4 drops the m = 1 term (t_4), t5 uses both halves of m = 1
    t4 = cvstats.dietterich_5x2cv(cvstats.pairwise(cube), variant="t4")
    np.testing.assert_allclose(stat(t4), p[0, 0] / np.sqrt(s2[1:].mean()), rtol=1e-12)
    t5 = cvstats.dietterich_5x2cv(cvstats.pairwise(cube), variant="t5")
    np.testing.assert_allclose(stat(t5), np.sqrt(2) * p[0].mean() / np.sqrt(s2.mean()), rtol=1e-12)
    # the sizes are reported (the medians), not used
    assert (res.n1, res.n2) == (284, 284)


def test_combined_5x2cv_f_equals_alpaydins_formula(five_by_two):
    rows, cube = five_by_two
    p = split_means(cube, rows).reshape(5, 2)
    pbar = p.mean(axis=1)
    s2 = (p[:, 0] - pbar) ** 2 + (p[:, 1] - pbar) ** 2
    f = (p**2).sum() / (2 * s2.sum())  # Alpaydın (1999)
    res = cvstats.combined_5x2cv_f(cvstats.pairwise(cube))
    np.testing.assert_allclose(stat(res), f, rtol=1e-12)
    np.testing.assert_allclose(float(res.pvalue.squeeze()), st.f.sf(f, 10, 5), rtol=1e-10)


def test_score_cube_of_the_halves_gives_the_same_results(five_by_two):
    _, cube = five_by_two
    scores = scores_from_losses(cube)
    assert scores["n_test"].values.tolist() == [285, 284] * 5
    for func in (cvstats.dietterich_5x2cv, cvstats.combined_5x2cv_f):
        # a difference of means (scores) against a mean of differences (losses)
        np.testing.assert_allclose(
            stat(func(cvstats.pairwise(scores))), stat(func(cvstats.pairwise(cube))), rtol=1e-12
        )


def test_mlxtend_paired_ttest_5x2cv_on_the_breast_cancer_data():
    """mlxtend's own run (its own splits, 284/285) equals ours on the same halves."""
    pytest.importorskip("mlxtend")
    from mlxtend.evaluate import combined_ftest_5x2cv, paired_ttest_5x2cv
    from sklearn.base import clone
    from sklearn.datasets import load_breast_cancer
    from sklearn.naive_bayes import GaussianNB
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_breast_cancer(return_X_y=True)
    assert len(y) == N_ODD
    learners = [GaussianNB(), DecisionTreeClassifier(max_depth=2, random_state=0)]
    t_ml, p_ml = paired_ttest_5x2cv(*map(clone, learners), X, y, random_seed=7)
    f_ml, pf_ml = combined_ftest_5x2cv(*map(clone, learners), X, y, random_seed=7)
    rows = mlxtend_halves(seed=7)
    losses = np.full((10, N_ODD, 2), np.nan)
    for j, (_, _, _, _, test, train) in enumerate(rows):
        for k, learner in enumerate(learners):
            fitted = clone(learner).fit(X[train], y[train])
            losses[j, test, k] = fitted.predict(X[test]) != y[test]
    cube = _cube(rows, N_ODD, losses=losses)
    diff = cvstats.pairwise(cube)  # loss a - b = -(accuracy a - accuracy b)
    ours_t, ours_f = cvstats.dietterich_5x2cv(diff), cvstats.combined_5x2cv_f(diff)
    np.testing.assert_allclose(stat(ours_t), -t_ml, rtol=1e-9)
    np.testing.assert_allclose(float(ours_t.pvalue.squeeze()), p_ml, rtol=1e-9)
    np.testing.assert_allclose(stat(ours_f), f_ml, rtol=1e-9)
    np.testing.assert_allclose(float(ours_f.pvalue.squeeze()), pf_ml, rtol=1e-9)
    # the accuracies as a score cube: mlxtend's sign
    accuracy = 1.0 - np.nanmean(losses, axis=1)
    scores = from_scores(
        accuracy,
        n_test=[len(r[4]) for r in rows],
        n_train=[len(r[5]) for r in rows],
        n=N_ODD,
        splits={"block": ["5x2"] * 10, "half": [r[1] for r in rows], "side": [r[2] for r in rows]},
        models=MODELS,
        name="accuracy",
        greater_is_better=True,
    )
    np.testing.assert_allclose(stat(cvstats.dietterich_5x2cv(cvstats.pairwise(scores))), t_ml)


def test_5x2_halves_must_still_be_disjoint():
    rows = mlxtend_halves(n=21)
    block, m, side, rep, test, train = rows[1]
    test = np.r_[rows[0][4][:1], test[1:]]  # side 1 tests an example side 0 tests too
    rows[1] = (block, m, side, rep, test, np.setdiff1d(np.arange(21), test)[: len(train)])
    with pytest.raises(CubeError, match="halves D_m and D_m\\^c must be disjoint"):
        _cube(rows, 21)


# --------------------------------------------------------------------------
# random splits of the main block
# --------------------------------------------------------------------------

SIZES = [10, 12, 9, 15, 11, 10, 13, 8]
N = 60


@pytest.fixture(scope="module")
def random_splits():
    rows = random_rows(N, SIZES, seed=2)
    return rows, _cube(rows, N, seed=3)


def test_resampled_t_equals_the_formula(random_splits):
    rows, cube = random_splits
    assert cube["n_test"].values.tolist() == SIZES
    mu = split_means(cube, rows)
    J = len(SIZES)
    t = mu.mean() / np.sqrt(mu.var(ddof=1) / J)
    res = cvstats.resampled_t(cvstats.pairwise(cube))
    np.testing.assert_allclose(stat(res), t, rtol=1e-12)
    np.testing.assert_allclose(float(res.pvalue.squeeze()), 2 * st.t.sf(abs(t), J - 1))
    assert res.n2 == int(np.median(SIZES)) and res.n1 == int(np.median([N - s for s in SIZES]))


@pytest.mark.parametrize("given", [{}, {"n1": 48}, {"n2": 11}])
def test_corrected_resampled_t_refuses_unless_both_sizes_are_given(random_splits, given):
    _, cube = random_splits
    with pytest.raises(DesignError) as info:
        cvstats.corrected_resampled_t(cvstats.pairwise(cube), **given)
    message = str(info.value)
    assert "splits test 8 to 15 examples" in message
    assert "assumes one n1 and one n2" in message
    assert "`n1=` and `n2=`" in message and "one test size" in message


def test_corrected_resampled_t_with_stated_sizes_equals_the_formula(random_splits):
    rows, cube = random_splits
    mu = split_means(cube, rows)
    J, n1, n2 = len(SIZES), 48, 12
    t = mu.mean() / np.sqrt((1 / J + n2 / n1) * mu.var(ddof=1))  # Nadeau & Bengio (2003)
    res = cvstats.corrected_resampled_t(cvstats.pairwise(cube), n1=n1, n2=n2)
    np.testing.assert_allclose(stat(res), t, rtol=1e-12)
    assert (res.n1, res.n2) == (n1, n2)


def test_bayesian_correlated_t_with_explicit_rho_runs(random_splits):
    rows, cube = random_splits
    mu = split_means(cube, rows)
    res = cvstats.bayesian_correlated_t(cvstats.pairwise(cube), rho=0.2)
    J = len(SIZES)
    scale = np.sqrt((1 / J + 0.2 / 0.8) * mu.var(ddof=1))
    np.testing.assert_allclose(float(res.mean.squeeze()), mu.mean(), rtol=1e-12)
    np.testing.assert_allclose(float(res.scale.squeeze()), scale, rtol=1e-12)


def test_bayesian_correlated_t_default_rho_refuses(random_splits):
    _, cube = random_splits
    with pytest.raises(DesignError, match="one n1 and one n2"):
        cvstats.bayesian_correlated_t(cvstats.pairwise(cube))


def test_compare_leaves_out_the_methods_that_need_one_size(random_splits):
    _, cube = random_splits
    table = cvstats.compare("loss ~ model", cube)
    assert "corrected_resampled_t" not in set(table.to_frame()["method"])
    assert any(n.startswith("corrected_resampled_t left out") for n in table.notes)
    assert "resampled_t" in table.results


def test_score_cube_with_unequal_sizes(random_splits):
    rows, cube = random_splits
    scores = scores_from_losses(cube)
    diff, sdiff = cvstats.pairwise(cube), cvstats.pairwise(scores)
    # a difference of means (scores) against a mean of differences (losses)
    np.testing.assert_allclose(
        stat(cvstats.resampled_t(sdiff)), stat(cvstats.resampled_t(diff)), rtol=1e-12
    )
    with pytest.raises(DesignError, match="assumes one n1 and one n2"):
        cvstats.corrected_resampled_t(sdiff)
    np.testing.assert_allclose(
        stat(cvstats.corrected_resampled_t(sdiff, n1=48, n2=12)),
        stat(cvstats.corrected_resampled_t(diff, n1=48, n2=12)),
        rtol=1e-12,
    )
    # from_scores takes unequal sizes in a block of random splits as they are
    direct = from_scores(
        np.asarray(scores.values),
        n_test=SIZES,
        n_train=[N - s for s in SIZES],
        n=N,
        models=MODELS,
        greater_is_better=False,
    )
    np.testing.assert_array_equal(
        stat(cvstats.resampled_t(cvstats.pairwise(direct))), stat(cvstats.resampled_t(sdiff))
    )
    with pytest.raises(DesignError, match="`n1=` and `n2=`"):
        cvstats.corrected_resampled_t(direct)


# --------------------------------------------------------------------------
# bootstrap replicates and conservative-Z halves
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bootstrap():
    main = random_rows(N, [10, 12, 9, 11], seed=4)
    reps = [
        row
        for r in range(3)
        for row in random_rows(N, [11, 10, 12, 9], seed=10 + r, block="replicate", replicate=r)
    ]
    rows = main + reps
    return rows, _cube(rows, N, seed=5)


def test_bootstrap_t_runs_and_corrected_bootstrap_needs_the_sizes(bootstrap):
    rows, cube = bootstrap
    mu = split_means(cube, rows)
    main, reps = mu[:4], mu[4:].reshape(3, 4)
    var = reps.mean(axis=1).var(ddof=1)
    diff = cvstats.pairwise(cube)
    np.testing.assert_allclose(stat(cvstats.bootstrap_t(diff)), main.mean() / np.sqrt(var))
    with pytest.raises(DesignError, match="corrected bootstrap needs one test size n2 in the"):
        cvstats.corrected_bootstrap_t(diff)
    n1, n2 = 49, 11
    res = cvstats.corrected_bootstrap_t(diff, n1=n1, n2=n2)
    np.testing.assert_allclose(stat(res), main.mean() / np.sqrt((1 + 4 * n2 / n1) * var))


def test_corrected_bootstrap_refuses_unequal_replicates_alone():
    main = random_rows(N, [10] * 4, seed=4)
    reps = [
        row
        for r in range(2)
        for row in random_rows(N, [10, 10, 10, 11], seed=20 + r, block="replicate", replicate=r)
    ]
    cube = _cube(main + reps, N, seed=6)
    with pytest.raises(DesignError, match="in the 'replicate' block"):
        cvstats.corrected_bootstrap_t(cvstats.pairwise(cube))


def _conservative_z_rows(half_sizes):
    main = random_rows(N, [10] * 4, seed=7)
    rows = list(main)
    rng = np.random.default_rng(8)
    for m in range(3):
        perm = rng.permutation(N)
        for side, pool in enumerate((perm[: N // 2], perm[N // 2 :])):
            for size in half_sizes:
                p = rng.permutation(pool)
                rows.append(("half", m, side, -1, p[:size], p[size:]))
    return rows


def test_conservative_z_needs_one_size_in_its_halves():
    rows = _conservative_z_rows([6, 7, 5, 6])
    cube = _cube(rows, N, seed=9)
    diff = cvstats.pairwise(cube)
    with pytest.raises(DesignError, match="conservative Z needs one test size n2 in the 'half'"):
        cvstats.conservative_z(diff)
    res = cvstats.conservative_z(diff, n1=24, n2=6)
    mu = split_means(cube, rows)
    halves = mu[4:].reshape(3, 2, 4).mean(axis=-1)
    var = ((halves[:, 0] - halves[:, 1]) ** 2).sum() / (2 * 3)  # eq. 11
    np.testing.assert_allclose(stat(res), mu[:4].mean() / np.sqrt(var), rtol=1e-12)
    assert (res.n1, res.n2) == (24, 6)


def test_half_splits_must_still_fit_in_a_half():
    rows = _conservative_z_rows([6, 7, 5, 6])
    block, m, side, rep, test, train = rows[4]
    rows[4] = (block, m, side, rep, test, np.r_[train, rows[-1][4][:1]])  # n_train 25 + 6 > 30
    with pytest.raises(CubeError, match="above floor\\(n/2\\)"):
        _cube(rows, N, seed=9)


# --------------------------------------------------------------------------
# k-fold main blocks: folds differing by one keep their behaviour
# --------------------------------------------------------------------------


def _kfold_cube(fold_of, seed=0):
    """A k-fold cube from per-example fold labels ``fold_of`` (repeats, n)."""
    repeats, n = fold_of.shape
    K = int(fold_of.max()) + 1
    mask = np.concatenate([fold_of[r][None, :] == np.arange(K)[:, None] for r in range(repeats)])
    losses = np.random.default_rng(seed).random((repeats * K, n, 2))
    splits = {"repeat": np.repeat(np.arange(repeats), K), "fold": np.tile(np.arange(K), repeats)}
    cube = cvstats.from_arrays(
        losses, mask, models=MODELS, n_train=n - mask.sum(axis=1), splits=splits
    )
    return cube, mask


def test_kfold_folds_differing_by_one_keep_the_k_fold_correction():
    d = cvstats.designs.kfold(40, K=6, repeats=2, seed=0)  # folds of 6 and 7
    losses = np.random.default_rng(0).random((12, 40, 2))
    cube = cvstats.from_arrays(losses, design=d, models=MODELS)
    assert "n_test" not in cube.coords  # a k-fold main block needs no stated sizes
    sizes = block_sizes(cube, "main", "test")
    assert sizes.equal and sizes.kfold and (sizes.n2_min, sizes.n2_max) == (6, 7)
    diff = cvstats.pairwise(cube)
    mu = np.nanmean(np.asarray(diff.values)[..., 0], axis=1)
    t = mu.mean() / np.sqrt((1 / 12 + 1 / 5) * mu.var(ddof=1))  # n2/n1 = 1/(k-1)
    res = cvstats.corrected_repeated_kfold_t(diff)
    np.testing.assert_allclose(stat(res), t, rtol=1e-12)
    # n1, n2 given on folds of one size: reported only, as before
    same = cvstats.corrected_repeated_kfold_t(diff, n1=30, n2=10)
    np.testing.assert_array_equal(stat(same), stat(res))
    assert (same.n1, same.n2) == (30, 10)


def test_kfold_folds_of_very_different_sizes():
    # GroupKFold-like folds of 15, 15 and 10 examples (8 groups of 5 in 3 folds)
    fold_of = np.repeat([0, 0, 0, 1, 1, 1, 2, 2], 5)[None, :]
    cube, mask = _kfold_cube(fold_of, seed=1)
    sizes = block_sizes(cube, "main", "test")
    assert not sizes.equal and (sizes.n2_min, sizes.n2_max) == (10, 15)
    diff = cvstats.pairwise(cube)
    mu = np.nanmean(np.asarray(diff.values)[..., 0], axis=1)
    # the k-fold t does not use the sizes
    np.testing.assert_allclose(
        stat(cvstats.kfold_t(diff)), mu.mean() / np.sqrt(mu.var(ddof=1) / 3), rtol=1e-12
    )
    # every repeat partitions the n = 40 examples: the mean test size is n/K = 40/3 and the
    # mean training size n - n/K = 80/3 exactly, so n2/n1 = 1/(K - 1) as for equal folds
    default = cvstats.corrected_repeated_kfold_t(diff)
    t = mu.mean() / np.sqrt((1 / 3 + (40 / 3) / (80 / 3)) * mu.var(ddof=1))
    np.testing.assert_allclose(stat(default), t, rtol=1e-12)
    assert (default.n1, default.n2) == (27, 13)  # the mean sizes, rounded
    # the corrected resampled t, called on the k-fold cube, uses the same mean sizes, and
    # the Bayesian correlated t their rho0 = n2/n = 1/K; compare runs both on such a cube
    np.testing.assert_allclose(stat(cvstats.corrected_resampled_t(diff)), t, rtol=1e-12)
    assert cvstats.bayesian_correlated_t(diff).rho == pytest.approx(1 / 3)
    named = ["corrected_repeated_kfold_t", "bayesian_correlated_t"]
    assert list(cvstats.compare(diff, methods=named).results) == named
    # given sizes: their n2/n1
    res = cvstats.corrected_repeated_kfold_t(diff, n1=27, n2=13)
    t = mu.mean() / np.sqrt((1 / 3 + 13 / 27) * mu.var(ddof=1))
    np.testing.assert_allclose(stat(res), t, rtol=1e-12)
    assert (res.n1, res.n2) == (27, 13)


# --------------------------------------------------------------------------
# validation: stated sizes guard against a lost test loss
# --------------------------------------------------------------------------


def test_from_arrays_states_sizes_only_when_a_block_needs_them():
    d = cvstats.designs.resampled(30, 6, J=4, seed=0)
    cube = cvstats.from_arrays(np.ones((4, 30, 2)), design=d)
    assert "n_test" not in cube.coords  # equal sizes: the cube is as before


def test_unstated_unequal_sizes_are_refused(random_splits):
    _, cube = random_splits
    with pytest.raises(CubeError, match="different test sizes .*state each split's test size"):
        cvstats.validate(cube.drop_vars("n_test"))


def test_a_lost_test_loss_contradicts_the_stated_size(random_splits):
    rows, cube = random_splits
    lost = cube.copy(deep=True)
    lost[1, int(rows[1][4][0]), :] = np.nan  # a test example of split 1, NaN in every model
    with pytest.raises(CubeError, match="split 1 tests 11 example.* states 12: a test loss"):
        cvstats.validate(lost)


def test_stated_sizes_must_be_ints_on_split(random_splits):
    _, cube = random_splits
    with pytest.raises(CubeError, match="`n_test` must hold ints"):
        cvstats.validate(cube.assign_coords(n_test=cube.n_test.astype(float)))


def test_stated_sizes_hold_in_every_dataset():
    rows = random_rows(N, [10, 12, 9], seed=11)
    cube = _cube(rows, N, extra=2)
    assert cube["n_test"].values.tolist() == [10, 12, 9]
    lost = cube.copy(deep=True)
    lost[1, 2, int(rows[2][4][0]), :] = np.nan
    with pytest.raises(CubeError, match="split 2 tests 8 .*dataset 1"):
        cvstats.validate(lost)
    # one mask per dataset whose sizes differ between datasets: one size per split cannot
    # say it, so the block is refused as before
    mask = np.zeros((2, 3, N), dtype=bool)
    mask[0, 0, :10] = mask[0, 1, :12] = mask[0, 2, :9] = True
    mask[1, 0, :11] = mask[1, 1, :12] = mask[1, 2, :9] = True
    with pytest.raises(CubeError, match="different test sizes"):
        cvstats.from_arrays(
            np.ones((2, 3, N, 2)), mask, n_train=40, extra_dims=["dataset"], models=MODELS
        )


def test_from_frame_states_unequal_sizes():
    import pandas as pd

    df = pd.DataFrame(
        {
            "split": [0, 0, 0, 1, 1],
            "example": [0, 1, 2, 3, 4],
            "model": "m",
            "loss": [0.1, 0.2, 0.3, 0.4, 0.5],
        }
    )
    cube = cvstats.from_frame(df, n_train=2)
    assert cube["n_test"].values.tolist() == [3, 2]
    res = cvstats.resampled_t(cube)
    np.testing.assert_allclose(stat(res), 0.325 / np.sqrt(np.var([0.2, 0.45], ddof=1) / 2))


def test_stated_sizes_survive_contrasts_and_selection(random_splits):
    _, cube = random_splits
    assert cvstats.pairwise(cube)["n_test"].values.tolist() == SIZES
    sub = cube.isel(split=[0, 3])
    assert sub["n_test"].values.tolist() == [10, 15]
    cvstats.validate(sub)


def test_stated_sizes_round_trip(random_splits, tmp_path):
    _, cube = random_splits
    path = tmp_path / "unequal.nc"
    cvstats.save(cube, path)
    back = cvstats.open_cube(path)
    xr.testing.assert_identical(back["n_test"], cube["n_test"])
    np.testing.assert_array_equal(
        stat(cvstats.resampled_t(cvstats.pairwise(back))),
        stat(cvstats.resampled_t(cvstats.pairwise(cube))),
    )
