"""``apply_kernel``: its in-memory path returns what ``xarray.apply_ufunc`` returns.

On numpy inputs sharing their batch dims, ``apply_kernel`` calls the kernel
directly (issue 16: ``apply_ufunc``'s per-call cost dominates on split means);
everywhere else it goes through ``apply_ufunc``. Each case here is run both
ways and the results must be identical (values, dims, coordinates, name,
attrs).
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from cvstats.cube import apply
from cvstats.cube.apply import apply_kernel


def _through_apply_ufunc(monkeypatch: pytest.MonkeyPatch, *args, **kwargs):
    monkeypatch.setattr(apply, "_in_memory", lambda *a, **k: None)
    try:
        return apply_kernel(*args, **kwargs)
    finally:
        monkeypatch.undo()


def _arrays() -> tuple[xr.DataArray, xr.DataArray]:
    rng = np.random.default_rng(0)
    coords = {
        "dataset": [10, 20, 30],
        "contrast": ["a - b", "a - c"],
        "label": ("dataset", list("xyz")),
    }
    mu = xr.DataArray(
        rng.random((3, 2, 5)),
        dims=("dataset", "contrast", "_j"),
        coords=coords,
        name="loss",
        attrs={"metric": "loss", "greater_is_better": 0},
    )
    other = xr.DataArray(
        rng.random((3, 2, 5)),
        dims=("dataset", "contrast", "_j"),
        coords=coords,
        name="loss",
        attrs={"n": 5},
    )
    return mu, other


def _two(a: np.ndarray, b: np.ndarray, *, scale: float) -> tuple[np.ndarray, np.ndarray]:
    return scale * (a.mean(-1) - b.mean(-1)), np.stack([a.min(-1), b.max(-1)], axis=-1)


CASES = {
    "one output": (lambda a: a.var(-1, ddof=1), 1, {}, {}),
    "two outputs, an output core dim": (
        _two,
        2,
        {"output_core_dims": [[], ["side"]], "output_sizes": {"side": 2}},
        {"scale": 2.0},
    ),
    "an input core dim kept in the output": (
        lambda a: np.sort(a, axis=-1)[..., ::-1],
        1,
        {"output_core_dims": [["_j"]]},
        {},
    ),
    "attrs dropped": (lambda a: a.sum(-1), 1, {"keep_attrs": False}, {}),
    "attrs kept": (lambda a: a.sum(-1), 1, {"keep_attrs": True}, {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_in_memory_path_is_identical_to_apply_ufunc(case, monkeypatch):
    kernel, n_out, options, kwargs = CASES[case]
    mu, other = _arrays()
    arrays = [mu, other] if n_out == 2 else [mu]
    core = [["_j"]] * len(arrays)
    got = apply_kernel(kernel, arrays, core, n_out, **options, **kwargs)
    want = _through_apply_ufunc(monkeypatch, kernel, arrays, core, n_out, **options, **kwargs)
    assert len(got) == len(want) == n_out
    for g, w in zip(got, want, strict=True):
        xr.testing.assert_identical(g, w)


@pytest.mark.parametrize("keep_attrs", [None, False])
def test_names_follow_apply_ufunc(monkeypatch, keep_attrs):
    """The first input's name when attrs are kept; a common name only, when dropped."""
    mu, other = _arrays()
    other = other.rename("other")
    args = (lambda a, b: a.sum(-1) + b.sum(-1), [mu, other], [["_j"], ["_j"]], 1)
    (got,) = apply_kernel(*args, keep_attrs=keep_attrs)
    (want,) = _through_apply_ufunc(monkeypatch, *args, keep_attrs=keep_attrs)
    xr.testing.assert_identical(got, want)


def test_cases_it_leaves_to_apply_ufunc():
    """Batch dims that need broadcasting, labels that do not align, dask: apply_ufunc."""
    mu, other = _arrays()
    assert (
        apply._in_memory(np.sum, [mu, other.isel(contrast=0)], [["_j"], ["_j"]], [[]], None, {})
        is None
    )
    shifted = other.assign_coords(dataset=[11, 21, 31])
    assert apply._in_memory(np.sum, [mu, shifted], [["_j"], ["_j"]], [[]], None, {}) is None
    with pytest.raises(ValueError, match="exact|align|index"):
        apply_kernel(lambda a, b: a.sum(-1) + b.sum(-1), [mu, shifted], [["_j"], ["_j"]], 1)
    pytest.importorskip("dask")
    assert apply._in_memory(np.sum, [mu.chunk()], [["_j"]], [[]], None, {}) is None
