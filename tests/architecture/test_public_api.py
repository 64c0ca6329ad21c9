"""The public API is frozen: moving code between modules must not change ``cvstats.*``."""

from __future__ import annotations

import importlib

import pytest

import cvstats

#: ``cvstats.__all__`` as of the layout of docs/architecture.md (0.1.0). A name is
#: added here only together with its documentation; none is ever removed silently.
#: Added since: ``from_scores``, ``from_cv_results`` (score cubes, issue 14); ``describe``,
#: ``CubeDescription`` (what a cube holds, issue 15); ``plan``, ``PlanResult`` (planning an
#: experiment from a pilot, issue 17); ``choose_test``, ``ChosenTest``, ``compare_datasets``,
#: ``DatasetsComparison`` (the automatic choice of test and the report across datasets, issue 28);
#: ``from_evals``, ``eval_mean``, ``eval_difference``, ``plan_eval``, ``EvalResult``,
#: ``EvalPlan`` (evaluations of fixed models, issue 29); ``bbc_cv``, ``BBCResult``,
#: ``model_confidence_set``, ``MCSResult``, ``cv_confidence_set``, ``CVCResult`` (after a
#: hyper-parameter search, issue 30).
FROZEN = (
    "ArgumentError",
    "get_options",
    "set_options",
    "BayesianResult",
    "ComparisonTable",
    "ControlResult",
    "ConfidenceInterval",
    "CubeDescription",
    "CubeError",
    "CvstatsError",
    "CvstatsTypeError",
    "CvstatsWarning",
    "DesignError",
    "EffectSizeResult",
    "FormulaError",
    "FriedmanResult",
    "InferenceResult",
    "PairwiseMatrix",
    "PairwiseResult",
    "PlanResult",
    "PublicationTable",
    "RankReport",
    "StorageError",
    "WilcoxonResult",
    "WinnerTable",
    "ZeroVarianceWarning",
    "__version__",
    "BayesianDatasetsResult",
    "ChosenTest",
    "DatasetsComparison",
    "choose_test",
    "compare_datasets",
    "HierarchicalResult",
    "bayesian_correlated_t",
    "bayesian_hierarchical_test",
    "bayesian_sign_test",
    "bayesian_signed_rank_test",
    "bayle_cv",
    "bootstrap_t",
    "cd_diagram",
    "collect",
    "combined_5x2cv_f",
    "compact",
    "compact_cube",
    "compare",
    "conservative_z",
    "contrast_matrix",
    "contrasts",
    "control_test",
    "corrected_bootstrap_t",
    "corrected_repeated_kfold_t",
    "corrected_resampled_t",
    "cv_bias",
    "cv_estimates",
    "describe",
    "designs",
    "dietterich_5x2cv",
    "effect_size",
    "fit_lemma1",
    "fit_r",
    "fit_rho",
    "friedman_test",
    "from_arrays",
    "from_compact",
    "from_frame",
    "from_scores",
    "from_cv_results",
    "from_evals",
    "eval_mean",
    "eval_difference",
    "plan_eval",
    "EvalResult",
    "EvalPlan",
    "bbc_cv",
    "BBCResult",
    "model_confidence_set",
    "MCSResult",
    "cv_confidence_set",
    "CVCResult",
    "holdout_t",
    "kfold_moments",
    "kfold_statistics",
    "kfold_t",
    "mcnemar",
    "nadeau_bengio_table",
    "nested_cv_interval",
    "open_compact",
    "open_cube",
    "pairwise",
    "pairwise_matrix",
    "pairwise_wilcoxon",
    "parse_formula",
    "plan",
    "publication_table",
    "quadratic_estimator_bias",
    "rank_report",
    "resampled_t",
    "save",
    "save_compact",
    "to_compact",
    "validate",
    "variance_decomposition",
    "wilcoxon_test",
    "winner_table",
)

#: Module paths users import that must keep working.
MODULE_PATHS = (
    "cvstats.designs",
    "cvstats.cube",
    "cvstats.results",
    "cvstats.kernels",
    "cvstats.studies",
    "cvstats.cli",
)


def declared_since() -> set[str]:
    """The public functions of methods declared after the freeze (the registry adds them)."""
    from cvstats.inference.registry import METHODS

    return {s.func.__name__ for s in METHODS.values()} - set(FROZEN)


def test_all_is_the_frozen_list():
    # a method declared later is public by its declaration (docs/architecture.md, the
    # recipe): the frozen names plus those, nothing else
    assert sorted(cvstats.__all__) == sorted({*FROZEN, *declared_since()})
    assert len(cvstats.__all__) == len(set(cvstats.__all__))


def test_every_public_name_resolves():
    # one test, not one per name: a name in __all__ that the package does not define
    # makes `from cvstats import *` fail
    namespace: dict[str, object] = {}
    exec("from cvstats import *", namespace)  # noqa: S102 (a fixed statement)
    assert sorted(set(namespace) - {"__builtins__"}) == sorted({*FROZEN, *declared_since()})


@pytest.mark.parametrize("path", MODULE_PATHS)
def test_module_paths_import(path):
    importlib.import_module(path)


def test_module_attributes_keep_their_contents():
    # `cvstats.compact` and `cvstats.designs` are public modules (in __all__)
    for name in ("to_compact", "from_compact", "compact_cube", "save_compact", "open_compact"):
        assert getattr(cvstats.compact, name) is getattr(cvstats, name)
    for name in cvstats.designs.__all__:
        assert callable(getattr(cvstats.designs, name))
