"""One stored interval form: a ``ci_bound`` dim whose level is in its attrs (issue 27)."""

from __future__ import annotations

import numpy as np
import pytest

import cvstats
from cvstats.results import bounds


@pytest.fixture(scope="module")
def cube():
    d = cvstats.designs.kfold(40, 5, repeats=2, seed=3)
    losses = np.random.default_rng(3).random((d.sizes["split"], 40, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], name="loss")


def test_an_interval_records_its_level(cube):
    res = cvstats.corrected_repeated_kfold_t(cvstats.pairwise(cube), alpha=0.1)
    ci = res.interval()
    assert ci.dims[-1] == "ci_bound" and ci.attrs["alpha"] == 0.1 and ci.attrs["level"] == 0.9
    assert res.interval(alpha=0.2).attrs["level"] == 0.8
    low, high = res.conf_int()  # the tuple view holds the same numbers
    np.testing.assert_array_equal(ci.sel(ci_bound="lower"), low)
    np.testing.assert_array_equal(ci.sel(ci_bound="upper"), high)
    frame = res.to_frame()  # the frame's columns: the same numbers
    np.testing.assert_allclose(frame["ci_lower"], np.atleast_1d(low.values))


def test_a_posterior_and_a_fit_record_theirs(cube):
    post = cvstats.bayesian_correlated_t(cvstats.pairwise(cube), alpha=0.1)
    assert post.interval().attrs["level"] == 0.9
    d = cvstats.designs.resampled(30, 6, J=4, seed=4)
    losses = np.random.default_rng(4).random((12, d.sizes["split"], 30, 1))
    many = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"], name="loss")
    fit = cvstats.fit_rho(many, alpha=0.2)
    assert fit["rho_ci"].attrs["level"] == 0.8 and fit.attrs["alpha"] == 0.2


def test_bounds_without_a_level_stay_as_they_were():
    import xarray as xr

    ci = bounds(xr.DataArray(0.1, attrs={"units": "error"}), xr.DataArray(0.3))
    assert ci.attrs == {"units": "error"}
