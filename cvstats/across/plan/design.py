"""The design a plan recommends: the search over ``J``, the knee and the result (§10).

:func:`planned_design` sets the planned design (test size, correction, the step and
the least of ``J``); :func:`search` finds the smallest ``J`` meeting each target within
the budget and, for a target out of reach, the knee, the smallest ``J`` within
``knee_tolerance`` of the best reachable half-width or power (docs/planning.md, "When a
target is out of reach"); :func:`grid_of` the ``J`` the result reports and
:func:`plan_result` the :class:`~cvstats.results.plan.PlanResult`. May import the
layers below ``across`` (docs/architecture.md), and the plan's options and power models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from cvstats.across.plan.options import (
    BOOTSTRAPS,
    DEFAULT_J,
    PLANNED_METHODS,
    SEARCH_LIMIT,
    count,
)
from cvstats.across.plan.pilot import Pilot, Rho
from cvstats.across.plan.power import (
    GridCurves,
    PilotModel,
    Variances,
    design_curves,
    on_units,
)
from cvstats.errors import ArgumentError
from cvstats.inference.blocks import kfold_layout
from cvstats.results.base import BOUNDS, CI_BOUND
from cvstats.results.plan import PlanResult

# the default grid: J = 2..50 (random splits), or K, 2K, ... up to 50 folds (10 repeats at least)
_GRID_MAX = 50


@dataclass
class Planned:
    """The planned design: its test size, correction ``c``, ``ρ0`` and the ``J`` it allows."""

    method: str
    K: int
    n1: int
    n2: int
    c: float
    rho0: float
    step: int
    smallest: int
    c_test: float

    @property
    def kfold(self) -> bool:
        """Whether the planned design is repeated k-fold."""
        return self.method == "corrected_repeated_kfold_t"


def planned_design(method: str, pilot: Pilot, n_test: Any) -> Planned:
    """Return the planned design: k-fold (``J`` a multiple of ``K``) or random splits.

    The test's own correction ``c_test`` is ``c = n2/n1`` (``1/(K - 1)`` for k-fold),
    0 for the uncorrected bootstrap.
    """
    cz, boot = method == "conservative_z", method in BOOTSTRAPS
    if method == "corrected_repeated_kfold_t":
        K, _ = kfold_layout(pilot.units, "plan (corrected_repeated_kfold_t)")
        if n_test is not None:
            raise ArgumentError(
                "`n_test` applies to random splits only: a k-fold design tests n/K examples "
                "per fold."
            )
        n1, n2 = pilot.n1, pilot.n2
        c, rho0 = 1.0 / (K - 1), 1.0 / K
        step, smallest = K, K
    else:
        K = 0
        if cz and n_test is not None:
            raise ArgumentError(
                "`n_test` does not apply to the conservative Z: its halves' training size "
                "⌊n/2⌋ - n2 moves with n2, which the pilot's 'half' block does not show; plan "
                "at the pilot's test size."
            )
        n2 = pilot.n2 if n_test is None else count("n_test", n_test, 1)
        n1 = pilot.n1 + pilot.n2 - n2
        if n1 < 1:
            raise ArgumentError(
                f"`n_test` = {n2} leaves no training example (the pilot's splits use "
                f"{pilot.n1 + pilot.n2} of n = {pilot.n} examples)."
            )
        c, rho0 = n2 / n1, n2 / (n1 + n2)
        step, smallest = 1, (1 if cz or boot else 2)
    c_test = 0.0 if method == "bootstrap_t" else c
    return Planned(method, K, n1, n2, c, rho0, step, smallest, c_test)


def first_met(J: xr.DataArray, met: xr.DataArray) -> xr.DataArray:
    """Return the smallest ``J`` where ``met`` holds (NaN where it never does)."""
    return J.astype(float).where(met).min("J")


def knee(
    J: xr.DataArray, curve: xr.DataArray, afford: Any, tolerance: float, *, higher: bool
) -> tuple[xr.DataArray, xr.DataArray]:
    """Return the knee of a curve over ``J`` and the ``J`` where its best is reached.

    The best reachable value is the least half-width (``higher=False``) or the
    greatest power (``higher=True``) of the designs searched within the budget
    (``afford``); the knee is the smallest ``J`` within the budget whose value is
    within ``tolerance`` of it, relatively: a half-width at most ``(1 + tolerance)``
    times the best, a power at least ``(1 - tolerance)`` times the best
    (docs/planning.md, "When a target is out of reach"). No monotonicity is assumed.
    """
    reach = curve.where(afford)
    best = reach.max("J") if higher else reach.min("J")
    near = curve >= (1 - tolerance) * best if higher else curve <= (1 + tolerance) * best
    return first_met(J, near & afford), first_met(J, reach == best)


@dataclass
class Search:
    """The designs found: the smallest ``J`` per target, the knee and the ``J`` chosen."""

    J: int | None
    budget_fits: int | None
    budget_J: xr.DataArray | None
    top: int
    limit: int
    J_width: xr.DataArray
    J_power: xr.DataArray
    J_plan: xr.DataArray
    J_knee: xr.DataArray
    J_chosen: xr.DataArray
    bests: list[xr.DataArray]


def _budget(
    J: Any, budget_fits: Any, var: Variances, design: Planned, param: str
) -> tuple[int | None, int | None, xr.DataArray, xr.DataArray | None, int, int]:
    """Check ``J`` and ``budget_fits``; return them, the fits per split, the budget's ``J``.

    And the end of the search and its limit.

    The search ends at the budget, or at :data:`SEARCH_LIMIT` splits (beyond, ``σ1 ρ``
    dominates anyway).
    """
    step, smallest = design.step, design.smallest
    if J is not None:
        J = count("J", J, smallest)
        if J % step:
            raise ArgumentError(
                f"`J` must be a multiple of K = {design.K} (J = K × repeats), got {J}."
            )
    one = xr.DataArray([1], dims="J", coords={"J": [1]})
    cost = var.fits(one).isel(J=0, drop=True)  # fits per split, per M or R
    limit = SEARCH_LIMIT * step
    budget_J = None
    if budget_fits is not None:
        budget_fits = count("budget_fits", budget_fits, 1)
        budget_J = (budget_fits // cost) // step * step
        if bool((budget_J < smallest).any()):
            worst = int(cost.max()) * smallest
            where = f" with {param} = {int(var.P.max())}" if param else ""
            raise ArgumentError(
                f"`budget_fits` = {budget_fits} does not pay for the smallest design{where} "
                f"(J = {smallest}: {worst} fits per learner)."
            )
    top = limit if budget_J is None else min(int(budget_J.max()), limit)
    return J, budget_fits, cost, budget_J, top, limit


def _pilot_power_search(
    pilot_model: PilotModel,
    s2: xr.DataArray,
    values: np.ndarray,
    effect: float,
    power: float,
    afford: Any,
    wide: xr.DataArray | None,
) -> tuple[xr.DataArray, xr.DataArray]:
    """Return where the pilot model's power meets ``power`` within the budget, and the power.

    The pilot model costs a mixture over the datasets per ``J``: the search goes in growing
    chunks of ``J``, up to the first ``J`` meeting every target for every unit; the power
    is searched at every ``J`` unless every target is met (NaN beyond).
    """
    chunks, powers, start, size = [], [], 0, 64
    done = xr.zeros_like(s2, dtype=bool)
    while start < values.size:
        Js = values[start : start + size]
        powers.append(on_units(s2, Js, pilot_model.curve(Js, [effect])[0][..., 0]))
        ok = powers[-1] >= power
        if isinstance(afford, xr.DataArray):
            ok = ok & afford.sel(J=Js)
        chunks.append(ok)
        met = (ok & wide.sel(J=Js)) if wide is not None else ok
        done = done | met.any("J")
        start, size = start + size, min(2 * size, 4096)
        if bool(done.all()):
            break
    strong = xr.concat(chunks, dim="J").reindex(J=values, fill_value=False)
    return strong, xr.concat(powers, dim="J").reindex(J=values)


def search(
    var: Variances,
    design: Planned,
    k: xr.DataArray,
    pilot_model: PilotModel | None,
    *,
    J: Any,
    budget_fits: Any,
    param: str,
    target_width: float | None,
    effect: float | None,
    power: float,
    knee_tolerance: float,
) -> Search:
    """Return the smallest ``J`` meeting each target within the budget, the knee and the choice.

    A target out of reach (within the budget, or the search) gets the knee of its curve
    (docs/planning.md, "When a target is out of reach"); with both targets, the larger
    of the two ``J``. The ``J`` chosen is ``J`` if asked, else the knee of a target out
    of reach, else the smallest design meeting every target, else :data:`DEFAULT_J`
    (within the budget).
    """
    step, smallest = design.step, design.smallest
    J, budget_fits, cost, budget_J, top, limit = _budget(J, budget_fits, var, design, param)
    values = np.arange(smallest, top + 1, step)
    searched = xr.DataArray(values, dims="J", coords={"J": values})
    half, _, pwr, _, _ = design_curves(*var.parts(searched, k), effect=effect)
    afford = var.fits(searched) <= budget_fits if budget_fits is not None else True
    wide = (half <= target_width) & afford if target_width is not None else None
    if effect is None:
        strong = None
    elif pilot_model is None:
        strong = (pwr >= power) & afford
    else:
        strong, pwr = _pilot_power_search(pilot_model, var.s2, values, effect, power, afford, wide)
    nan = xr.full_like(var.s2 * cost, np.nan, dtype=float)
    J_width = first_met(searched, wide) if wide is not None else nan
    J_power = first_met(searched, strong) if strong is not None else nan
    if wide is not None or strong is not None:
        both = (wide if wide is not None else True) & (strong if strong is not None else True)
        J_plan = first_met(searched, both)
    else:
        J_plan = nan
    J_width, J_power, J_plan = (a.broadcast_like(nan) for a in (J_width, J_power, J_plan))
    # targets out of reach (within the budget, or the search): the knee of each curve
    # (docs/planning.md, "When a target is out of reach")
    knees, bests = [], []
    for met_from, curve, higher in ((J_width, half, False), (J_power, pwr, True)):
        if (higher and effect is None) or (not higher and target_width is None):
            continue
        J_knee, best = knee(searched, curve, afford, knee_tolerance, higher=higher)
        knees.append(met_from.fillna(J_knee))
        bests.append(best.where(met_from.isnull()))
    if knees:
        J_knee = xr.concat(knees, dim="_target").max("_target").where(J_plan.isnull())
    else:
        J_knee = nan
    J_knee = J_knee.broadcast_like(nan)
    if J is not None:
        J_chosen = xr.full_like(nan, J, dtype=np.int64)
    elif knees:
        # a target out of reach: the knee; else the smallest design meeting every target
        J_chosen = J_plan.fillna(J_knee).astype(np.int64)
    else:
        # no target: DEFAULT_J (within the budget)
        usual = -(-DEFAULT_J // step) * step
        fallback = usual if budget_J is None else np.minimum(budget_J, usual)
        J_chosen = (nan.fillna(0) + fallback).astype(np.int64)
    return Search(
        J=J,
        budget_fits=budget_fits,
        budget_J=budget_J,
        top=top,
        limit=limit,
        J_width=J_width,
        J_power=J_power,
        J_plan=J_plan,
        J_knee=J_knee,
        J_chosen=J_chosen,
        bests=bests,
    )


def grid_of(found: Search, design: Planned) -> xr.DataArray:
    """Return the ``J`` the plan reports: 2 (or 1) to 50, the ``J`` asked, found and budgeted.

    Around the knee: the ``J`` before it, and where the best is reached.
    """
    step, smallest = design.step, design.smallest
    default = np.arange(smallest, max(_GRID_MAX, 10 * step) + 1, step)
    before = found.J_knee - step
    designs = [
        a.values[np.isfinite(a.values)]
        for a in (found.J_width, found.J_power, found.J_plan, found.J_knee, before, *found.bests)
    ]
    extra_J = [
        found.J_chosen.values.ravel(),
        *designs,
        [found.J] if found.J is not None else [],
        [found.top],
    ]
    if found.budget_J is not None:
        extra_J.append(np.minimum(np.ravel(found.budget_J.values), found.limit))
    grid = np.union1d(default, np.concatenate([np.asarray(v, dtype=float) for v in extra_J]))
    grid = grid[grid >= smallest].astype(np.int64)
    return xr.DataArray(grid, dims="J", coords={"J": grid})


def plan_result(
    *,
    pilot: Pilot,
    design: Planned,
    rho: Rho,
    var: Variances,
    found: Search,
    Jg: xr.DataArray,
    curves: GridCurves,
    limits: tuple[xr.DataArray, xr.DataArray],
    param: str,
    targets: tuple[float | None, float | None, float],
    alpha: float,
    knee_tolerance: float,
    note: str,
    power_model: str,
) -> PlanResult:
    """Return the :class:`~cvstats.results.plan.PlanResult` of the plan.

    The grid's numbers over ``(J, unit, *extra dims, M or R)``, the units' over the
    rest, with the designs found.
    """
    target_width, effect, power = targets
    budget_fits = found.budget_fits
    half, pwr = curves.half, curves.power
    n_fits = var.fits(Jg)
    meets = xr.ones_like(half, dtype=bool)
    if target_width is not None:
        meets = meets & (half <= target_width)
    if effect is not None:
        meets = meets & (pwr >= power)
    if budget_fits is not None:
        meets = meets & (n_fits <= budget_fits)
    half_limit, power_limit = limits
    s2 = var.s2

    tail = [param] if param else []
    order = ["J", pilot.unit, *[d for d in s2.dims if d != pilot.unit], *tail]
    units_order = order[1:]

    def grid_da(a: xr.DataArray) -> xr.DataArray:
        a = a.broadcast_like(half)
        return a.transpose(*order)

    def unit_da(a: xr.DataArray) -> xr.DataArray:
        return a.transpose(*[d for d in units_order if d in a.dims])

    def interval(low: xr.DataArray, high: xr.DataArray) -> xr.DataArray:
        out = xr.concat([grid_da(low), grid_da(high)], dim=CI_BOUND, coords="minimal")
        return out.assign_coords({CI_BOUND: np.array(BOUNDS)}).transpose(*order, CI_BOUND)

    halves = var.halves
    return PlanResult(
        method=design.method,
        title=PLANNED_METHODS[design.method],
        loss=str(pilot.units.name),
        alpha=alpha,
        target_width=target_width,
        effect=effect,
        target_power=power,
        budget_fits=budget_fits,
        n=pilot.n,
        n1=design.n1,
        n2=design.n2,
        K=design.K,
        design_dim=param,
        half_n1=halves["n1"] if halves else 0,
        pilot_splits=pilot.J,
        pilot_n2=pilot.n2,
        pilot_df=pilot.df,
        pilot_halves=halves["M_p"] if halves else 0,
        search_end=int(found.top),
        search_limit=int(found.limit),
        rho_source=rho.source,
        assumption=rho.assumption,
        note=note,
        power_model=power_model,
        n_fits=n_fits.transpose("J", *tail),
        half_width=grid_da(half),
        half_width_ci=interval(curves.half_lo, curves.half_hi),
        mean_half_width=grid_da(curves.mean_half),
        power=grid_da(pwr),
        power_ci=interval(curves.power_lo, curves.power_hi),
        size=grid_da(curves.size),
        size_ci=interval(curves.size_lo, curves.size_hi),
        political_ratio=grid_da(curves.ratio),
        variance=grid_da(curves.variance),
        expected_variance=grid_da(curves.expected_variance),
        meets_target=grid_da(meets),
        pilot_estimate=unit_da(pilot.estimate),
        s2=unit_da(s2),
        rho=unit_da(rho.rho),
        rho_ci=rho.rho_ci.transpose(*[d for d in units_order if d in rho.rho_ci.dims], CI_BOUND),
        sigma1=unit_da(rho.sigma1),
        half_width_limit=unit_da(half_limit),
        power_limit=unit_da(power_limit),
        J_width=unit_da(found.J_width),
        J_power=unit_da(found.J_power),
        J_plan=unit_da(found.J_plan),
        J_knee=unit_da(found.J_knee),
        J_chosen=unit_da(found.J_chosen),
        knee_tolerance=knee_tolerance,
    )
