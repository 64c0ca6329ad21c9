"""Float-range checks of bayle_cv, fit_lemma1, fit_rho, fit_r, nested CV and the k-fold moments.

Losses whose squares leave float64's range (about ``1e154`` and up, ``1e-154``
and down; fourth powers, as in a sandwich or a jackknife of variances, about
``1e77`` and ``1e-77``) give a :class:`~cvstats.CubeError` that says how to
rescale, never an infinite, NaN or zero statistic with a numpy RuntimeWarning
or a misleading zero-variance warning; inside the range every result scales
as it should (statistics, p-values and correlations are unchanged).

pytest runs with ``filterwarnings = error``; :func:`strict` also turns every
warning into an error locally, so that no RuntimeWarning can leak from these
calls whatever the configuration.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import pytest
import xarray as xr

import cvstats
from cvstats import CubeError, ZeroVarianceWarning, designs
from cvstats.across.lemma1 import fit_lemma1
from cvstats.across.rho import fit_r, fit_rho
from cvstats.inference.nested import nested_cv_interval
from cvstats.kernels import bayle as kb
from cvstats.kernels import kfold as kk
from cvstats.kernels import lemma1 as kl

TOO_LARGE = r"too large for float64: .*rescale the losses \(divide them by"
TOO_SMALL = r"too small for float64: .*rescale the losses \(multiply them by"


@contextlib.contextmanager
def strict() -> Iterator[None]:
    """Every warning (numpy RuntimeWarning, ZeroVarianceWarning) is an error inside."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------------------
# small inputs, built with the public API
# ---------------------------------------------------------------------------


@functools.cache
def bayle_cube() -> xr.DataArray:
    """One 4-fold run on 23 examples (folds of 6, 6, 6, 5), two models."""
    d = designs.kfold(23, 4, seed=2)
    losses = np.random.default_rng(5).gamma(2.0, 1.0, size=(4, 23, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"])


@functools.cache
def nested_cube() -> xr.DataArray:
    """A nested-CV design (K = 4, 2 repeats) on 20 examples, two models."""
    d = designs.nested_cv(20, 4, 2, seed=4)
    values = np.random.default_rng(5).gamma(2.0, 0.5, (d.sizes["split"], 20, 2))
    losses = np.where(d["test"].values[..., None], values, np.nan)
    return cvstats.from_arrays(losses, design=d, models=["a", "b"])


@functools.cache
def kfold_cube() -> xr.DataArray:
    """Five datasets with one 4-fold run of 20 examples each, errors around 1."""
    d = designs.kfold(20, 4, seed=0)
    e = np.random.default_rng(1).normal(size=(5, 1, 20, 1)) + 1.0
    return cvstats.from_arrays(np.broadcast_to(e, (5, 4, 20, 1)), design=d, extra_dims=["dataset"])


@functools.cache
def rows() -> xr.DataArray:
    """Ten independent rows of four correlated members, mean 1."""
    rng = np.random.default_rng(3)
    values = 1.0 + rng.normal(size=(10, 1)) + rng.normal(size=(10, 4))
    return xr.DataArray(values, dims=("dataset", "split"))


@functools.cache
def resampled_cube() -> xr.DataArray:
    """Eight datasets with J = 6 resampled splits of 20 examples."""
    d = designs.resampled(20, 5, J=6, seed=0)
    losses = np.random.default_rng(2).gamma(2.0, 1.0, size=(8, 6, 20, 1))
    return cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])


@functools.cache
def half_cube() -> xr.DataArray:
    """Six datasets with M = 3 half-splits (J = 2 inner splits each) of 30 examples."""
    d = designs.conservative_z(30, 4, J=2, M=3, seed=1)
    losses = np.random.default_rng(7).gamma(2.0, 1.0, size=(6, d.sizes["split"], 30, 1))
    return cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])


def _bayle_out(scale: float) -> object:
    return cvstats.bayle_cv(bayle_cube() * scale)


def _bayle_in(scale: float) -> object:
    return cvstats.bayle_cv(bayle_cube() * scale, variant="in")


def _nested(scale: float) -> object:
    return nested_cv_interval(nested_cube() * scale)


def _kfold_statistics(scale: float) -> object:
    return cvstats.kfold_statistics(kfold_cube() * scale)


def _kfold_moments(scale: float) -> object:
    return cvstats.kfold_moments(kfold_cube() * scale)


def _fit_lemma1(scale: float) -> object:
    return fit_lemma1(rows() * scale, "dataset", "split")


def _fit_rho(scale: float) -> object:
    return fit_rho(resampled_cube() * scale)


def _fit_r(scale: float) -> object:
    return fit_r(half_cube() * scale)


CALLS: dict[str, Callable[[float], object]] = {
    "bayle_cv": _bayle_out,
    "bayle_cv_in": _bayle_in,
    "nested_cv_interval": _nested,
    "kfold_statistics": _kfold_statistics,
    "kfold_moments": _kfold_moments,
    "fit_lemma1": _fit_lemma1,
    "fit_rho": _fit_rho,
    "fit_r": _fit_r,
}
# fit_r squares the half differences (kernels.squared_half_differences) before Lemma 1: at
# 1e-200 those squares are exact zeros, which no kernel can tell from equal halves
UNDERFLOW = [name for name in CALLS if name != "fit_r"]
# standard errors from fourth powers of the losses: sandwich (Lemma-1) and jackknife of
# variances (k-fold moments); they leave float64's range beyond about 1e77 already
FOURTH_POWERS = ["kfold_moments", "fit_lemma1", "fit_rho"]


# ---------------------------------------------------------------------------
# (a), (b), (c): out of range, a clear error and no warning
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CALLS))
def test_too_large_losses_raise_and_say_how_to_rescale(name):
    # before: RuntimeWarning "overflow encountered in square", then an infinite
    # variance (statistic 0, p = 1), NaN standard errors, or "T holds infinite values"
    with strict(), pytest.raises(CubeError, match=TOO_LARGE):
        CALLS[name](1e200)


@pytest.mark.parametrize("name", UNDERFLOW)
def test_too_small_losses_raise_and_say_how_to_rescale(name):
    # before: a zero variance: ZeroVarianceWarning "all ... are equal", NaN statistic
    # (nested CV) or silently zero s1, s2, s3 (k-fold statistics)
    with strict(), pytest.raises(CubeError, match=TOO_SMALL):
        CALLS[name](1e-200)


@pytest.mark.parametrize("name", [n for n in CALLS if n != "fit_r"])
def test_the_hint_names_the_power_of_ten(name):
    # fit_r: its values (squares) are inf already, the power of ten is unknown (test below)
    with strict(), pytest.raises(CubeError, match=r"divide them by 1e(199|20[01])\b"):
        CALLS[name](1e200)


def test_fit_r_too_small_half_differences_raise():
    # the squared half differences (T of the fit) are ~1e-200: their squares underflow
    with strict(), pytest.raises(CubeError, match=TOO_SMALL):
        fit_r(half_cube() * 1e-100)


def test_fit_r_overflowed_squares_are_reported_as_too_large():
    # at 1e200 the squared half differences overflow where fit_r forms them; the message
    # gives the power of ten of the losses (1e200), not of their squares
    with strict(), pytest.raises(CubeError, match=r"too large for float64.*1e(199|20[01])"):
        fit_r(half_cube() * 1e200)


def test_fit_r_underflow_of_the_squared_half_differences():
    # checked where fit_r squares them (kernels.squared_half_differences), before Lemma 1
    with strict(), pytest.raises(CubeError, match=TOO_SMALL):
        fit_r(half_cube() * 1e-200)


@pytest.mark.parametrize("name", FOURTH_POWERS)
@pytest.mark.parametrize(
    ("scale", "match"),
    [(1e100, r"too large for float64: .*divide them by 1e(99|10[01])\b"), (1e-100, TOO_SMALL)],
)
def test_fourth_powers_leave_the_range_earlier(name, scale, match):
    # the split means are fine at 1e±100, but the sandwich meat / jackknife squares
    # variances (1e±200): before, NaN or zero standard errors (π̂ ± 0) came out
    with strict(), pytest.raises(CubeError, match=match):
        CALLS[name](scale)


@pytest.mark.parametrize("name", ["bayle_cv", "bayle_cv_in", "nested_cv_interval"])
@pytest.mark.parametrize("scale", [1e100, 1e-100])
def test_second_powers_are_fine_at_1e100(name, scale):
    # a variance of losses at 1e±100 is 1e±200: inside float64, the same statistic
    base = CALLS[name](1.0)
    with strict():
        res = CALLS[name](scale)
    np.testing.assert_allclose(res.statistic, base.statistic, rtol=1e-12)


def test_one_dataset_out_of_range_fails_the_whole_call():
    cube = xr.concat([kfold_cube(), kfold_cube() * 1e200], dim="dataset")
    with strict(), pytest.raises(CubeError, match=r"too large for float64: .* in 5 of 10 batch"):
        cvstats.kfold_statistics(cube)


# ---------------------------------------------------------------------------
# legitimate zeros are still zeros (no false "too small" error)
# ---------------------------------------------------------------------------


def test_bayle_equal_tiny_errors_still_warn_zero_variance():
    e = np.full(8, 1e-300)
    with pytest.warns(ZeroVarianceWarning, match="all out-of-fold errors are equal"):
        res = kb.bayle_cv(e, np.arange(8) % 2)
    assert res.stderr == 0


def test_bayle_in_constant_within_tiny_folds_still_warns_zero_variance():
    # exact within-fold means (a power of two times small integers): σ̂²_in is truly 0
    fold = np.arange(12) % 3
    e = 2.0**-680 * (fold + 1.0)
    with pytest.warns(ZeroVarianceWarning, match="constant within folds"):
        res = kb.bayle_cv(e, fold, variance="in")
    assert res.stderr == 0


def test_lemma1_zero_meat_is_not_an_underflow():
    # rows (0, 1) and (1, 0): every g_i is exactly 0, so B = 0 at any scale
    T = np.array([[0.0, 1.0], [1.0, 0.0]])
    with strict():
        base = kl.lemma1_fit(T)
        tiny = kl.lemma1_fit(T * 1e-100)
    np.testing.assert_array_equal(base.cov, 0.0)
    np.testing.assert_array_equal(tiny.cov, 0.0)
    np.testing.assert_allclose(tiny.theta, base.theta * [1e-100, 1e-200, 1.0], rtol=1e-12)


def test_lemma1_nan_is_still_an_argument_error():
    with pytest.raises(cvstats.ArgumentError, match="NaN or infinite"):
        kl.lemma1_fit(np.array([[1.0, np.nan], [2.0, np.inf]]))


def test_kfold_zero_errors_are_not_an_underflow():
    with strict():
        st = kk.kfold_statistics(np.zeros(6), np.arange(6) % 3)
    assert (st.s1, st.s2, st.s3, st.mean) == (0.0, 0.0, 0.0, 0.0)


def test_kfold_moments_estimates_need_no_fourth_powers():
    # the estimates are second moments (1e200 at 1e100): only the jackknife leaves the range
    e = np.random.default_rng(0).normal(size=(6, 12))
    fold = np.arange(12) % 3
    with strict():
        base = kk.kfold_moments(e, fold)
        big = kk.kfold_moments(e * 1e100, fold)
    np.testing.assert_allclose(big.theta, base.theta * 1e200, rtol=1e-12)
    with strict(), pytest.raises(CubeError, match=r"jackknife .*divide them by 1e(99|10[01])\b"):
        kk.kfold_moments_stderr(e * 1e100, fold)


# ---------------------------------------------------------------------------
# (d) inside the range: results scale, statistics are unchanged
# ---------------------------------------------------------------------------

SCALE = 1e3


def _close(a: object, b: object, factor: float = 1.0) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b) * factor, rtol=1e-12)


@pytest.mark.parametrize("name", ["bayle_cv", "bayle_cv_in", "nested_cv_interval"])
def test_tests_scale_with_the_losses(name):
    base = CALLS[name](1.0)
    with strict():
        res = CALLS[name](SCALE)
    _close(res.estimate, base.estimate, SCALE)
    _close(res.stderr, base.stderr, SCALE)
    _close(res.statistic, base.statistic)
    _close(res.pvalue, base.pvalue)


def test_kfold_statistics_scale_with_the_losses():
    base = _kfold_statistics(1.0)
    with strict():
        res = _kfold_statistics(SCALE)
    for name in ("s1", "s2", "s3"):
        _close(res[name], base[name], SCALE**2)
    _close(res["mu"], base["mu"], SCALE)


def test_kfold_moments_scale_with_the_losses():
    base = _kfold_moments(1.0)
    with strict():
        res = _kfold_moments(SCALE)
    for name in ("mu", "mu_se", "mu_ci"):
        _close(res[name], base[name], SCALE)
    for name in ("sigma2", "omega", "gamma", "theta", "lambda2", "empirical_var"):
        _close(res[name], base[name], SCALE**2)
        if f"{name}_se" in base:
            _close(res[f"{name}_se"], base[f"{name}_se"], SCALE**2)
    np.testing.assert_array_equal(res["admissible"], base["admissible"])


@pytest.mark.parametrize("name", ["fit_lemma1", "fit_rho"])
def test_lemma1_fits_scale_with_the_values(name):
    base = CALLS[name](1.0)
    with strict():
        res = CALLS[name](SCALE)
    mean, corr = ("beta", "pi") if name == "fit_lemma1" else ("mu", "rho")
    for suffix in ("", "_se", "_ci"):
        _close(res[mean + suffix], base[mean + suffix], SCALE)
        _close(res["delta" + suffix], base["delta" + suffix], SCALE**2)
        _close(res[corr + suffix], base[corr + suffix])


def test_fit_r_scales_with_the_losses():
    base = _fit_r(1.0)
    with strict():
        res = _fit_r(SCALE)
    _close(res["r"], base["r"])
    _close(res["r_se"], base["r_se"])
    _close(res["sigma2_cz"], base["sigma2_cz"], SCALE**2)
    _close(res["delta_se"], base["delta_se"], SCALE**4)


@pytest.mark.parametrize("name", FOURTH_POWERS)
@pytest.mark.parametrize("scale", [1e60, 1e-60])
def test_fourth_powers_inside_the_range_keep_the_result(name, scale):
    # 1e±60: fourth powers 1e±240, still normal float64
    base = CALLS[name](1.0)
    with strict():
        res = CALLS[name](scale)
    corr = {"kfold_moments": "admissible", "fit_lemma1": "pi_se", "fit_rho": "rho_se"}[name]
    _close(res[corr], base[corr])
