"""The method registry: one declaration per inference method, read everywhere.

Every fact about a method that more than one place needs — its title, the
design blocks it needs, its estimand and target, the direction of its bias
(its political ratio, Nadeau & Bengio 2003, §4), the options it takes and
their validators, whether it needs per-example losses or only split means,
its place and reason in :func:`~cvstats.inference.recommend.recommend`'s
order, whether it has an interval, its source — is written once, in the
:class:`MethodSpec` its module declares next to its function with
:func:`cvstats.inference.engine.method`. That decorator registers the
declaration here (:data:`METHODS`) and makes the public function; the
engine runs what every method shares (options, one validation, the
refusals). :func:`cvstats.compare` picks the methods a design supports from
the registry (:func:`applicable_methods`), ``recommend`` derives its orders
from it, and the docs' method tables are rendered from it
(:func:`method_table`).

Every module of :mod:`cvstats.inference` is imported with the package, so a
method declared in a new module is registered without a list to edit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.dense import NESTED_TRAIN, TIME_ORDERED, nested_train, time_ordered
from cvstats.cube.schema import SPLIT
from cvstats.cube.score import examples_refusal, is_score
from cvstats.errors import ArgumentError
from cvstats.inference.blocks import block_sizes

__all__ = [
    "COMMON_OPTIONS",
    "COMMON_DEFAULTS",
    "CORRECTED_DIRECTION",
    "LIBERAL_FLAG",
    "RESAMPLED_DIRECTION",
    "DESIGNS",
    "DesignKind",
    "INTERVALS",
    "METHODS",
    "MethodSpec",
    "TARGETS",
    "applicable_methods",
    "declared_kind",
    "design_kinds",
    "method_table",
    "order",
    "register",
    "spec",
    "time_order_refusal",
    "time_ordered_methods",
]

#: What a method's interval is valid for: the learner (unconditional error,
#: ``n1μ``) or the models trained on the data at hand (conditional error).
TARGETS = ("learner", "model")

#: Options every test takes (a test that supports one value only refuses others).
COMMON_OPTIONS = ("mu0", "alpha", "alternative")

#: Their defaults, the same for every method.
COMMON_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"mu0": 0.0, "alpha": 0.05, "alternative": "two-sided"}
)

#: What a method's interval is: a confidence interval, a credible interval (a
#: posterior), or none (a p-value only, e.g. Alpaydın's F).
INTERVALS = ("confidence", "credible", "none")

#: Design kinds, from :func:`design_kinds`, and what each means (a method may declare a new
#: one: :class:`DesignKind`).
_DESIGNS: dict[str, str] = {
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
DESIGNS: Mapping[str, str] = MappingProxyType(_DESIGNS)


@dataclass(frozen=True)
class DesignKind:
    """A design kind a method declares with itself (a :attr:`MethodSpec.design`).

    Attributes
    ----------
    name : str
        Its key in :data:`DESIGNS`.
    description : str
        What it means, for the docs and the messages.
    test : callable
        ``test(cube) -> bool``: whether a cube's split coordinates are of this kind
        (:func:`design_kinds` asks it).
    example : callable
        ``example(n) -> xarray.Dataset``: a small design of this kind on ``n``
        examples (the contract tests run every method of the kind on it).
    """

    name: str
    description: str
    test: Callable[[xr.DataArray], bool] = field(compare=False)
    example: Callable[[int], Any] = field(compare=False)


def declared_kind(name: str) -> DesignKind | None:
    """Return the design kind a method declared under ``name`` (None for a built-in one)."""
    return _DECLARED_KINDS.get(name)


#: The kinds declared by methods, by name.
_DECLARED_KINDS: dict[str, DesignKind] = {}


#: Wording several declarations share (the flag of a comparison table; political ratios,
#: Nadeau & Bengio 2003, §4).
LIBERAL_FLAG = "liberal for the learner"
CORRECTED_DIRECTION = (
    "(1 + Jρ/(1-ρ)) / (1 + J n2/n1): liberal if ρ > ρ0 = n2/n, conservative if ρ < ρ0"
)
RESAMPLED_DIRECTION = "liberal for n1μ: 1 + Jρ/(1-ρ) > 1 (valid for the conditional E[μ̂_J | data])"


@dataclass(frozen=True)
class MethodSpec:
    """Everything cvstats knows about one inference method: its declaration.

    A module declares it next to the method's function with
    :func:`cvstats.inference.engine.method`, which fills :attr:`func` and
    :attr:`options` and registers it in :data:`METHODS`.

    Attributes
    ----------
    name : str
        Registry key and the result's ``method`` (e.g. ``"dietterich_5x2cv_t4"``).
    title : str
        Human-readable name, shown in summaries; may name the design's sizes
        as ``{K}``, ``{repeats}`` (filled as ``"1 repeat"``, ``"3 repeats"``) or the
        fixed options (``{variant}``).
    design : str or DesignKind
        The design kind it needs: a key of :data:`DESIGNS`, or a new kind
        declared with the method (registered into :data:`DESIGNS`; the
        declaration then holds its name).
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
    rank : int
        Its place in :func:`~cvstats.inference.recommend.recommend`'s order for
        its :attr:`target` (1 first; ties broken by :attr:`row`).
    reason : str
        Why it is there (the verdict's "Verdict from …" line, the docs' order table).
    source : str
        The paper (author, year, equation or section) the docs and tables cite.
    fits : str
        Its cost in model fits, in the design's letters (``"J (1 + 2M)"``).
    row : int
        Its position in a comparison table (the registry is ordered by it).
    flag : str
        Note in a comparison table for ``target="learner"`` (empty when valid
        for the learner).
    needs : {"examples", "split means"}
        Whether it needs per-example losses or only one estimate per split.
    interval : {"confidence", "credible", "none"}
        What interval its result carries (:data:`INTERVALS`): the per-model
        levels of a comparison table come from a method with a confidence interval.
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
        Options this entry fixes (e.g. ``{"variant": "t4"}``): a function
        declared with several entries runs the one whose fixed options the
        call's match.
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
        splits are time-ordered (attr ``nested_train = 1`` or ``time_ordered = 1``, e.g.
        ``TimeSeriesSplit``): :meth:`time_order_refusal`. False for the methods
        on one hold-out split.
    checks : mapping
        Validators of its own options, by name
        (:class:`~cvstats.inference.engine.Choice`,
        :class:`~cvstats.inference.engine.Check`); an option picked by
        :attr:`fixed` is checked against the entries' values.
    renamed : mapping
        Old keyword → its option (accepted with a :class:`FutureWarning`).
    options : tuple of str
        Keyword options besides the cube: :data:`COMMON_OPTIONS`, then the
        function's own (filled by the engine from the function's signature).
    func : callable
        The public function (filled by the engine).
    """

    name: str
    title: str
    design: str | DesignKind
    kernel: str
    estimand: str
    target: str
    reference: str
    direction: str
    short: str
    rank: int
    reason: str
    source: str
    fits: str
    row: int
    flag: str = ""
    needs: str = "split means"
    interval: str = "confidence"
    only: Mapping[str, Any] = field(default_factory=dict)
    why_only: str = ""
    one_size: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    contrasts: str = "any"
    zero_one: bool = False
    default: bool = True
    random_splits: bool = True
    checks: Mapping[str, Any] = field(default_factory=dict)
    renamed: Mapping[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = COMMON_OPTIONS
    func: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    @property
    def function(self) -> str:
        """``"module:name"`` of the public function."""
        if self.func is None:
            return ""
        return f"{self.func.__module__}:{self.func.__name__}"

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

    def cube_refusal(
        self, cube: xr.DataArray, *, sizes_stated: bool = False, known: Any = None
    ) -> str | None:
        """Why this method cannot run on ``cube`` with its default options (None if it can).

        A score cube for a method that needs per-example losses; a cube whose
        training sets are nested (:meth:`time_order_refusal`) for a method that
        pools splits as random draws; a block of :attr:`one_size` whose splits
        test different numbers of examples (but for a k-fold partition, whose
        mean sizes are exact: :attr:`~cvstats.inference.blocks.BlockSizes.correction`),
        unless ``sizes_stated`` (``n1`` and ``n2`` given) and the method takes them.
        ``known``: the cube's validated handle (:class:`cvstats.cube.known.Checked`),
        through which the block sizes are read once.
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
                sizes = block_sizes(cube, block, self.name, known=known)
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


class _Registry(Mapping[str, MethodSpec]):
    """The registered declarations, by name, in comparison-table order (:attr:`MethodSpec.row`).

    Filled by :func:`register` as the method modules are imported; importing
    any module of :mod:`cvstats.inference` imports them all first (the
    package's ``__init__``), so a reader never sees it partly filled.
    """

    def __init__(self) -> None:
        self._specs: dict[str, MethodSpec] = {}

    def __getitem__(self, name: str) -> MethodSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._specs, key=lambda n: (self._specs[n].row, n)))

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"METHODS({list(self)})"

    def add(self, entry: MethodSpec) -> None:
        if entry.name in self._specs:
            raise ValueError(f"a method named {entry.name!r} is registered already")
        self._specs[entry.name] = entry


#: Every method selectable by name in :func:`cvstats.compare`, in table order.
METHODS: Mapping[str, MethodSpec] = _Registry()


def register(entry: MethodSpec) -> MethodSpec:
    """Add a declaration to :data:`METHODS` (the engine does, for each entry it declares).

    Raises
    ------
    ValueError
        If the declaration lacks a field the engine, ``recommend``, the docs
        tables or the verdict need, or its name is taken.
    """
    if isinstance(entry.design, DesignKind):
        kind = entry.design
        known = _DECLARED_KINDS.get(kind.name)
        if kind.name in _DESIGNS and known is None or known not in (None, kind):
            raise ValueError(
                f"the design kind {kind.name!r} of {entry.name!r} is declared already"
            )
        _DESIGNS[kind.name] = kind.description
        _DECLARED_KINDS[kind.name] = kind
        entry = replace(entry, design=kind.name)
    problems = [
        f"`{name}` is empty"
        for name in ("name", "title", "kernel", "estimand", "reference", "direction", "short")
        + ("reason", "source", "fits")
        if not str(getattr(entry, name)).strip()
    ]
    if entry.design not in DESIGNS:
        problems.append(f"`design` {entry.design!r} is not one of {list(DESIGNS)}")
    if entry.target not in TARGETS:
        problems.append(f"`target` {entry.target!r} is not one of {list(TARGETS)}")
    if entry.interval not in INTERVALS:
        problems.append(f"`interval` {entry.interval!r} is not one of {list(INTERVALS)}")
    if entry.needs not in ("examples", "split means"):
        problems.append(f"`needs` {entry.needs!r} is not 'examples' or 'split means'")
    if entry.contrasts not in ("any", "pairwise"):
        problems.append(f"`contrasts` {entry.contrasts!r} is not 'any' or 'pairwise'")
    if entry.target == "learner" and entry.flag:
        problems.append("a method valid for the learner has no `flag`")
    if entry.target == "model" and not entry.flag:
        problems.append("a method valid for the models only needs a `flag` for tables")
    if isinstance(entry.rank, bool) or not isinstance(entry.rank, int) or entry.rank < 1:
        problems.append(f"`rank` must be a positive int, got {entry.rank!r}")
    if entry.func is None:
        problems.append("no function (declare it with cvstats.inference.engine.method)")
    unknown = [k for k in (*entry.only, *entry.fixed, *entry.checks) if k not in entry.options]
    if unknown:
        problems.append(f"options {unknown} are not among its options {list(entry.options)}")
    if problems:
        raise ValueError(f"the declaration of {entry.name!r}: " + "; ".join(problems) + ".")
    assert isinstance(METHODS, _Registry)
    METHODS.add(entry)
    return entry


def order(target: str) -> tuple[str, ...]:
    """Return the methods for ``target`` in :func:`~cvstats.inference.recommend.recommend`'s order.

    Read off the declarations: the methods whose :attr:`MethodSpec.target`
    is ``target``, by :attr:`~MethodSpec.rank` (then table row).
    """
    specs = [s for s in METHODS.values() if s.target == target]
    return tuple(s.name for s in sorted(specs, key=lambda s: (s.rank, s.row)))


def method_table(kind: str = "methods") -> pd.DataFrame:
    """Return the registry as a table, as the docs show it.

    Parameters
    ----------
    kind : {"methods", "order"}
        ``"methods"``: one row per method in table order, with its function,
        the design it needs, its cost in fits, its estimand and target, its
        reference distribution, the direction of its bias and its source;
        ``"order"``: the order in which :func:`~cvstats.inference.recommend.recommend`
        prefers the methods for each target, with the reasons.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from cvstats.inference.registry import method_table
    >>> method_table("order")[["method", "target"]].iloc[0].tolist()
    ['corrected_resampled_t', 'learner']
    """
    if kind == "order":
        rows = [
            (rank, name, target, METHODS[name].reason)
            for target in TARGETS
            for rank, name in enumerate(order(target), start=1)
        ]
        return pd.DataFrame(rows, columns=["rank", "method", "target", "why"])
    if kind != "methods":
        raise ArgumentError(f"`kind` must be 'methods' or 'order', got {kind!r}.")
    rows = [
        (
            s.name,
            s.func.__name__ if s.func is not None else "",
            s.fixed.get("variant", ""),
            DESIGNS[s.design],
            s.fits,
            s.estimand,
            s.target,
            s.reference,
            s.direction,
            s.source,
        )
        for s in METHODS.values()
    ]
    columns = ["method", "function", "variant", "design", "fits", "estimand", "target"]
    return pd.DataFrame(rows, columns=[*columns, "reference", "direction", "source"])


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
    training sets grow and overlap, in a fixed order; so does a cube whose attr
    ``time_ordered`` is 1 (a sliding window, ``TimeSeriesSplit(max_train_size=...)``,
    whose windows overlap: :func:`cvstats.cube.dense.time_ordered`). They are not exchangeable
    random draws of one design with one training size ``n1``, which is what
    Lemma 1 and every variance formula over splits assume (docs/theory.md §2, §4).
    The message says so and what applies instead: a hold-out test of one split
    (the last, trained on the most data) on a loss cube, nothing on a score cube;
    and the registered methods for time-ordered splits (:func:`time_ordered_methods`).

    Raises
    ------
    CubeError
        If the attr is present but not 0, 1 or a bool.
    """
    if not time_ordered(cube):
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
    if nested_train(cube):
        why = (
            f"cube's training sets are nested (attr `{NESTED_TRAIN}` = 1, as TimeSeriesSplit "
            "makes them): they grow and overlap"
        )
    else:
        why = (
            f"cube's splits are time-ordered (attr `{TIME_ORDERED}` = 1, as "
            "TimeSeriesSplit(max_train_size=...) makes them): each trains on a window before its "
            "test set, the windows overlap"
        )
    return (
        f"{method} pools the splits as exchangeable random draws of one design, but this {why} "
        "and the splits come in a fixed order, so the variance formulas over splits (Lemma 1; "
        "docs/theory.md §2, §4), which assume random splits of one training size n1, do not "
        f"hold. {instead} {_time_ordered_alternative(cube)}"
    )


def time_ordered_methods(cube: xr.DataArray) -> list[str]:
    """Names of the registered methods for this cube's time-ordered splits, in table order.

    The methods that do not pool splits as random draws (:attr:`MethodSpec.random_splits`
    False) and whose design kind the cube has, other than the one hold-out split (named
    by :func:`time_order_refusal` itself); those that need per-example losses are listed
    for a score cube too (its refusal says to collect a loss cube). Read off the
    declarations, so a method declared for time-ordered designs is named by every
    refusal of a pooled method without an edit here.
    """
    kinds = design_kinds(cube) - {"holdout"}
    return [n for n, s in METHODS.items() if not s.random_splits and s.design in kinds]


def _time_ordered_alternative(cube: xr.DataArray) -> str:
    """Return the sentence of :func:`time_order_refusal` on what runs over every split in order."""
    names = time_ordered_methods(cube)
    if not names:
        return (
            "No method of cvstats pools time-ordered splits (for forecasts over a rolling "
            "origin, see tests of equal predictive accuracy, e.g. Diebold & Mariano, 1995)."
        )
    listed = "; ".join(f"{n}(cube) ({METHODS[n].source})" for n in names)
    loss_cube = (
        " on a loss cube"
        if is_score(cube) and any(METHODS[n].needs == "examples" for n in names)
        else ""
    )
    return f"For the losses of every split in time order, use{loss_cube}: {listed}."


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
    kinds |= {name for name, kind in _DECLARED_KINDS.items() if kind.test(cube)}
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
