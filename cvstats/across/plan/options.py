"""The options of :func:`~cvstats.across.plan.plan`: its constants and argument checks.

The public constants are re-exported by :mod:`cvstats.across.plan`; the checks raise
:class:`~cvstats.errors.ArgumentError` naming the argument, the value and the fix.
May import the layers below ``across`` (docs/architecture.md); nothing of the other
parts of the plan.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from cvstats.errors import ArgumentError

#: The tests :func:`plan` plans for, and the title of their plans.
PLANNED_METHODS = {
    "corrected_resampled_t": "Plan for the corrected resampled t",
    "corrected_repeated_kfold_t": "Plan for the corrected repeated k-fold t",
    "conservative_z": "Plan for the conservative Z",
    "corrected_bootstrap_t": "Plan for the corrected bootstrap",
    "bootstrap_t": "Plan for the bootstrap (resampling replicates)",
}
#: The design reported when no ``J`` is asked and no target is met (Nadeau & Bengio, 2000, §4:
#: beyond 15 splits the power of the corrected resampled t grew little in their simulations).
DEFAULT_J = 15
#: Half-splits of a conservative Z plan when ``M`` is not given (Nadeau & Bengio, 2000, §4).
DEFAULT_M = 10
#: Replicates of a bootstrap plan when ``R`` is not given: the ``R = 15`` of the bootstrap
#: (resampling replicates, docs/theory.md §4, method 5) in the simulation study of Nadeau &
#: Bengio (2003), whose settings docs/theory.md §6 lists ("Settings studied").
DEFAULT_R = 15
#: Most splits searched for the smallest design meeting a target, without a budget.
SEARCH_LIMIT = 10_000
#: The default relative tolerance of the knee recommended when a target is out of reach:
#: the smallest ``J`` whose half-width is within 10 % of the best reachable (docs/planning.md,
#: "When a target is out of reach").
KNEE_TOLERANCE = 0.1
#: The power models of :func:`plan` (docs/theory.md §10, "The pilot power model").
POWER_MODELS = ("auto", "gaussian", "pilot")
#: Least independent datasets (a ``dataset`` dim) of a pilot for ``power_model="pilot"``.
PILOT_MIN_DATASETS = 20
#: Least main splits per dataset of a pilot for ``power_model="pilot"``.
PILOT_MIN_SPLITS = 5
#: The methods the pilot power model plans: their statistic uses the main splits only.
PILOT_METHODS = ("corrected_resampled_t",)
#: The bootstraps, whose design parameter is the number of replicates ``R``.
BOOTSTRAPS = ("corrected_bootstrap_t", "bootstrap_t")
#: The extra dim of independent datasets (as for fit_rho).
DATASET = "dataset"
#: The name the plan gives the blocks' and the time-order checks.
NAME = "plan"


def real(name: str, value: Any) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ArgumentError(f"`{name}` must be a finite real number, got {value!r}.")
    return float(value)


def count(name: str, value: Any, least: int) -> int:
    """Return ``value`` as an int ``>= least``, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ArgumentError(f"`{name}` must be an int >= {least}, got {value!r}.")
    return int(value)


def check_method(method: Any, power_model: Any) -> None:
    """Check ``method`` and ``power_model`` (and their pairing), before the pilot is read."""
    if not isinstance(method, str) or method not in PLANNED_METHODS:
        raise ArgumentError(
            f"`method` must be one of {list(PLANNED_METHODS)}, got {method!r}; the other tests "
            "have no number of splits to plan, or an interval for another quantity "
            "(docs/planning.md)."
        )
    if not isinstance(power_model, str) or power_model not in POWER_MODELS:
        raise ArgumentError(
            f"`power_model` must be one of {list(POWER_MODELS)}, got {power_model!r} "
            '(docs/planning.md, "Which power model").'
        )
    if power_model == "pilot" and method not in PILOT_METHODS:  # before reading the pilot
        raise ArgumentError(unplanned_method(method) + ".")


def unplanned_method(method: str) -> str:
    """Return why the pilot power model does not plan ``method``, and the fix."""
    return (
        f"power_model='pilot' is implemented for {list(PILOT_METHODS)} only, not "
        f"method={method!r} (docs/theory.md §10); use power_model='gaussian' (Lemma 2)"
    )


def check_targets(
    target_width: Any, effect: Any, power: Any, alpha: float
) -> tuple[float | None, float | None, float]:
    """Return ``target_width``, ``effect`` and ``power`` checked."""
    if target_width is not None:
        target_width = real("target_width", target_width)
        if target_width <= 0:
            raise ArgumentError(
                f"`target_width` must be a positive half-width (in the loss's units), "
                f"got {target_width!r}."
            )
    if effect is not None:
        effect = real("effect", effect)
        if effect == 0:
            raise ArgumentError(
                "`effect` must be a non-zero difference to detect (the power to detect 0 "
                "is the test's level)."
            )
    power = real("power", power)
    if not alpha < power < 1:
        raise ArgumentError(
            f"`power` must lie strictly between `alpha` = {alpha:g} and 1, got {power!r}."
        )
    return target_width, effect, power


def check_knee_tolerance(knee_tolerance: Any) -> float:
    """Return ``knee_tolerance`` checked: a relative tolerance in ``[0, 1)``."""
    knee_tolerance = real("knee_tolerance", knee_tolerance)
    if not 0 <= knee_tolerance < 1:
        raise ArgumentError(
            f"`knee_tolerance` must lie in [0, 1) (a relative tolerance, e.g. 0.1 for 10 %), "
            f"got {knee_tolerance!r}."
        )
    return knee_tolerance


def design_values(method: str, M: Any, R: Any) -> tuple[str, np.ndarray]:
    """Return the design parameter of the method (``"M"``, ``"R"`` or none) and its values."""
    if method == "conservative_z":
        dim, given, default, least, other = "M", M, DEFAULT_M, 1, ("R", R)
    elif method in BOOTSTRAPS:
        dim, given, default, least, other = "R", R, DEFAULT_R, 2, ("M", M)
    else:
        for name, value in (("M", M), ("R", R)):
            if value is not None:
                raise ArgumentError(
                    f"`{name}` applies to the conservative Z (M) and the bootstraps (R) only, "
                    f"not to method={method!r}."
                )
        return "", np.array([0])
    if other[1] is not None:
        raise ArgumentError(f"`{other[0]}` does not apply to method={method!r}; use `{dim}`.")
    if given is None:
        return dim, np.array([default])
    items = list(given) if isinstance(given, Sequence) and not isinstance(given, str) else [given]
    if not items:
        raise ArgumentError(f"`{dim}` must be an int or a non-empty sequence of ints.")
    values = np.unique([count(dim, v, least) for v in items])
    return dim, values


def check_rho(rho: Any, like: xr.DataArray) -> xr.DataArray:
    """Return a given ``rho`` as a DataArray, checked against the plan's dims and ``[0, 1)``."""
    if isinstance(rho, xr.DataArray):
        extra = [str(d) for d in rho.dims if d not in like.dims]
        if extra:
            raise ArgumentError(
                f"`rho` has dims {extra} that the plan does not have (its dims: "
                f"{[str(d) for d in like.dims]})."
            )
        values = np.asarray(rho.values, dtype=float)
        out = rho.astype(float)
    else:
        value = real("rho", rho)
        values = np.asarray(value)
        out = xr.DataArray(value)
    if not np.all((values >= 0) & (values < 1)):
        raise ArgumentError(
            f"`rho` must lie in [0, 1) (a correlation of split means, docs/theory.md §2), got "
            f"{np.ravel(values)[:5].tolist()}."
        )
    return out


def join_notes(*parts: str) -> str:
    """Join the non-empty parts of a plan's note with ``"; "``."""
    return "; ".join(p for p in parts if p)
