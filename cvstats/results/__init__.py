"""Results: the objects every estimator returns, and their one contract.

Layer 4 of cvstats (see ``docs/architecture.md``), between the kernels and the
estimators: the estimators build results, reporting reads them, so results may
import the foundation, the data model and the kernels, but never the designs, an
estimator or reporting.

Every result derives from :class:`~cvstats.results.base.Result`: its computed
values are DataArrays (0-d for a scalar result), intervals lie on a
``ci_bound`` dim with coordinates ``["lower", "upper"]``, and ``to_frame``,
``to_markdown``, ``to_latex``, ``to_html``, ``summary``, ``str``, ``interval``
``plot`` and ``verdict`` are implemented once, as are the notebook displays (a short ``repr``
and ``_repr_html_``, :class:`~cvstats.results.base.Display`).

* :mod:`~cvstats.results.base` — the contract, :func:`as_dataarray`, :func:`bounds`,
  the displays (:func:`~cvstats.results.base.text_display`,
  :func:`~cvstats.results.base.html_display`);
* :mod:`~cvstats.results.plots` — forest plots of intervals and of estimates
  (matplotlib, imported when drawing);
* :mod:`~cvstats.results.inference` — :class:`InferenceResult`;
* :mod:`~cvstats.results.bayes` — :class:`BayesianResult`;
* :mod:`~cvstats.results.ranks` — Friedman, Wilcoxon, pairwise and rank reports;
* :mod:`~cvstats.results.auto` — :class:`~cvstats.results.auto.ChosenTest` and
  :class:`~cvstats.results.auto.DatasetsComparison`, the automatic choice of test and the
  report across datasets;
* :mod:`~cvstats.results.bayes_datasets` — :class:`BayesianDatasetsResult`, the Bayesian
  sign and signed-rank tests across datasets, and :class:`HierarchicalResult`, the
  hierarchical correlated t test;
* :mod:`~cvstats.results.conditional` — :class:`WinnerTable`;
* :mod:`~cvstats.results.estimates` — :class:`EstimatesResult`, the fits across datasets;
* :mod:`~cvstats.results.plan` — :class:`~cvstats.results.plan.PlanResult`, a planned experiment;
* :mod:`~cvstats.results.verdict` — every result's answer in plain words (``verdict()``).
"""

from __future__ import annotations

from cvstats.results.base import (
    BOUNDS,
    CI_BOUND,
    ConfidenceInterval,
    Result,
    as_dataarray,
    bounds,
    split_interval,
)
from cvstats.results.bayes import BAYES_FRAME_COLUMNS, BayesianResult
from cvstats.results.bayes_datasets import (
    BAYES_DATASETS_FRAME_COLUMNS,
    HIERARCHICAL_FRAME_COLUMNS,
    BayesianDatasetsResult,
    HierarchicalResult,
)
from cvstats.results.conditional import WINNER_FRAME_COLUMNS, WinnerTable
from cvstats.results.estimates import ESTIMATES_FRAME_COLUMNS, EstimatesResult
from cvstats.results.inference import FRAME_COLUMNS, InferenceResult
from cvstats.results.ranks import (
    FriedmanResult,
    PairwiseResult,
    RankReport,
    WilcoxonResult,
    cd_diagram,
)

__all__ = [
    "BAYES_DATASETS_FRAME_COLUMNS",
    "BAYES_FRAME_COLUMNS",
    "BOUNDS",
    "CI_BOUND",
    "ESTIMATES_FRAME_COLUMNS",
    "FRAME_COLUMNS",
    "HIERARCHICAL_FRAME_COLUMNS",
    "WINNER_FRAME_COLUMNS",
    "BayesianDatasetsResult",
    "BayesianResult",
    "ConfidenceInterval",
    "EstimatesResult",
    "FriedmanResult",
    "HierarchicalResult",
    "InferenceResult",
    "PairwiseResult",
    "RankReport",
    "Result",
    "WilcoxonResult",
    "WinnerTable",
    "as_dataarray",
    "bounds",
    "cd_diagram",
    "split_interval",
]
