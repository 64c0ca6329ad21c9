"""Plots: forest plots of intervals (matplotlib)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["forest_plot"]


def forest_plot(
    frame: pd.DataFrame,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    ax: Any = None,
    label_columns: tuple[str, ...] | None = None,
) -> Any:
    """Draw one horizontal interval per row of a results frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with ``estimate``, ``ci_lower``, ``ci_upper`` and ``method`` (e.g.
        ``ComparisonTable.to_frame()`` or ``InferenceResult.to_frame()``); rows
        whose interval is NaN (Alpaydın's F) show the estimate only.
    mu0 : float, default 0
        Null value, drawn as a vertical line.
    alpha : float, default 0.05
        Level, for the axis label.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure sized to the rows.
    label_columns : tuple of str, optional
        Columns that label a row; default every column before ``method`` and
        ``method`` itself.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    import matplotlib.pyplot as plt

    if label_columns is None:
        cols = list(frame.columns)
        label_columns = tuple(cols[: cols.index("method") + 1])
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.35 * len(frame) + 1.2))
    y = np.arange(len(frame))[::-1]
    lo = frame["ci_lower"].to_numpy(dtype=float)
    hi = frame["ci_upper"].to_numpy(dtype=float)
    est = frame["estimate"].to_numpy(dtype=float)
    finite = np.isfinite(lo) & np.isfinite(hi)
    ax.hlines(y[finite], lo[finite], hi[finite], color="C0", lw=2)
    ax.plot(est, y, "o", color="C1", ms=4)
    ax.axvline(mu0, color="grey", ls="--", lw=1)
    labels = [
        "  ".join(str(v) for v in row)
        for row in frame[list(label_columns)].itertuples(index=False)
    ]
    ax.set_yticks(y, labels)
    ax.set_xlabel(f"estimate and {100 * (1 - alpha):g}% interval")
    ax.figure.tight_layout()
    return ax
