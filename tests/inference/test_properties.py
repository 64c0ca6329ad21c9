"""Property tests on random cubes (issue 7), through the public API only.

Three families of cubes cover every method: a ``nadeau_bengio`` design (main,
half, replicate and 5x2 blocks: resampled and corrected t, conservative Z,
bootstraps, 5x2cv t and its variants, Alpaydın's F), a repeated ``kfold``
design (k-fold t, corrected repeated k-fold t) and a ``holdout`` design with
0/1 losses (hold-out t, McNemar). Hypothesis draws the sizes, the seed of the
splits and of the losses, and the transformation; the losses themselves come
from numpy (gamma-distributed with a split effect, so no variance is zero).

Properties:

* contrast antisymmetry: ``A - B`` vs ``B - A`` negates the estimate and the
  statistic and keeps the standard error and the p-value (Alpaydın's F: the
  statistic and p-value are unchanged; McNemar's chi-square too);
* location shift by ``c``: the estimate moves by ``c``, the standard error is
  unchanged, and with ``mu0 + c`` the statistic and p-value are unchanged;
* scaling by ``s > 0``: estimate and standard error scale by ``s``, and with
  ``mu0 * s`` the statistic and p-value are unchanged;
* permuting the splits within each block (each split keeps its coordinates)
  and permuting the examples leave every result unchanged;
* adding a model leaves the results of the other models unchanged;
* save/open round trip is exact (netCDF and zarr) and gives the same results;
* ``contrasts`` and ``pairwise`` keep the NaN positions of the cube.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cvstats
from cvstats import designs

SETTINGS = settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,  # CI-stable: the same examples every run
)

FAMILIES = ["nadeau_bengio", "kfold", "holdout"]
FIELDS = ("estimate", "stderr", "statistic", "df", "pvalue")

# name -> (function, keyword arguments)
METHODS = {
    "resampled_t": (cvstats.resampled_t, {}),
    "corrected_resampled_t": (cvstats.corrected_resampled_t, {}),
    "conservative_z": (cvstats.conservative_z, {}),
    "bootstrap_t": (cvstats.bootstrap_t, {}),
    "corrected_bootstrap_t": (cvstats.corrected_bootstrap_t, {}),
    "dietterich_5x2cv": (cvstats.dietterich_5x2cv, {"variant": "original"}),
    "dietterich_5x2cv_t4": (cvstats.dietterich_5x2cv, {"variant": "t4"}),
    "dietterich_5x2cv_t5": (cvstats.dietterich_5x2cv, {"variant": "t5"}),
    "combined_5x2cv_f": (cvstats.combined_5x2cv_f, {}),
    "kfold_t": (cvstats.kfold_t, {}),
    "corrected_repeated_kfold_t": (cvstats.corrected_repeated_kfold_t, {}),
    "holdout_t": (cvstats.holdout_t, {}),
    "mcnemar_z": (cvstats.mcnemar, {"variant": "z"}),
    "mcnemar_corrected": (cvstats.mcnemar, {"variant": "corrected"}),
    "mcnemar_exact": (cvstats.mcnemar, {"variant": "exact"}),
}
NB_METHODS = list(METHODS)[:9]
MCNEMAR = ("mcnemar_z", "mcnemar_corrected", "mcnemar_exact")
# statistics that do not change sign with the contrast (squared forms, counts)
SIGNLESS = ("combined_5x2cv_f", "mcnemar_corrected")


def methods_for(cube: xr.DataArray) -> list[str]:
    """The methods that apply to a cube of one of the three families."""
    design = cube.attrs["design"]
    if design == "nadeau_bengio":
        return NB_METHODS
    if design == "kfold":
        single = int(cube.attrs["repeats"]) == 1
        return (
            ["kfold_t", "corrected_repeated_kfold_t"] if single else ["corrected_repeated_kfold_t"]
        )
    return ["holdout_t", *MCNEMAR]


def run(name: str, cube: xr.DataArray, **kwargs):
    func, fixed = METHODS[name]
    if name in MCNEMAR:
        kwargs.pop("mu0", None)  # McNemar tests mu0 = 0 only
    return func(cube, **fixed, **kwargs)


def run_all(cube: xr.DataArray, names=None, **kwargs) -> dict:
    """Every applicable method on a cube (or contrast cube) of models.

    The location methods run through ``compare`` on the cube itself (one
    validation for all of them; ``compare`` returns each method's own result,
    tests/test_compare.py checks they equal direct calls); McNemar runs
    directly, since ``compare`` would read a cube of models as differences.
    """
    names = methods_for(cube) if names is None else names
    located = [n for n in names if n not in MCNEMAR]
    out = {}
    if located:
        out.update(cvstats.compare(cube, methods=located, **kwargs).results)
    for name in names:
        if name in MCNEMAR:
            out[name] = run(name, cube, **kwargs)
    return out


def values(result, field: str) -> np.ndarray:
    return np.asarray(getattr(result, field), dtype=float)


def assert_close(a, b, *, rtol=1e-10, atol=0.0, err_msg=""):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=err_msg, equal_nan=True)


def assert_same_results(r1, r2, *, rtol=1e-10, atol=1e-13, fields=FIELDS, what=""):
    for field in fields:
        assert_close(
            values(r1, field), values(r2, field), rtol=rtol, atol=atol, err_msg=f"{what} {field}"
        )


# ---------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------


def _gamma_losses(rng, n_splits, n, n_models, scale):
    """Positive losses with a split effect (so split means vary), one level per model."""
    base = rng.gamma(2.0, scale, size=(n_splits, n, n_models))
    base += rng.normal(0.0, 0.3 * scale, size=(n_splits, 1, n_models))
    return np.abs(base) + 0.1 * np.arange(n_models)


@st.composite
def cubes(draw, family: str, n_models: int = 2):
    seed = draw(st.integers(0, 2**16))
    scale = draw(st.floats(0.05, 20.0))
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(n_models)]
    if family == "nadeau_bengio":
        n = draw(st.integers(16, 40))
        n_test = draw(st.integers(2, n // 2 - 2))
        J = draw(st.integers(2, 4))
        M = draw(st.integers(1, 3))
        R = draw(st.integers(2, 3))
        d = designs.nadeau_bengio(n, n_test, J=J, M=M, R=R, seed=seed)
        losses = _gamma_losses(rng, d.sizes["split"], n, n_models, scale)
    elif family == "kfold":
        n = draw(st.integers(8, 30))
        K = draw(st.integers(2, min(5, n // 2)))
        repeats = draw(st.integers(1, 3))
        d = designs.kfold(n, K, repeats=repeats, seed=seed)
        losses = _gamma_losses(rng, d.sizes["split"], n, n_models, scale)
    else:
        n = draw(st.integers(10, 60))
        n_test = draw(st.integers(4, n - 2))
        d = designs.holdout(n, n_test, seed=seed)
        p = draw(st.lists(st.floats(0.05, 0.95), min_size=n_models, max_size=n_models))
        losses = (rng.random((1, n, n_models)) < np.asarray(p)).astype(float)
        # every model's losses vary, and every pair of models disagrees somewhere,
        # so that no variance (nor McNemar's discordant count) is zero
        test = np.flatnonzero(d.test.values[0])
        losses[0, test[0]] = np.arange(n_models) % 2
        losses[0, test[1]] = 1 - np.arange(n_models) % 2
        losses[0, test[2], :] = 0.0
        losses[0, test[2], 0] = 1.0
        losses[0, test[3], :] = 1.0
        losses[0, test[3], 0] = 0.0
    name = "zero_one" if family == "holdout" else "loss"
    return cvstats.from_arrays(losses, design=d, models=models, name=name)


def _shifted(cube: xr.DataArray, c: float = 0.0, s: float = 1.0) -> xr.DataArray:
    return cube.copy(data=cube.values * s + c)


# ---------------------------------------------------------------------------
# contrast antisymmetry
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_contrast_antisymmetry(family, data):
    cube = data.draw(cubes(family))
    ab = cvstats.pairwise(cube, models=["m0", "m1"])
    ba = cvstats.pairwise(cube, models=["m1", "m0"])
    one_sided = [
        n for n in methods_for(cube) if n not in ("combined_5x2cv_f", "mcnemar_corrected")
    ]
    res_ab, res_ba = run_all(ab), run_all(ba)
    less = run_all(ab, one_sided, alternative="less")
    greater = run_all(ba, one_sided, alternative="greater")
    for name in methods_for(cube):
        r_ab, r_ba = res_ab[name], res_ba[name]
        if name in SIGNLESS:
            assert_close(values(r_ab, "statistic"), values(r_ba, "statistic"), err_msg=name)
        elif name == "mcnemar_exact":  # the statistic n10 of A - B is n01 of B - A
            n_discordant = (values(r_ab, "stderr") * r_ab.n2) ** 2  # stderr = sqrt(n10+n01)/n2
            assert_close(values(r_ab, "statistic") + values(r_ba, "statistic"), n_discordant)
        else:
            assert_close(values(r_ab, "statistic"), -values(r_ba, "statistic"), err_msg=name)
        assert_close(values(r_ab, "estimate"), -values(r_ba, "estimate"), err_msg=name)
        assert_close(values(r_ab, "stderr"), values(r_ba, "stderr"), err_msg=name)
        assert_close(values(r_ab, "pvalue"), values(r_ba, "pvalue"), err_msg=name)
        lo_ab, hi_ab = r_ab.conf_int()
        lo_ba, hi_ba = r_ba.conf_int()
        assert_close(np.asarray(lo_ab), -np.asarray(hi_ba), err_msg=name)
        if name in one_sided:  # Alpaydın's F and the chi-square are two-sided only
            p_less, p_greater = values(less[name], "pvalue"), values(greater[name], "pvalue")
            assert_close(p_less, p_greater, err_msg=name)


# ---------------------------------------------------------------------------
# location shift and scale
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["nadeau_bengio", "kfold", "holdout"])
@SETTINGS
@given(data=st.data(), c=st.floats(-50.0, 50.0), mu0=st.floats(-5.0, 5.0))
def test_location_shift(family, data, c, mu0):
    cube = data.draw(cubes(family))
    names = [n for n in methods_for(cube) if n not in MCNEMAR]  # McNemar: 0/1 losses only
    res0 = run_all(cube, names, mu0=mu0)
    res1 = run_all(_shifted(cube, c=c), names, mu0=mu0 + c)
    for name in names:
        r0, r1 = res0[name], res1[name]
        atol = 1e-9 * (1.0 + abs(c))
        assert_close(values(r1, "estimate"), values(r0, "estimate") + c, atol=atol, err_msg=name)
        # rounding of the shifted losses: relative error ~ eps |c| / stderr
        assert_close(values(r1, "stderr"), values(r0, "stderr"), rtol=1e-7, err_msg=name)
        assert_close(values(r1, "statistic"), values(r0, "statistic"), rtol=1e-6, err_msg=name)
        assert_close(values(r1, "pvalue"), values(r0, "pvalue"), rtol=1e-6, atol=1e-12)
        assert_close(values(r1, "df"), values(r0, "df"))


@pytest.mark.parametrize("family", ["nadeau_bengio", "kfold", "holdout"])
@SETTINGS
@given(data=st.data(), s=st.floats(1e-3, 1e3), mu0=st.floats(-5.0, 5.0))
def test_scale(family, data, s, mu0):
    cube = data.draw(cubes(family))
    names = [n for n in methods_for(cube) if n not in MCNEMAR]
    res0 = run_all(cube, names, mu0=mu0)
    res1 = run_all(_shifted(cube, s=s), names, mu0=mu0 * s)
    for name in names:
        r0, r1 = res0[name], res1[name]
        assert_close(values(r1, "estimate"), values(r0, "estimate") * s, rtol=1e-12)
        assert_close(values(r1, "stderr"), values(r0, "stderr") * s, rtol=1e-10, err_msg=name)
        assert_close(values(r1, "statistic"), values(r0, "statistic"), rtol=1e-9, err_msg=name)
        assert_close(values(r1, "pvalue"), values(r0, "pvalue"), rtol=1e-8, atol=1e-14)


# ---------------------------------------------------------------------------
# permutations of splits and examples
# ---------------------------------------------------------------------------


def _permute_within_blocks(cube: xr.DataArray, rng: np.random.Generator) -> np.ndarray:
    """Positions of a random reordering of the splits inside each block (blocks stay put)."""
    order = np.arange(cube.sizes["split"])
    blocks = cube.block.values
    for block in np.unique(blocks):
        where = np.flatnonzero(blocks == block)
        order[where] = rng.permutation(where)
    return order


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data(), perm_seed=st.integers(0, 2**16), whole=st.booleans())
def test_permuting_splits_and_examples(family, data, perm_seed, whole):
    cube = data.draw(cubes(family))
    rng = np.random.default_rng(perm_seed)
    if whole:  # any order of the splits, blocks interleaved
        split_order = rng.permutation(cube.sizes["split"])
    else:
        split_order = _permute_within_blocks(cube, rng)
    example_order = rng.permutation(cube.sizes["example"])
    permuted = cube.isel(split=split_order, example=example_order)
    cvstats.validate(permuted)  # every split kept its coordinates and its in_train row
    res0 = run_all(cube, mu0=0.3)
    res1 = run_all(permuted, mu0=0.3)
    for name in methods_for(cube):
        assert_same_results(res0[name], res1[name], what=name)


# ---------------------------------------------------------------------------
# adding a model
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data(), new_seed=st.integers(0, 2**16))
def test_adding_a_model_leaves_the_others_unchanged(family, data, new_seed):
    cube = data.draw(cubes(family))
    rng = np.random.default_rng(new_seed)
    if family == "holdout":
        new = (rng.random(cube.shape[:-1]) < 0.4).astype(float)
        test = np.flatnonzero(cube.isel(model=0).notnull().values[0])
        new[0, test[:2]] = [0.0, 1.0]  # its losses vary: no zero variance
    else:
        new = rng.gamma(2.0, 1.0, size=cube.shape[:-1])
    new = np.where(cube.isel(model=0).notnull(), new, np.nan)
    extra = cube.isel(model=[0]).copy(data=new[..., None]).assign_coords(model=["new"])
    bigger = xr.concat([cube, extra], dim="model", combine_attrs="override")
    cvstats.validate(bigger)
    located = [n for n in methods_for(cube) if n not in MCNEMAR]
    res0 = run_all(cube, located, mu0=0.5)
    res1 = run_all(bigger, located, mu0=0.5)
    for name in methods_for(cube):
        if name in MCNEMAR:  # a test of two models: its pairwise contrast is unchanged
            r0 = run(name, cvstats.pairwise(cube))
            r1 = run(name, cvstats.pairwise(bigger).sel(contrast=["m0 - m1"]))
        else:
            r0, r1 = res0[name], res1[name]
            r1 = SimpleNamespace(**{f: getattr(r1, f).sel(contrast=["m0", "m1"]) for f in FIELDS})
        assert_same_results(r0, r1, rtol=1e-12, what=name)
    # the contrasts of the old models among themselves do not change either
    old = cvstats.contrasts(f"{cube.name} ~ model", cube)
    new_c = cvstats.contrasts(f"{cube.name} ~ model", bigger).sel(contrast=old.contrast.values)
    xr.testing.assert_allclose(old.drop_vars("weights"), new_c.drop_vars("weights"))


# ---------------------------------------------------------------------------
# save / open round trip
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
@settings(SETTINGS, max_examples=4)
@given(data=st.data(), family=st.sampled_from(FAMILIES), extra=st.booleans())
def test_save_open_round_trip_is_exact(suffix, data, family, extra):
    cube = data.draw(cubes(family, n_models=data.draw(st.integers(2, 3))))
    if extra:  # a leading dim: two datasets (the second one shifted)
        cube = xr.concat([cube, _shifted(cube, c=1.0)], dim="dataset")
        cube = cube.assign_coords(dataset=["d0", "d1"])
    with tempfile.TemporaryDirectory() as tmp:
        path = cvstats.save(cube, Path(tmp) / f"cube{suffix}")
        opened = cvstats.open_cube(path)
    expected = cube.assign_attrs(schema_version=1, cvstats_version=cvstats.__version__)
    xr.testing.assert_identical(opened, expected)
    assert opened.dtype == cube.dtype
    np.testing.assert_array_equal(np.isnan(opened.values), np.isnan(cube.values))
    for name, coord in cube.coords.items():
        if coord.dtype.kind in "OU":  # labels come back as numpy unicode
            assert opened[name].dtype.kind == "U", name
        else:
            assert opened[name].dtype == coord.dtype, name
    name = methods_for(cube)[0]
    assert_same_results(run(name, cube), run(name, opened), rtol=0, atol=0)


# ---------------------------------------------------------------------------
# contrasts keep the NaN positions
# ---------------------------------------------------------------------------

FORMULAS = [
    "{y} ~ model",
    "{y} ~ 0 + model",
    "{y} ~ C(model, contr.sum)",
    "{y} ~ C(model, contr.helmert)",
    "{y} ~ C(model, contr.treatment('m1'))",
]


@SETTINGS
@given(
    data=st.data(),
    family=st.sampled_from(FAMILIES),
    n_models=st.integers(2, 4),
    formula=st.sampled_from(FORMULAS),
)
def test_contrasts_keep_the_nan_positions(data, family, n_models, formula):
    cube = data.draw(cubes(family, n_models=n_models))
    tested = cube.isel(model=0).notnull()
    for diff in (cvstats.contrasts(formula.format(y=cube.name), cube), cvstats.pairwise(cube)):
        assert diff.dims == (*cube.dims[:-1], "contrast")
        for label in diff.contrast.values:
            np.testing.assert_array_equal(diff.sel(contrast=label).notnull(), tested)
        cvstats.validate(diff)


@SETTINGS
@given(
    n_datasets=st.integers(1, 4),
    seed=st.integers(0, 2**16),
    formula=st.sampled_from(FORMULAS),
)
def test_contrasts_keep_per_dataset_nan_positions(n_datasets, seed, formula):
    # each dataset has its own random splits: the NaN pattern varies along `dataset`
    n, n_test, J = 24, 5, 3
    masks = np.stack(
        [designs.resampled(n, n_test, J=J, seed=seed + k).test.values for k in range(n_datasets)]
    )
    losses = np.random.default_rng(seed).random((n_datasets, J, n, 3))
    cube = cvstats.from_arrays(
        losses, masks, n_train=n - n_test, extra_dims=["dataset"], models=["m0", "m1", "m2"]
    )
    diff = cvstats.contrasts(formula.format(y="loss"), cube)
    expected = np.broadcast_to(masks[..., None], diff.shape)
    np.testing.assert_array_equal(diff.notnull().values, expected)
    np.testing.assert_array_equal(cvstats.pairwise(cube).notnull().values, expected)
