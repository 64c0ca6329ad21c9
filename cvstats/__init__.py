"""cvstats: honest inference about generalization error from cross-validation."""

from __future__ import annotations

from cvstats import designs
from cvstats._version import __version__
from cvstats.across.conditional import (
    WinnerTable,
    cv_bias,
    cv_estimates,
    variance_decomposition,
    winner_table,
)
from cvstats.across.kfold_variance import kfold_moments, kfold_statistics, quadratic_estimator_bias
from cvstats.across.lemma1 import fit_lemma1
from cvstats.across.plan import plan
from cvstats.across.ranks import (
    FriedmanResult,
    PairwiseResult,
    RankReport,
    WilcoxonResult,
    cd_diagram,
    friedman_test,
    pairwise_wilcoxon,
    rank_report,
    wilcoxon_test,
)
from cvstats.across.rho import fit_r, fit_rho
from cvstats.cube import compact, from_arrays, from_frame, validate
from cvstats.cube.compact import compact_cube, from_compact, open_compact, save_compact, to_compact
from cvstats.cube.formula import contrast_matrix, contrasts, pairwise, parse_formula
from cvstats.cube.score import from_scores
from cvstats.cube.storage import open_cube, save
from cvstats.designs.collect import collect
from cvstats.designs.cv_results import from_cv_results
from cvstats.errors import (
    ArgumentError,
    CubeError,
    CvstatsError,
    CvstatsTypeError,
    CvstatsWarning,
    DesignError,
    FormulaError,
    StorageError,
    ZeroVarianceWarning,
)
from cvstats.inference import (
    bootstrap_t,
    combined_5x2cv_f,
    conservative_z,
    corrected_bootstrap_t,
    corrected_repeated_kfold_t,
    corrected_resampled_t,
    dietterich_5x2cv,
    holdout_t,
    kfold_t,
    mcnemar,
    resampled_t,
)
from cvstats.inference.bayes import BayesianResult, bayesian_correlated_t
from cvstats.inference.bayle import bayle_cv
from cvstats.inference.nested import nested_cv_interval
from cvstats.options import get_options, set_options
from cvstats.reporting import accessor as _accessor  # noqa: F401 (registers cube.cvstats)
from cvstats.reporting.compare import ComparisonTable, compare
from cvstats.reporting.describe import CubeDescription, describe
from cvstats.reporting.tables import PublicationTable, nadeau_bengio_table, publication_table
from cvstats.results import ConfidenceInterval, InferenceResult
from cvstats.results.plan import PlanResult

__all__ = [
    "get_options",
    "set_options",
    "nested_cv_interval",
    "compact",
    "compact_cube",
    "from_compact",
    "open_compact",
    "save_compact",
    "to_compact",
    "BayesianResult",
    "FriedmanResult",
    "PairwiseResult",
    "RankReport",
    "WilcoxonResult",
    "bayesian_correlated_t",
    "bayle_cv",
    "cd_diagram",
    "friedman_test",
    "pairwise_wilcoxon",
    "rank_report",
    "wilcoxon_test",
    "PublicationTable",
    "WinnerTable",
    "cv_bias",
    "cv_estimates",
    "fit_lemma1",
    "fit_r",
    "fit_rho",
    "plan",
    "PlanResult",
    "kfold_moments",
    "kfold_statistics",
    "nadeau_bengio_table",
    "publication_table",
    "quadratic_estimator_bias",
    "variance_decomposition",
    "winner_table",
    "ComparisonTable",
    "compare",
    "CubeDescription",
    "describe",
    "ConfidenceInterval",
    "InferenceResult",
    "bootstrap_t",
    "combined_5x2cv_f",
    "conservative_z",
    "corrected_bootstrap_t",
    "corrected_repeated_kfold_t",
    "corrected_resampled_t",
    "dietterich_5x2cv",
    "holdout_t",
    "kfold_t",
    "mcnemar",
    "resampled_t",
    "ArgumentError",
    "collect",
    "contrast_matrix",
    "contrasts",
    "designs",
    "from_arrays",
    "from_frame",
    "from_scores",
    "from_cv_results",
    "open_cube",
    "pairwise",
    "parse_formula",
    "save",
    "validate",
    "CubeError",
    "CvstatsError",
    "CvstatsTypeError",
    "CvstatsWarning",
    "DesignError",
    "FormulaError",
    "StorageError",
    "ZeroVarianceWarning",
    "__version__",
]
