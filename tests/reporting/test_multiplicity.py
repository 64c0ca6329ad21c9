"""Holm's adjustment computed for many families at once equals statsmodels' multipletests."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import xarray as xr
from statsmodels.stats.multitest import multipletests

from cvstats.reporting.multiplicity import adjust_pvalues


def _reference(pvalues: np.ndarray, keep: np.ndarray, method: str) -> np.ndarray:
    out = np.full_like(pvalues, np.nan)
    for i, row in enumerate(pvalues):
        member = keep & np.isfinite(row)
        if member.any():
            out[i, member] = multipletests(row[member], method=method)[1]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_holm_over_many_families_equals_multipletests(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 9))
    p = rng.random((40, m)) ** rng.integers(1, 5)
    p[rng.random(p.shape) < 0.15] = np.nan  # some comparisons without a p-value
    p[:5, : min(2, m)] = 0.02  # ties
    tested = rng.random(m) < 0.8  # a model's own level is no member of a family
    pvalue = xr.DataArray(p, dims=("dataset", "contrast"))
    adjusted, size = adjust_pvalues(pvalue, list(tested), "holm", 0.05)
    np.testing.assert_array_equal(adjusted.values, _reference(p, tested, "holm"))
    assert size == int((np.isfinite(p) & tested).sum(axis=1).max())


def test_holm_runs_no_garbage_collection(monkeypatch):
    # statsmodels' Holm calls gc.collect() on every call (~70 ms with a large heap): once per
    # dataset of a table over hundreds of datasets, seconds
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    pvalue = xr.DataArray(np.random.default_rng(1).random((300, 3)), dims=("dataset", "contrast"))
    adjust_pvalues(pvalue, None, "holm", 0.05)
    assert calls == []
    adjust_pvalues(pvalue.isel(dataset=slice(0, 2)), None, "bonferroni", 0.05)
    np.testing.assert_array_equal(  # the other methods are statsmodels' own
        adjust_pvalues(pvalue, None, "fdr_bh", 0.05)[0].values,
        _reference(pvalue.values, np.ones(3, bool), "fdr_bh"),
    )
