"""What a plan reads from its pilot: ``S²``, the halves' variances and ``ρ`` (docs/theory.md §10).

From the pilot's main block, the sample variance ``S²`` of the split means (pooled over
a ``dataset`` dim) estimates ``E[S²] = σ1 (1 - ρ)`` (Lemma 1, docs/theory.md §2), carried
to another test size with the within-split variance of the losses; from its ``"half"``
block, the conservative Z's variance at half data (Nadeau & Bengio, 2000, eq. (8)); and
``ρ``, given, from :func:`~cvstats.across.rho.fit_rho` across the pilot's datasets, or the
test's own ``ρ0``. May import the layers below ``across`` and
:mod:`cvstats.across.rho` (docs/architecture.md), and the plan's options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from cvstats.across.plan.options import DATASET, NAME, check_rho, join_notes
from cvstats.across.rho import fit_rho
from cvstats.cube import is_score, unit_dim
from cvstats.cube.compact import SLOT
from cvstats.cube.formula import pairwise
from cvstats.cube.schema import EXAMPLE, MODEL, SPLIT
from cvstats.errors import CubeError, DesignError
from cvstats.inference.blocks import (
    J_DIM,
    M_DIM,
    SIDE_DIM,
    block_positions,
    block_sizes,
    half_means,
    main_means,
    split_means,
)
from cvstats.results.base import BOUNDS, CI_BOUND

# the upper end of ρ̂'s interval is clipped below 1 (ρ = 1: no number of splits helps)
_RHO_MAX = 0.999


@dataclass
class Pilot:
    """The pilot's main block: its units, split means and their pooled ``S²`` (Lemma 1)."""

    units: xr.DataArray
    note: str
    unit: str
    score: bool
    means: xr.DataArray
    n: int
    n1: int
    n2: int
    J: int
    s2: xr.DataArray
    estimate: xr.DataArray
    df: int
    n_datasets: int


def labels(arr: xr.DataArray) -> list[str]:
    """Return the units of ``arr`` as strings (its dims stacked), for messages."""
    dims = [d for d in arr.dims]
    if not dims:
        return []
    stacked = arr.stack(_unit=dims) if len(dims) > 1 else arr.rename({dims[0]: "_unit"})
    return [str(v) for v in stacked["_unit"].values]


def _units(pilot: xr.DataArray) -> tuple[xr.DataArray, str]:
    """Return the cube the plan runs on: the pairwise contrasts of a cube of >= 2 models."""
    unit = unit_dim(pilot)
    if unit == MODEL and pilot.sizes.get(MODEL, 1) >= 2:
        models = [str(m) for m in pilot[MODEL].values]
        pairs = len(models) * (len(models) - 1) // 2
        what = "difference" if pairs == 1 else f"{pairs} pairwise differences"
        note = f"planned for the {what} of the models {models} (cvstats.pairwise)"
        return pairwise(pilot), note
    return pilot, ""


def read_pilot(pilot: xr.DataArray) -> Pilot:
    """Return the pilot's main block: ``S²``, the estimate and their degrees of freedom.

    ``S²`` and the estimate are pooled (averaged) over a ``dataset`` dim, whose
    datasets multiply the degrees of freedom ``J_p - 1``.
    """
    units, note = _units(pilot)
    unit, score = unit_dim(units), is_score(units)
    means = main_means(split_means(units, ["main"], NAME), NAME, min_splits=2)
    sizes = block_sizes(units, "main", NAME)
    if not sizes.equal:
        raise DesignError(
            f"plan needs a pilot whose main splits share one test size, but they test "
            f"{sizes.n2_min} to {sizes.n2_max} examples; draw the pilot with "
            "cvstats.designs.resampled(n, n_test, J=...)."
        )
    s2_p = means.var(J_DIM, ddof=1)
    estimate = means.mean(J_DIM)
    df = sizes.n_splits - 1
    n_datasets = int(s2_p.sizes.get(DATASET, 0))
    if n_datasets:
        s2_p, estimate = s2_p.mean(DATASET), estimate.mean(DATASET)
        df *= n_datasets
    s2_p, estimate = s2_p.compute(), estimate.compute()
    estimate.attrs = dict(units.attrs)
    bad = ~(s2_p > 0)
    if bool(bad.any()):
        raise DesignError(
            "plan needs split means that vary across the pilot's splits, but their sample "
            f"variance S² is zero (or undefined) for {labels(s2_p.where(bad, drop=True))}: "
            "with no variance there is nothing to plan from (identical models, or losses "
            "that do not depend on the split)."
        )
    return Pilot(
        units=units,
        note=note,
        unit=unit,
        score=score,
        means=means,
        n=int(units.attrs["n"]),
        n1=sizes.n1,
        n2=sizes.n2,
        J=sizes.n_splits,
        s2=s2_p,
        estimate=estimate,
        df=df,
        n_datasets=n_datasets,
    )


def _within_variance(units: xr.DataArray) -> xr.DataArray:
    """Mean over the main splits of the sample variance of their test losses (σ0 - σ3)."""
    pos = block_positions(units, "main", NAME)
    main = units.isel({SPLIT: pos})
    over = SLOT if SLOT in main.dims else EXAMPLE
    return main.var(over, ddof=1, skipna=True).mean(SPLIT)


def carried_s2(pilot: Pilot, n2: int) -> tuple[xr.DataArray, str]:
    """Return ``E[S²]`` at the planned test size ``n2``, and what the note says of it.

    At another test size than the pilot's, ``S²`` keeps its part between splits and
    rescales the within-split variance of the losses (``σ0 - σ3``), assuming neither
    changes with the training size (docs/theory.md §10); a score cube has no losses.
    """
    if n2 == pilot.n2:
        return pilot.s2, ""
    if pilot.score:
        raise CubeError(
            f"`n_test` = {n2} differs from the pilot's test size {pilot.n2}, but a score cube "
            "holds no per-example losses from which to carry E[S²] to another test size "
            "(docs/theory.md §10); plan at the pilot's test size, or pilot with losses."
        )
    if pilot.n2 < 2:
        raise DesignError(
            "`n_test` needs the within-split variance of the pilot's losses, which a test "
            "size of 1 does not give."
        )
    within = _within_variance(pilot.units)
    if pilot.n_datasets:
        within = within.mean(DATASET)
    within = within.compute()
    between = (pilot.s2 - within / pilot.n2).clip(min=0.0)
    return between + within / n2, (
        f"E[S²] carried from the pilot's n2 = {pilot.n2} to n2 = {n2} with the "
        "within-split variance of the losses"
    )


def half_variance(units: xr.DataArray, n2: int, n_datasets: int) -> dict[str, Any]:
    """Return the conservative Z's variance at half data from the pilot's "half" block (§10).

    ``τ'²`` is the mean of the within-half sample variances of the inner split
    means (Lemma 1.3 inside each half), ``V'_{J_h}`` the mean of
    ``(μ̂_(m) - μ̂^c_(m))²/2`` (the two halves are independent copies), and
    ``σ2' = V'_{J_h} - τ'²/J_h``, clipped at 0 (Lemma 1.2; the clipping biases the
    plan's ``E[σ̂²_cz]`` upward, most from a small pilot); pooled (averaged) over a
    ``dataset`` dim.
    """
    method = "plan (conservative_z)"
    sizes = block_sizes(units, "half", method)
    if not sizes.equal or sizes.n2 != n2:
        raise DesignError(
            f"plan (conservative_z) needs a 'half' block whose inner splits test n2 = {n2} "
            f"examples, as the main block does, but they test {sizes.n2_min} to "
            f"{sizes.n2_max}; draw the pilot with cvstats.designs.conservative_z(n, {n2}, ...)."
        )
    halves = half_means(split_means(units, ["half"], method), method)
    M_p, J_h = int(halves.sizes[M_DIM]), int(halves.sizes[J_DIM])
    if J_h < 2:
        raise DesignError(
            "plan (conservative_z) needs at least 2 inner splits per half (J >= 2 in "
            "cvstats.designs.conservative_z) to estimate their variance τ'² inside a half, "
            f"but the pilot's halves hold {J_h}."
        )
    tau2 = halves.var(J_DIM, ddof=1).mean((M_DIM, SIDE_DIM))
    side = halves.mean(J_DIM)
    diff = side.isel({SIDE_DIM: 0}, drop=True) - side.isel({SIDE_DIM: 1}, drop=True)
    v_h = (diff**2 / 2).mean(M_DIM)
    copies = max(n_datasets, 1)
    if n_datasets:
        tau2, v_h = tau2.mean(DATASET), v_h.mean(DATASET)
    tau2, v_h = tau2.compute(), v_h.compute()
    if bool((~(v_h > 0) | ~(tau2 > 0)).any()):
        raise DesignError(
            "plan (conservative_z) needs half means and inner split means that vary, but the "
            "pilot's 'half' block gives a zero variance: nothing to plan from."
        )
    return {
        "tau2": tau2,
        "v_h": v_h,
        "J_h": J_h,
        "M_p": M_p,
        "sigma2": (v_h - tau2 / J_h).clip(min=0.0),
        "clipped": (v_h - tau2 / J_h < 0).compute(),
        "df_v": M_p * copies,
        "df_tau": 2 * M_p * (J_h - 1) * copies,
        "n1": int(units.attrs["n"]) // 2 - n2,
    }


def halves_note(halves: dict[str, Any]) -> str:
    """Return what the note says of the conservative Z's halves (and of a clipped ``σ̂2'``)."""
    clipped = halves["clipped"]
    if bool(clipped.any()):
        found = labels(clipped.where(clipped, drop=True))
        where = f" for {found}" if found else ""
        if len(found) > 3:
            where = f" for {len(found)} of {clipped.size} units, e.g. {found[:3]}"
        caveat = (
            f"σ̂2' = V̂'_(J_h) - τ̂'²/J_h < 0 clipped at 0{where}: E[σ̂²_cz] is then "
            "biased upward and its band wide; pilot more half-splits (M >= 5, J >= 5)"
        )
    else:
        caveat = ""
    return join_notes(
        f"E[σ̂²_cz] from the pilot's {halves['M_p']} half-splits of {halves['J_h']} "
        f"inner splits (n1' = {halves['n1']}), assuming r = 0 and Gaussian half "
        "differences for the power",
        caveat,
    )


@dataclass
class Rho:
    """The plan's ``ρ`` as ``k = ρ/(1 - ρ)``, its interval's ends, and where it comes from."""

    k: xr.DataArray
    rho: xr.DataArray
    k_lo: xr.DataArray
    k_hi: xr.DataArray
    source: str
    assumption: str
    note: str
    sigma1: xr.DataArray
    rho_ci: xr.DataArray


def estimate_rho(
    rho: Any,
    pilot: Pilot,
    s2: xr.DataArray,
    *,
    c: float,
    rho0: float,
    kfold: bool,
    alpha: float,
) -> Rho:
    """Return ``ρ``: as given, from ``fit_rho`` across the pilot's datasets, or ``ρ0``.

    ``fit_rho``'s ``ρ̂`` and its interval are carried to the planned test size through
    ``k = ρ/(1 - ρ) = σ2 / E[S²]`` (``σ2`` stays, ``E[S²]`` moves with ``n2``);
    ``ρ0`` is the test's own (``n2/(n1 + n2)``, or ``1/K``), which the note calls a
    guess for a score (docs/theory.md §9.8).
    """
    k_lo = k_hi = None
    extra: list[str] = []
    if rho is not None:
        rho_used = check_rho(rho, s2)
        k = rho_used / (1 - rho_used)
        source, assumption = "given", "as given"
    elif pilot.n_datasets >= 2 and not kfold:
        fit = fit_rho(pilot.units, alpha=alpha)
        rho_hat = fit["rho"].clip(min=0.0).compute()
        high = rho_hat >= 1
        if bool(high.any()):
            raise DesignError(
                f"fit_rho gives ρ̂ >= 1 for {labels(rho_hat.where(high, drop=True))}: the "
                "split means of a dataset barely vary, so no number of splits reduces the "
                "variance; pass `rho=` to plan anyway."
            )
        # k = ρ/(1 - ρ) = σ2 / E[S²]: σ2 stays, E[S²] moves with n2
        k = rho_hat / (1 - rho_hat) * pilot.s2 / s2
        rho_used = k / (1 + k)
        ends = fit["rho_ci"].clip(min=0.0, max=_RHO_MAX).compute()
        k_ends = ends / (1 - ends) * pilot.s2 / s2
        k_lo = k_ends.sel({CI_BOUND: BOUNDS[0]}, drop=True)
        k_hi = k_ends.sel({CI_BOUND: BOUNDS[1]}, drop=True)
        source, assumption = "fit_rho", f"fit_rho across {pilot.n_datasets} datasets"
    else:
        k = xr.DataArray(c)
        rho_used = xr.DataArray(rho0)
        source = "rho0"
        if kfold:
            assumption = f"ρ = ρ0 = 1/K = {rho0:.2g}"
        else:
            assumption = f"ρ = ρ0 = n2/(n1 + n2) = {rho0:.2g}"
        if pilot.score:
            extra.append(
                "for a score, ρ0 = n2/(n1 + n2) is a guess (docs/theory.md §9.8); pass rho= or "
                "pilot many datasets"
            )
        if pilot.n_datasets >= 2:
            extra.append(
                "ρ0 used: fit_rho's ρ̂ of a k-fold cube averages pairs of folds and depends on "
                "the number of repeats (docs/theory.md §9.2)"
            )
    k, rho_used = k.broadcast_like(s2), rho_used.broadcast_like(s2)
    if k_lo is None:
        k_lo = k_hi = k
    k_lo, k_hi = k_lo.broadcast_like(s2), k_hi.broadcast_like(s2)
    sigma1 = s2 * (1 + k)  # σ1 = E[S²]/(1 - ρ)
    rho_ci = xr.concat(
        [k_lo / (1 + k_lo), k_hi / (1 + k_hi)], dim=CI_BOUND, coords="minimal"
    ).assign_coords({CI_BOUND: np.array(BOUNDS)})
    return Rho(
        k=k,
        rho=rho_used,
        k_lo=k_lo,
        k_hi=k_hi,
        source=source,
        assumption=assumption,
        note=join_notes(*extra),
        sigma1=sigma1,
        rho_ci=rho_ci,
    )
