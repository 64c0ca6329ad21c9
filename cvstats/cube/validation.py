"""The one validation entry of the data model: :func:`validate` dispatches on the cube's form."""

from __future__ import annotations

import xarray as xr

from cvstats.cube.compact import SLOT, validate_compact
from cvstats.cube.dense import validate_dense
from cvstats.cube.score import is_score, validate_score

__all__ = ["validate"]


def validate(cube: xr.DataArray) -> None:
    """Check that ``cube`` follows the cube schema (``docs/cube-schema.md``), whatever its form.

    Looks at the form once and runs its checks: a compact cube (dim ``slot``) by
    :func:`cvstats.cube.compact.validate_compact`; a score cube (a ``split`` dim
    and no ``example`` or ``slot`` dim: one value per split and model) by
    :func:`cvstats.cube.score.validate_score`; anything else as a dense loss
    cube by :func:`cvstats.cube.dense.validate_dense` (which names the problem
    when it is not a cube at all).

    Parameters
    ----------
    cube : xarray.DataArray
        The cube to check.

    Raises
    ------
    CubeError
        Naming the first problem found and how to fix it.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> d = cvstats.designs.resampled(20, 5, J=3, seed=0)
    >>> cube = cvstats.from_arrays(np.ones((3, 20, 2)), design=d, models=["a", "b"])
    >>> cvstats.validate(cube)
    >>> cvstats.validate(cube.rename(None))
    Traceback (most recent call last):
    ...
    cvstats.errors.CubeError: the cube has no name; ...
    """
    if isinstance(cube, xr.DataArray) and SLOT in cube.dims:
        validate_compact(cube)
    elif is_score(cube):
        validate_score(cube)
    else:
        validate_dense(cube)
