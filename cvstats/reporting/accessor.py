"""The ``.cvstats`` accessor of xarray DataArrays: ``cube.cvstats.describe()`` and friends.

:mod:`cvstats` registers it (:func:`xarray.register_dataarray_accessor`) as soon
as both cvstats and xarray are imported, in either order, and imports this module
when a cube first uses it (``cvstats/__init__.py``), so that every cube offers

* ``cube.cvstats.describe()`` — :func:`cvstats.describe`;
* ``cube.cvstats.validate()`` — :func:`cvstats.validate`;
* ``cube.cvstats.compare(formula=None, **kw)`` — :func:`cvstats.compare`, the formula
  defaulting to ``"<name> ~ model"`` (a contrast cube is compared as it is);
* ``cube.cvstats.pairwise(models=None)`` — :func:`cvstats.pairwise`, the contrast cube
  of all pairwise differences (``cube.cvstats.pairwise().cvstats.compare()``).

Part of the reporting layer (``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import xarray as xr

from cvstats.cube.dense import unit_dim
from cvstats.cube.formula import pairwise
from cvstats.cube.schema import CONTRAST, MODEL
from cvstats.cube.validation import validate
from cvstats.reporting.compare import ComparisonTable, compare
from cvstats.reporting.describe import CubeDescription, describe

__all__ = ["CvstatsAccessor"]


class CvstatsAccessor:
    """cvstats on a cube: ``cube.cvstats.describe()``, ``.validate()``, ``.compare()``...

    Parameters
    ----------
    obj : xarray.DataArray
        The cube (a loss, compact, score or contrast cube).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> d = cvstats.designs.resampled(20, 5, J=3, seed=0)
    >>> cube = cvstats.from_arrays(np.ones((3, 20, 2)), design=d, models=["a", "b"])
    >>> cube.cvstats.describe().means
    (1.0, 1.0)
    >>> cube.cvstats.pairwise().contrast.values.tolist()
    ['a - b']
    """

    def __init__(self, obj: xr.DataArray) -> None:
        self._obj = obj

    def describe(self) -> CubeDescription:
        """Validate the cube and describe it (:func:`cvstats.describe`)."""
        return describe(self._obj)

    def validate(self) -> None:
        """Check the cube against the schema (:func:`cvstats.validate`); raise CubeError if not."""
        validate(self._obj)

    def compare(self, formula: str | None = None, **kwargs: Any) -> ComparisonTable:
        """Run :func:`cvstats.compare` on the cube.

        Parameters
        ----------
        formula : str, optional
            Default ``"<name> ~ model"`` (the cube's name on the left); a contrast
            cube (``cube.cvstats.pairwise()``) is compared as it is.
        **kwargs
            ``methods``, ``mu0``, ``alpha``, ``alternative``, ``target``,
            ``adjust``, ``n1``, ``n2`` of :func:`cvstats.compare`.

        Returns
        -------
        ComparisonTable
        """
        if formula is None:
            if unit_dim(self._obj) == CONTRAST:
                return compare(self._obj, **kwargs)
            formula = f"{self._obj.name} ~ {MODEL}"
        return compare(formula, self._obj, **kwargs)

    def pairwise(self, models: Sequence[str] | None = None) -> xr.DataArray:
        """Return the contrast cube of all pairwise differences (:func:`cvstats.pairwise`)."""
        return pairwise(self._obj, models=models)
