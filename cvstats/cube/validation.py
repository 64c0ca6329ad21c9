"""The one validation entry of the data model: :func:`validate` dispatches on the cube's form."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import xarray as xr

from cvstats.cube.compact import SLOT, validate_compact
from cvstats.cube.dense import validate_dense
from cvstats.cube.known import Checked, Facts, recall, remember
from cvstats.cube.score import is_score, validate_score
from cvstats.errors import CubeError

__all__ = ["validate", "validated", "checked", "check_finite_means"]


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
    validated(cube)


def validated(cube: xr.DataArray, *, defer_finite: bool = False) -> Facts:
    """Validate ``cube`` as :func:`validate` does, and return what validation established.

    A cube known valid (:func:`cvstats.cube.known.recall`: a lazy cube
    remembered since it was validated and provably unchanged) is not read
    again, but for the finiteness of a lazy contrast cube (``Facts.finite`` False),
    checked here in one read unless ``defer_finite`` (the caller checks it from
    the split means it computes anyway: :func:`check_finite_means`). A cube that
    passes is remembered (:func:`cvstats.cube.known.remember`) if it cannot
    change unseen (a lazy cube from a store).

    Raises
    ------
    CubeError
        As :func:`validate`.
    """
    facts = recall(cube) if isinstance(cube, xr.DataArray) else None
    if facts is not None and (facts.finite or defer_finite):
        return facts
    if facts is not None:  # all but finiteness proved: one read for it
        if bool(np.isinf(cube).any()):
            _checked(cube)  # names the first infinity
        facts = replace(facts, finite=True)
        remember(cube, facts)
        return facts
    facts = _checked(cube)
    remember(cube, facts)
    return facts


def checked(cube: xr.DataArray | Checked, *, defer_finite: bool = False) -> Checked:
    """Return the validated handle of ``cube`` (:class:`cvstats.cube.known.Checked`).

    A handle is returned as it is (its holder validated the cube); a cube is
    validated by :func:`validated`.
    """
    if isinstance(cube, Checked):
        return cube
    return Checked(cube, validated(cube, defer_finite=defer_finite))


def _checked(cube: xr.DataArray) -> Facts:
    """Run the checks of the cube's form (every value read)."""
    if isinstance(cube, xr.DataArray) and SLOT in cube.dims:
        validate_compact(cube)
        return Facts()
    if is_score(cube):
        validate_score(cube)
        return Facts()
    return validate_dense(cube)


def check_finite_means(cube: xr.DataArray, means: xr.DataArray) -> None:
    """Finish the validation a caller deferred (``validated(cube, defer_finite=True)``).

    ``means`` are the split means of ``cube``, computed: every split has a test
    example (validated), so a mean is finite unless a loss is infinite (or the
    sum of the split's losses overflows). A non-finite mean sends the cube to
    the full validation, which names the first infinity.

    Raises
    ------
    CubeError
        If a loss is infinite, or a split's sum of losses overflows.
    """
    if np.isfinite(np.asarray(means.values)).all():
        return
    _checked(cube)
    raise CubeError(
        "a split's sum of losses overflows the float range (its mean is not finite); "
        "rescale the losses."
    )
