"""Multiple comparisons in a comparison table: adjusted p-values, one family per method.

:func:`cvstats.compare` tests every comparison of a formula with every method.
A statement about several comparisons at once needs p-values adjusted for
their number (Holm 1979; the all-pairs comparisons of Demšar 2006, §3.2.2).
The adjustment is statsmodels' :func:`~statsmodels.stats.multitest.multipletests`
(Seabold & Perktold 2010) — Holm's, the default, computed here for every family
at once with the same values (tested; statsmodels' Holm runs a garbage collection
on every call) — over one **family**: the comparisons one method
makes within one slice of the extra dims (e.g. one dataset). Each model's own
level (e.g. the ``Intercept`` of the treatment coding) is an estimate, not a
test, and is no member of a family. The intervals are not adjusted.

The reporting layer (see ``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xarray as xr

from cvstats.cube.schema import CONTRAST
from cvstats.errors import ArgumentError

__all__ = ["ADJUST_DEFAULT", "Adjustment", "adjust_name", "adjust_pvalues", "check_adjust"]

#: :func:`cvstats.compare`'s default: Holm's step-down method, which controls the
#: family-wise error rate under any dependence between the tests (Holm 1979).
ADJUST_DEFAULT = "holm"

#: Names cvstats accepts besides statsmodels' own (``"hochberg"`` for Hochberg's step-up).
_ALIASES = {"hochberg": "simes-hochberg"}


def _methods() -> dict[str, str]:
    """Every name ``multipletests`` takes, mapped to its readable name."""
    from statsmodels.stats.multitest import multitest_alias, multitest_methods_names

    names = {alias: multitest_methods_names[code] for alias, code in multitest_alias.items()}
    names.update({alias: names[target] for alias, target in _ALIASES.items()})
    return names


def check_adjust(adjust: str | None) -> str | None:
    """Return ``adjust`` checked (a ``multipletests`` method name, or None).

    Raises
    ------
    ArgumentError
        For a name ``multipletests`` does not know (``"hochberg"`` is accepted
        for its ``"simes-hochberg"``).
    """
    if adjust is None:
        return None
    names = _methods()
    if not isinstance(adjust, str) or adjust.lower() not in names:
        raise ArgumentError(
            f"`adjust` must be a statsmodels multipletests method or None, got {adjust!r}; "
            f"choose from {sorted(names)} (e.g. adjust='holm', or None for raw p-values)."
        )
    return adjust.lower()


def adjust_name(adjust: str) -> str:
    """Return the readable name of a ``multipletests`` method (``"holm"``: ``"Holm"``)."""
    return _methods()[adjust.lower()]


@dataclass(frozen=True)
class Adjustment:
    """What was adjusted, for the words that say so.

    Attributes
    ----------
    method : str
        The ``multipletests`` method name (e.g. ``"holm"``).
    name : str
        Its readable name (``"Holm"``, ``"Bonferroni"``, ``"FDR Benjamini-Hochberg"``).
    size : int
        Comparisons per family (the largest family, when NaN p-values make some smaller).
    over : tuple of str
        The extra dims whose every slice is a family of its own (e.g. ``("dataset",)``).
    """

    method: str
    name: str
    size: int
    over: tuple[str, ...] = ()

    @property
    def applies(self) -> bool:
        """Whether a family holds more than one comparison (else nothing changes)."""
        return self.size > 1

    def words(self) -> str:
        """Return ``"Holm-adjusted over 3 comparisons (each method's, within each dataset)"``."""
        within = f", within each {', '.join(self.over)}" if self.over else ""
        return f"{self.name}-adjusted over {self.size} comparisons (each method's{within})"


def adjust_pvalues(
    pvalue: xr.DataArray, tested: Sequence[bool] | None, method: str, alpha: float
) -> tuple[xr.DataArray, int]:
    """Adjust one method's p-values over its comparisons, in each slice of the extra dims.

    Parameters
    ----------
    pvalue : xarray.DataArray
        The method's p-values over ``contrast`` and any extra dims (or 0-d).
    tested : sequence of bool, optional
        Per contrast, whether it is a comparison (a test); the others (one
        model's level) are left out of the family and returned as NaN. None:
        every contrast is a comparison.
    method : str
        A ``multipletests`` method (:func:`check_adjust`).
    alpha : float
        The level (used by the two-stage FDR methods).

    Returns
    -------
    adjusted : xarray.DataArray
        Same shape and coordinates as ``pvalue``; NaN p-values stay NaN.
    size : int
        The number of comparisons in the largest family.
    """
    from statsmodels.stats.multitest import multipletests

    method = _ALIASES.get(method, method)
    if CONTRAST not in pvalue.dims:
        return pvalue, 1 if np.isfinite(pvalue.values).any() else 0
    ordered = pvalue.transpose(..., CONTRAST)
    values = np.array(ordered.values, dtype=float)
    flat = values.reshape(-1, values.shape[-1])
    keep = np.ones(flat.shape[1], dtype=bool) if tested is None else np.asarray(tested, bool)
    members = keep & np.isfinite(flat)
    size = int(members.sum(axis=1).max(initial=0))
    if method == "holm":
        out = _holm(np.where(members, flat, np.nan))
    else:
        out = np.full_like(flat, np.nan)
        for i, (row, member) in enumerate(zip(flat, members, strict=True)):
            if member.any():
                out[i, member] = multipletests(row[member], alpha=alpha, method=method)[1]
    adjusted = ordered.copy(data=out.reshape(values.shape))
    return adjusted.transpose(*pvalue.dims), size


def _holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values of each row; NaN: not in the row's family.

    The values of ``multipletests(p, method="holm")[1]`` (tested equal), for
    every row at once: with the ``m`` p-values of a row sorted, the ``i``-th
    smallest (from 0) becomes ``max over k <= i of min(1, (m - k) p_(k))``.
    Computed here because statsmodels' Holm branch runs ``gc.collect()`` on
    every call, about 70 ms in a process holding a large heap: once per
    dataset of a comparison table over hundreds of datasets, seconds.
    """
    order = np.argsort(pvalues, axis=-1)  # NaN last
    ranked = np.take_along_axis(pvalues, order, axis=-1)
    m = np.isfinite(pvalues).sum(axis=-1, keepdims=True)
    factor = m - np.arange(pvalues.shape[-1])
    with np.errstate(invalid="ignore"):  # NaN * a non-positive factor, past the family
        steps = np.minimum(ranked * factor, 1.0)
    steps = np.fmax.accumulate(steps, axis=-1)
    steps[~np.isfinite(ranked)] = np.nan
    out = np.empty_like(steps)
    np.put_along_axis(out, order, steps, axis=-1)
    return out
