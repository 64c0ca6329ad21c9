"""Fixtures shared by the test files of several folders."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
import xarray as xr

import cvstats
from cvstats import designs


@pytest.fixture(scope="session")
def gamma_datasets_cube() -> Callable[..., xr.DataArray]:
    """Build a cube of three learners over datasets, random splits, gamma losses.

    ``build(n_datasets, models, n=40, n_test=8, J=8)``: losses Gamma(2, 1) times
    ``[1.0, 1.3, 1.05]`` (the second learner worst, the first best), datasets
    ``d0, d1, ...``, the splits of ``designs.resampled(n, n_test, J=J, seed=3)``
    shared by every dataset; named ``sq``.
    """

    def build(
        n_datasets: int, models: Sequence[str], n: int = 40, n_test: int = 8, J: int = 8
    ) -> xr.DataArray:
        d = designs.resampled(n, n_test, J=J, seed=3)
        rng = np.random.default_rng(4)
        losses = rng.gamma(2.0, 1.0, size=(n_datasets, J, n, 3)) * np.array([1.0, 1.3, 1.05])
        return cvstats.from_arrays(
            losses,
            design=d,
            models=models,
            extra_dims=["dataset"],
            extra_coords={"dataset": [f"d{i}" for i in range(n_datasets)]},
            name="sq",
        )

    return build
