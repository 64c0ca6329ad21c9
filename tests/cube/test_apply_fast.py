"""``labelled`` equals xarray's public constructor, and ``apply_kernel``'s errors are xarray's.

(The in-memory re-implementation of ``xarray.apply_ufunc`` on xarray's private
``fastpath`` is gone: ``docs/performance.md``.)
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from cvstats.cube.apply import apply_kernel


def test_errors_of_the_kernel_are_xarrays():
    a = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("x", "y"))
    with pytest.raises(ValueError, match="unexpected number of dimensions"):
        apply_kernel(lambda u: u.sum(), [a], [["y"]], 1)
    with pytest.raises(ValueError, match="number of outputs"):
        apply_kernel(lambda u: (u, u, u), [a], [[]], 2)


def test_labelled_equals_the_public_constructor():
    from cvstats.cube.apply import labelled

    a = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("x", "y"), name="loss")
    a = a.assign_coords(x=[10, 20], y=["p", "q", "r"], w=("x", [0.5, 1.5]))
    a.attrs["metric"] = "auc"
    coords = {k: v for k, v in a.coords.variables.items() if "y" not in v.dims}
    indexes = {k: i for k, i in a.xindexes.items() if k in coords}
    values = np.ones((2, 4))
    got = labelled(values, ("x", "z"), coords, indexes, a.name, a.attrs)
    want = xr.DataArray(values, dims=("x", "z"), coords=coords, name="loss", attrs=a.attrs)
    xr.testing.assert_identical(got, want)
    assert list(got.xindexes) == list(want.xindexes) == ["x"]
    got.attrs["metric"] = "f1"
    assert a.attrs["metric"] == "auc"  # attrs copied, not shared


def test_labelled_copies_the_coordinates_as_the_constructor_does():
    from cvstats.cube.apply import labelled

    a = xr.DataArray(np.zeros((2, 3)), dims=("x", "y"), coords={"x": [1, 2]})
    a = a.assign_coords(w=("x", [0.5, 1.5]))
    coords = {k: v for k, v in a.coords.variables.items() if "y" not in v.dims}
    indexes = {k: i for k, i in a.xindexes.items() if k in coords}
    got = labelled(np.ones((2, 4)), ("x", "z"), coords, indexes, None, {})
    got.coords["w"].attrs["note"] = "edited"
    assert a.coords["w"].attrs == {}  # the source's coordinate is not the result's
    # a dim coordinate without an index: the constructor builds one, as the public one does
    bare = a.drop_indexes("x")
    coords = {k: v for k, v in bare.coords.variables.items() if "y" not in v.dims}
    got = labelled(np.ones((2, 4)), ("x", "z"), coords, {}, None, {})
    want = xr.DataArray(np.ones((2, 4)), dims=("x", "z"), coords=coords)
    xr.testing.assert_identical(got, want)
    assert list(got.xindexes) == list(want.xindexes)
