"""Groups on the cube (issue 29, point 1): the `group` coordinate and cluster-robust variances."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import xarray as xr
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import GroupKFold, GroupShuffleSplit, KFold

import cvstats
from cvstats import CubeError, CvstatsWarning, DesignError, designs
from cvstats.inference.bayle import bayle_cv, out_of_fold_errors
from cvstats.inference.holdout import holdout_t


def _statsmodels_bse(x: np.ndarray, groups: np.ndarray) -> float:
    fit = sm.OLS(x, np.ones_like(x)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return float(fit.bse[0])


def _grouped_losses(rng: np.random.Generator, groups: np.ndarray, shape: tuple[int, ...]):
    """Losses with a shared effect per group (strongly correlated within groups)."""
    effect = rng.normal(size=(*shape[:-2], int(groups.max()) + 1, shape[-1]))
    return rng.gamma(2.0, size=shape) + 2.0 * np.take(effect, groups, axis=-2)


def _holdout_cube(seed: int, groups: np.ndarray, labels=None, test_size=0.4):
    """One group-respecting hold-out split (GroupShuffleSplit) of two models' losses."""
    rng = np.random.default_rng(seed)
    cv = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
    d = designs.from_splitter(cv, n=groups.size, groups=groups)
    losses = _grouped_losses(rng, groups, (1, groups.size, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], groups=labels)


# ------------------------------------------------------------------ the coordinate


def test_from_arrays_from_splitter_and_storage_keep_the_groups(tmp_path) -> None:
    groups = np.repeat(np.arange(15), 3)
    cube = _holdout_cube(0, groups)  # the design's groups
    assert cube["group"].dims == ("example",)
    np.testing.assert_array_equal(cube["group"].values, groups)
    names = np.array([f"patient{g}" for g in groups])
    named = _holdout_cube(0, groups, labels=names)
    np.testing.assert_array_equal(named["group"].values, names)
    for ext in ("nc", "zarr"):
        for c in (cube, named):
            path = os.fspath(tmp_path / f"{c['group'].dtype.kind}.{ext}")
            cvstats.save(c, path)
            back = cvstats.open_cube(path)
            np.testing.assert_array_equal(back["group"].values, c["group"].values)
            assert back["group"].dims == ("example",)


def test_from_frame_reads_a_group_column() -> None:
    rng = np.random.default_rng(1)
    rows = [
        {"split": s, "example": e, "model": m, "loss": rng.random(), "patient": f"p{e // 2}"}
        for s in (0, 1)
        for e in range(6 * s, 6 * s + 6)
        for m in ("x", "y")
    ]
    cube = cvstats.from_frame(pd.DataFrame(rows), n_train=4, group="patient")
    assert cube["group"].values.tolist() == [f"p{e // 2}" for e in range(12)]
    bad = pd.DataFrame(rows)
    bad.loc[3, "patient"] = "other"  # example 1 in two groups
    with pytest.raises(CubeError, match=r"gives 1 example\(s\) more than one group .*example 1\b"):
        cvstats.from_frame(bad, n_train=4, group="patient")
    bad = pd.DataFrame(rows)
    bad.loc[5, "patient"] = None
    with pytest.raises(CubeError, match=r"'patient' \(`group`\) has 1 missing label"):
        cvstats.from_frame(bad, n_train=4, group="patient")


def test_collect_keeps_the_groups() -> None:
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(30, 2)), rng.integers(0, 2, 30)
    groups = np.repeat(np.arange(10), 3)
    d = designs.from_splitter(GroupKFold(3), X, y, groups)
    cube = cvstats.collect({"dummy": DummyClassifier()}, X, y, d, progress=False)
    np.testing.assert_array_equal(cube["group"].values, groups)
    other = groups[::-1].copy()
    cube = cvstats.collect({"dummy": DummyClassifier()}, X, y, d, progress=False, groups=other)
    np.testing.assert_array_equal(cube["group"].values, other)


def test_bad_groups_are_refused() -> None:
    d = designs.kfold(20, 4, seed=0)
    losses = np.random.default_rng(0).random((4, 20, 1))
    nan_groups = np.arange(20, dtype=float)
    nan_groups[7] = np.nan
    with pytest.raises(CubeError, match=r"`groups` has 1 missing group label.*position 7"):
        cvstats.from_arrays(losses, design=d, groups=nan_groups)
    with pytest.raises(CubeError, match=r"one group label per example \(20\), got shape \(19,\)"):
        cvstats.from_arrays(losses, design=d, groups=np.arange(19))
    cube = cvstats.from_arrays(losses, design=d)
    on_split = cube.assign_coords(group=("split", np.arange(4)))
    with pytest.raises(CubeError, match=r"`group` coordinate must lie on the `example` dim"):
        cvstats.validate(on_split)
    missing = cube.assign_coords(group=("example", [None] + [f"g{i}" for i in range(19)]))
    with pytest.raises(CubeError, match=r"`group` coordinate has 1 missing"):
        cvstats.validate(missing)


def test_describe_reports_a_group_straddling_a_split() -> None:
    groups = np.repeat(np.arange(10), 4)
    rng = np.random.default_rng(3)
    kept = designs.from_splitter(GroupKFold(5), n=40, groups=groups)
    clean = cvstats.describe(cvstats.from_arrays(rng.random((5, 40, 1)), design=kept))
    assert clean.groups == 10 and clean.straddling == ()
    assert "no group straddles" in str(clean)
    # KFold(5) on 40 ordered examples tests 8 in a row; groups of 4 rolled by 2 (group 9 at
    # both ends) are cut at both ends of every fold: fold 0 tests 9, 9, 0, 0, 0, 0, 1, 1
    plain = designs.from_splitter(KFold(5), n=40)
    cube = cvstats.from_arrays(rng.random((5, 40, 1)), design=plain, groups=np.roll(groups, 2))
    desc = cvstats.describe(cube)
    assert desc.straddling == ((0, 2), (1, 2), (2, 2), (3, 2), (4, 2))
    assert "groups straddle training and test sets in split 0 (2)" in str(desc)


# ------------------------------------------------------------------ cluster-robust methods


@pytest.mark.parametrize("variant", ["z", "t"])
def test_holdout_t_is_cluster_robust_as_statsmodels(variant: str) -> None:
    groups = np.random.default_rng(4).integers(0, 40, 160)  # unequal groups
    cube = _holdout_cube(4, groups)
    res = holdout_t(cvstats.pairwise(cube), variant=variant)
    diff = (cube.sel(model="a") - cube.sel(model="b")).isel(split=0).values
    test = ~np.isnan(diff)
    n_groups = np.unique(groups[test]).size
    assert float(res.stderr.squeeze()) == pytest.approx(
        _statsmodels_bse(diff[test], groups[test]), rel=1e-10
    )
    assert float(res.df.squeeze()) == (np.inf if variant == "z" else n_groups - 1)
    assert res.title.endswith(f"cluster-robust variance ({n_groups} groups)")


@pytest.mark.parametrize("variant", ["z", "t"])
def test_holdout_t_with_one_example_per_group_equals_the_iid_test(variant: str) -> None:
    d = designs.holdout(50, 17, seed=6)
    losses = np.random.default_rng(6).exponential(size=(1, 50, 2))
    plain = cvstats.from_arrays(losses, design=d, models=["a", "b"])
    grouped = cvstats.from_arrays(losses, design=d, models=["a", "b"], groups=np.arange(50))
    before, after = holdout_t(plain, variant=variant), holdout_t(grouped, variant=variant)
    for field in ("estimate", "stderr", "statistic", "df", "pvalue"):
        np.testing.assert_allclose(getattr(after, field), getattr(before, field), rtol=1e-12)
    assert "cluster-robust" not in before.title


def test_bayle_cv_is_cluster_robust_as_statsmodels() -> None:
    rng = np.random.default_rng(7)
    groups = rng.integers(0, 30, 120)
    d = designs.from_splitter(GroupKFold(5), n=120, groups=groups)
    cube = cvstats.from_arrays(_grouped_losses(rng, groups, (5, 120, 2)), design=d)
    res = bayle_cv(cube)
    e, _ = out_of_fold_errors(cube)
    for m, model in enumerate(cube["model"].values):
        expected = _statsmodels_bse(e.sel(model=model).values, groups)
        assert float(res.stderr.isel(model=m)) == pytest.approx(expected, rel=1e-10)
    assert res.title.endswith("cluster-robust variance (30 groups)")
    with pytest.raises(DesignError, match=r"variant='in'.*no cluster-robust form.*variant='out'"):
        bayle_cv(cube, variant="in")


def test_bayle_cv_with_one_example_per_group_is_the_iid_interval_with_n_minus_1() -> None:
    # stated default: statsmodels' CR1 factor, so σ̂² has the denominator n - 1, not Bayle's n
    d = designs.kfold(45, 5, seed=8)
    losses = np.random.default_rng(8).random((5, 45, 1))
    before = bayle_cv(cvstats.from_arrays(losses, design=d))
    after = bayle_cv(cvstats.from_arrays(losses, design=d, groups=np.arange(45)))
    np.testing.assert_allclose(after.estimate, before.estimate, rtol=1e-13)
    np.testing.assert_allclose(after.stderr, before.stderr * np.sqrt(45 / 44), rtol=1e-12)


def test_too_few_groups_are_refused() -> None:
    groups = np.repeat(np.arange(12), 5)  # a 40% test set holds 5 groups
    cube = _holdout_cube(9, groups)
    with pytest.raises(DesignError, match=r"needs at least 10 groups.*G = 5 group"):
        holdout_t(cube)
    one = cube.assign_coords(group=("example", np.zeros(60, dtype=int)))
    with (
        pytest.warns(CvstatsWarning, match=r"in both the training and the test set"),
        pytest.raises(DesignError, match=r"G = 1 group"),
    ):
        holdout_t(one)


def test_a_group_straddling_a_split_warns_and_group_splits_do_not() -> None:
    groups = np.repeat(np.arange(20), 4)
    rng = np.random.default_rng(10)
    kept = designs.from_splitter(GroupKFold(4), n=80, groups=groups)
    cut = designs.from_splitter(KFold(4, shuffle=True, random_state=0), n=80)
    losses = rng.random((4, 80, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cvstats.compare("loss ~ model", cvstats.from_arrays(losses, design=kept))
    cube = cvstats.from_arrays(losses, design=cut, groups=groups)
    with pytest.warns(CvstatsWarning, match=r"correlated beyond Nadeau & Bengio's Lemma 1"):
        cvstats.compare("loss ~ model", cube)
    with pytest.warns(CvstatsWarning, match=r"4 split\(s\) have a group with examples in both"):
        cvstats.kfold_t(cube)


def test_montecarlo_clustered_holdout_covers_and_iid_does_not() -> None:
    # 2000 hold-out test sets of 60 groups of 5 examples, intra-group correlation 0.6 (design
    # effect 1 + 4 * 0.6 = 3.4): the iid interval covers about P(|Z| < 1.96/sqrt(3.4)) = 0.71.
    # Tolerance for the clustered t_{G-1} interval: 0.02 around 0.95, about 4 binomial
    # standard errors sqrt(0.95 * 0.05 / 2000) = 0.0049 (with room for CR1's O(1/G) bias).
    reps, n_groups, size = 2000, 60, 5
    rng = np.random.default_rng(11)
    groups = np.repeat(np.arange(n_groups), size)
    effect = rng.normal(size=(reps, n_groups)) * np.sqrt(0.6)
    noise = rng.normal(size=(reps, n_groups * size)) * np.sqrt(0.4)
    losses = (effect[:, groups] + noise)[:, None, :, None]
    kwargs = {"extra_dims": ("rep",), "n_train": 100, "name": "loss", "attrs": {"n": 400}}
    iid = cvstats.from_arrays(losses, **kwargs)
    clustered = cvstats.from_arrays(losses, **kwargs, groups=groups)
    cover_iid = float((holdout_t(iid, variant="t").pvalue > 0.05).mean())
    cover_cluster = float((holdout_t(clustered, variant="t").pvalue > 0.05).mean())
    assert cover_iid < 0.85
    assert abs(cover_cluster - 0.95) < 0.02, cover_cluster


def test_contrast_cubes_keep_the_groups() -> None:
    groups = np.repeat(np.arange(15), 4)
    cube = _holdout_cube(12, groups)
    contrast = cvstats.pairwise(cube)
    assert isinstance(contrast, xr.DataArray)
    np.testing.assert_array_equal(contrast["group"].values, groups)


def _zero_one_holdout(seed: int, groups: np.ndarray, labels=None):
    """0/1 losses of two classifiers on a group-respecting hold-out split, shared per group."""
    rng = np.random.default_rng(seed)
    cv = GroupShuffleSplit(n_splits=1, test_size=0.5, random_state=seed)
    d = designs.from_splitter(cv, n=groups.size, groups=groups)
    hard = rng.random(int(groups.max()) + 1)[groups]  # per-group difficulty
    losses = (rng.random((1, groups.size, 2)) < hard[None, :, None] * [0.6, 0.9]).astype(float)
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], name="zero_one", groups=labels)


def test_mcnemar_z_is_durkalskis_clustered_statistic() -> None:
    groups = np.random.default_rng(13).integers(0, 50, 300)
    cube = _zero_one_holdout(13, groups)
    res = cvstats.mcnemar(cube)
    # Durkalski et al. (2003): χ² = (Σ_g u_g)² / Σ_g u_g², by pandas on the test examples
    d = (cube.sel(model="a") - cube.sel(model="b")).isel(split=0).values
    test = ~np.isnan(d)
    u = pd.Series(d[test]).groupby(groups[test]).sum()
    z = u.sum() / np.sqrt((u**2).sum())
    assert float(res.statistic) == pytest.approx(z, rel=1e-12)
    assert float(res.stderr) == pytest.approx(np.sqrt((u**2).sum()) / test.sum(), rel=1e-12)
    assert res.title.endswith(f"cluster-robust variance ({u.size} groups)")
    with pytest.raises(DesignError, match=r"variant='exact' counts the discordant pairs as"):
        cvstats.mcnemar(cube, variant="exact")


def test_mcnemar_with_one_example_per_group_equals_mcnemar() -> None:
    groups = np.repeat(np.arange(40), 3)
    plain = _zero_one_holdout(14, groups)
    single = plain.assign_coords(group=("example", np.arange(120)))
    before, after = cvstats.mcnemar(plain.drop_vars("group")), cvstats.mcnemar(single)
    for field in ("estimate", "stderr", "statistic", "pvalue"):
        np.testing.assert_allclose(getattr(after, field), getattr(before, field), rtol=1e-12)


def test_mcnemar_variance_is_statsmodels_null_cluster_score_variance() -> None:
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
    from statsmodels.stats.sandwich_covariance import S_crosssection

    labels = np.random.default_rng(21).integers(0, 35, 240)  # unequal groups, as labels
    cube = _zero_one_holdout(21, labels, labels=np.array([f"doc{g}" for g in labels]))
    res = cvstats.mcnemar(cube)
    d = (cube.sel(model="a") - cube.sel(model="b")).isel(split=0).values
    test = ~np.isnan(d)
    codes = pd.factorize(cube["group"].values[test])[0]
    meat = float(S_crosssection(d[test][:, None], codes)[0, 0])  # Σ_g (b_g - c_g)²
    n2 = int(test.sum())
    assert float(res.stderr) ** 2 * n2**2 == pytest.approx(meat, rel=1e-10)
    assert float(res.statistic) == pytest.approx(d[test].sum() / np.sqrt(meat), rel=1e-10)
    # one example per group: the plain McNemar z, (n10 - n01)/sqrt(n10 + n01), by statsmodels
    single = cvstats.mcnemar(cube.assign_coords(group=("example", np.arange(labels.size))))
    n10, n01 = int((d[test] == 1).sum()), int((d[test] == -1).sum())
    chi2 = sm_mcnemar([[0, n10], [n01, 0]], exact=False, correction=False).statistic
    assert float(single.statistic) == pytest.approx(np.sign(n10 - n01) * np.sqrt(chi2), rel=1e-10)
    assert single.title.endswith(f"cluster-robust variance ({n2} groups)")


def _fold_groups(design: xr.Dataset, size: int = 2) -> np.ndarray:
    """Groups of ``size`` examples of one fold of the main block: no group straddles a split."""
    test = design["test"].values[design["block"].values == "main"]
    fold = test.argmax(axis=0)
    rank = np.argsort(np.argsort(fold, kind="stable"), kind="stable")
    return pd.factorize(fold * 1000 + rank // size)[0]


def _nested_by_hand(design: xr.Dataset, e: np.ndarray, groups: np.ndarray) -> dict[str, float]:
    """Bates et al.'s MSE^, se_naive and estimate with clustered variances, by a direct loop.

    ``b_k`` is statsmodels' clustered squared standard error of the fold mean;
    ``var(e_in)`` sums the squared per-group sums of ``e_in - Err^NCV`` per inner CV.
    """
    test, block = design["test"].values, design["block"].values
    main = np.flatnonzero(block == "main")
    fold = test[main].argmax(axis=0)
    K, n = main.size, fold.size
    e_out = np.array([e[main[fold[i]], i] for i in range(n)])
    inner: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for j in np.flatnonzero(block == "nested"):
        pair = set(fold[test[j]].tolist())
        for k in pair:  # the fit leaving out {k, other} scores the other fold for outer fold k
            (other,) = pair - {k}
            idx = np.flatnonzero(fold == other)
            vals, grp = inner.get(k, (np.empty(0), np.empty(0, dtype=int)))
            inner[k] = (np.concatenate([vals, e[j, idx]]), np.concatenate([grp, groups[idx]]))
    err_ncv = np.mean(np.concatenate([inner[k][0] for k in range(K)]))
    gaps, ss, count = [], 0.0, 0
    for k in range(K):
        idx = fold == k
        b = _statsmodels_bse(e_out[idx], groups[idx]) ** 2
        gaps.append((inner[k][0].mean() - e_out[idx].mean()) ** 2 - b)
        vals, grp = inner[k]
        ss += sum(np.sum(vals[grp == g] - err_ncv) ** 2 for g in np.unique(grp))
        count += vals.size
    err_cv = e_out.mean()
    return {
        "mse": float(np.mean(gaps)),
        "se_naive": float(np.sqrt(ss / (count - 1) / n)),
        "estimate": float(err_ncv - (1 + (K - 2) / K) * (err_ncv - err_cv)),
    }


def test_nested_cv_with_groups_equals_statsmodels_and_a_direct_loop() -> None:
    from cvstats.inference.nested import nested_cv_interval, nested_cv_terms

    rng = np.random.default_rng(31)
    d = designs.nested_cv(48, 4, seed=31)
    groups = _fold_groups(d, size=3)  # 4 groups of 3 per fold, 16 in all
    losses = _grouped_losses(rng, groups, (d.sizes["split"], 48, 1))
    cube = cvstats.from_arrays(losses, design=d, groups=groups)
    terms = nested_cv_terms(cube).squeeze()
    want = _nested_by_hand(d, losses[..., 0], groups)
    for name, value in want.items():
        np.testing.assert_allclose(float(terms[name]), value, rtol=1e-10, err_msg=name)
    iid = nested_cv_terms(cube.drop_vars("group")).squeeze()
    assert float(terms["se_naive"]) > 1.2 * float(iid["se_naive"])  # the groups share effects
    res = nested_cv_interval(cube)  # no warning: the variance is clustered
    assert res.title.endswith("; cluster-robust variance (16 groups)")


def test_nested_cv_with_one_example_per_group_is_the_iid_interval() -> None:
    from cvstats.inference.nested import nested_cv_interval

    rng = np.random.default_rng(32)
    d = designs.nested_cv(36, 3, repeats=2, seed=32)
    losses = rng.gamma(2.0, size=(d.sizes["split"], 36, 2))
    plain = cvstats.from_arrays(losses, design=d)
    single = cvstats.from_arrays(losses, design=d, groups=[f"u{i}" for i in range(36)])
    before, after = nested_cv_interval(plain), nested_cv_interval(single)
    for field in ("estimate", "stderr", "statistic", "pvalue"):
        np.testing.assert_allclose(getattr(after, field), getattr(before, field), rtol=1e-12)


def test_nested_cv_refuses_too_few_groups() -> None:
    from cvstats.inference.nested import nested_cv_interval

    rng = np.random.default_rng(33)
    d = designs.nested_cv(32, 4, seed=33)
    losses = rng.random((d.sizes["split"], 32, 1))
    few = cvstats.from_arrays(losses, design=d, groups=_fold_groups(d, size=4))  # 2 per fold
    with pytest.raises(DesignError, match=r"at least 10 groups .* G = 8 group"):
        nested_cv_interval(few)
    one = cvstats.from_arrays(losses, design=d, groups=_fold_groups(d, size=8))  # 1 per fold
    with pytest.raises(DesignError, match=r"at least 2 groups in every outer fold.* has 1"):
        nested_cv_interval(one)


def _within_fold_groups(design: xr.Dataset, rng: np.random.Generator, per_fold: int) -> np.ndarray:
    """Groups of unequal sizes, each inside one fold of the main block (none straddles)."""
    test = design["test"].values[design["block"].values == "main"]
    fold = test.argmax(axis=0)
    return pd.factorize(fold * 1000 + rng.integers(0, per_fold, fold.size))[0]


def test_kfold_statistics_var_mu_is_cluster_robust_as_statsmodels() -> None:
    from cvstats.across.kfold_variance import kfold_errors, kfold_statistics

    rng = np.random.default_rng(15)
    k = designs.kfold(60, 4, seed=15)
    groups = _within_fold_groups(k, rng, per_fold=4)  # 16 groups of unequal sizes
    losses = _grouped_losses(rng, groups, (2, 4, 60, 2))
    cube = cvstats.from_arrays(
        losses, design=k, groups=groups, extra_dims=["dataset"], models=["a", "b"]
    )
    for target in (cube, cvstats.pairwise(cube)):
        st = kfold_statistics(target)  # no warning: no group straddles a split
        e = kfold_errors(target).e
        unit = "model" if "model" in e.dims else "contrast"
        assert st.var_mu.dims == ("dataset", unit)
        for d in range(2):
            for u in range(e.sizes[unit]):
                x = e.isel(dataset=d, **{unit: u}).values
                expected = _statsmodels_bse(x, groups) ** 2
                got = float(st.var_mu.isel(dataset=d, **{unit: u}))
                assert got == pytest.approx(expected, rel=1e-10)
        assert st.attrs["variance"] == "cluster-robust (CR1), 16 groups"
        assert "s2 pools the pairs within a group" in st.attrs["note"]
    grouped, plain = kfold_statistics(cube), kfold_statistics(cube.drop_vars("group"))
    for name in ("s1", "s2", "s3", "mu"):  # unchanged by the groups
        np.testing.assert_array_equal(grouped[name], plain[name])
    assert float((grouped.var_mu / plain.var_mu).min()) > 1.5  # the groups share effects


def test_kfold_statistics_var_mu_without_groups_is_the_ols_variance() -> None:
    from cvstats.across.kfold_variance import kfold_errors, kfold_statistics

    rng = np.random.default_rng(16)
    k = designs.kfold(36, 6, seed=16)
    cube = cvstats.from_arrays(rng.exponential(size=(6, 36, 2)), design=k, models=["a", "b"])
    st = kfold_statistics(cube)
    e = kfold_errors(cube).e
    for m in range(2):
        x = e.isel(model=m).values
        ols = sm.OLS(x, np.ones_like(x)).fit()
        assert float(st.var_mu.isel(model=m)) == pytest.approx(ols.bse[0] ** 2, rel=1e-10)
    assert st.attrs["variance"] == "iid" and "note" not in st.attrs
    single = kfold_statistics(cube.assign_coords(group=("example", np.arange(36)[::-1])))
    np.testing.assert_allclose(single.var_mu, st.var_mu, rtol=1e-12)  # one example per group
    assert single.attrs["variance"] == "cluster-robust (CR1), 36 groups"


def test_kfold_statistics_refuses_too_few_groups_and_warns_on_straddling() -> None:
    from cvstats.across.kfold_variance import kfold_statistics

    rng = np.random.default_rng(17)
    k = designs.kfold(40, 4, seed=17)
    few = cvstats.from_arrays(rng.random((4, 40, 1)), design=k, groups=_fold_groups(k, size=5))
    with pytest.raises(
        DesignError, match=r"kfold_statistics with groups needs at least 10 .*G = 8"
    ):
        kfold_statistics(few)
    cut = few.assign_coords(group=("example", np.arange(40) % 12))
    with pytest.warns(CvstatsWarning, match=r"in both the training and the test set"):
        st = kfold_statistics(cut)
    assert st.attrs["variance"] == "cluster-robust (CR1), 12 groups"


def test_compare_says_which_methods_clustered() -> None:
    rng = np.random.default_rng(16)
    groups = np.repeat(np.arange(24), 5)
    d = designs.from_splitter(GroupKFold(6), n=120, groups=groups)
    cube = cvstats.from_arrays(_grouped_losses(rng, groups, (6, 120, 2)), design=d)
    table = cvstats.compare("loss ~ model", cube)
    (note,) = [n for n in table.notes if "coordinate `group`" in n]
    assert note.startswith("the examples come in 24 groups (coordinate `group`): bayle_cv uses a")
    assert "kfold_t" in note.split(";")[1] and "unchanged" in note
    plain = cvstats.compare("loss ~ model", cube.drop_vars("group"))
    assert not [n for n in plain.notes if "`group`" in n]
