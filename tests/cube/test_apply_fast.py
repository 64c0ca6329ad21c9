"""The in-memory path of ``apply_kernel`` gives exactly what ``xarray.apply_ufunc`` gives.

``cvstats.cube.apply._in_memory`` skips xarray's alignment and merge for
numpy-backed inputs with shared coordinates. Here every call it serves, in
every method, ``compare`` and verdict on cubes of every design (extra dims,
several models, one-sided tests, score cubes, k-fold and hold-out designs), is
also made by ``xarray.apply_ufunc``, and the two results must be identical:
values bit for bit, dims, coordinates, indexes, name and attrs.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import cvstats
from cvstats import designs
from cvstats.cube import apply
from cvstats.cube.apply import apply_kernel

N = 60


@pytest.fixture
def checked(monkeypatch):
    """Route every call served by the in-memory path through xarray too, and compare."""
    served = []
    fast = apply._in_memory

    def both(kernel, arrays, core_dims, out_dims, keep_attrs, kwargs):
        got = fast(kernel, arrays, core_dims, out_dims, keep_attrs, kwargs)
        if got is not None:
            dtypes = [float] * len(out_dims)
            want = apply._xarray_apply(
                kernel, arrays, core_dims, out_dims, None, dtypes, keep_attrs, kwargs
            )
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                xr.testing.assert_identical(g, w)  # values, dims, coords, name, attrs
                np.testing.assert_array_equal(g.values, w.values)  # NaN in place, bit for bit
                assert g.values.dtype == w.values.dtype
                assert list(g.coords) == list(w.coords)
                assert list(g.xindexes) == list(w.xindexes)
                for name in g.coords:
                    assert g[name].attrs == w[name].attrs
            served.append(kernel)
        return got

    monkeypatch.setattr(apply, "_in_memory", both)
    return served


def losses(design: xr.Dataset, means: list[float], extra: int = 0, seed: int = 0):
    rng = np.random.default_rng(seed)
    shape = (*([extra] if extra else []), design.sizes["split"], N, len(means))
    values = (rng.random(shape) < np.asarray(means) + 0.2).astype(float)
    return cvstats.from_arrays(
        values,
        design=design,
        models=[f"m{k}" for k in range(len(means))],
        extra_dims=["dataset"] if extra else [],
        name="zero_one",
    )


@pytest.mark.parametrize(
    "design, extra, target, alternative",
    [
        (designs.nadeau_bengio(N, 10, J=4, M=3, R=3, seed=0), 3, "learner", "two-sided"),
        (designs.nadeau_bengio(N, 10, J=4, M=3, R=3, seed=1), 0, "learner", "greater"),
        (designs.kfold(N, 5, repeats=3, seed=0), 2, "learner", "two-sided"),
        (designs.kfold(N, 5, seed=0), 0, "model", "less"),
        (designs.holdout(N, 20, seed=0), 2, "model", "two-sided"),
        (designs.five_by_two(N, seed=0), 0, "learner", "two-sided"),
    ],
    ids=["nb-datasets", "nb-greater", "repeated-kfold", "kfold-model", "holdout", "5x2"],
)
def test_every_method_and_compare_agree_with_xarray(checked, design, extra, target, alternative):
    cube = losses(design, [0.0, 0.1, 0.15], extra)
    table = cvstats.compare("zero_one ~ model", cube, target=target, alternative=alternative)
    str(table.verdict())
    table.to_frame()
    contrast = cvstats.pairwise(cube)
    for name in cvstats.inference.registry.applicable_methods(contrast, target):
        spec = cvstats.inference.registry.METHODS[name]
        if alternative != "two-sided" and name == "combined_5x2cv_f":
            continue
        spec.func(contrast, **spec.fixed, alternative=alternative).to_frame()
    assert len(checked) >= 8  # the in-memory path served the methods' calls


def test_a_score_cube_agrees_with_xarray(checked):
    d = designs.kfold(N, 5, repeats=4, seed=0)
    rng = np.random.default_rng(0)
    scores = 0.8 + 0.01 * rng.standard_normal((d.sizes["split"], 3))
    cube = cvstats.from_scores(
        scores, greater_is_better=True, design=d, models=["a", "b", "c"], metric="roc_auc"
    )
    table = cvstats.compare(f"{cube.name} ~ model", cube)
    str(table.verdict())
    table.to_frame()
    assert len(checked) >= 5


def test_broadcasting_and_transposes_agree_with_xarray(checked):
    a = xr.DataArray(np.arange(24.0).reshape(2, 3, 4), dims=("x", "y", "z"))
    a = a.assign_coords(x=[10, 20], y=["p", "q", "r"], w=("y", [1, 2, 3]))
    a.attrs["u"] = 1
    a.name = "loss"
    # outputs of one call share their coordinate objects, as the methods' arrays do
    (total, mean) = apply_kernel(lambda u: (u.sum(-1), u.mean(-1)), [a], [["z"]], 2)
    assert len(checked) == 1 and total.dims == ("x", "y") and total.attrs == {"u": 1}
    (both,) = apply_kernel(lambda u, v: u - v, [total, mean], [[], []], 1)
    (stacked, first) = apply_kernel(
        lambda u: (u * 2, u[..., 0]), [a], [["y"]], 2, output_core_dims=[["y"], []]
    )
    assert stacked.dims == ("x", "z", "y") and "w" in stacked.coords
    assert "w" not in first.coords  # on the dropped core dim
    assert len(checked) == 3
    # a transposed input and one that lacks a batch dim: index coordinates only
    bare = a.drop_vars("w")
    (total, mean) = apply_kernel(lambda u: (u.sum(-1), u.mean(-1)), [bare], [["z"]], 2)
    row = mean.isel(y=0, drop=True)  # (x,): a new axis for y
    (out,) = apply_kernel(lambda u, v: u + v, [row, total.transpose("y", "x")], [[], []], 1)
    assert out.dims == ("x", "y") and len(checked) == 5
    (out,) = apply_kernel(lambda u, v: u + v, [total.transpose("y", "x"), row], [[], []], 1)
    assert out.dims == ("y", "x") and len(checked) == 6


def test_what_needs_xarray_goes_to_xarray():
    a = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("x", "y"), coords={"x": [1, 2]})
    other = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("x", "y"), coords={"x": [1, 3]})
    assert apply._in_memory(lambda u, v: u + v, [a, other], [[], []], [[]], None, {}) is None
    with pytest.raises(ValueError):  # unequal indexes: xarray's exact join refuses
        apply_kernel(lambda u, v: u + v, [a, other], [[], []], 1)
    big = xr.DataArray(np.zeros((2, 5000)), dims=("x", "z"), coords={"z": np.arange(5000)})
    twin = big.copy(deep=True)  # equal, but another object, too large to compare
    assert apply._in_memory(lambda u, v: u + v, [big, twin], [[], []], [[]], None, {}) is None
    lone = big.assign_coords(w=("z", np.arange(5000.0)))
    twin = lone.copy(deep=True)
    assert apply._in_memory(lambda u, v: u + v, [lone, twin], [[], []], [[]], None, {}) is None
    assert apply._in_memory(lambda u: u, [a], [[]], [[]], False, {}) is None  # attrs dropped
    with xr.set_options(keep_attrs=False):
        assert apply._in_memory(lambda u: u, [a], [[]], [[]], None, {}) is None
    assert apply._in_memory(lambda u: u, [a], [[]], [[]], None, {}) is not None
    dask = pytest.importorskip("dask.array")
    lazy = a.copy(data=dask.from_array(a.values))
    assert apply._in_memory(lambda u: u, [lazy], [[]], [[]], None, {}) is None
    smaller = xr.DataArray(np.arange(4.0).reshape(2, 2), dims=("x", "y"))
    assert (
        apply._in_memory(lambda u, v: u, [a.drop_vars("x"), smaller], [[], []], [[]], None, {})
        is None
    )
    with pytest.raises(ValueError):  # xarray names the conflict
        apply_kernel(lambda u, v: u + v, [a.drop_vars("x"), smaller], [[], []], 1)
    with pytest.raises(ValueError):  # a core dim the input lacks
        apply_kernel(lambda u: u.sum(-1), [a], [["z"]], 1)


def test_equal_small_coordinates_of_other_objects_agree_with_xarray(checked):
    a = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("x", "y"), coords={"x": [1, 2]})
    a = a.assign_coords(w=("x", [0.5, 1.5]))
    other = a.copy(deep=True)  # equal coordinates and index, other objects
    other.coords["w"].attrs["unit"] = "s"
    assert apply._in_memory(lambda u, v: u + v, [a, other], [[], []], [[]], None, {}) is None
    other = a.copy(deep=True) * 2
    (out,) = apply_kernel(lambda u, v: u + v, [a, other], [[], []], 1)
    assert len(checked) == 1 and out.coords["w"].values.tolist() == [0.5, 1.5]
    differs = other.assign_coords(w=("x", [0.5, 2.5]))
    assert apply._in_memory(lambda u, v: u + v, [a, differs], [[], []], [[]], None, {}) is None
    (dropped,) = apply_kernel(lambda u, v: u + v, [a, differs], [[], []], 1)
    assert "w" not in dropped.coords  # xarray's merge drops the conflicting coordinate


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


def test_array_attrs_on_coordinates_go_to_xarray():
    """netCDF attrs such as valid_range are arrays: not comparable with ==, so xarray merges."""
    c = ("t", [1, 2], {"valid_range": np.array([0, 9])})
    a = xr.DataArray([1.0, 2.0], dims="t", coords={"c": c})
    b = a.copy(deep=True)
    assert apply._in_memory(lambda x, y: x + y, [a, b], [[], []], [[]], None, {}) is None
    (out,) = apply_kernel(lambda x, y: x + y, [a, b], [[], []], 1)
    want = xr.apply_ufunc(lambda x, y: x + y, a, b)
    xr.testing.assert_identical(out, want)


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
