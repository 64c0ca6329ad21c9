"""cvstats: honest inference about generalization error from cross-validation.

``import cvstats`` loads only the foundation (the errors, the options, the
version); the first use of any other public name (``cvstats.compare``,
``from cvstats import *``, ...) imports the whole API, as ``import cvstats``
used to (PEP 562 module ``__getattr__``). So ``import cvstats.kernels``, which
runs this file first, loads the numeric layer without xarray or pandas.

The ``cube.cvstats`` accessor of xarray DataArrays is registered as soon as both
cvstats and xarray are imported, in either order: at once if xarray already is,
else right after xarray's own import (a one-shot import hook), so a cube read
with plain xarray after ``import cvstats`` has it too. See
``docs/architecture.md`` (the API layer).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

from cvstats._version import __version__
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
from cvstats.options import get_options, set_options

#: Where every public name that is not imported above lives, as ``import cvstats`` used
#: to import it (``compact`` is the module ``cvstats.cube.compact``; importing
#: ``cvstats.designs`` binds ``designs``, the module).
_LAZY: dict[str, tuple[str, ...]] = {
    "cvstats.designs": (),
    "cvstats.across.auto": ("ChosenTest", "DatasetsComparison", "choose_test", "compare_datasets"),
    "cvstats.across.bayes_datasets": (
        "BayesianDatasetsResult",
        "bayesian_sign_test",
        "bayesian_signed_rank_test",
    ),
    "cvstats.across.hierarchical": (
        "HierarchicalResult",
        "bayesian_hierarchical_test",
    ),
    "cvstats.across.conditional": (
        "WinnerTable",
        "cv_bias",
        "cv_estimates",
        "variance_decomposition",
        "winner_table",
    ),
    "cvstats.across.kfold_variance": (
        "kfold_moments",
        "kfold_statistics",
        "quadratic_estimator_bias",
    ),
    "cvstats.across.lemma1": ("fit_lemma1",),
    "cvstats.across.plan": ("plan",),
    "cvstats.across.ranks": (
        "ControlResult",
        "EffectSizeResult",
        "FriedmanResult",
        "PairwiseMatrix",
        "PairwiseResult",
        "RankReport",
        "WilcoxonResult",
        "cd_diagram",
        "control_test",
        "effect_size",
        "friedman_test",
        "pairwise_matrix",
        "pairwise_wilcoxon",
        "rank_report",
        "wilcoxon_test",
    ),
    "cvstats.across.rho": ("fit_r", "fit_rho"),
    "cvstats.cube": ("compact", "from_arrays", "from_frame", "validate"),
    "cvstats.cube.compact": (
        "compact_cube",
        "from_compact",
        "open_compact",
        "save_compact",
        "to_compact",
    ),
    "cvstats.cube.formula": ("contrast_matrix", "contrasts", "pairwise", "parse_formula"),
    "cvstats.cube.evals": ("from_evals",),
    "cvstats.cube.score": ("from_scores",),
    "cvstats.cube.storage": ("open_cube", "save"),
    "cvstats.designs.collect": ("collect",),
    "cvstats.designs.cv_results": ("from_cv_results",),
    "cvstats.inference.bayes": ("BayesianResult",),
    "cvstats.reporting.compare": ("ComparisonTable", "compare"),
    "cvstats.reporting.describe": ("CubeDescription", "describe"),
    "cvstats.reporting.evals": ("eval_difference", "eval_mean", "plan_eval"),
    "cvstats.reporting.selection": ("bbc_cv", "cv_confidence_set", "model_confidence_set"),
    "cvstats.reporting.tables": ("PublicationTable", "nadeau_bengio_table", "publication_table"),
    "cvstats.results": ("ConfidenceInterval", "InferenceResult"),
    "cvstats.results.evals": ("EvalPlan", "EvalResult"),
    "cvstats.results.plan": ("PlanResult",),
    "cvstats.results.selection": ("BBCResult", "CVCResult", "MCSResult"),
}

#: The subpackages ``import cvstats`` bound as attributes; the first one used imports
#: the whole API (every ``cvstats.<subpackage>.<module>`` reached before still is),
#: except the kernels, which import alone (numpy and scipy only).
_SUBPACKAGES = ("across", "cube", "inference", "reporting", "results")


def _import_api() -> None:
    """Import every public name into this module's namespace (a name set already stays).

    The inference methods are the public functions of the method registry
    (:data:`cvstats.inference.FUNCTIONS`): a method declared with
    :func:`cvstats.inference.engine.method` is public here with no list to edit.
    """
    namespace = globals()
    for module_name, names in _LAZY.items():
        module = importlib.import_module(module_name)
        for name in names:
            namespace.setdefault(name, getattr(module, name))
    from cvstats.inference import FUNCTIONS

    for name, func in FUNCTIONS.items():
        namespace.setdefault(name, func)
    namespace["__all__"] = [*_NAMES, *sorted(FUNCTIONS)]


def __getattr__(name: str) -> Any:
    if name == "kernels":
        return importlib.import_module("cvstats.kernels")
    if name in _NAMES or name in _SUBPACKAGES or name == "__all__":
        _import_api()
        return globals()[name]
    if not name.startswith("_"):  # perhaps a method's public function (the registry's)
        _import_api()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module 'cvstats' has no attribute {name!r}")


def __dir__() -> list[str]:
    # what `import cvstats` bound when it imported everything: the public names, the
    # subpackages and the module's dunders, not this file's helpers; the methods' functions
    # once the registry is loaded (dir() loads nothing)
    dunders = {name for name in globals() if name.startswith("__")}
    names = globals().get("__all__", _NAMES)
    return sorted({*dunders, *names, *_SUBPACKAGES, "kernels", "errors", "options"})


def _cube_accessor(obj: Any) -> Any:
    """``cube.cvstats``: :class:`cvstats.reporting.accessor.CvstatsAccessor` of `obj`."""
    from cvstats.reporting.accessor import CvstatsAccessor

    return CvstatsAccessor(obj)


def _register_accessor(xarray: ModuleType) -> None:
    """Register ``cube.cvstats`` on xarray's DataArray, unless it already is."""
    if "cvstats" not in vars(xarray.DataArray):
        xarray.register_dataarray_accessor("cvstats")(_cube_accessor)


class _AfterXarrayImport:
    """A one-shot import hook (:data:`sys.meta_path`): registers the accessor once xarray is.

    It finds xarray's spec with the other finders and runs
    :func:`_register_accessor` right after xarray's module has executed; it
    imports nothing of cvstats, so it is safe whichever module imports xarray.
    """

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname != "xarray":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module: ModuleType) -> None:
            exec_module(module)
            _register_accessor(module)

        spec.loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec


if "xarray" in sys.modules:
    _register_accessor(sys.modules["xarray"])
else:
    sys.meta_path.insert(0, _AfterXarrayImport())

#: The public names besides the methods' functions; ``__all__`` (computed on first use) is
#: these and every registered method's function (:data:`cvstats.inference.FUNCTIONS`).
_NAMES = [
    "get_options",
    "set_options",
    "compact",
    "compact_cube",
    "from_compact",
    "open_compact",
    "save_compact",
    "to_compact",
    "BayesianResult",
    "ControlResult",
    "EffectSizeResult",
    "FriedmanResult",
    "PairwiseMatrix",
    "PairwiseResult",
    "RankReport",
    "WilcoxonResult",
    "BayesianDatasetsResult",
    "ChosenTest",
    "DatasetsComparison",
    "choose_test",
    "compare_datasets",
    "HierarchicalResult",
    "bayesian_hierarchical_test",
    "bayesian_sign_test",
    "bayesian_signed_rank_test",
    "cd_diagram",
    "control_test",
    "effect_size",
    "friedman_test",
    "pairwise_matrix",
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
    "ArgumentError",
    "collect",
    "contrast_matrix",
    "contrasts",
    "designs",
    "from_arrays",
    "from_frame",
    "from_scores",
    "from_cv_results",
    "from_evals",
    "eval_difference",
    "eval_mean",
    "plan_eval",
    "EvalPlan",
    "EvalResult",
    "bbc_cv",
    "BBCResult",
    "model_confidence_set",
    "MCSResult",
    "cv_confidence_set",
    "CVCResult",
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
