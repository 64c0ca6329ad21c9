"""The method registry: one description per inference method, read everywhere.

Every fact about a method that more than one place needs — its title, the
design blocks it needs, its estimand and target, the direction of its bias
(its political ratio, Nadeau & Bengio 2003, §4), the options it takes, whether
it needs per-example losses or only split means — is written once here, in a
:class:`MethodSpec`. The methods fill their results from it
(:func:`cvstats.inference.common.finish_test`), :func:`cvstats.compare` picks
the methods a design supports from it (:func:`applicable_methods`), refuses
options from it (:meth:`MethodSpec.check_options`), and the docs' method tables
are checked against it.

The entries name their function by module and attribute, so the registry
imports no method: the methods import the registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import xarray as xr

from cvstats.cube.dense import NESTED_TRAIN, nested_train
from cvstats.cube.schema import SPLIT
from cvstats.cube.score import examples_refusal, is_score
from cvstats.errors import ArgumentError
from cvstats.inference.blocks import block_sizes

__all__ = [
    "COMMON_OPTIONS",
    "DESIGNS",
    "METHODS",
    "MethodSpec",
    "TARGETS",
    "applicable_methods",
    "design_kinds",
    "spec",
    "time_order_refusal",
]

#: What a method's interval is valid for: the learner (unconditional error,
#: ``n1μ``) or the models trained on the data at hand (conditional error).
TARGETS = ("learner", "model")

#: Options every test takes (a test that supports one value only refuses others).
COMMON_OPTIONS = ("mu0", "alpha", "alternative")

#: Design kinds, from :func:`design_kinds`, and what each means.
DESIGNS = MappingProxyType(
    {
        "holdout": "a main block of one split",
        "resampled": "a main block of J >= 2 random splits (not k-fold)",
        "kfold": "a main block of one k-fold partition",
        "repeated_kfold": "a main block of one or more k-fold partitions",
        "half": "a main block and conservative-Z half-splits",
        "replicate": "a main block and bootstrap replicates",
        "5x2": "Dietterich's 5x2 halves",
        "nested": "nested cross-validation (Bates et al., 2024)",
        "main": "a main block of J >= 2 splits, random or k-fold (resampled or repeated_kfold)",
    }
)

_LIB = "liberal for the learner"
_KFE = "k-fold test error (conditional); liberal for the learner"
_RHO = "liberal if ρ > ρ0"
_S4 = "liberal if σ4 > 0"
_HOLDOUT = "liberal for n1μ: (n2 σ3 + σ0 - σ3)/(σ0 - σ3) > 1 (valid for the trained model)"
_CORRECTED = "(1 + Jρ/(1-ρ)) / (1 + J n2/n1): liberal if ρ > ρ0 = n2/n, conservative if ρ < ρ0"
_RESAMPLED = "liberal for n1μ: 1 + Jρ/(1-ρ) > 1 (valid for the conditional E[μ̂_J | data])"
_FIVE_BY_TWO = "σ1/(σ1 - σ4): liberal if σ4 = Cov[μ̃_(m), μ̃^c_(m)] > 0, conservative if < 0"
# the t5 numerator averages both halves of m = 1: Var = (σ1 + σ4)/2, times 2 (docs/theory.md §4)
_FIVE_BY_TWO_T5 = (
    "(σ1 + σ4)/(σ1 - σ4): liberal if σ4 = Cov[μ̃_(m), μ̃^c_(m)] > 0, conservative if < 0"
)


@dataclass(frozen=True)
class MethodSpec:
    """Everything cvstats knows about one inference method, in one place.

    Attributes
    ----------
    name : str
        Registry key and the result's ``method`` (e.g. ``"dietterich_5x2cv_t4"``).
    function : str
        ``"module:attribute"`` of the public function; :attr:`func` imports it.
    title : str
        Human-readable name, shown in summaries; may name the design's sizes
        as ``{K}``, ``{repeats}`` (filled as ``"1 repeat"``, ``"3 repeats"``) or the
        fixed options (``{variant}``).
    design : str
        The design kind it needs (a key of :data:`DESIGNS`).
    kernel : str
        The numpy kernel(s) in :mod:`cvstats.kernels` that compute it.
    estimand : str
        What the estimate estimates (``"n1μ"``, ``"conditional"``, …).
    target : {"learner", "model"}
        What its variance estimate is valid for.
    reference : str
        Reference distribution of the statistic (``"t"``, ``"z"``, ``"F(10, 5)"``).
    direction : str
        Its bias for the learner-level question, in full (the political ratio);
        a template like :attr:`title`.
    short : str
        The same in a few words, for tables.
    flag : str
        Note in a comparison table for ``target="learner"`` (empty when valid
        for the learner).
    needs : {"examples", "split means"}
        Whether it needs per-example losses or only one estimate per split.
    options : tuple of str
        Keyword options besides the cube (always :data:`COMMON_OPTIONS` first).
    only : mapping
        Options of :data:`COMMON_OPTIONS` it supports with one value only
        (e.g. McNemar: ``{"mu0": 0.0}``).
    why_only : str
        Why, in the words of the error a refused value raises.
    one_size : tuple of str
        Blocks whose splits must all test one number of examples for the
        formula (the Nadeau–Bengio correction uses one ``n1`` and one ``n2``);
        on unequal blocks the method runs only with ``n1=``/``n2=`` (or ``rho=``)
        given, and :func:`cvstats.compare` leaves it out with a note.
    fixed : mapping
        Options this entry fixes (e.g. ``{"variant": "t4"}``).
    contrasts : {"any", "pairwise"}
        Which contrasts it can test (McNemar: differences of two models).
    zero_one : bool
        Whether it needs zero-one losses.
    default : bool
        Whether :func:`cvstats.compare` runs it when the design supports it
        and no ``methods`` are named.
    random_splits : bool
        Whether its theory treats several splits as exchangeable random draws of
        one design (every method that pools splits: the variance formulas of
        docs/theory.md §2–§4 and Lemma 1 assume it). Such a method refuses a cube whose
        training sets are nested (attr ``nested_train = 1``, e.g.
        ``TimeSeriesSplit``): :meth:`time_order_refusal`. False for the methods
        on one hold-out split.
    """

    name: str
    function: str
    title: str
    design: str
    kernel: str
    estimand: str
    target: str
    reference: str
    direction: str
    short: str
    flag: str = ""
    needs: str = "split means"
    options: tuple[str, ...] = COMMON_OPTIONS
    only: Mapping[str, Any] = field(default_factory=dict)
    why_only: str = ""
    one_size: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    contrasts: str = "any"
    zero_one: bool = False
    default: bool = True
    random_splits: bool = True

    @property
    def func(self) -> Callable[..., Any]:
        """The public function (imported on first use)."""
        module, attr = self.function.split(":")
        return getattr(importlib.import_module(module), attr)

    @property
    def conditional(self) -> bool:
        """Whether its interval is valid for the models at hand (``target="model"``)."""
        return self.target == "model"

    def refusal(self, options: Mapping[str, Any]) -> str | None:
        """Why this method cannot run with ``options`` (None if it can)."""
        unknown = [k for k in options if k not in self.options]
        if unknown:
            return (
                f"{self.name} does not take the option(s) {unknown}; its options are "
                f"{list(self.options)}."
            )
        for key, value in self.only.items():
            if key in options and options[key] != value:
                return (
                    f"{self.name}: {self.why_only}, so it takes {key}={value!r} only, got "
                    f"{key}={options[key]!r}."
                )
        return None

    def time_order_refusal(self, cube: xr.DataArray) -> str | None:
        """Why this method cannot run on a cube of nested training sets (None if it can).

        See :func:`time_order_refusal`; None for a method on one hold-out split
        (:attr:`random_splits` False) and for a cube whose training sets are not
        nested.
        """
        if not self.random_splits:
            return None
        return time_order_refusal(cube, self.name)

    def cube_refusal(self, cube: xr.DataArray, *, sizes_stated: bool = False) -> str | None:
        """Why this method cannot run on ``cube`` with its default options (None if it can).

        A score cube for a method that needs per-example losses; a cube whose
        training sets are nested (:meth:`time_order_refusal`) for a method that
        pools splits as random draws; a block of :attr:`one_size` whose splits
        test different numbers of examples (but for a k-fold partition, whose
        mean sizes are exact: :attr:`~cvstats.inference.blocks.BlockSizes.correction`),
        unless ``sizes_stated`` (``n1`` and ``n2`` given) and the method takes them.
        """
        if self.needs == "examples" and is_score(cube):
            return examples_refusal(self.name)
        ordered = self.time_order_refusal(cube)
        if ordered is not None:
            return ordered
        if sizes_stated and "n1" in self.options:
            return None
        for block in self.one_size:
            if block in set(np.asarray(cube["block"].values).tolist()):
                sizes = block_sizes(cube, block, self.name)
                if sizes.correction is None:
                    fix = (
                        "call it with rho="
                        if "rho" in self.options
                        else "pass n1= and n2= (to cvstats.compare or to the method)"
                    )
                    return (
                        f"{self.name} uses one n1 and one n2, but the {block!r} block's splits "
                        f"test {sizes.n2_min} to {sizes.n2_max} examples; {fix} to run it"
                    )
        return None

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Raise :class:`~cvstats.errors.ArgumentError` for an option it does not support."""
        problem = self.refusal(options)
        if problem is not None:
            raise ArgumentError(problem)

    def result_fields(self, **params: Any) -> dict[str, Any]:
        """Return the result fields from the registry (templates filled from ``params``)."""
        values = {**self.fixed, **params}
        if "repeats" in values:  # "1 repeat", "3 repeats"
            n = values["repeats"]
            values["repeats"] = f"{n} repeat{'' if n == 1 else 's'}"
        return {
            "method": self.name,
            "title": self.title.format(**values),
            "reference": self.reference,
            "estimand": self.estimand,
            "target": self.target,
            "direction": self.direction.format(**values),
        }


_R = "cvstats.inference.resampling"
_F = "cvstats.inference.fivebytwo"
_H = "cvstats.inference.holdout"
_SIZES = (*COMMON_OPTIONS, "n1", "n2")


def _five_by_two(variant: str) -> MethodSpec:
    return MethodSpec(
        "dietterich_5x2cv" + ("" if variant == "original" else f"_{variant}"),
        f"{_F}:dietterich_5x2cv",
        "Dietterich 5x2cv t ({variant})",
        "5x2",
        "dietterich_5x2cv",
        "n/2 μ",
        "learner",
        "t",
        _FIVE_BY_TWO_T5 if variant == "t5" else _FIVE_BY_TWO,
        _S4,
        options=(*COMMON_OPTIONS, "variant"),
        fixed={"variant": variant},
    )


def _bayle(variance: str, default: bool) -> MethodSpec:
    return MethodSpec(
        "bayle_cv" + ("" if variance == "out" else f"_{variance}"),
        "cvstats.inference.bayle:bayle_cv",
        "Bayle et al. {K}-fold CV interval for the k-fold test error ({variant})",
        "kfold",
        "bayle_cv",
        "conditional",
        "model",
        "normal",
        "valid for the k-fold test error; liberal for n1μ (ignores training-set variability)",
        "liberal for n1μ",
        flag=_KFE,
        needs="examples",
        options=(*COMMON_OPTIONS, "variant"),
        fixed={"variant": variance},
        default=default,
    )


# in the order of a comparison table
_SPECS = (
    MethodSpec(
        "holdout_t",
        f"{_H}:holdout_t",
        "Hold-out t ({variant} reference)",
        "holdout",
        "holdout_t",
        "conditional",
        "model",
        "normal",
        _HOLDOUT,
        "liberal",
        flag=_LIB,
        needs="examples",
        options=(*COMMON_OPTIONS, "split", "variant"),
        random_splits=False,
    ),
    MethodSpec(
        "mcnemar",
        f"{_H}:mcnemar",
        "McNemar ({variant})",
        "holdout",
        "mcnemar",
        "conditional",
        "model",
        "normal",
        _HOLDOUT,
        "liberal",
        flag=_LIB,
        needs="examples",
        options=(*COMMON_OPTIONS, "variant", "split", "models"),
        only={"mu0": 0.0},
        why_only="McNemar's test is a test of mu0 = 0",
        contrasts="pairwise",
        zero_one=True,
        default=False,
        random_splits=False,
    ),
    MethodSpec(
        "kfold_t",
        f"{_R}:kfold_t",
        "{K}-fold cv t",
        "kfold",
        "resampled_t",
        "conditional",
        "model",
        "t",
        "liberal for n1μ (ignores the correlation between folds)",
        "liberal",
        flag=_LIB,
        options=_SIZES,
    ),
    _bayle("out", True),
    _bayle("in", False),
    MethodSpec(
        "corrected_repeated_kfold_t",
        f"{_R}:corrected_repeated_kfold_t",
        "Corrected repeated {K}-fold t (Bouckaert & Frank), {repeats}",
        "repeated_kfold",
        "corrected_resampled_t",
        "n1μ",
        "learner",
        "t",
        "liberal if ρ > ρ0 = 1/{K} (the correction's n2/n1 = 1/(K-1) as a correlation; "
        "the design's effective ρ, e.g. from fit_rho), conservative if ρ < ρ0",
        "liberal if ρ > 1/K",
        options=_SIZES,
        one_size=("main",),
    ),
    MethodSpec(
        "resampled_t",
        f"{_R}:resampled_t",
        "Resampled t",
        "resampled",
        "resampled_t",
        "conditional",
        "model",
        "t",
        _RESAMPLED,
        "liberal",
        flag=_LIB,
        options=_SIZES,
    ),
    MethodSpec(
        "corrected_resampled_t",
        f"{_R}:corrected_resampled_t",
        "Corrected resampled t (Nadeau & Bengio)",
        "resampled",
        "corrected_resampled_t",
        "n1μ",
        "learner",
        "t",
        _CORRECTED,
        _RHO,
        options=_SIZES,
        one_size=("main",),
    ),
    MethodSpec(
        "conservative_z",
        f"{_R}:conservative_z",
        "Conservative Z (Nadeau & Bengio)",
        "half",
        "conservative_z",
        "n1μ",
        "learner",
        "normal",
        "conservative (ratio < 1, a conjecture: variance falls with training size)",
        "conservative",
        options=_SIZES,
        one_size=("main", "half"),
    ),
    MethodSpec(
        "bootstrap_t",
        f"{_R}:bootstrap_t",
        "Bootstrap (resampling)",
        "replicate",
        "bootstrap_t",
        "conditional",
        "model",
        "t",
        _RESAMPLED,
        "liberal",
        flag=_LIB,
        options=_SIZES,
    ),
    MethodSpec(
        "corrected_bootstrap_t",
        f"{_R}:corrected_bootstrap_t",
        "Corrected bootstrap (Nadeau & Bengio)",
        "replicate",
        "bootstrap_t",
        "n1μ",
        "learner",
        "t",
        _CORRECTED,
        _RHO,
        options=_SIZES,
        one_size=("main", "replicate"),
    ),
    _five_by_two("original"),
    _five_by_two("t4"),
    _five_by_two("t5"),
    MethodSpec(
        "combined_5x2cv_f",
        f"{_F}:combined_5x2cv_f",
        "Combined 5x2cv F (Alpaydın)",
        "5x2",
        "combined_5x2cv_f",
        "n/2 μ",
        "learner",
        "F(10, 5)",
        "like 5x2cv t (depends on σ4)",
        _S4,
        only={"alternative": "two-sided"},
        why_only="Alpaydın's combined F is two-sided only",
    ),
    MethodSpec(
        "bayesian_correlated_t",
        "cvstats.inference.bayes:bayesian_correlated_t",
        "Bayesian correlated t (Benavoli et al. 2017), ρ = {rho:.4g}",
        "main",
        "correlated_t_posterior",
        "n1μ",
        "learner",
        "posterior t",
        "as the corrected resampled t: right if ρ is (ρ = 1/K or n2/n by default)",
        "as corrected t",
        options=(*COMMON_OPTIONS, "rope", "rho"),
        one_size=("main",),
        only={"mu0": 0.0, "alternative": "two-sided"},
        why_only=(
            "the Bayesian correlated t gives the posterior probabilities of the mean left of, "
            "inside and right of the rope (set `rope`), not a test of mu0 against an alternative"
        ),
        default=False,
    ),
    MethodSpec(
        "nested_cv",
        "cvstats.inference.nested:nested_cv_interval",
        "Nested {K}-fold CV interval for Err_XY (Bates, Hastie & Tibshirani)",
        "nested",
        "nested_cv",
        "conditional",
        "model",
        "normal",
        "near nominal for Err_XY (Bates et al.'s experiments)",
        "≈ nominal",
        flag="Err_XY: error of the model fitted on all data",
        needs="examples",
    ),
)


#: Every method selectable by name in :func:`cvstats.compare`, in table order.
METHODS: Mapping[str, MethodSpec] = MappingProxyType({s.name: s for s in _SPECS})


def spec(name: str) -> MethodSpec:
    """Return the registry entry of a method, or raise an ArgumentError listing them."""
    try:
        return METHODS[name]
    except KeyError:
        raise ArgumentError(f"unknown method {name!r}; choose from {list(METHODS)}.") from None


def _last_split(cube: xr.DataArray) -> Any:
    """Label of the split that trains on the most examples (the last one of a time series).

    ``"<the last split's label>"`` when ``cube`` lacks the split coordinates (e.g. an
    array of split means given to :func:`cvstats.fit_lemma1`).
    """
    if any(c not in cube.coords for c in (SPLIT, "block", "n_train")):
        return "<the last split's label>"
    labels = np.asarray(cube[SPLIT].values)
    main = np.flatnonzero(np.asarray(cube["block"].values) == "main")
    pos = main if main.size else np.arange(labels.size)
    n_train = np.asarray(cube["n_train"].values)[pos]
    return labels[pos[np.flatnonzero(n_train == n_train.max())[-1]]].item()


def _shown(label: Any) -> str:
    return label if label == "<the last split's label>" else repr(label)


def time_order_refusal(cube: xr.DataArray, method: str) -> str | None:
    """Why ``method``, which pools splits as random draws, cannot run on ``cube`` (or None).

    A cube whose attr ``nested_train`` is 1 (set by
    :func:`cvstats.designs.from_splitter` when every split's training set contains
    the previous split's, as ``TimeSeriesSplit`` makes them) holds splits whose
    training sets grow and overlap, in a fixed order: they are not exchangeable
    random draws of one design with one training size ``n1``, which is what
    Lemma 1 and every variance formula over splits assume (docs/theory.md §2, §4).
    The message says so and what applies instead: a hold-out test of one split
    (the last, trained on the most data) on a loss cube; nothing on a score cube.

    Raises
    ------
    CubeError
        If the attr is present but not 0, 1 or a bool.
    """
    if not nested_train(cube):
        return None
    last = _shown(_last_split(cube))
    if is_score(cube):
        instead = (
            "A score cube keeps no per-example losses, so no method of cvstats applies to it: "
            "collect a loss cube (cvstats.collect(..., loss=...)) and test one split as a "
            f"hold-out, holdout_t(cube, split={last}), the last split (it trains on the most "
            "data)."
        )
    else:
        instead = (
            f"Test one split as a hold-out instead: holdout_t(cube, split={last}), the last "
            "split (it trains on the most data; mcnemar for the zero-one losses of two "
            f"classifiers), or compare on cube.sel(split=[{last}])."
        )
    return (
        f"{method} pools the splits as exchangeable random draws of one design, but this "
        f"cube's training sets are nested (attr `{NESTED_TRAIN}` = 1, as TimeSeriesSplit makes "
        "them): they grow and overlap and the splits come in a fixed order, so the variance "
        "formulas over splits (Lemma 1; docs/theory.md §2, §4), which assume random splits of one "
        f"training size n1, do not hold. {instead} No method of cvstats pools time-ordered "
        "splits (for forecasts over a rolling origin, see tests of equal predictive accuracy, "
        "e.g. Diebold & Mariano, 1995)."
    )


def design_kinds(cube: xr.DataArray) -> set[str]:
    """Return the design kinds (keys of :data:`DESIGNS`) a cube's split coordinates support."""
    block = np.asarray(cube["block"].values)
    blocks = set(block.tolist())
    main = block == "main"
    kinds: set[str] = set()
    if main.any():
        kfold = bool((np.asarray(cube["fold"].values)[main] >= 0).all())
        if main.sum() == 1:
            kinds.add("holdout")
        elif kfold:
            kinds.add("repeated_kfold")
            if np.unique(np.asarray(cube["repeat"].values)[main]).size == 1:
                kinds.add("kfold")
        else:
            kinds.add("resampled")
        kinds |= {b for b in ("half", "replicate") if b in blocks}
    kinds |= {b for b in ("5x2", "nested") if b in blocks}
    if kinds & {"resampled", "repeated_kfold"}:
        kinds.add("main")
    return kinds


def applicable_methods(
    cube: xr.DataArray,
    target: str = "learner",
    *,
    defaults_only: bool = True,
    per_example: bool | None = None,
) -> list[str]:
    """Names of the methods the cube's design supports, for a target.

    Parameters
    ----------
    cube : xarray.DataArray
        A cube or contrast cube, or a score cube (:mod:`cvstats.cube.score`).
    target : {"learner", "model"}
        ``"model"`` keeps the methods valid for the conditional error.
    defaults_only : bool, default True
        Leave out methods that run only when named (McNemar).
    per_example : bool, optional
        Whether the cube holds per-example losses; default read off the cube:
        a score cube does not, so the methods that need them (``needs ==
        "examples"``: their variance is over the test examples) are left out.
        ``True`` lists them whatever the cube (what :func:`cvstats.compare`
        compares against to note what it left out).

    Returns
    -------
    list of str
        Keys of :data:`METHODS`, in table order.
    """
    kinds = design_kinds(cube)
    if per_example is None:
        per_example = not is_score(cube)
    return [
        name
        for name, s in METHODS.items()
        if s.design in kinds
        and (s.default or not defaults_only)
        and (target == "learner" or s.conditional)
        and (per_example or s.needs != "examples")
    ]
