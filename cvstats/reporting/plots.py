"""Plots: forest plots of intervals (matplotlib).

The drawing lives with the results (:mod:`cvstats.results.plots`), so that a
result's own ``plot()`` can use it without importing reporting; it is
re-exported here, where the comparison tables use it.
"""

from __future__ import annotations

from cvstats.results.plots import estimates_plot, forest_plot

__all__ = ["estimates_plot", "forest_plot"]
