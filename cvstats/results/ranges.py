"""Intervals shown within the range of their metric.

A Wald interval ``μ̂ ± c·σ̂`` (docs/theory.md §4) is symmetric about the
estimate, whatever the values the estimated quantity can take: near a bound
of a bounded metric (an error rate near 0, an AUC near 1) it can cross the
bound, e.g. ``[0.9898, 1.001]`` for an AUC (docs/theory.md §4, "Intervals at
the edge of a bounded metric"). Every interval a result shows or exports is
therefore clipped at the range of its quantity, and marked:

* the range of a model's value is its metric's
  (:func:`cvstats.cube.score.value_range`: one table of known ranges, read
  from the cube's attrs, which the results keep on their values); unknown
  metrics are not clipped;
* a contrast's range follows from its weights (the ``weights`` coordinate):
  a model's own level (``1*m``) has the metric's range ``[lo, hi]``, a
  difference of two models (``1*a - 1*b``) the range ``[lo − hi, hi − lo]``;
  any other linear contrast ``Σ w_k m_k`` of a metric with a finite range the
  range ``[Σ min(w_k lo, w_k hi), Σ max(w_k lo, w_k hi)]``, widened by what its
  ``weights`` string's 4 significant digits may have rounded away (never
  narrower than the true range);
* an infinite bound (a one-sided interval) says "no bound on this side" and
  is kept; a range that the estimate itself breaks is not that of these
  values, and nothing is clipped;
* frames carry a bool column ``ci_clipped``; text tables mark a clipped bound
  with :data:`CLIP_MARK` and say why in a note (:func:`clip_note`); the raw
  interval stays available (``interval(clip=False)``, ``conf_int(clip=False)``,
  ``to_frame(clip=False)``).

The results layer (see ``docs/architecture.md``): imports the data model only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.schema import CONTRAST
from cvstats.cube.score import value_range
from cvstats.results.verdict import parse_weights

__all__ = [
    "CLIP_COLUMN",
    "CLIP_MARK",
    "clip_interval",
    "clip_note",
    "contrast_range",
    "estimand_range",
    "mark_clipped",
    "table_clip_notes",
]

#: Frame column saying whether a row's interval was clipped at its quantity's range.
CLIP_COLUMN = "ci_clipped"
#: Mark of a clipped bound in text tables (after ``†`` and ``‡``, the next footnote sign).
CLIP_MARK = "§"


def contrast_range(weights: str, low: float, high: float) -> tuple[float, float]:
    """Return the range of a contrast of models whose values lie in ``[low, high]``.

    Parameters
    ----------
    weights : str
        The contrast's ``weights`` coordinate (``"1*a"``, ``"-1*a + 1*b"``).
    low, high : float
        The range of one model's value.

    Returns
    -------
    (float, float)
        ``(low, high)`` for a model's own level, ``(low − high, high − low)`` for
        a difference of two models; for other weights ``w`` and a finite range,
        ``(Σ min(w lo, w hi) − s, Σ max(w lo, w hi) + s)`` with
        ``s = 5·10⁻⁴ Σ|w| max(|lo|, |hi|)`` (a weight written to 4 significant
        digits is off by at most 5·10⁻⁴ of itself); ``(-inf, inf)`` (no range
        known) for an infinite range or weights not in that form.

    Examples
    --------
    >>> contrast_range("-1*logreg + 1*tree", 0.0, 1.0)
    (-1.0, 1.0)
    >>> contrast_range("1*tree", 0.0, 1.0)
    (0.0, 1.0)
    >>> [round(v, 4) for v in contrast_range("0.5*a + 0.5*b - 1*c", 0.0, 1.0)]
    [-1.001, 1.001]
    >>> contrast_range("0.5*a + 0.5*b - 1*c", 0.0, math.inf)
    (-inf, inf)
    """
    terms = sorted(w for w, _ in parse_weights(weights))
    if terms == [1.0]:
        return (low, high)
    if terms == [-1.0, 1.0]:
        return (low - high, high - low)
    if not terms or not (math.isfinite(low) and math.isfinite(high)):
        return (-math.inf, math.inf)
    w = np.asarray(terms)
    slack = 5e-4 * float(np.abs(w).sum()) * max(abs(low), abs(high))
    ends = np.stack([w * low, w * high])
    return (float(ends.min(0).sum()) - slack, float(ends.max(0).sum()) + slack)


def estimand_range(estimate: xr.DataArray, loss: str) -> tuple[xr.DataArray, xr.DataArray] | None:
    """Return the range of each element of a result's estimate, or None when unknown.

    Parameters
    ----------
    estimate : xarray.DataArray
        A result's estimate (or posterior mean), which keeps the cube's attrs
        and, for contrasts, its ``weights`` coordinate.
    loss : str
        The cube's name (the metric's name when the attrs do not give it).

    Returns
    -------
    (xarray.DataArray, xarray.DataArray) or None
        Lower and upper ends, 0-d for a cube of models (each model's own value),
        over ``contrast`` for contrasts (``∓inf`` where unknown); None when the
        metric's range is unknown, or for contrasts without weights.
    """
    edges = value_range(estimate.attrs, loss)
    if edges is None:
        return None
    low, high = edges
    weights = estimate.coords.get("weights")
    if weights is None:
        if CONTRAST in estimate.dims:
            return None
        return xr.DataArray(low), xr.DataArray(high)
    pairs = [contrast_range(str(w), low, high) for w in np.ravel(weights.values)]
    shape = weights.shape
    lows = np.array([p[0] for p in pairs], dtype=float).reshape(shape)
    highs = np.array([p[1] for p in pairs], dtype=float).reshape(shape)
    return xr.DataArray(lows, dims=weights.dims), xr.DataArray(highs, dims=weights.dims)


def clip_interval(
    low: xr.DataArray, high: xr.DataArray, estimate: xr.DataArray, loss: str
) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    """Clip an interval at the range of its quantity (:func:`estimand_range`).

    Parameters
    ----------
    low, high : xarray.DataArray
        The interval's bounds, over the estimate's dims.
    estimate : xarray.DataArray
        The estimate (its attrs and ``weights`` give the range).
    loss : str
        The cube's name.

    Returns
    -------
    low, high, clipped : xarray.DataArray
        The bounds, each finite bound outside the range moved onto it, and a
        bool array: whether the element's interval was clipped. Nothing is
        clipped where the range is unknown, where a bound is infinite (a
        one-sided interval) or NaN, or where the estimate is outside the range.
    """
    edges = estimand_range(estimate, loss)
    if edges is None:
        return low, high, xr.zeros_like(low, dtype=bool)
    lo, hi = edges
    inside = (estimate >= lo) & (estimate <= hi)
    cut_low = inside & np.isfinite(low) & (low < lo)
    cut_high = inside & np.isfinite(high) & (high > hi)
    return low.where(~cut_low, lo), high.where(~cut_high, hi), cut_low | cut_high


def _number(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:g}".replace("-", "−")


def clip_note(attrs: Mapping[str, Any], loss: str, raw: str = "conf_int(clip=False)") -> str:
    """Return the note under a table with clipped intervals: why, and where the raw ones are.

    Parameters
    ----------
    attrs : mapping
        The attrs of the result's estimate (the cube's).
    loss : str
        The cube's name.
    raw : str, default "conf_int(clip=False)"
        How to get the unclipped intervals from the object shown.

    Examples
    --------
    >>> print(clip_note({"loss": "zero_one"}, "error"))
    § clipped at the quantity's range: [0, 1] (one model's zero_one), [−1, 1] (a difference of two); unclipped: conf_int(clip=False); docs/theory.md §4.
    """  # noqa: E501
    edges = value_range(attrs, loss)
    low, high = edges if edges is not None else (math.nan, math.nan)
    scored = "greater_is_better" in attrs
    name = attrs.get("metric", loss) if scored else attrs.get("loss", loss)
    ranges = f"[{_number(low)}, {_number(high)}] (one model's {name})"
    if math.isfinite(high - low):
        ranges += f", [{_number(low - high)}, {_number(high - low)}] (a difference of two)"
    return (
        f"{CLIP_MARK} clipped at the quantity's range: {ranges}; unclipped: {raw}; "
        "docs/theory.md §4."
    )


def mark_clipped(shown: pd.DataFrame, clipped: pd.DataFrame, raw: pd.DataFrame) -> pd.DataFrame:
    """Mark with :data:`CLIP_MARK` each shown bound that clipping moved.

    Parameters
    ----------
    shown : pandas.DataFrame
        The displayed frame: ``ci_lower``/``ci_upper`` as text.
    clipped, raw : pandas.DataFrame
        The frame of numbers shown (clipped) and the same frame unclipped, row
        for row (``to_frame()`` and ``to_frame(clip=False)``).

    Returns
    -------
    pandas.DataFrame
        ``shown`` with the mark after every bound that clipping moved.
    """
    if CLIP_COLUMN not in clipped or not clipped[CLIP_COLUMN].to_numpy(bool).any():
        return shown
    out = shown.copy()
    for col in ("ci_lower", "ci_upper"):
        if col not in out:
            continue
        moved = clipped[CLIP_COLUMN].to_numpy(bool) & (
            clipped[col].to_numpy(float) != raw[col].to_numpy(float)
        )
        out[col] = [f"{v}{CLIP_MARK}" if m else v for v, m in zip(out[col], moved, strict=True)]
    return out


def table_clip_notes(frame: pd.DataFrame, results: Mapping[str, Any]) -> list[str]:
    """Return ``[the clipping note]`` for a comparison table's frame with clipped rows, or ``[]``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the table (its ``ci_clipped`` column).
    results : mapping of str to result
        The table's results (the first one's estimate gives the metric).
    """
    if CLIP_COLUMN not in frame or not frame[CLIP_COLUMN].to_numpy(bool).any():
        return []
    res = next(iter(results.values()))
    estimate = getattr(res, "estimate", None)
    attrs = (estimate if estimate is not None else res.mean).attrs
    return [clip_note(attrs, res.loss, "table.results[method].to_frame(clip=False)")]
