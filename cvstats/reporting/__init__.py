"""Reporting: comparison tables, publication tables, plots and export.

Layer 7 of cvstats (see ``docs/architecture.md``). What lives here:

* :mod:`~cvstats.reporting.compare` — :func:`~cvstats.compare`: every applicable
  method on every contrast of a formula, as a :class:`ComparisonTable`;
* :mod:`~cvstats.reporting.decision` — its reader's view: comparisons,
  per-model estimates, the verdict;
* :mod:`~cvstats.reporting.multiplicity` — p-values adjusted for multiple
  comparisons, one family per method;
* :mod:`~cvstats.reporting.tables` — publication tables (LaTeX, Markdown, HTML);
* :mod:`~cvstats.reporting.plots` — forest plots.

May import every layer below; nothing but the studies and the CLI imports it.
"""
