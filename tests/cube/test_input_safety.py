"""No silent corruption on input: every bad input is a clear error, or a correct result.

Cases (each fed to the entry points it reaches: ``from_frame``, ``from_arrays``,
``validate``, the compact layout and every inference method):

* long tables whose key columns have missing labels (NaN, None), repeated
  keys, or labels that merge (``True`` and ``1``) or collide as model names;
  a missing label used to send its loss into the last example/model slot,
  overwriting a real loss;
* loss dtypes cvstats does not compute in: float16 (sums over examples lose
  precision or overflow), durations, timestamps, complex, extended precision;
* losses whose squares leave float64's range (``1e155`` and up overflow,
  ``1e-170`` and down underflow): a clear error saying how to rescale, or the
  statistic of the unscaled cube (every statistic is scale invariant) — never
  an infinite or zero standard error, nor a misleading zero-variance warning;
* dims of length 0 and an empty cube name.
"""

from __future__ import annotations

import functools
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from test_validation_matrix import METHODS, cube_for, nb_cube, run_method

import cvstats
from cvstats import CubeError, ZeroVarianceWarning, designs, kernels
from cvstats.cube.checks import check_float_range
from cvstats.cube.compact import to_compact, validate_compact

METHOD_NAMES = list(METHODS)
# methods whose statistic is a location test on means (McNemar needs 0/1 losses)
LOCATION = [m for m in METHOD_NAMES if m != "mcnemar"]

FLOAT_RANGE = re.compile(r"the losses are too (large|small) for float64.*rescale the losses")


@functools.cache
def base_statistic(name: str) -> np.ndarray:
    """The statistic of the unscaled cube of ``name`` (the reference for rescaled cubes)."""
    return np.asarray(run_method(name, cube_for(name)).statistic)


def _stacked(name: str) -> xr.DataArray:
    """The method's cube twice along a leading ``dataset`` dim."""
    cube = cube_for(name)
    return xr.concat([cube, cube], dim="dataset").assign_coords(dataset=["d0", "d1"])


# ---------------------------------------------------------------------------
# from_frame: missing, repeated and merging labels
# ---------------------------------------------------------------------------


def _long_frame() -> pd.DataFrame:
    """A valid long table: 2 datasets x 2 splits x 3 test examples of 4 x 2 models."""
    rows = []
    for dataset in ("d0", "d1"):
        for split, tested in ((0, (0, 1, 2)), (1, (1, 2, 3))):
            for example in tested:
                for model in ("a", "b"):
                    loss = 0.1 * example + 0.01 * split + (0.5 if model == "b" else 0.0)
                    rows.append((dataset, split, example, model, loss))
    return pd.DataFrame(rows, columns=["dataset", "split", "example", "model", "loss"])


def _from_frame(df: pd.DataFrame) -> xr.DataArray:
    return cvstats.from_frame(df, extra_dims=["dataset"], n_train=1, attrs={"n": 4})


def test_long_frame_is_valid():
    cube = _from_frame(_long_frame())
    assert dict(cube.sizes) == {"dataset": 2, "split": 2, "example": 4, "model": 2}


@pytest.mark.parametrize("missing", [np.nan, None], ids=["NaN", "None"])
@pytest.mark.parametrize("column", ["dataset", "split", "example", "model"])
def test_from_frame_missing_label(column, missing):
    df = _long_frame()
    df[column] = df[column].astype(object)
    df.loc[[5, 9], column] = missing
    with pytest.raises(
        CubeError,
        match=rf"column '{column}' has 2 row\(s\) without a label \(NaN or None; first at row 5\)"
        rf".*df\.dropna\(subset=\['{column}'\]\)",
    ):
        _from_frame(df)


def test_from_frame_missing_example_no_longer_overwrites_losses():
    # two rows with a NaN example and loss 999 used to land on the last example (code -1),
    # replacing example 2's real losses 0.5 and 0.6
    df = pd.DataFrame(
        {
            "split": [0, 0, 0, 1, 1, 1, 0, 1],
            "example": [0, 1, 2, 0, 1, 2, np.nan, np.nan],
            "model": "a",
            "loss": [0.1, 0.2, 0.5, 0.3, 0.4, 0.6, 999.0, 999.0],
        }
    )
    with pytest.raises(CubeError, match=r"column 'example' has 2 row\(s\) without a label"):
        cvstats.from_frame(df, n_train=1, attrs={"n": 10})


def test_from_frame_model_none_no_longer_flips_a_holdout_estimate():
    d = designs.holdout(40, 12, seed=2)
    rng = np.random.default_rng(0)
    cube = cvstats.from_arrays(rng.random((1, 40, 2)), design=d, models=["a", "b"])
    df = cube.drop_vars("in_train").to_dataframe().dropna(subset=["loss"]).reset_index()
    df["model"] = df["model"].astype(object)
    df.loc[df.index[0], "model"] = None
    with pytest.raises(CubeError, match="column 'model' has 1 row"):
        cvstats.from_frame(df, attrs=d.attrs)


def test_from_frame_repeated_key_names_both_rows():
    df = _long_frame()
    df = pd.concat([df, df.iloc[[3]]], ignore_index=True)
    with pytest.raises(
        CubeError,
        match=r"more than one loss for \{'dataset': 'd0', 'split': 0, 'example': 1, "
        r"'model': 'b'\} \(1 repeated row\(s\); row 3 and row 24 share that key\)"
        r".*drop_duplicates",
    ):
        _from_frame(df)


def test_from_frame_repeated_key_with_a_repeated_index_uses_positions():
    df = _long_frame()
    df = pd.concat([df, df.iloc[[3]]])  # index label 3 twice
    with pytest.raises(CubeError, match=r"the row at position 3 and the row at position 24"):
        _from_frame(df)


@pytest.mark.parametrize("column", ["dataset", "example"])
def test_from_frame_labels_that_merge(column):
    df = _long_frame()
    values = df[column].astype(object).to_numpy()
    first = values[0]
    values = np.array([True if v == first else v for v in values], dtype=object)
    values[1] = 1  # True == 1: pandas would merge the two labels into one key
    df[column] = values
    with pytest.raises(
        CubeError, match=rf"column '{column}' holds the labels \[True, 1\], which compare equal"
    ):
        _from_frame(df)


def test_from_frame_model_labels_that_collide_as_names():
    df = _long_frame()
    df["model"] = pd.Series([1 if m == "a" else "1" for m in df["model"]], dtype=object)
    with pytest.raises(CubeError, match=r"distinct labels \[1, '1'\], which all become .*'1'"):
        _from_frame(df)


def test_from_frame_same_column_for_two_keys():
    with pytest.raises(CubeError, match="must name different columns"):
        cvstats.from_frame(_long_frame(), example="split", n_train=1)


def test_from_frame_no_rows():
    with pytest.raises(CubeError, match="`df` has no rows"):
        _from_frame(_long_frame().iloc[:0])


@pytest.mark.parametrize(
    ("convert", "match"),
    [
        (lambda s: pd.to_timedelta(s, unit="s"), r"timedelta64\[ns\] \(durations\)"),
        (lambda s: pd.to_datetime(s * 1e9), r"datetime64\[ns\] \(timestamps\)"),
        (lambda s: s.astype(complex), r"complex128 \(complex numbers\)"),
    ],
    ids=["timedelta", "datetime", "complex"],
)
def test_from_frame_loss_dtypes_refused(convert, match):
    df = _long_frame()
    df["loss"] = convert(df["loss"])
    with pytest.raises(CubeError, match=rf"column 'loss' must be real numbers, got dtype {match}"):
        _from_frame(df)


@pytest.mark.parametrize("dtype", ["float16", "float32", "Float64", "int64"])
def test_from_frame_loss_dtypes_read_exactly(dtype):
    df = _long_frame()
    df["loss"] = (df["loss"] * 100).round() if dtype == "int64" else df["loss"]
    df["loss"] = df["loss"].astype(dtype)
    cube = _from_frame(df)
    assert cube.dtype == np.float64
    expected = df["loss"].astype("float64").to_numpy()
    got = cube.to_dataframe().dropna()["loss"].to_numpy()
    np.testing.assert_array_equal(np.sort(got), np.sort(expected))


def test_from_frame_empty_name():
    with pytest.raises(CubeError, match=r"the cube's name is '', .*cube\.rename\('loss'\)"):
        cvstats.from_frame(_long_frame(), extra_dims=["dataset"], n_train=1, name="")


# ---------------------------------------------------------------------------
# dtypes: from_arrays, validate (dense and compact) and every method
# ---------------------------------------------------------------------------

LONGDOUBLE_WIDE = np.dtype(np.longdouble).itemsize > 8
REFUSED = {
    "float16": (np.float16, r"float16 are not supported.*astype\('float32'\) \(lossless\)"),
    "timedelta": ("m8[ns]", r"timedelta64\[ns\] \(durations\).*np\.timedelta64\(1, 's'\)"),
    "datetime": ("M8[ns]", r"datetime64\[ns\] \(timestamps\)"),
    "complex": (np.complex128, r"complex128 \(complex numbers\).*\.real or abs"),
    "object": (object, "non-numeric dtype object"),
}
if LONGDOUBLE_WIDE:
    REFUSED["longdouble"] = (np.longdouble, r"not supported: cvstats computes in float64")


def _as_dtype(cube: xr.DataArray, dtype) -> xr.DataArray:
    if np.dtype(dtype).kind in "mM":
        return cube.copy(data=(cube.fillna(0).values * 1e9).astype(dtype))
    return cube.astype(dtype)


@pytest.mark.parametrize("case", list(REFUSED))
def test_validate_refuses_loss_dtypes(case):
    dtype, match = REFUSED[case]
    with pytest.raises(CubeError, match=match):
        cvstats.validate(_as_dtype(nb_cube(), dtype))


@pytest.mark.parametrize("case", [c for c in REFUSED if c != "object"])
def test_validate_compact_refuses_loss_dtypes(case):
    dtype, match = REFUSED[case]
    compact = to_compact(nb_cube())["loss"]
    bad = compact.copy(data=np.asarray(compact.values).astype(dtype))
    with pytest.raises(CubeError, match=match):
        cvstats.validate(bad)


@pytest.mark.parametrize("case", ["float16", "timedelta", "complex"])
@pytest.mark.parametrize("name", METHOD_NAMES)
def test_methods_refuse_loss_dtypes(name, case):
    dtype, match = REFUSED[case]
    with pytest.raises(CubeError, match=match):
        run_method(name, _as_dtype(cube_for(name), dtype))


def test_float16_cube_no_longer_gives_an_infinite_estimate():
    # float16 split means of losses near 100 overflowed: estimate inf, stderr 0, p = 0,
    # and the warning "all J split means are equal"
    d = designs.resampled(2000, 200, J=5, seed=0)
    u = np.random.default_rng(0).random((5, 2000, 1))
    cube = cvstats.from_arrays(100 + u, design=d)
    with pytest.raises(CubeError, match="float16 are not supported"):
        cvstats.resampled_t(cube.astype(np.float16))
    exact = cvstats.resampled_t(cube.astype(np.float16).astype(np.float32))
    assert np.isfinite(exact.statistic) and exact.stderr > 0


@pytest.mark.parametrize(
    ("dtype", "match"),
    [
        ("m8[s]", r"`losses` must be real numbers, got dtype timedelta64\[s\] \(durations\)"),
        ("M8[s]", r"`losses` must be real numbers, got dtype datetime64\[s\] \(timestamps\)"),
        (np.complex64, r"`losses` must be real numbers, got dtype complex64"),
        *(
            [(np.longdouble, r"`losses` of dtype float\d+ are not supported")]
            if LONGDOUBLE_WIDE
            else []
        ),
    ],
)
def test_from_arrays_refuses_loss_dtypes(dtype, match):
    with pytest.raises(CubeError, match=match):
        cvstats.from_arrays(np.ones((2, 6, 1)).astype(dtype), n_train=2)


@pytest.mark.parametrize(
    ("dtype", "kept"),
    [(np.float16, np.float64), (np.float32, np.float32), (np.float64, np.float64)],
)
def test_from_arrays_float_dtypes(dtype, kept):
    # float16 is promoted to float64, exactly; float32 and float64 are kept
    d = designs.resampled(20, 4, J=3, seed=0)
    losses = np.random.default_rng(0).random((3, 20, 2)).astype(dtype)
    cube = cvstats.from_arrays(losses, design=d)
    assert cube.dtype == kept
    np.testing.assert_array_equal(cube.values[d.test.values], losses[d.test.values].astype(kept))


def test_from_arrays_float16_gives_the_float64_statistic():
    d = designs.resampled(40, 8, J=5, seed=0)
    losses = np.random.default_rng(1).random((5, 40, 1)).astype(np.float16)
    half = cvstats.corrected_resampled_t(cvstats.from_arrays(losses, design=d))
    full = cvstats.corrected_resampled_t(cvstats.from_arrays(losses.astype(float), design=d))
    assert half.statistic == full.statistic


# ---------------------------------------------------------------------------
# losses whose squares leave float64's range
# ---------------------------------------------------------------------------


def _assert_correct_or_clear(name: str, cube: xr.DataArray) -> None:
    """The method gives the unscaled statistic, or a clear error; never a wrong number."""
    try:
        res = run_method(name, cube)
    except CubeError as e:
        if name == "mcnemar":
            assert "needs zero-one losses" in str(e)
        else:
            assert FLOAT_RANGE.search(str(e)), str(e)
        return
    statistic = np.asarray(res.statistic)
    np.testing.assert_allclose(statistic, base_statistic(name), rtol=1e-9)
    assert np.all(np.isfinite(np.asarray(res.stderr)) | (name == "combined_5x2cv_f"))


@pytest.mark.parametrize(
    "scale", [1e100, 1e155, 1e200, 1e300, 1e307, 1e-150, 1e-170, 1e-300, 1e-320]
)
@pytest.mark.parametrize("name", METHOD_NAMES)
def test_rescaled_losses_give_the_statistic_or_a_clear_error(name, scale):
    # filterwarnings = error: no numpy RuntimeWarning and no ZeroVarianceWarning may escape
    _assert_correct_or_clear(name, cube_for(name) * scale)


@pytest.mark.parametrize(
    ("scale", "match"),
    [
        (
            1e155,
            r"too large for float64: .* overflows \(largest \|value\| of the (split|fold) "
            r"means: \S+e\+15\d\).*divide them by 1e15\d, and mu0 with them",
        ),
        (1e300, r"too large for float64: .*divide them by 1e29\d"),
        (1e-300, r"too small for float64: .*underflow.*multiply them by 1e30\d"),
        (1e-320, r"too small for float64: .*multiply them by 1e300.*already lost precision"),
    ],
)
@pytest.mark.parametrize("name", ["resampled_t", "corrected_resampled_t", "kfold_t"])
def test_out_of_range_losses_error_says_how_to_rescale(name, scale, match):
    # before: x1e155 and x1e300 gave stderr inf, statistic 0, p = 1 (true statistic ~3.8);
    # x1e-320 gave stderr 0, p = 0 and "all J split means are equal"
    with pytest.raises(CubeError, match=match):
        run_method(name, cube_for(name) * scale)


@pytest.mark.parametrize("name", LOCATION)
def test_losses_near_the_float64_maximum(name):
    # the sums over examples behind the split means overflow: still our error
    cube = cube_for(name)
    big = cube * 0 + 1.5e308 + cube * 1e307
    with pytest.raises(CubeError, match=FLOAT_RANGE):
        run_method(name, big)


@pytest.mark.parametrize("name", LOCATION)
def test_rescaled_losses_inside_the_range_keep_the_statistic(name):
    for scale in (1e-120, 1e-8, 1e8, 1e120):
        res = run_method(name, cube_for(name) * scale, mu0=0.0)
        np.testing.assert_allclose(np.asarray(res.statistic), base_statistic(name), rtol=1e-9)


@pytest.mark.parametrize("name", LOCATION)
def test_float32_cube_gives_the_float64_statistic(name):
    res = run_method(name, cube_for(name).astype(np.float32))
    np.testing.assert_allclose(np.asarray(res.statistic), base_statistic(name), rtol=1e-5)


def test_one_dataset_out_of_range_fails_the_whole_call():
    cube = nb_cube()
    stacked = xr.concat([cube, cube * 1e300], dim="dataset")
    with pytest.raises(CubeError, match=r"too large for float64: .* in 2 of 4 batch element"):
        cvstats.corrected_resampled_t(stacked)


def test_underflow_is_not_reported_as_equal_split_means():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ZeroVarianceWarning would escape first
        with pytest.raises(CubeError, match="although the split means are not all equal"):
            cvstats.resampled_t(nb_cube() * 1e-320)


def test_equal_split_means_still_warn():
    cube = nb_cube()
    constant = cube.copy(data=np.where(cube.notnull(), 1e-320, np.nan))
    with pytest.warns(ZeroVarianceWarning, match="all J split means are equal"):
        res = cvstats.resampled_t(constant)
    assert np.all(np.asarray(res.stderr) == 0)


def test_lazy_cube_out_of_range_raises_on_compute():
    lazy = (nb_cube() * 1e200).chunk({"split": 8})
    res = cvstats.corrected_resampled_t(lazy)
    assert res.statistic.chunks is not None  # nothing computed yet
    with pytest.raises(CubeError, match="too large for float64"):
        res.statistic.compute()


# --- the kernels themselves ---------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: kernels.resampled_t(np.array([1.0, 2.0, 4.0]) * s), "split means"),
        (
            lambda s: kernels.corrected_resampled_t(np.array([1.0, 2.0, 4.0]) * s, 9, 1),
            "split means",
        ),
        (lambda s: kernels.kfold_t(np.array([1.0, 2.0, 4.0]) * s), "fold means"),
        (
            lambda s: kernels.corrected_repeated_kfold_t(np.array([1.0, 2.0, 4.0, 3.0]) * s, 2),
            "fold means",
        ),
        (
            lambda s: kernels.bootstrap_t(
                np.array([1.0, 2.0]) * s, np.array([[1.0, 2.0], [3.0, 5.0]]) * s
            ),
            "replicate means",
        ),
        (
            lambda s: kernels.conservative_z(
                np.array([1.0, 2.0]) * s, np.array([[[1.0, 2.0], [3.0, 5.0]]]) * s
            ),
            "half-split differences",
        ),
        (
            lambda s: kernels.dietterich_5x2_t(np.arange(10.0).reshape(5, 2) ** 2 * s),
            "differences",
        ),
        (
            lambda s: kernels.dietterich_5x2_t(
                np.arange(10.0).reshape(5, 2) ** 2 * s, variant="t4"
            ),
            "differences",
        ),
        (lambda s: kernels.alpaydin_f(np.arange(10.0).reshape(5, 2) ** 2 * s), "differences"),
        (lambda s: kernels.holdout_t(np.array([1.0, np.nan, 2.0, 4.0]) * s), "test losses"),
    ],
    ids=[
        "resampled",
        "corrected",
        "kfold",
        "repeated kfold",
        "bootstrap",
        "conservative z",
        "5x2",
        "5x2 t4",
        "alpaydin",
        "holdout",
    ],
)
@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_kernels_raise_out_of_range(call, match, scale):
    with pytest.raises(CubeError, match=rf"too (large|small) for float64.*{match}"):
        call(scale)


@pytest.mark.parametrize(
    "call",
    [
        lambda: kernels.resampled_t([1.0, np.inf, 2.0]),
        lambda: kernels.conservative_z([1.0, 2.0], [[[np.inf, 1.0], [np.inf, 2.0]]]),
        lambda: kernels.dietterich_5x2_t(np.full((5, 2), np.inf)),
        lambda: kernels.alpaydin_f(np.full((5, 2), np.inf)),
        lambda: kernels.holdout_t([1.0, np.inf, np.nan, 2.0]),
    ],
    ids=["resampled", "conservative z", "5x2", "alpaydin", "holdout"],
)
def test_kernels_infinite_means_are_an_overflow_not_nan(call):
    # inf - inf is NaN, which would pass for a missing value and give a NaN statistic
    with pytest.raises(CubeError, match="too large for float64"):
        call()


def test_kernel_result_unchanged_in_range():
    # scipy.stats.ttest_1samp([0.1, 0.2, 0.3, 0.4]) = sqrt(15)
    r = kernels.resampled_t([0.1, 0.2, 0.3, 0.4])
    assert r.statistic == pytest.approx(np.sqrt(15), rel=1e-14)


def test_check_float_range_ignores_nan_and_equal_values():
    # NaN marks non-test examples; equal values give a legitimate zero variance
    check_float_range(
        np.array([[1e-300, np.nan, 1e-300]]),
        np.array([0.0]),
        method="m",
        what="w",
        of="values",
    )
    check_float_range(np.zeros((2, 3)), np.zeros(2), method="m", what="w", of="v", centred=False)
    with pytest.raises(CubeError, match="although the v are not all zero"):
        check_float_range(
            np.array([0.0, 1e-170]), np.array(0.0), method="m", what="w", of="v", centred=False
        )


# ---------------------------------------------------------------------------
# dims of length 0, empty names
# ---------------------------------------------------------------------------

EMPTY_DIMS = ["dataset", "split", "example", "model"]


def _empty(name: str, dim: str) -> xr.DataArray:
    return _stacked(name).isel({dim: slice(0, 0)})


@pytest.mark.parametrize("dim", EMPTY_DIMS)
@pytest.mark.parametrize("name", METHOD_NAMES)
def test_methods_refuse_a_dim_of_length_0(name, dim):
    with pytest.raises(CubeError, match=rf"the cube's dim '{dim}' has length 0"):
        run_method(name, _empty(name, dim))


@pytest.mark.parametrize("dim", EMPTY_DIMS)
@pytest.mark.parametrize(
    "func",
    ["validate", "to_compact", "compare", "compare(formula)", "fit_rho", "contrasts"],
)
def test_cube_functions_refuse_a_dim_of_length_0(func, dim):
    cube = _empty("resampled_t", dim)
    call = {
        "validate": cvstats.validate,
        "to_compact": to_compact,
        "compare": lambda c: cvstats.compare(c.drop_vars("in_train"), methods=["resampled_t"]),
        "compare(formula)": lambda c: cvstats.compare("loss ~ model", c),
        "fit_rho": cvstats.fit_rho,
        "contrasts": lambda c: cvstats.contrasts("loss ~ model", c),
    }[func]
    with pytest.raises(CubeError, match=rf"the cube's dim '{dim}' has length 0"):
        call(cube)


@pytest.mark.parametrize("dim", ["dataset", "split", "slot", "model"])
def test_validate_compact_refuses_a_dim_of_length_0(dim):
    compact = to_compact(_stacked("resampled_t"))["loss"]
    with pytest.raises(CubeError, match=rf"the cube's dim '{dim}' has length 0"):
        validate_compact(compact.isel({dim: slice(0, 0)}))


def test_from_arrays_refuses_a_dim_of_length_0():
    with pytest.raises(CubeError, match="the cube's dim 'model' has length 0"):
        cvstats.from_arrays(np.ones((2, 6, 0)), n_train=2)
    with pytest.raises(CubeError, match="the cube's dim 'dataset' has length 0"):
        cvstats.from_arrays(np.ones((0, 2, 6, 1)), n_train=2, extra_dims=["dataset"])


@pytest.mark.parametrize("name", ["", "   "])
@pytest.mark.parametrize("func", ["validate", "validate(compact)", "resampled_t", "holdout_t"])
def test_empty_cube_name(func, name):
    match = rf"the cube's name is '{name}', but the name is the loss name .*cube\.rename\('loss'\)"
    if func == "validate(compact)":
        cube = to_compact(nb_cube())["loss"].rename(name)
        call = cvstats.validate
    else:
        cube = cube_for(func if func in METHODS else "resampled_t").rename(name)
        call = cvstats.validate if func == "validate" else functools.partial(run_method, func)
    with pytest.raises(CubeError, match=match):
        call(cube)


def test_from_arrays_empty_name():
    with pytest.raises(CubeError, match=r"the cube's name is ''"):
        cvstats.from_arrays(np.ones((2, 6, 1)), n_train=2, name="")
