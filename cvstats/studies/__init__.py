"""The simulation studies of the papers (docs/studies.md §A–§E).

* :mod:`cvstats.studies.regression` — Nadeau & Bengio problem 1 (simple
  linear regression, batched closed-form learners);
* :mod:`cvstats.studies.classification` — problem 2 (two Gaussian
  populations, OLS classifier and regression tree);
* :mod:`cvstats.studies.letter` — problem 3 (UCI letter recognition, shipped
  with the package: classification tree and distorted 1-NN);
* :mod:`cvstats.studies.kfold_experiments` — Bengio & Grandvalet's
  experiments 1 and 2 (variance of K-fold CV, docs/studies.md §E);
* :mod:`cvstats.studies.population` — the survey's Algorithm 1, conditional
  vs unconditional error on a population (letter or synthetic; docs/studies.md
  §F), with the batched learners of :mod:`cvstats.studies.learners` and the
  tables and figures of :mod:`cvstats.studies.population_analysis`;
* :func:`run_study` — batched, resumable, parallel (joblib or a
  dask.distributed ``client``) runner storing the split means of every block
  of every dataset, each batch file with a checksum verified on resume
  (:class:`BatchFileWarning` for a damaged file, whose batch is recomputed);
* :func:`method_results`, :func:`rejection_rates`, :func:`mu0_grid`,
  :func:`study_table`, :func:`power_figure` — methods of docs/theory.md §4, size
  and power over any grid of ``μ0``, Table-2-style summaries and power curves;
  :func:`truth_comparison` — each Monte Carlo cell of a summary against its
  truth (z-score, inside / overlapping / disjoint, Bonferroni band).

Layer 8 of cvstats (see ``docs/architecture.md``): may import every layer below
(data model to reporting); only the CLI imports it.
"""

from __future__ import annotations

from cvstats.studies._analysis import (
    METHOD_NAMES,
    binomial_line,
    j_study,
    m_study,
    mc_truth,
    method_results,
    mu0_grid,
    power_figure,
    rejection_rates,
    rho_r_fit,
    study_table,
    targets,
    truth_comparison,
)
from cvstats.studies._runner import (
    BatchFileWarning,
    compute_batch,
    default_batch_size,
    run_study,
)
from cvstats.studies._splits import CONFIGS, configurations, draw_study_splits, to_design
from cvstats.studies.classification import classification_problem, run_classification
from cvstats.studies.learners import LEARNERS, SklearnLearner
from cvstats.studies.letter import letter_problem, run_letter
from cvstats.studies.population import (
    Population,
    letter_population,
    run_population,
    synthetic_population,
    to_cube,
)
from cvstats.studies.population_analysis import population_report
from cvstats.studies.regression import regression_problem, run_regression

__all__ = [
    "BatchFileWarning",
    "CONFIGS",
    "LEARNERS",
    "METHOD_NAMES",
    "Population",
    "SklearnLearner",
    "binomial_line",
    "classification_problem",
    "compute_batch",
    "configurations",
    "default_batch_size",
    "draw_study_splits",
    "j_study",
    "letter_population",
    "letter_problem",
    "m_study",
    "mc_truth",
    "method_results",
    "mu0_grid",
    "population_report",
    "power_figure",
    "regression_problem",
    "rejection_rates",
    "rho_r_fit",
    "run_classification",
    "run_letter",
    "run_population",
    "run_regression",
    "run_study",
    "study_table",
    "synthetic_population",
    "targets",
    "to_cube",
    "to_design",
    "truth_comparison",
]
