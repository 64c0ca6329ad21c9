"""Validation matrix (issue 7): bad input -> exception type and message key words.

One test per case, parametrized over the public functions the case applies to:
``validate``, ``from_arrays``, ``from_frame``, ``designs.*``, ``collect``,
``save``/``open_cube``, every inference method, ``compare``, ``contrasts``
and ``pairwise``. Every error is a :class:`cvstats.CvstatsError` and a
``ValueError`` or ``TypeError``; the messages are checked for the words that
name what is wrong (style.md: the argument in backticks, the value received,
the valid choices).

Cases already covered elsewhere are not repeated here: the per-rule checks
of ``validate`` (tests/test_cube.py), formula parsing (tests/test_formula.py),
storage failures (tests/test_io.py) and learner/design errors of ``collect``
(tests/test_collect.py). This file checks that every public entry point
reaches those checks, plus the cases listed in issue 7.

Tests once marked ``xfail(strict=True)`` documented behaviour the library did not
have yet; all are fixed; docs/validation.md lists them.
"""

from __future__ import annotations

import copy
import functools
import os
import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import cvstats
from cvstats import (
    ArgumentError,
    CubeError,
    CvstatsError,
    CvstatsTypeError,
    DesignError,
    FormulaError,
    StorageError,
    ZeroVarianceWarning,
    designs,
)

# ---------------------------------------------------------------------------
# valid cubes, one per kind of design (built once; never mutated by a test)
# ---------------------------------------------------------------------------


@functools.cache
def nb_cube() -> xr.DataArray:
    """Every block (main, half, replicate, 5x2): 31 splits x 40 examples x 2 models."""
    d = designs.nadeau_bengio(40, 4, J=3, M=2, R=2, seed=0)
    losses = np.random.default_rng(0).random((d.sizes["split"], 40, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], name="loss")


@functools.cache
def kfold_cube(repeats: int) -> xr.DataArray:
    d = designs.kfold(20, 4, repeats=repeats, seed=1)
    losses = np.random.default_rng(1).random((d.sizes["split"], 20, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], name="loss")


@functools.cache
def holdout_cube() -> xr.DataArray:
    """One hold-out split of 0/1 losses (for holdout_t and McNemar)."""
    d = designs.holdout(40, 12, seed=2)
    rng = np.random.default_rng(2)
    losses = (rng.random((1, 40, 2)) < [0.3, 0.5]).astype(float)
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], name="zero_one")


# name -> (function, keyword arguments, cube it runs on)
METHODS = {
    "resampled_t": (cvstats.resampled_t, {}, nb_cube),
    "corrected_resampled_t": (cvstats.corrected_resampled_t, {}, nb_cube),
    "conservative_z": (cvstats.conservative_z, {}, nb_cube),
    "bootstrap_t": (cvstats.bootstrap_t, {}, nb_cube),
    "corrected_bootstrap_t": (cvstats.corrected_bootstrap_t, {}, nb_cube),
    "dietterich_5x2cv": (cvstats.dietterich_5x2cv, {"variant": "original"}, nb_cube),
    "dietterich_5x2cv_t4": (cvstats.dietterich_5x2cv, {"variant": "t4"}, nb_cube),
    "dietterich_5x2cv_t5": (cvstats.dietterich_5x2cv, {"variant": "t5"}, nb_cube),
    "combined_5x2cv_f": (cvstats.combined_5x2cv_f, {}, nb_cube),
    "kfold_t": (cvstats.kfold_t, {}, lambda: kfold_cube(1)),
    "corrected_repeated_kfold_t": (cvstats.corrected_repeated_kfold_t, {}, lambda: kfold_cube(2)),
    "holdout_t": (cvstats.holdout_t, {}, holdout_cube),
    "mcnemar": (cvstats.mcnemar, {}, holdout_cube),
}
MULTI_SPLIT = [m for m in METHODS if m not in ("holdout_t", "mcnemar")]


def run_method(name: str, cube: xr.DataArray, **kwargs):
    func, fixed, _ = METHODS[name]
    return func(cube, **fixed, **kwargs)


def cube_for(name: str) -> xr.DataArray:
    return METHODS[name][2]()


def _save(cube, tmp_path):
    return cvstats.save(cube, tmp_path / "cube.nc")


def _compare_formula(cube, tmp_path):
    return cvstats.compare(f"{cube.name} ~ model", cube, methods=["resampled_t"])


def _compare_cube(cube, tmp_path):
    return cvstats.compare(cube, methods=["resampled_t"])


# the public functions that take a cube; contrasts/pairwise are in their own tests
# because they do not validate (see test_contrasts_and_pairwise_validate_the_cube)
CUBE_FUNCTIONS = {
    "validate": lambda cube, tmp_path: cvstats.validate(cube),
    "save": _save,
    "compare(cube)": _compare_cube,
    **{name: (lambda cube, tmp_path, name=name: run_method(name, cube)) for name in METHODS},
}


def first_test_example(cube: xr.DataArray, split_pos: int = 0) -> int:
    return int(np.argmax(cube.isel(split=split_pos, model=0).notnull().values))


def first_train_example(cube: xr.DataArray, split_pos: int = 0) -> int:
    return int(np.argmax(cube["in_train"].isel(split=split_pos).values))


def with_value(cube: xr.DataArray, split_pos: int, example_pos: int, model_pos, value):
    values = cube.values.copy()
    values[split_pos, example_pos, model_pos] = value
    return cube.copy(data=values)


def assert_cvstats_error(info, error):
    """The raised error is cvstats' own and a built-in ValueError/TypeError."""
    assert isinstance(info.value, CvstatsError)
    assert isinstance(info.value, ValueError | TypeError)
    assert type(info.value) is error


# ---------------------------------------------------------------------------
# bad cubes; every case is one test parametrized over the functions taking a cube
# ---------------------------------------------------------------------------


def _bad(case: str, cube: xr.DataArray) -> xr.DataArray:
    if case == "missing model dim":
        return cube.rename(model="learner")
    if case == "dims out of order":
        return cube.transpose("example", "split", "model")
    if case == "infinite loss":
        return with_value(cube, 0, first_test_example(cube), 0, np.inf)
    if case == "NaN pattern differs between models":
        return with_value(cube, 0, first_test_example(cube), 1, np.nan)
    if case == "loss on a training example":
        return with_value(cube, 0, first_train_example(cube), slice(None), 0.5)
    if case == "NaN on a test example of every model":
        return with_value(cube, 0, first_test_example(cube), slice(None), np.nan)
    if case == "duplicated split labels":
        return cube.assign_coords(split=np.zeros(cube.sizes["split"], dtype=np.int64))
    if case == "duplicated example labels":
        labels = cube.example.values.copy()
        labels[1] = labels[0]
        return cube.assign_coords(example=labels)
    if case == "non-numeric losses":
        return cube.astype(str)
    if case == "integer losses":
        return cube.fillna(0).astype(np.int64)
    raise AssertionError(case)


def _raises_cube_error(func: str, case: str, match: str, tmp_path) -> None:
    """``func`` (of CUBE_FUNCTIONS, or "compare(formula)") on the bad cube ``case`` raises."""
    name = func if func in METHODS else "resampled_t"
    bad = _bad(case, cube_for(name))
    call = _compare_formula if func == "compare(formula)" else CUBE_FUNCTIONS[func]
    with pytest.raises(CubeError, match=match):
        call(bad, tmp_path)


@pytest.mark.parametrize("func", list(CUBE_FUNCTIONS))
def test_missing_dim(func, tmp_path):
    bad = _bad("missing model dim", cube_for("resampled_t"))
    with pytest.raises(CubeError, match=r"lacks the dim\(s\) \['model'\].*cube\.rename") as info:
        CUBE_FUNCTIONS[func](bad, tmp_path)
    assert_cvstats_error(info, CubeError)


@pytest.mark.parametrize("func", ["contrasts", "pairwise", "compare(formula)"])
def test_missing_model_dim_in_formula_functions(func):
    bad = _bad("missing model dim", nb_cube())
    call = {
        "contrasts": lambda: cvstats.contrasts("loss ~ model", bad),
        "pairwise": lambda: cvstats.pairwise(bad),
        "compare(formula)": lambda: cvstats.compare("loss ~ model", bad),
    }[func]
    with pytest.raises(CubeError, match=r"has no `model` dim.*\['split', 'example', 'learner'\]"):
        call()


@pytest.mark.parametrize("func", [*CUBE_FUNCTIONS, "compare(formula)"])
def test_dims_out_of_order(func, tmp_path):
    _raises_cube_error(
        func, "dims out of order", r"must end with \[.*\]; fix with cube\.transpose", tmp_path
    )


@pytest.mark.parametrize("func", [f for f in CUBE_FUNCTIONS if f != "compare(cube)"])
def test_not_a_dataarray(func, tmp_path):
    with pytest.raises(CubeError, match="must be an xarray.DataArray, got ndarray.*from_arrays"):
        CUBE_FUNCTIONS[func](np.ones((3, 4, 2)), tmp_path)


@pytest.mark.parametrize(
    ("func", "match"),
    [
        ("contrasts", "`data` must be a cube .* got ndarray"),
        ("pairwise", "`data` must be a cube .* got ndarray"),
        ("compare(formula)", "`data` must be a cube .* got ndarray"),
        ("compare(no data)", r"`data` is required with a formula: compare\(formula, data\)"),
        ("compare(array)", r"`formula` must be a str \(with `data`\) or a cube, got ndarray"),
    ],
)
def test_not_a_cube_in_formula_functions(func, match):
    arr = np.ones((3, 4, 2))
    call = {
        "contrasts": lambda: cvstats.contrasts("loss ~ model", arr),
        "pairwise": lambda: cvstats.pairwise(arr),
        "compare(formula)": lambda: cvstats.compare("loss ~ model", arr),
        "compare(no data)": lambda: cvstats.compare("loss ~ model"),
        "compare(array)": lambda: cvstats.compare(arr),
    }[func]
    with pytest.raises(CvstatsTypeError, match=match) as info:
        call()
    assert isinstance(info.value, TypeError)


def test_from_arrays_wrong_dims():
    with pytest.raises(CubeError, match=r"has 3 dims but 4 are expected \('dataset', 'split'"):
        cvstats.from_arrays(np.ones((2, 5, 1)), n_train=2, extra_dims=["dataset"])
    with pytest.raises(CubeError, match=r"`test_mask` has shape \(3, 5\); expected \(2, 5\)"):
        cvstats.from_arrays(np.ones((2, 5, 1)), np.ones((3, 5), dtype=bool), n_train=2)


def test_from_frame_missing_extra_dim_column():
    df = pd.DataFrame({"split": [0, 0], "example": [0, 1], "model": "a", "loss": [0.1, 0.2]})
    with pytest.raises(CubeError, match=r"lacks the column\(s\) \['dataset'\]; it has \['split'"):
        cvstats.from_frame(df, n_train=1, extra_dims=["dataset"])


# --- NaN pattern inconsistent with the design --------------------------------


@pytest.mark.parametrize("func", [*CUBE_FUNCTIONS, "compare(formula)"])
def test_loss_on_a_training_example(func, tmp_path):
    _raises_cube_error(
        func,
        "loss on a training example",
        r"losses are present for training examples \(split 0",
        tmp_path,
    )


@pytest.mark.parametrize("func", ["validate", "save", "resampled_t", "conservative_z"])
def test_nan_on_a_test_example(func, tmp_path):
    # the example is tested in no model: split 0 has one test example fewer than
    # the design's n2 (the NaN pattern is the source of truth; the sizes must agree)
    bad = _bad("NaN on a test example of every model", nb_cube())
    with pytest.raises(CubeError, match="block 'main' has splits with different test sizes"):
        CUBE_FUNCTIONS[func](bad, tmp_path)


def test_from_arrays_nan_loss_on_a_test_example_of_the_mask():
    d = designs.resampled(20, 4, J=3, seed=0)
    losses = np.ones((3, 20, 1))
    losses[1, int(np.argmax(d.test.values[1])), 0] = np.nan
    with pytest.raises(CubeError, match=r"1 test example\(s\) have a NaN .*first at index \[1, "):
        cvstats.from_arrays(losses, d.test.values, n_train=16)


def test_from_arrays_test_mask_meeting_the_design_training_set():
    d = designs.resampled(20, 4, J=3, seed=0)
    mask = d.test.values.copy()
    mask[0, int(np.argmax(d.train.values[0]))] = True  # a training example tested ...
    mask[0, int(np.argmax(d.test.values[0]))] = False  # ... instead of a test example (same n2)
    with pytest.raises(CubeError, match=r"`test_mask` .* training set .*split 0"):
        cvstats.from_arrays(np.ones((3, 20, 1)), mask, design=d)


def test_collect_design_whose_test_set_meets_its_training_set():
    X = np.arange(30.0)[:, None]
    y = np.arange(30.0)
    d = designs.resampled(30, 5, J=2, seed=0)
    overlap = d.copy(deep=True)
    overlap["train"][0, int(np.argmax(d.test.values[0]))] = True
    overlap = overlap.assign_coords(n_train=("split", overlap.train.sum("example").values))

    def mean_learner(X_train, y_train, X_test):
        return np.full(len(X_test), y_train.mean())

    with pytest.raises(CubeError, match=r"losses are present for training examples \(split 0"):
        cvstats.collect({"mean": mean_learner}, X, y, overlap, loss="squared", progress=False)


# --- infinite, non-numeric losses ---------------------------------------------


@pytest.mark.parametrize("func", [*CUBE_FUNCTIONS, "compare(formula)"])
def test_infinite_loss(func, tmp_path):
    _raises_cube_error(
        func, "infinite loss", r"infinite loss\(es\) \(first at split 0.*Clip or fix", tmp_path
    )


def test_from_arrays_infinite_loss_without_mask():
    losses = np.ones((2, 5, 1))
    losses[1, 3, 0] = np.inf
    with pytest.raises(CubeError, match=r"1 infinite loss\(es\) \(first at split 1, example 3"):
        cvstats.from_arrays(losses, n_train=2)


@pytest.mark.parametrize("func", [*CUBE_FUNCTIONS])
def test_non_numeric_losses(func, tmp_path):
    name = func if func in METHODS else "resampled_t"
    with pytest.raises(CubeError, match=r"non-numeric dtype <U.*after mapping the values"):
        CUBE_FUNCTIONS[func](_bad("non-numeric losses", cube_for(name)), tmp_path)


@pytest.mark.parametrize("func", ["validate", "save", "resampled_t", "mcnemar"])
def test_integer_losses(func, tmp_path):
    name = func if func in METHODS else "resampled_t"
    with pytest.raises(CubeError, match=r"floating point .*int64; convert with cube\.astype"):
        CUBE_FUNCTIONS[func](_bad("integer losses", cube_for(name)), tmp_path)


@pytest.mark.parametrize(
    "losses",
    [
        np.array([[["a"]], [["b"]]]),
        np.array([[[1.0]], [[2.0]]], dtype=object),
        np.ones((2, 1, 1), dtype=complex),
        np.ones((2, 1, 1), dtype=bool),
    ],
    ids=["str", "object", "complex", "bool"],
)
def test_from_arrays_non_numeric_losses(losses):
    with pytest.raises(
        CubeError, match=f"`losses` must be real numbers, got dtype {losses.dtype}"
    ):
        cvstats.from_arrays(losses, n_train=1)


def test_from_frame_non_numeric_losses():
    df = pd.DataFrame({"split": [0, 0], "example": [0, 1], "model": "a", "loss": ["x", "y"]})
    with pytest.raises(CubeError, match="column 'loss' must hold numbers, got dtype"):
        cvstats.from_frame(df, n_train=1)


def test_collect_loss_returning_non_numbers():
    X, y = np.zeros((20, 1)), np.arange(20) % 2

    def predict_zero(X_train, y_train, X_test):
        return np.zeros(len(X_test), dtype=int)

    def words(y_true, y_pred):
        return np.array(["wrong"] * len(y_true))

    with pytest.raises(CubeError, match="loss 'words' returned values that are not numbers"):
        cvstats.collect(
            {"zero": predict_zero}, X, y, designs.kfold(20, 2, seed=0), loss=words, progress=False
        )


# --- fewer than 2 splits where a variance is needed ---------------------------


@pytest.mark.parametrize("name", ["resampled_t", "corrected_resampled_t"])
def test_one_split_where_a_variance_over_splits_is_needed(name):
    cube = holdout_cube()
    with pytest.raises(DesignError, match=r"at least 2 splits in the main block .* has 1.*J >= 2"):
        run_method(name, cube)


def test_compare_runs_a_method_on_too_few_splits():
    with pytest.raises(DesignError, match="at least 2 splits in the main block"):
        cvstats.compare("zero_one ~ model", holdout_cube(), methods=["resampled_t"])


@pytest.mark.parametrize("name", ["bootstrap_t", "corrected_bootstrap_t"])
def test_one_bootstrap_replicate(name):
    cube = nb_cube()
    one = cube.isel(split=cube.replicate.values <= 0)
    with pytest.raises(DesignError, match=r"at least 2 bootstrap replicates .* has 1.*R >= 2"):
        run_method(name, one)


def test_holdout_with_one_test_example():
    d = designs.holdout(20, 1, seed=0)
    cube = cvstats.from_arrays(np.arange(20.0)[None, :, None], design=d)
    with pytest.raises(DesignError, match="hold-out t needs at least 2 test examples"):
        cvstats.holdout_t(cube)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: designs.bootstrap(40, 4, R=1), "`R` must be at least 2, got 1"),
        (lambda: designs.nadeau_bengio(40, 4, R=1), "`R` must be at least 2, got 1"),
        (lambda: designs.conservative_z(40, 4, M=0), "`M` must be at least 1, got 0"),
        (lambda: designs.kfold(40, 1), "`K` must be at least 2, got 1"),
    ],
)
def test_designs_with_too_few_splits(call, match):
    with pytest.raises(DesignError, match=match):
        call()


# --- zero variance: a ZeroVarianceWarning naming the variance and why ----------

# method -> (which variance, why it is zero), as the warning must say
ZERO_VARIANCE = {
    "resampled_t": (r"resampled t: the sample variance of the J = 3 split means", r"all J split"),
    "corrected_resampled_t": (
        r"corrected resampled t: the sample variance of the J = 3 split means",
        r"all J split means are equal",
    ),
    "conservative_z": (
        r"conservative Z: σ̂²_cz over the M = 2 half-splits",
        r"μ̂_\(m\) equals μ̂\^c_\(m\) for every half-split m",
    ),
    "bootstrap_t": (
        r"bootstrap: the sample variance σ̌² of the R = 2 replicate estimates",
        r"all R replicate means μ̌_r are equal",
    ),
    "corrected_bootstrap_t": (
        r"corrected bootstrap: the sample variance σ̌² of the R = 2 replicate estimates",
        r"all R replicate means",
    ),
    "dietterich_5x2cv": (
        r"5x2cv t \(dietterich\): the 5x2cv variance σ̂²_Diet",
        r"μ̃_\(m\) equals μ̃\^c_\(m\) for every m = 1\.\.5",
    ),
    "dietterich_5x2cv_t4": (
        r"5x2cv t \(t4\): the 5x2cv variance σ̂²_Diet",
        r"for every m = 2\.\.5",
    ),
    "dietterich_5x2cv_t5": (
        r"5x2cv t \(t5\): the 5x2cv variance σ̂²_Diet",
        r"for every m = 1\.\.5",
    ),
    "combined_5x2cv_f": (
        r"Alpaydın's F: the denominator 2 Σ_m s_m²",
        r"μ̃_\(m\) equals μ̃\^c_\(m\) for every m",
    ),
    "kfold_t": (r"k-fold t: the sample variance of the K = 4 fold means", r"all K fold means"),
    "corrected_repeated_kfold_t": (
        r"corrected repeated k-fold t: the sample variance of the r·k = 8 fold means",
        r"all fold means are equal",
    ),
    "holdout_t": (
        r"hold-out t: the sample variance S_L² of the test losses",
        r"all test losses are equal",
    ),
}


def _one_flat_model(cube: xr.DataArray) -> xr.DataArray:
    """Model 'a' has the constant loss 1 on every test example; model 'b' is untouched."""
    values = cube.values.copy()
    values[..., 0] = np.where(np.isnan(values[..., 0]), np.nan, 1.0)
    return cube.copy(data=values)


@pytest.mark.parametrize("name", list(ZERO_VARIANCE))
def test_zero_variance_warns_and_names_the_variance(name):
    cube = _one_flat_model(cube_for(name))
    what, why = ZERO_VARIANCE[name]
    match = what + r" is zero in 1 of 2 batch element\(s\) \(.*" + why
    with pytest.warns(ZeroVarianceWarning, match=match):
        res = run_method(name, cube, mu0=0.0)
    # the flat model: estimate 1 != mu0, so the statistic is +inf and the p-value 0
    assert float(res.statistic.sel(model="a")) == np.inf
    assert float(res.pvalue.sel(model="a")) == 0.0
    # the other model is unaffected: finite, and equal to running it alone
    alone = run_method(name, cube.sel(model=["b"]))
    for field in ("estimate", "stderr", "statistic", "pvalue"):
        got = getattr(res, field).sel(model="b").values
        np.testing.assert_allclose(got, getattr(alone, field).sel(model="b").values, rtol=1e-13)
    assert np.isfinite(res.statistic.sel(model="b"))


@pytest.mark.parametrize("name", list(ZERO_VARIANCE))
def test_zero_variance_at_mu0_gives_nan_with_a_warning(name):
    cube = _one_flat_model(cube_for(name))
    with pytest.warns(ZeroVarianceWarning, match="nan where the estimate equals mu0"):
        res = run_method(name, cube, mu0=1.0)
    assert np.isnan(float(res.statistic.sel(model="a")))
    assert np.isnan(float(res.pvalue.sel(model="a")))


def _identical_classifiers() -> xr.DataArray:
    cube = holdout_cube()
    values = cube.values.copy()
    values[..., 1] = values[..., 0]
    return cube.copy(data=values)


def test_zero_variance_mcnemar_z():
    with pytest.warns(ZeroVarianceWarning, match=r"McNemar z: the number of discordant pairs"):
        res = cvstats.mcnemar(_identical_classifiers(), variant="z")
    assert np.isnan(res.statistic) and np.isnan(res.pvalue)


def test_zero_variance_mcnemar_corrected_is_nan_not_a_rejection():
    with pytest.warns(ZeroVarianceWarning, match=r"McNemar chi-square: the number of discord"):
        res = cvstats.mcnemar(_identical_classifiers(), variant="corrected")
    assert np.isnan(res.statistic) and np.isnan(res.pvalue)


def test_zero_variance_mcnemar_exact_warns_about_its_zero_stderr():
    with pytest.warns(ZeroVarianceWarning, match="discordant pairs n10 \\+ n01 is zero"):
        res = cvstats.mcnemar(_identical_classifiers(), variant="exact")
    assert res.pvalue == 1.0  # the exact p-value itself is right


def test_zero_variance_in_compare_warns_once_per_method():
    cube = _one_flat_model(nb_cube())
    with pytest.warns(ZeroVarianceWarning) as record:
        table = cvstats.compare("loss ~ 0 + model", cube)
    messages = [str(w.message) for w in record if w.category is ZeroVarianceWarning]
    assert len(messages) == len(table.results) == 9
    # each model's own level is an estimate, not a test, in the table; the methods' statistic
    flat = [float(res.statistic.sel(contrast="model[a]")) for res in table.results.values()]
    assert np.isinf(flat).all()


# --- n_test / n_train that do not fit the design -------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: designs.holdout(40, 40), r"`n_test` = 40 leaves no training example out of n"),
        (lambda: designs.holdout(40, 10, n_train=31), r"`n_train` \+ `n_test` = 31 \+ 10 excee"),
        (lambda: designs.kfold(3, 4), r"`K` = 4 folds need at least K examples, but n = 3"),
        (lambda: designs.bootstrap(40, 0), r"`n_test` must be at least 1, got 0"),
        (lambda: designs.conservative_z(40, 20), r"`n_test` = 20 must be < 20 .*smaller n_test"),
        (lambda: designs.nadeau_bengio(41, 20), r"floor\(n/2\) = 20 .*`n_test` = 20 must be"),
        (lambda: designs.five_by_two(3), r"`n` must be at least 4, got 3"),
        (lambda: designs.resampled(40, 4.0), r"`n_test` must be an int, got 4\.0 \(float\)"),
    ],
)
def test_design_sizes_that_do_not_fit(call, match):
    with pytest.raises(DesignError, match=match):
        call()


def test_validate_n_train_plus_n_test_above_n():
    cube = nb_cube().drop_vars("in_train").assign_attrs(n=39)
    with pytest.raises(CubeError, match=r"n_train \+ n_test = 40 > n = 39; fix `n_train`"):
        cvstats.validate(cube)


def test_validate_half_block_larger_than_half_the_data():
    cube = nb_cube().drop_vars("in_train")
    n_train = cube.n_train.values.copy()
    n_train[cube.block.values == "half"] = 17  # 17 + 4 > floor(40/2)
    with pytest.raises(CubeError, match=r"block 'half' has n_train \+ n_test above floor\(n/2\)"):
        cvstats.validate(cube.assign_coords(n_train=("split", n_train)))


@pytest.mark.parametrize(
    ("builder", "match"),
    [
        (
            lambda: cvstats.from_arrays(np.ones((2, 5, 1)), n_train=5),
            r"n_train >= n = 5 \(no example left to test\)",
        ),
        (
            lambda: cvstats.from_arrays(np.ones((2, 5, 1)), n_train=1, attrs={"n": 5}),
            r"n_train \+ n_test = 6 > n = 5",
        ),
        (
            lambda: cvstats.from_frame(
                pd.DataFrame({"split": 0, "example": [0, 1], "model": "a", "loss": [1.0, 2.0]}),
                n_train=1,
                attrs={"n": 2},
            ),
            r"n_train \+ n_test = 3 > n = 2",
        ),
    ],
    ids=["from_arrays n_train >= n", "from_arrays n_train + n_test > n", "from_frame"],
)
def test_constructors_sizes_that_do_not_fit(builder, match):
    with pytest.raises(CubeError, match=match):
        builder()


@pytest.mark.parametrize("name", ["corrected_resampled_t", "conservative_z", "kfold_t"])
@pytest.mark.parametrize("kwargs", [{"n2": 0}, {"n1": True}, {"n2": 2.5}])
def test_method_size_overrides_must_be_positive_ints(name, kwargs):
    (arg,) = kwargs
    with pytest.raises(ArgumentError, match=f"`{arg}` must be a positive int .*got {kwargs[arg]}"):
        run_method(name, cube_for(name), **kwargs)


def test_method_size_overrides_that_exceed_n():
    cube = nb_cube()  # n = 40
    with pytest.raises(ArgumentError, match=r"`n1` \+ `n2` = 1000 \+ 10 .* n = 40"):
        cvstats.corrected_resampled_t(cube, n1=1000, n2=10)


# --- mismatched models across splits --------------------------------------------


@pytest.mark.parametrize("func", [*CUBE_FUNCTIONS])
def test_nan_pattern_differs_between_models(func, tmp_path):
    name = func if func in METHODS else "resampled_t"
    bad = _bad("NaN pattern differs between models", cube_for(name))
    with pytest.raises(CubeError, match=r"NaN pattern differs between models at split 0, exa"):
        CUBE_FUNCTIONS[func](bad, tmp_path)


def test_from_arrays_nan_pattern_differs_between_models():
    losses = np.ones((2, 4, 2))
    losses[:, :2, :] = np.nan
    losses[1, 3, 1] = np.nan  # model 1 untested on example 3 of split 1
    with pytest.raises(CubeError, match="NaN pattern differs between models at split 1, exam"):
        cvstats.from_arrays(losses, n_train=1)


@pytest.mark.parametrize(
    ("case", "error", "match"),
    [
        ("NaN pattern differs between models", CubeError, "NaN pattern differs between models"),
        ("non-numeric losses", CubeError, "non-numeric dtype"),
        ("integer losses", CubeError, "must be floating point"),
    ],
)
def test_compare_validates_data_before_forming_contrasts(case, error, match):
    with pytest.raises(error, match=match):
        cvstats.compare("loss ~ model", _bad(case, nb_cube()))


@pytest.mark.parametrize("func", ["contrasts", "pairwise"])
@pytest.mark.parametrize(
    ("case", "match"),
    [
        ("infinite loss", "infinite loss"),
        ("NaN pattern differs between models", "NaN pattern differs between models"),
        ("loss on a training example", "losses are present for training examples"),
        ("duplicated split labels", "`split` coordinate has duplicated label"),
        ("duplicated example labels", "`example` coordinate has duplicated label"),
        ("dims out of order", "must end with"),
        ("non-numeric losses", "non-numeric dtype"),
        ("integer losses", "must be floating point"),
    ],
)
def test_contrasts_and_pairwise_validate_the_cube(func, case, match):
    bad = _bad(case, nb_cube())
    with pytest.raises(CubeError, match=match):
        if func == "contrasts":
            cvstats.contrasts("loss ~ model", bad)
        else:
            cvstats.pairwise(bad)


# --- McNemar on losses that are not 0/1 -----------------------------------------


def _squared_holdout() -> xr.DataArray:
    cube = holdout_cube()
    return cube.copy(data=np.where(cube.notnull(), cube.values * 2.5 + 0.1, np.nan))


def test_mcnemar_on_non_binary_losses_shows_the_values():
    with pytest.raises(CubeError, match=r"needs zero-one losses.*e\.g\. \[2\.6, .*use holdout_t"):
        cvstats.mcnemar(_squared_holdout())


def test_compare_mcnemar_on_non_binary_losses():
    # compare checks the models' own losses first (losses 2 and 1 differ by 1, too)
    with pytest.raises(CubeError, match="needs zero-one losses"):
        cvstats.compare("zero_one ~ model", _squared_holdout(), methods=["mcnemar"])


@pytest.mark.parametrize("values", [(2.0, 1.0), (0.5, 0.5)])
def test_compare_mcnemar_checks_the_losses_not_only_their_differences(values):
    cube = holdout_cube()
    losses = np.where(cube.notnull(), np.asarray(values), np.nan)
    with pytest.raises(CubeError, match="needs zero-one losses"):
        cvstats.compare("zero_one ~ model", cube.copy(data=losses), methods=["mcnemar"])


def test_mcnemar_on_a_non_difference_contrast_shows_the_values():
    diff = cvstats.contrasts("zero_one ~ C(model, contr.sum)", holdout_cube())
    with pytest.raises(CubeError, match=r"values -1, 0, 1.*e\.g\. \[0\.5"):
        cvstats.mcnemar(diff)


# --- formulas naming what does not exist -----------------------------------------


@pytest.mark.parametrize(
    ("formula", "match"),
    [
        ("loss ~ model + learner", r"uses \['learner'\]; the only variable is `model`"),
        (
            "loss ~ C(model, contr.treatment('xgb'))",
            r"'xgb'.*not among the provided levels.*The models .* are \['a', 'b'\]",
        ),
        ("zero_one ~ model", "names the loss 'zero_one' but the cube is named 'loss'"),
    ],
    ids=["variable", "model level", "loss"],
)
@pytest.mark.parametrize("func", ["compare", "contrast_matrix"])
def test_formula_naming_what_does_not_exist(func, formula, match):
    call = cvstats.compare if func == "compare" else cvstats.contrast_matrix
    with pytest.raises(FormulaError, match=match):
        call(formula, nb_cube())


def test_compare_formula_naming_a_loss_absent_from_a_dataset():
    ds = xr.Dataset({"loss": nb_cube()})
    with pytest.raises(FormulaError, match=r"names the loss 'squared' but .* \['loss'\]"):
        cvstats.compare("squared ~ model", ds)


def test_mcnemar_models_that_do_not_exist():
    with pytest.raises(ArgumentError, match=r"among the cube's models \['a', 'b'\]"):
        cvstats.mcnemar(holdout_cube(), models=["a", "xgb"])


# --- alpha outside (0, 1) ---------------------------------------------------------

BAD_ALPHAS = [0.0, 1.0, -0.05, 1.5, float("nan"), "0.05", True, None]
ALPHA_IDS = ["0", "1", "negative", "above 1", "nan", "str", "bool", "None"]


def _alpha_match(alpha):
    if isinstance(alpha, float):
        return re.escape(f"`alpha` must be in the open interval (0, 1), got {alpha!r}.")
    kind = type(alpha).__name__
    return re.escape(f"`alpha` must be a real number in (0, 1), got {alpha!r} of type {kind}.")


@pytest.mark.parametrize("alpha", BAD_ALPHAS, ids=ALPHA_IDS)
@pytest.mark.parametrize("name", list(METHODS))
def test_alpha_outside_the_unit_interval(name, alpha):
    with pytest.raises(ArgumentError, match=_alpha_match(alpha)):
        run_method(name, cube_for(name), alpha=alpha)


@pytest.mark.parametrize("alpha", BAD_ALPHAS, ids=ALPHA_IDS)
def test_alpha_outside_the_unit_interval_in_compare(alpha):
    with pytest.raises(ArgumentError, match=_alpha_match(alpha)):
        cvstats.compare("loss ~ model", nb_cube(), alpha=alpha)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 2.0])
@pytest.mark.parametrize("call", ["conf_int", "to_frame", "summary"])
def test_alpha_outside_the_unit_interval_in_results(call, alpha):
    res = cvstats.corrected_resampled_t(nb_cube())
    with pytest.raises(ArgumentError, match=r"`alpha` must be in the open interval \(0, 1\)"):
        getattr(res, call)(alpha=alpha)


# --- duplicated labels -------------------------------------------------------------


@pytest.mark.parametrize("func", [*CUBE_FUNCTIONS, "compare(formula)"])
@pytest.mark.parametrize("dim", ["split", "example"])
def test_duplicated_labels(func, dim, tmp_path):
    name = func if func in METHODS else "resampled_t"
    if dim == "split" and name in ("holdout_t", "mcnemar"):
        pytest.skip("a hold-out cube has a single split")
    bad = _bad(f"duplicated {dim} labels", cube_for(name))
    call = _compare_formula if func == "compare(formula)" else CUBE_FUNCTIONS[func]
    with pytest.raises(CubeError, match=rf"the `{dim}` coordinate has duplicated label 0;"):
        call(bad, tmp_path)


def test_from_arrays_duplicated_labels():
    with pytest.raises(CubeError, match="`example` coordinate has duplicated label 0"):
        cvstats.from_arrays(np.ones((2, 3, 1)), n_train=1, examples=[0, 0, 1])
    with pytest.raises(CubeError, match="`model` coordinate has duplicated label 'a'"):
        cvstats.from_arrays(np.ones((2, 3, 2)), n_train=1, models=["a", "a"])


def test_collect_design_with_duplicated_split_labels():
    d = designs.resampled(20, 4, J=3, seed=0).assign_coords(split=[0, 0, 1])

    def zero(X_train, y_train, X_test):
        return np.zeros(len(X_test))

    with pytest.raises(CubeError, match="`split` coordinate has duplicated label 0"):
        cvstats.collect({"z": zero}, np.zeros((20, 1)), np.zeros(20), d, progress=False)


@pytest.mark.parametrize("labels", [(0.5, 1.5), (0.2, 0.7)])
def test_from_frame_non_integer_split_labels(labels):
    df = pd.DataFrame(
        {
            "split": np.repeat(labels, 2),
            "example": [0, 1, 2, 3],
            "model": "a",
            "loss": [0.1, 0.2, 0.3, 0.4],
        }
    )
    with pytest.raises(CubeError, match=rf"must hold int split labels.*{labels[0]}"):
        cvstats.from_frame(df, n_train=2)


# --- files written by other tools -------------------------------------------------


def test_open_netcdf3_written_by_plain_xarray(tmp_path):
    path = tmp_path / "nc3.nc"
    nb_cube().drop_vars("in_train").to_dataset().to_netcdf(path, engine="scipy")
    with pytest.raises(StorageError, match=r"cannot read .* as netCDF-4.*write it again"):
        cvstats.open_cube(path)


def test_open_dataarray_to_netcdf_of_a_cvstats_cube(tmp_path):
    # the cube's own attrs (schema_version, ...) go to the variable, not the file
    cvstats.save(nb_cube(), tmp_path / "cube.nc")
    cube = cvstats.open_cube(tmp_path / "cube.nc")
    assert cube.attrs["schema_version"] == 1
    cube.to_netcdf(tmp_path / "plain.nc")
    with pytest.raises(StorageError, match=r"no 'schema_version' attribute.*`cvstats.save`"):
        cvstats.open_cube(tmp_path / "plain.nc")


def test_open_file_claiming_to_be_cvstats_but_breaking_the_schema(tmp_path):
    path = tmp_path / "fake.nc"
    bad = _bad("loss on a training example", nb_cube())
    dataset = bad.to_dataset()
    dataset.attrs = {"schema_version": 1, "cvstats_variable": "loss"}
    dataset.to_netcdf(path, engine="h5netcdf")
    with pytest.raises(CubeError, match=r"holds a cube that breaks the schema: losses are pre"):
        cvstats.open_cube(path)


def test_open_cvstats_file_rewritten_by_plain_xarray(tmp_path):
    cvstats.save(nb_cube(), tmp_path / "cube.nc")
    original = cvstats.open_cube(tmp_path / "cube.nc")
    with xr.open_dataset(tmp_path / "cube.nc") as ds:
        ds.load().to_netcdf(tmp_path / "rewritten.nc")
    xr.testing.assert_identical(cvstats.open_cube(tmp_path / "rewritten.nc"), original)


# --- score cubes (issue 14, point 5) --------------------------------------------

SPLIT_MEAN_METHODS = [m for m in METHODS if m not in ("holdout_t", "mcnemar")]


@functools.cache
def score_for(name: str) -> xr.DataArray:
    """The score cube of a method's loss cube: its split means (greater_is_better = 0)."""
    return cvstats.cube.scores_from_losses(cube_for(name))


SCORE_FUNCTIONS = {
    "validate": lambda cube, tmp_path: cvstats.validate(cube),
    "save": _save,
    "compare(cube)": _compare_cube,
    "compare(formula)": _compare_formula,
    **{name: (lambda cube, tmp_path, name=name: run_method(name, cube)) for name in METHODS},
}


def _bad_score(case: str, cube: xr.DataArray) -> xr.DataArray:
    values = np.asarray(cube.values).copy()
    if case == "NaN score":
        values[0, 0] = np.nan
        return cube.copy(data=values)
    if case == "infinite score":
        values[0, 1] = np.inf
        return cube.copy(data=values)
    if case == "example dim":
        return cube.expand_dims(example=[0], axis=-2)
    if case == "greater_is_better missing":
        return cube.drop_attrs().assign_attrs(
            {k: v for k, v in cube.attrs.items() if k != "greater_is_better"}
        )
    if case in ("greater_is_better 2", "greater_is_better 'yes'", "greater_is_better 1.0"):
        return cube.assign_attrs(greater_is_better={"2": 2, "'yes'": "yes", "1.0": 1.0}[case[18:]])
    if case == "n_test missing":
        return cube.drop_vars("n_test")
    if case == "n_test 0":
        return cube.assign_coords(
            n_test=("split", np.where(np.arange(values.shape[0]) == 0, 0, 4))
        )
    if case == "n_test -3":
        return cube.assign_coords(n_test=cube["n_test"].copy(data=-3 * np.ones_like(cube.n_test)))
    if case == "n_test float":
        return cube.assign_coords(n_test=cube["n_test"].astype(float))
    if case == "AUC above 1":
        values = np.clip(values, 0.0, 1.0)
        values[0, 0] = 1.5
        return cube.copy(data=values).assign_attrs(metric="roc_auc", greater_is_better=1)
    if case == "duplicated split labels":
        return cube.assign_coords(split=np.zeros(cube.sizes["split"], dtype=np.int64))
    if case == "no model":
        return cube.isel(model=[])
    raise AssertionError(case)


SCORE_CASES = {
    "NaN score": r"the score cube holds 1 NaN score\(s\) \(first at split 0, model 'a'\);.*"
    r"drop the split for every model",
    "infinite score": r"holds 1 infinite score\(s\) \(first at split 0, model 'b'\)",
    "example dim": r"has an `example` dim but carries the score-cube attr `greater_is_better`.*"
    r"from_scores",
    "greater_is_better missing": r"lacks the attr `greater_is_better`.*never guessed",
    "greater_is_better 2": r"attr `greater_is_better` must be 1 .* or 0 .*, got 2;",
    "greater_is_better 'yes'": r"attr `greater_is_better` must be 1 .*, got 'yes';",
    "greater_is_better 1.0": r"attr `greater_is_better` must be 1 .*, got 1.0;",
    "n_test missing": r"lacks the coordinate `n_test`.*assign_coords\(n_test=",
    "n_test 0": r"split 0 in block 'main' has n_test = 0 < 1",
    "n_test -3": r"split 0 in block '\w+' has n_test = -3 < 1",
    "n_test float": r"coordinate `n_test` must hold ints",
    "AUC above 1": r"metric is 'roc_auc', a scikit-learn scorer whose values lie in \[0, 1\], "
    r"but it holds 1 value\(s\) outside.*first 1.5.*divide them by 100",
    "duplicated split labels": r"the `split` coordinate has duplicated label 0;",
    "no model": r"dim 'model' has length 0",
}


@pytest.mark.parametrize("func", list(SCORE_FUNCTIONS))
@pytest.mark.parametrize("case", list(SCORE_CASES))
def test_bad_score_cubes(func, case, tmp_path):
    name = func if func in METHODS else "resampled_t"
    if name in ("holdout_t", "mcnemar"):  # per-example methods: their own refusal
        bad = _bad_score(case, score_for("resampled_t"))
        if case in ("example dim", "no model"):
            pytest.skip("not a score cube any more, or no model to refuse")
        with pytest.raises(CubeError, match="needs per-example losses, but got a score cube"):
            SCORE_FUNCTIONS[func](bad, tmp_path)
        return
    if case == "no model" and func == "compare(formula)":
        pytest.skip("a formula needs a model to name")
    bad = _bad_score(case, score_for(name))
    with pytest.raises(CubeError, match=SCORE_CASES[case]) as info:
        SCORE_FUNCTIONS[func](bad, tmp_path)
    assert_cvstats_error(info, CubeError)
    assert not (tmp_path / "cube.nc").exists()


def test_score_cube_of_one_model_is_valid_and_pairwise_needs_two():
    one = score_for("kfold_t").isel(model=[0])
    cvstats.validate(one)
    cvstats.kfold_t(one, mu0=0.5)  # per-model inference: is the mean loss 0.5?
    with pytest.raises(ArgumentError, match="at least two distinct models"):
        cvstats.pairwise(one)


# --- time-ordered splits (nested training sets) ----------------------------------


@functools.cache
def time_series_cube() -> xr.DataArray:
    from sklearn.model_selection import TimeSeriesSplit

    d = designs.from_splitter(TimeSeriesSplit(4), n=40)
    losses = np.random.default_rng(4).random((3, d.sizes["split"], 40, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], extra_dims=["dataset"])


@pytest.mark.parametrize("name", MULTI_SPLIT)
def test_nested_training_sets_are_refused_by_the_methods_that_pool_splits(name):
    bad = cube_for(name).assign_attrs(nested_train=1)
    with pytest.raises(DesignError, match=rf"^{name} pools the splits") as info:
        run_method(name, bad)
    assert_cvstats_error(info, DesignError)
    assert re.search(
        r"training sets are nested \(attr `nested_train` = 1.*holdout_t\(cube, "
        r"split=",
        str(info.value),
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda c: cvstats.fit_rho(c),
        lambda c: cvstats.fit_lemma1(
            cvstats.cube.scores_from_losses(c).sel(model="a"), "dataset", "split"
        ),
        lambda c: cvstats.compare("loss ~ model", c, methods=["resampled_t"]),
    ],
    ids=["fit_rho", "fit_lemma1", "compare(methods=...)"],
)
def test_nested_training_sets_are_refused_by_the_fits_and_named_methods(call):
    with pytest.raises(DesignError, match="training sets are nested"):
        call(time_series_cube())


def test_compare_with_every_method_refused_raises_with_the_notes():
    # a score cube: the pooled methods refuse the nested training sets, and what takes
    # time-ordered splits over their test examples needs per-example losses
    scores = cvstats.cube.scores_from_losses(time_series_cube())
    with pytest.raises(ArgumentError, match="no method applies.*resampled_t left out: .*nested"):
        cvstats.compare("loss ~ model", scores)


def test_hold_out_methods_run_on_one_split_of_nested_training_sets():
    cube = time_series_cube()
    cvstats.holdout_t(cube, split=3)
    assert list(cvstats.compare("loss ~ model", cube.sel(split=[3])).results) == ["holdout_t"]


# --- issue 29: groups, time order and fixed models' answers ------------------------


def eval_table(n_questions: int = 40, per_cluster: int = 10) -> pd.DataFrame:
    """Two models' 0/1 answers, 2 generations, clusters of ``per_cluster`` questions."""
    rng = np.random.default_rng(29)
    rows = [
        (f"q{q}", m, g, f"doc{q // per_cluster}", int(rng.random() < 0.6))
        for q in range(n_questions)
        for m in ("m1", "m2")
        for g in range(2)
    ]
    return pd.DataFrame(rows, columns=["qid", "llm", "gen", "doc", "ok"])


def read_evals(table: pd.DataFrame) -> xr.DataArray:
    columns = {"question": "qid", "model": "llm", "score": "ok", "generation": "gen"}
    return cvstats.from_evals(table, **columns, cluster="doc", greater_is_better=True)


def _one_group_holdout() -> None:
    d = designs.holdout(30, 12, seed=29)
    cube = cvstats.from_arrays(np.random.default_rng(29).random((1, 30, 2)), design=d)
    with pytest.warns(cvstats.CvstatsWarning, match="in both the training and the test set"):
        cvstats.holdout_t(cube.assign_coords(group=("example", ["all"] * 30)))


def _unsorted_time() -> None:
    cube = time_series_cube().isel(dataset=0)
    stamps = np.datetime64("2026-01-01") + np.arange(40).astype("timedelta64[D]")
    swapped = stamps[[*range(20), 21, 20, *range(22, 40)]]  # days 21 and 20 swapped
    cvstats.diebold_mariano(cube.assign_coords(example=swapped))


ISSUE29_CASES = {
    "a group missing": (
        lambda: cvstats.from_arrays(
            np.random.default_rng(0).random((4, 12, 1)),
            design=designs.kfold(12, 4, seed=0),
            groups=[*range(5), None, *range(6, 12)],
        ),
        CubeError,
        r"`groups` has 1 missing group label.*position 5.*exactly one group",
    ),
    "one group": (_one_group_holdout, DesignError, r"at least 10 groups.*G = 1 group\(s\)"),
    "unsorted time": (_unsorted_time, DesignError, r"time stamps do not increase.*sortby"),
    "generations of unequal count": (
        lambda: read_evals(eval_table().iloc[1:]),
        CubeError,
        r"generations of unequal count.*has 1 answer\(s\) but .* has 2",
    ),
    "a model missing answers": (
        lambda: read_evals(eval_table().query("not (llm == 'm2' and qid == 'q7')")),
        CubeError,
        r"model 'm2' has no answer to question 'q7'",
    ),
    "too few clusters": (
        lambda: cvstats.eval_difference(read_evals(eval_table(per_cluster=5))),
        DesignError,
        r"at least 10 clusters .*Cameron & Miller 2015.*G = 8 cluster\(s\); add clusters.*"
        r"drop `cluster=`",
    ),
}


@pytest.mark.parametrize("case", list(ISSUE29_CASES))
def test_issue29_bad_inputs(case):
    call, error, match = ISSUE29_CASES[case]
    with pytest.raises(error, match=match) as info:
        call()
    assert_cvstats_error(info, error)


# ---------------------------------------------------------------------------
# no function mutates its input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(METHODS))
def test_methods_do_not_mutate_the_cube(name):
    cube = cube_for(name).copy(deep=True)
    cube.attrs["extra"] = [1, 2]  # a mutable attr
    before = copy.deepcopy(cube)
    run_method(name, cube, alpha=0.1)
    xr.testing.assert_identical(cube, before)
    assert cube.attrs == before.attrs
    np.testing.assert_array_equal(cube.in_train.values, before.in_train.values)


@pytest.mark.parametrize("name", list(METHODS))
def test_methods_do_not_mutate_a_contrast_cube(name):
    diff = cvstats.pairwise(cube_for(name))
    before = diff.copy(deep=True)
    run_method(name, diff)
    xr.testing.assert_identical(diff, before)


@pytest.mark.parametrize("formula", ["loss ~ model", "loss ~ C(model, contr.sum)"])
def test_compare_contrasts_pairwise_do_not_mutate(formula):
    cube = nb_cube().copy(deep=True)
    before = cube.copy(deep=True)
    cvstats.compare(formula, cube)
    cvstats.compare(cvstats.pairwise(cube), methods=["conservative_z"])
    cvstats.contrasts(formula, cube)
    cvstats.contrast_matrix(formula, cube)
    cvstats.pairwise(cube, models=["b", "a"])
    xr.testing.assert_identical(cube, before)
    ds = xr.Dataset({"loss": cube})
    ds_before = ds.copy(deep=True)
    cvstats.compare(formula, ds, methods=["resampled_t"])
    xr.testing.assert_identical(ds, ds_before)


def test_validate_save_open_do_not_mutate(tmp_path):
    cube = nb_cube().copy(deep=True)
    before = cube.copy(deep=True)
    cvstats.validate(cube)
    cvstats.save(cube, tmp_path / "c.nc")
    xr.testing.assert_identical(cube, before)
    assert cube.encoding == before.encoding


def test_constructors_do_not_mutate_their_inputs():
    d = designs.nadeau_bengio(40, 4, J=3, M=2, R=2, seed=0)
    d_before = d.copy(deep=True)
    losses = np.random.default_rng(0).random((d.sizes["split"], 40, 2))
    losses_before = losses.copy()
    cube = cvstats.from_arrays(losses, design=d)
    np.testing.assert_array_equal(losses, losses_before)
    xr.testing.assert_identical(d, d_before)
    r = designs.resampled(20, 4, J=3, seed=0)
    mask = r.test.values.copy()
    dense = np.ones((3, 20, 1))
    cvstats.from_arrays(dense, mask, n_train=16)
    np.testing.assert_array_equal(mask, r.test.values)
    np.testing.assert_array_equal(dense, 1.0)  # off-mask values not overwritten in place
    df = cube.drop_vars("in_train").to_dataframe().dropna(subset=["loss"]).reset_index()
    df_before = df.copy(deep=True)
    cvstats.from_frame(df, attrs=d.attrs)
    pd.testing.assert_frame_equal(df, df_before)


def test_collect_does_not_mutate_its_inputs():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    d = designs.resampled(30, 5, J=2, seed=0)
    X0, y0, d0 = X.copy(), y.copy(), d.copy(deep=True)

    def mean_learner(X_train, y_train, X_test):
        return np.full(len(X_test), y_train.mean())

    cvstats.collect({"mean": mean_learner}, X, y, d, loss="squared", progress=False)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    xr.testing.assert_identical(d, d0)


# ---------------------------------------------------------------------------
# no partial result after an error
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(METHODS))
def test_failed_call_leaves_the_cube_unchanged(name):
    cube = cube_for(name).copy(deep=True)
    before = cube.copy(deep=True)
    with pytest.raises(ArgumentError):
        run_method(name, cube, alpha=2.0)
    if name != "combined_5x2cv_f":  # two-sided by nature: no `alternative`
        with pytest.raises(ArgumentError):
            run_method(name, cube, alternative="both")
    xr.testing.assert_identical(cube, before)


def test_compare_raises_rather_than_returning_the_methods_that_ran():
    # the first method runs, the second needs a block the cube lacks
    cube = nb_cube().isel(split=nb_cube().block.values != "5x2")
    with pytest.raises(DesignError, match="'5x2' block"):
        cvstats.compare("loss ~ model", cube, methods=["resampled_t", "dietterich_5x2cv"])
    with pytest.raises(ArgumentError, match="McNemar's test is a test of mu0 = 0"):
        cvstats.compare(
            "zero_one ~ model", holdout_cube(), methods=["holdout_t", "mcnemar"], mu0=0.1
        )


def test_vectorized_call_fails_as_a_whole_when_one_dataset_is_bad():
    good = nb_cube().drop_vars("in_train")
    bad = _bad("infinite loss", good)
    stacked = xr.concat([good, bad], dim="dataset")
    for name in ("corrected_resampled_t", "conservative_z", "dietterich_5x2cv"):
        with pytest.raises(CubeError, match="infinite loss"):
            run_method(name, stacked)


def test_failed_save_leaves_no_file_and_keeps_the_previous_one(tmp_path):
    path = tmp_path / "cube.nc"
    with pytest.raises(CubeError):
        cvstats.save(_bad("infinite loss", nb_cube()), path)
    assert os.listdir(tmp_path) == []
    cvstats.save(nb_cube(), path)
    content = path.read_bytes()
    with pytest.raises(CubeError):
        cvstats.save(_bad("NaN pattern differs between models", nb_cube()), path, overwrite=True)
    assert path.read_bytes() == content
    assert os.listdir(tmp_path) == ["cube.nc"]


def test_failed_open_releases_the_file(tmp_path):
    path = tmp_path / "fake.nc"
    dataset = _bad("infinite loss", nb_cube()).to_dataset()
    dataset.attrs = {"schema_version": 1, "cvstats_variable": "loss", "cvstats_version": "0.1.0"}
    dataset.to_netcdf(path, engine="h5netcdf")
    with pytest.raises(CubeError):
        cvstats.open_cube(path)
    # the file can be replaced and read at once: no handle was left open
    cvstats.save(nb_cube(), path, overwrite=True)
    xr.testing.assert_equal(cvstats.open_cube(path), nb_cube())


def test_from_arrays_and_from_frame_return_nothing_partial():
    losses = np.ones((2, 5, 1))
    losses[0, 0, 0] = np.inf
    with pytest.raises(CubeError):
        cvstats.from_arrays(losses, n_train=2)
    assert np.isinf(losses[0, 0, 0])  # input untouched
    df = pd.DataFrame({"split": [0, 0], "example": [0, 0], "model": "a", "loss": [1.0, 2.0]})
    with pytest.raises(CubeError, match="more than one loss"):
        cvstats.from_frame(df, n_train=1)
