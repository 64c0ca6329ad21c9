"""Comparison tables: every applicable method on every contrast of a formula.

:func:`compare` turns a formula and a cube into contrasts
(:mod:`cvstats.cube.formula`), runs the chosen methods (docs/theory.md §4) on them and
returns a :class:`ComparisonTable` with rows ``(contrast, method)``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube import unit_dim
from cvstats.cube.evals import is_eval_cube
from cvstats.cube.formula import checked_contrasts, parse_formula, select_loss
from cvstats.cube.groups import group_codes
from cvstats.cube.known import Checked, remember
from cvstats.cube.schema import CONTRAST, EXAMPLE, MODEL, N_TEST, SPLIT
from cvstats.cube.score import examples_refusal, is_score
from cvstats.cube.validation import check_finite_means, validated
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, ZeroVarianceWarning
from cvstats.inference.blocks import block_sizes, kfold_layout, share_split_means
from cvstats.inference.clustered import CLUSTER_NOTE, warn_if_straddling
from cvstats.inference.common import check_sizes, resolve_size
from cvstats.inference.recommend import Recommendation, recommend
from cvstats.inference.registry import METHODS, TARGETS, applicable_methods
from cvstats.reporting.decision import (
    LEVEL_NOTE,
    MODELS_ON_THEIR_OWN,
    ci_text,
    comparison_rows,
    contrast_labels,
    default_summary,
    level_contrasts,
    levels_method,
    table_recommendation,
    table_verdict,
    wrap_lines,
)
from cvstats.reporting.evals import eval_contrasts
from cvstats.reporting.multiplicity import (
    ADJUST_DEFAULT,
    Adjustment,
    adjust_name,
    adjust_pvalues,
    check_adjust,
)
from cvstats.results import FRAME_COLUMNS, InferenceResult
from cvstats.results.base import Result, format_floats, ordered_columns
from cvstats.results.evals import EvalResult
from cvstats.results.ranges import CLIP_COLUMN, table_clip_notes
from cvstats.results.verdict import Verdict, is_level, weights_of

__all__ = ["METHODS", "TARGETS", "ComparisonTable", "compare", "applicable_methods"]


_PAIR = re.compile(r"^(?:1\*(?P<a>.+) - 1\*(?P<b>.+)|-1\*(?P<c>.+) \+ 1\*(?P<d>.+))$")


def _comparison_frame(res: Any) -> pd.DataFrame:
    """Return a result's frame in the comparison table's columns (dims, FRAME_COLUMNS).

    Columns the result names otherwise are renamed (its ``comparison_columns``);
    a column its frame lacks is taken from the result's field of that name when it
    has one (e.g. ``estimand``), else left missing (NaN: e.g. a posterior has no
    p-value).
    """
    frame = res.to_frame()
    dims = [c for c in frame.columns if c not in res.frame_columns]
    if res.comparison_columns:
        frame = frame.rename(columns={v: k for k, v in res.comparison_columns.items()})
    for col in FRAME_COLUMNS:
        if col not in frame.columns:
            value = getattr(res, col, None)
            frame[col] = value if isinstance(value, str | int | float) else np.nan
    return ordered_columns(frame, [*dims, *FRAME_COLUMNS])


def _pairs_only(cube: xr.DataArray) -> xr.DataArray:
    """Keep the contrasts of ``cube`` that are differences of two models (for McNemar)."""
    pairs = _pairwise_contrasts(cube)
    if not pairs:
        raise ArgumentError(
            "McNemar's test needs contrasts that are differences of two models "
            "(e.g. 'loss ~ model' or cvstats.pairwise(cube)); this formula has none."
        )
    return cube.sel({CONTRAST: pairs})


def _pairwise_contrasts(cube: xr.DataArray) -> list[str]:
    """Contrast labels whose weights are a difference of two models (for McNemar)."""
    if "weights" not in cube.coords:
        return [str(c) for c in cube[CONTRAST].values]
    return [
        str(c)
        for c, w in zip(cube[CONTRAST].values, cube["weights"].values, strict=True)
        if _PAIR.match(str(w))
    ]


#: Columns of :meth:`ComparisonTable.to_frame` besides the dims and FRAME_COLUMNS.
_EXTRA_COLUMNS = ("pvalue_raw", "note")


@dataclass(frozen=True, repr=False)
class ComparisonTable(Result):
    """Results of several methods on the contrasts of a formula.

    A :class:`~cvstats.results.base.Result`: ``to_markdown``, ``to_latex``,
    ``to_html`` and ``str`` come from the base, writing the table's
    reader-facing frame (its own ``_display``: intervals as ``[low, high]``,
    readable headers).

    Attributes
    ----------
    results : dict of str to InferenceResult
        One result per method name (each over the contrast and extra dims).
    formula : str
        The formula (or a description of the contrasts).
    target : str
        ``"learner"`` or ``"model"``.
    mu0, alpha : float
        Null value and level.
    notes : tuple of str
        What the table leaves out and why (e.g. a method the design supports
        that cannot take the options asked for).
    levels : InferenceResult, optional
        Each model's own level (error or metric) with its interval, from the
        recommended method (:func:`cvstats.inference.recommend.recommend`);
        shown by :meth:`summary` as "per-model estimates", not as tests.
    supported : tuple of str
        Every method the cube's design supports for the target (what the
        verdict's recommendation may say is missing).
    left_out : tuple of str
        The supported methods :func:`compare` left out for this cube or these
        options, each with a note (empty when ``methods`` was named).
    adjusted : dict of str to xarray.DataArray
        Per method whose p-values were adjusted for multiple comparisons
        (:mod:`cvstats.reporting.multiplicity`), its adjusted p-values, in the
        shape of its result's ``pvalue`` (NaN for a model's own level).
    adjustments : dict of str to Adjustment
        Per method in ``adjusted``, what was adjusted: the ``multipletests``
        method, the comparisons per family and the dims whose slices are
        families.
    """

    results: dict[str, InferenceResult]
    formula: str
    target: str
    mu0: float
    alpha: float
    notes: tuple[str, ...] = ()
    levels: InferenceResult | None = None
    supported: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    adjusted: dict[str, xr.DataArray] = field(default_factory=dict)
    adjustments: dict[str, Adjustment] = field(default_factory=dict)

    frame_columns: ClassVar[tuple[str, ...]] = (*FRAME_COLUMNS, *_EXTRA_COLUMNS)

    def shown_results(self) -> dict[str, Any]:
        """Return the results as the table shows them: with their adjusted p-values, if any."""
        return {
            name: replace(res, pvalue=self.adjusted[name]) if name in self.adjusted else res
            for name, res in self.results.items()
        }

    def adjustment(self) -> Adjustment | None:
        """Return what was adjusted for the verdict's method's comparisons (None: nothing).

        None when ``adjust=None`` or when a family holds one comparison (the
        adjusted p-values are then the raw ones).
        """
        adj = self.adjustments.get(table_recommendation(self).method)
        return adj if adj is not None and adj.applies else None

    def rows(self) -> pd.DataFrame:
        """Return :meth:`to_frame`'s rows with each contrast's own label and whether it is a test.

        Columns as :meth:`to_frame`, but ``contrast`` holds the contrast cube's
        label (e.g. ``"model[T.tree]"``), ``label`` the label every view shows
        (``"tree − logreg"``) and ``test`` is False for one model's own level
        (weights ``1*m``, e.g. the treatment coding's ``Intercept``), which is
        an estimate with an interval and has no statistic or p-value.
        """
        frames, dims = [], None
        shown = self.shown_results()
        for name, res in self.results.items():
            frame = _comparison_frame(res)
            dims = dims or [c for c in frame.columns if c not in FRAME_COLUMNS]
            frame["pvalue_raw"] = frame["pvalue"]
            if name in self.adjusted:
                frame["pvalue"] = _comparison_frame(shown[name])["pvalue"].to_numpy()
            frame["method"] = name
            if self.target == "learner":
                frame["note"] = METHODS[name].flag
            else:
                frame["note"] = "conditional error of the models at hand"
            frames.append(frame)
        out = pd.concat(frames, ignore_index=True)
        dims = dims or []
        order = [CONTRAST, *[d for d in dims if d != CONTRAST]] if CONTRAST in dims else dims
        # keep every dim in its order of appearance (the formula's contrast order)
        keys = {d: out[d].map({v: i for i, v in enumerate(pd.unique(out[d]))}) for d in order}
        keys["_method"] = out["method"].map({n: i for i, n in enumerate(self.results)})
        rank = pd.DataFrame(keys).sort_values([*order, "_method"], kind="stable").index
        out = out.loc[rank, [*order, *FRAME_COLUMNS, "pvalue_raw", "note"]].reset_index(drop=True)
        if CONTRAST not in order:
            return out.assign(label="", test=True)
        raw = out[CONTRAST].astype(str)
        labels = contrast_labels(self)
        levels = set(level_contrasts(self))
        out = out.assign(label=raw.map(lambda c: labels.get(c, c)), test=~raw.isin(levels))
        # one model's level is an estimate with an interval, not a test against mu0
        out.loc[~out["test"], ["statistic", "pvalue", "pvalue_raw"]] = np.nan
        return out

    def to_frame(self) -> pd.DataFrame:
        """Return a tidy table with one row per (contrast, ..., method).

        Columns: the result dims (``contrast`` first, then any extra dims),
        :data:`cvstats.results.FRAME_COLUMNS`, ``pvalue_raw`` and ``note``
        (e.g. "liberal for the learner" under ``target="learner"``).
        ``contrast`` holds the labels the summary and the verdict use
        (``"tree − logreg"``, a model's name for its own level). ``pvalue`` is
        adjusted for multiple comparisons when the table was made with
        ``adjust`` (:func:`compare`'s default, Holm), ``pvalue_raw`` the
        method's own. A row that is one model's own level (e.g. the treatment
        coding's ``Intercept``) is an estimate with its interval: no statistic
        and no p-value. Intervals are clipped at the range of a bounded metric
        and flagged in ``ci_clipped`` (:mod:`cvstats.results.ranges`); a
        result's ``to_frame(clip=False)`` gives them unclipped.
        """
        out = self.rows()
        if CONTRAST in out.columns:
            out[CONTRAST] = out["label"]
        return out.drop(columns=["label", "test"])

    def _display(self, precision: int = 4, *, full: bool = False) -> pd.DataFrame:
        frame = self.to_frame()
        dims = [c for c in frame.columns if c not in FRAME_COLUMNS and c not in _EXTRA_COLUMNS]
        cols = ["method", "estimand", "estimate", "stderr", "statistic", "df", "pvalue"]
        if full:
            cols.append("pvalue_raw")
        shown = format_floats(frame[[*dims, *cols]], precision, nan="")
        shown[f"{100 * (1 - self.alpha):g}% CI"] = [
            ci_text(lo, hi, precision, cut)
            for lo, hi, cut in zip(
                frame["ci_lower"], frame["ci_upper"], frame[CLIP_COLUMN], strict=True
            )
        ]
        shown = shown.assign(
            direction=frame["method"].map(lambda n: METHODS[n].short), note=frame["note"]
        )
        return shown.rename(
            columns={"stderr": "std err", "pvalue": "p-value", "pvalue_raw": "raw p-value"}
        )

    def _caption(self) -> str:
        what = (
            "unconditional error of the learners"
            if self.target == "learner"
            else "conditional error of the models trained on these data"
        )
        text = (
            f"{self.formula}: {len(self.results)} method{'' if len(self.results) == 1 else 's'}, "
            f"H0: μ = {self.mu0:g}, "
            f"{100 * (1 - self.alpha):g}% intervals; target: {what}."
        )
        adj = next((a for a in self.adjustments.values() if a.applies), None)
        if adj is not None:
            text += f" p-values {adj.words()}; intervals not adjusted."
        own = set(level_contrasts(self))
        levels = [label for c, label in contrast_labels(self).items() if c in own]
        if levels:
            text += f" {', '.join(levels)}: {LEVEL_NOTE}."
        return text

    def _clip_notes(self, frame: pd.DataFrame | None = None) -> list[str]:
        """Return the note on intervals clipped at the metric's range, when any was.

        Read from the table's own frame (``frame``, the shown one, is ignored:
        it holds the intervals as text).
        """
        return table_clip_notes(self.to_frame(), self.results)

    def summary(self, precision: int = 4, *, full: bool = False) -> Any:
        """Return a statsmodels ``Summary`` (``as_text()``, ``as_latex()``, ``as_html()``).

        Parameters
        ----------
        precision : int, default 4
            Significant digits.
        full : bool, default False
            False: the reader's view, at most 100 characters wide — the
            comparisons between models (one row per contrast and method:
            estimate, interval, p-value), the per-model estimates (not
            tests), the :meth:`verdict` and notes. True: every row (a model's
            own level with its interval, not a test) and column of the
            table, the raw p-values beside the adjusted ones.

        Returns
        -------
        statsmodels.iolib.summary.Summary
        """
        if not full:
            return default_summary(self, precision)
        from statsmodels.iolib.summary import Summary
        from statsmodels.iolib.table import SimpleTable

        shown = self._display(precision, full=True)
        notes = shown.pop("note")
        by_note = shown.groupby(notes.to_numpy(), sort=False)["method"].unique()
        smry = Summary()
        smry.tables.append(
            SimpleTable(
                shown.astype(str).to_numpy().tolist(),
                headers=list(shown.columns),
                title=f"Comparison of methods: {self.formula}",
            )
        )
        lines = [f"Note: {', '.join(meths)}: {note}." for note, meths in by_note.items() if note]
        smry.add_extra_txt(
            [
                self._caption(),
                *lines,
                *(f"Note: {n}" for n in self.notes),
                *self._clip_notes(),
                "Verdict:",
                str(self.verdict()),
            ]
        )
        return smry

    def verdict(self) -> Verdict:
        """Return the answer in plain words: one sentence per comparison of models.

        From the method recommended for the cube's design and the target
        (``docs/choosing-a-method.md``, "How the verdict picks its method"), in
        the metric's direction; says when other methods in the table decide
        otherwise and when the design cannot answer the learner question.

        Returns
        -------
        Verdict
            A ``str`` (one line per comparison) that displays itself in a notebook.
        """
        return table_verdict(self)

    def recommendation(self) -> Recommendation:
        """Return the method the verdict leads with, and why."""
        return table_recommendation(self)

    def plot(self, ax: Any = None) -> Any:
        """Draw a forest plot of the intervals per method and contrast (matplotlib).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; default a new figure.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from cvstats.reporting.plots import forest_plot

        return forest_plot(self.to_frame(), mu0=self.mu0, alpha=self.alpha, ax=ax)

    def __repr__(self) -> str:
        comparisons, _ = comparison_rows(self)
        head = (
            f"<ComparisonTable {self.formula!r}: {len(self.results)} "
            f"method{'s' if len(self.results) != 1 else ''}, "
            f"{comparisons['label'].nunique()} comparison"
            f"{'s' if comparisons['label'].nunique() != 1 else ''}, target={self.target!r}>"
        )
        lines = [head, *wrap_lines(str(self.verdict()), bullet=True)]
        if len(lines) > 20:
            lines = [*lines[:19], f"… {len(lines) - 19} more lines: print(table.verdict())"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        smry = self.summary()
        return str(smry.as_html()).replace("\n", "\n") + self.verdict()._repr_html_()


def _check_zero_one(models: xr.DataArray) -> None:
    """McNemar needs 0/1 losses: check the models' losses, not only their differences."""
    values = models.data
    other = ~np.isnan(values) & (values != 0) & (values != 1)
    if bool(other.any()):
        raise CubeError(
            f"McNemar's test needs zero-one losses, but the cube {models.name!r} holds other "
            f"values, e.g. {pd.unique(np.asarray(values[other]).ravel())[:3].tolist()}; drop "
            "'mcnemar' from `methods` or use holdout_t."
        )


def _resolve_cube(
    formula: str | xr.DataArray, data: xr.DataArray | xr.Dataset | None
) -> tuple[Checked, str]:
    """Return the contrast cube's validated handle and a description of its contrasts."""
    if isinstance(formula, xr.DataArray) and data is None:
        cube = formula
        # a lazy one's finiteness is checked below, from the split means
        facts = validated(cube, defer_finite=not is_score(cube))
        if unit_dim(cube) != CONTRAST:
            cube = cube.rename({unit_dim(cube): CONTRAST})
        described = str(cube.attrs.get("formula", f"{cube.name} by {CONTRAST}"))
        return Checked(cube, facts), described
    if isinstance(formula, str):
        if data is None:
            raise CvstatsTypeError("`data` is required with a formula: compare(formula, data).")
        # the contrasts of the cube, validated once: a linear contrast of a valid cube keeps
        # its NaN pattern, finiteness and coordinates, so one validation pass is enough
        return checked_contrasts(formula, data), formula
    raise CvstatsTypeError(
        f"`formula` must be a str (with `data`) or a cube, got {type(formula).__name__}."
    )


_LEAVE_ONE_OUT = (
    "every split tests one example (leave-one-out): the correction's ρ0 = n2/n = 1/n lies "
    "far outside the designs where it was checked (Nadeau & Bengio 2003; Bouckaert & Frank "
    "2004), and the errors of the folds are correlated (Bengio & Grandvalet 2004), so read "
    "these p-values as optimistic; repeated 5- or 10-fold cross-validation gives checked tests"
)


def _reading_notes(
    cube: xr.DataArray, alpha: float, *, own: bool, adjust: str | None
) -> list[str]:
    """Return notes on reading the table: comparisons not adjusted, leave-one-out.

    (Adjusted comparisons are said by the verdict and the caption.)
    """
    notes = []
    weights = cube.coords.get("weights")
    if weights is not None and not own and adjust is None:
        values = np.asarray(weights.values).ravel().tolist()
        compared = [w for w in values if not is_level(str(w))]
        if len(compared) > 1:
            extra = [str(d) for d in cube.dims if d not in (SPLIT, EXAMPLE, CONTRAST)]
            each = f" (for each {', '.join(extra)})" if extra else ""
            notes.append(
                f"{len(compared)} comparisons{each}, each tested at level {alpha:g} with no "
                "adjustment for multiple comparisons (adjust=None); for a statement about all "
                "of them at once, leave `adjust` at its default, 'holm'"
            )
    n_test = cube.coords.get(N_TEST)
    if n_test is not None and n_test.dims == (SPLIT,):
        main = np.asarray(cube.coords["block"].values) == "main"
        if main.any() and (np.asarray(n_test.values)[main] == 1).all():
            notes.append(_LEAVE_ONE_OUT)
    return notes


def _group_notes(cube: xr.DataArray, results: Mapping[str, InferenceResult]) -> list[str]:
    """Say which methods clustered their variance over the cube's groups (docs/grouped-data.md)."""
    codes = group_codes(cube)
    if codes is None:
        return []
    clustered = [name for name, res in results.items() if CLUSTER_NOTE in res.title]
    split_means = [name for name in results if name not in clustered]
    said = f"the examples come in {int(codes.max()) + 1} groups (coordinate `group`)"
    if clustered:
        verb = (
            "uses a cluster-robust variance"
            if len(clustered) == 1
            else "use cluster-robust variances"
        )
        said += f": {', '.join(clustered)} {verb} over them"
    if split_means:
        said += (
            f"; {', '.join(split_means)} {'uses' if len(split_means) == 1 else 'use'} split "
            "means, unchanged: valid when no group "
            "straddles a split's training and test sets"
        )
    return [said]


def _method_names(
    known: Checked,
    methods: Sequence[str] | None,
    target: str,
    options: dict[str, Any],
    *,
    sizes_stated: bool = False,
) -> tuple[list[str], list[str]]:
    """Return the methods to run, and notes on applicable ones left out.

    Left out, with a note: a method the design supports that cannot take
    ``options`` or whose formula needs one test size where the splits differ
    and ``n1``, ``n2`` are not both given (``sizes_stated``;
    :meth:`MethodSpec.cube_refusal`), and, for a score cube
    (:mod:`cvstats.cube.score`), a method that needs per-example losses. Named
    explicitly, each is an error.
    """
    cube = known.cube
    if methods is None:
        names = applicable_methods(cube, target)
        notes = [
            f"{n} left out: {examples_refusal(n)}"
            for n in applicable_methods(cube, target, per_example=True)
            if n not in names
        ]
        why = {
            n: METHODS[n].refusal(options)
            or METHODS[n].cube_refusal(cube, sizes_stated=sizes_stated, known=known)
            for n in names
        }
        # one note per reason, naming every method it drops ("a, b left out: each needs ...")
        alike: dict[str, list[str]] = {}
        for n, reason in why.items():
            if reason:
                alike.setdefault(reason.removeprefix(f"{n} "), []).append(n)
        for rest, ns in alike.items():
            reason = why[ns[0]]
            if len(ns) > 1 and reason != rest:
                reason = f"each {rest}"
            notes.append(f"{', '.join(ns)} left out: {reason}")
        names = [n for n in names if not why[n]]
        if not names:
            raise ArgumentError(
                f"no method applies to this cube's design for target {target!r} (blocks "
                f"{sorted(set(np.asarray(cube['block'].values).tolist()))})."
                + "".join(f" {note}" for note in notes)
            )
        return names, notes
    if isinstance(methods, str):
        raise CvstatsTypeError(
            f"`methods` must be a sequence of method names, got the str {methods!r}; write "
            f"methods=[{methods!r}]."
        )
    names = list(methods)
    if not names:
        raise ArgumentError(
            "`methods` is empty; name at least one method, or leave it out (None) for every "
            f"method the design supports; choose from {list(METHODS)}."
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ArgumentError(f"`methods` names {repeated} more than once; name each method once.")
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ArgumentError(f"unknown method(s) {unknown}; choose from {list(METHODS)}.")
    if target == "model":
        bad = [n for n in names if not METHODS[n].conditional]
        if bad:
            raise ArgumentError(
                f"method(s) {bad} infer the unconditional error of learners; with "
                f"target='model' choose from {[n for n, v in METHODS.items() if v.conditional]}."
            )
    for name in names:  # a named method that cannot take the options (or cube) is an error
        if METHODS[name].needs == "examples" and is_score(cube):
            raise CubeError(examples_refusal(name))
        METHODS[name].check_options(options)
    return names, []


def compare(
    formula: str | xr.DataArray,
    data: xr.DataArray | xr.Dataset | None = None,
    *,
    methods: Sequence[str] | None = None,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    target: str = "learner",
    adjust: str | None = ADJUST_DEFAULT,
    n1: int | None = None,
    n2: int | None = None,
) -> ComparisonTable | EvalResult:
    """Run inference methods on the contrasts of a formula and tabulate them.

    The formula's right side defines linear contrasts over the ``model`` dim
    (:func:`cvstats.contrasts`; docs/theory.md §1); every method runs on every
    contrast, vectorized over the cube's extra dims, and the cube is validated
    once.

    Parameters
    ----------
    formula : str or xarray.DataArray
        ``"loss ~ model"``, ``"loss ~ 0 + model"``, ``"loss ~ C(model, contr.sum)"``...;
        or a contrast cube (e.g. ``cvstats.pairwise(cube)``) or a cube, used as
        is, with ``data`` omitted.
    data : xarray.DataArray or xarray.Dataset, optional
        A cube, or a Dataset of cubes (the formula's left side names the loss).
    methods : sequence of str, optional
        Names from :data:`METHODS`; default every method the cube's design
        supports for the target (:func:`applicable_methods`).
    mu0 : float, default 0
        Null value of every test.
    alpha : float, default 0.05
        Level of the intervals.
    alternative : {"two-sided", "less", "greater"}
        Alternative hypothesis (Alpaydın's F is two-sided only and is left out
        of one-sided comparisons by default).
    target : {"learner", "model"}, default "learner"
        ``"learner"``: the methods for the unconditional error (docs/theory.md §4),
        the resampled t, plain bootstrap, k-fold t and hold-out methods flagged
        as liberal; ``"model"``: only methods valid for the conditional error of
        the models trained on the data at hand (docs/theory.md §1).
    adjust : str or None, default "holm"
        How p-values are adjusted for multiple comparisons: a method of
        :func:`statsmodels.stats.multitest.multipletests` (``"holm"``,
        ``"bonferroni"``, ``"hochberg"`` — statsmodels' ``"simes-hochberg"`` —,
        ``"fdr_bh"``, ...), or None for the methods' own p-values. The family
        is the comparisons one method makes within one slice of the extra
        dims (e.g. one dataset); a model's own level is no comparison. The
        table, :meth:`~ComparisonTable.to_frame` and the verdict show the
        adjusted p-values (and say so), the full view also the raw ones
        (``to_frame()["pvalue_raw"]``); intervals are not adjusted.
    n1, n2 : int, optional
        Training and test sizes, passed to every method that takes them (the
        Nadeau–Bengio corrections use them in ``n2/n1``; the others report
        them); default each method's, from the cube. A k-fold design whose
        folds test different numbers of examples (e.g. ``GroupKFold``) needs
        none: every repeat partitions the ``n`` examples, so the mean sizes
        ``n - n/K`` and ``n/K`` are exact and the corrections use them (a
        note says so). Random splits of different test sizes need both for
        the corrections to run.

    Returns
    -------
    ComparisonTable or EvalResult
        Rows ``(contrast, method)``. On a cube of fixed models' answers
        (:func:`cvstats.from_evals`, docs/evaluating-fixed-models.md) the
        methods about learners do not apply: compare returns the
        :class:`~cvstats.results.evals.EvalResult` of its contrasts
        (:func:`cvstats.reporting.evals.eval_contrasts`: the paired t over
        questions, clustered when the questions are, p-values adjusted by
        ``adjust``; each model's mean score for a cube of models), whose
        target is the fixed models whatever ``target``; ``methods``, ``n1``,
        ``n2`` and a one-sided ``alternative`` are refused there.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> d = cvstats.designs.conservative_z(100, 10, J=5, M=3, seed=0)
    >>> losses = np.random.default_rng(0).random((d.sizes["split"], 100, 2))
    >>> cube = cvstats.from_arrays(losses, design=d, models=["a", "b"], name="loss")
    >>> table = cvstats.compare("loss ~ model", cube)
    >>> table.to_frame()[["contrast", "method"]].shape
    (6, 2)
    """
    if target not in TARGETS:
        raise ArgumentError(f"`target` must be one of {list(TARGETS)}, got {target!r}.")
    # validated once; the handle goes to every method (a formula checked before any import)
    known, described = _resolve_cube(formula, data)
    cube = known.cube
    if is_eval_cube(cube):
        _check_eval_options(methods, alternative, n1, n2)
        own = isinstance(formula, xr.DataArray) and MODEL in formula.dims
        return eval_contrasts(
            cube.rename({CONTRAST: MODEL}) if own else cube, alpha=alpha, mu0=mu0, adjust=adjust
        )
    warn_if_straddling(cube)  # once: the methods get the handle and do not warn again
    adjust = check_adjust(adjust)
    options: dict[str, Any] = {"mu0": mu0, "alpha": alpha, "alternative": alternative}
    sizes = _given_sizes(cube, n1, n2)
    own = []  # a cube of models, as it is: each model's own score is tested, not a difference
    if isinstance(formula, xr.DataArray) and MODEL in formula.dims and formula.sizes[MODEL] > 1:
        own = [
            f"{MODELS_ON_THEIR_OWN} = {mu0:g} (a cube of models is compared as it is); to "
            "compare the models with one another, call cvstats.compare(cvstats.pairwise(cube))"
            + (
                f" or cvstats.compare({f'{formula.name} ~ model'!r}, cube)"
                if str(formula.name).isidentifier()
                else ""
            )
        ]
    results: dict[str, InferenceResult] = {}
    names, notes = _method_names(known, methods, target, options, sizes_stated=len(sizes) == 2)
    notes = own + notes
    if isinstance(formula, str) and any(METHODS[n].zero_one for n in names):
        _check_zero_one(select_loss(data, parse_formula(formula)[0], "the formula"))
    if (len(names) > 1 or not known.facts.finite) and not is_score(cube):
        # every split's mean in one reduction (one read of a lazy cube), shared by the
        # methods through the handle; for a lazy contrast cube, they also prove its losses
        # finite
        means = share_split_means(known)
        if not known.facts.finite:
            check_finite_means(cube, means)
            known = known.with_facts(replace(known.facts, finite=True))
            remember(cube, known.facts)  # a lazy cube stays known for the next call
    for name in names:
        spec = METHODS[name]
        handle = known.of(_pairs_only(cube)) if spec.contrasts == "pairwise" else known
        results[name] = spec.func(handle, **spec.fixed, **options, **_sizes_for(spec, sizes))
    notes += _size_notes(known, list(results), sizes)
    supported = tuple(applicable_methods(cube, target))
    left_out = () if methods is not None else tuple(n for n in supported if n not in results)
    notes += _reading_notes(cube, alpha, own=bool(own), adjust=adjust)
    notes += _group_notes(cube, results)
    levels = None
    if isinstance(formula, str):
        rec = recommend(results, target, design_supports=supported, left_out=left_out).method
        how = levels_method(list(results), rec)
        if how is not None:
            models = select_loss(data, parse_formula(formula)[0], "the formula")
            spec = METHODS[how]
            # the models' cube was validated with the contrasts (its test counts are theirs);
            # display only: a zero variance there was warned about by the methods above
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ZeroVarianceWarning)
                levels = spec.func(
                    known.of(models), **spec.fixed, alpha=alpha, **_sizes_for(spec, sizes)
                )
    # a cube of models compared as it is tests each model against mu0: no comparisons
    adjusted, adjustments = _adjust(results, None if own else adjust, alpha)
    return ComparisonTable(
        results,
        described,
        target,
        float(mu0),
        float(alpha),
        tuple(notes),
        levels,
        supported,
        left_out,
        adjusted,
        adjustments,
    )


def _check_eval_options(
    methods: Sequence[str] | None, alternative: str, n1: int | None, n2: int | None
) -> None:
    """Refuse the options of :func:`compare` that a cube of fixed models' answers cannot take."""
    given = {"methods": methods, "n1": n1, "n2": n2}
    named = {k: v for k, v in given.items() if v is not None}
    if named:
        raise ArgumentError(
            f"{', '.join(f'`{k}`' for k in named)} given ({named}), but this cube holds fixed "
            "models' answers (cvstats.from_evals): compare runs the paired t over its "
            "questions (cvstats.eval_difference's), not the methods about learners, and reads "
            "no training or test sizes; leave them out."
        )
    if alternative != "two-sided":
        raise ArgumentError(
            f"`alternative` = {alternative!r}, but compare on a cube of fixed models' answers "
            "(cvstats.from_evals) runs two-sided tests only; leave `alternative` out, or read "
            "a one-sided test off the interval."
        )


def _given_sizes(cube: xr.DataArray, n1: int | None, n2: int | None) -> dict[str, int]:
    """Return the sizes given to :func:`compare`, checked (positive ints, ``n1 + n2 <= n``)."""
    sizes = {
        name: int(resolve_size(name, value, 0))
        for name, value in (("n1", n1), ("n2", n2))
        if value is not None
    }
    check_sizes(cube, sizes.get("n1", 0), sizes.get("n2", 0))
    return sizes


def _sizes_for(spec: Any, sizes: dict[str, int]) -> dict[str, int]:
    """Return the given sizes a method takes (the others read theirs from the cube)."""
    return {k: v for k, v in sizes.items() if k in spec.options}


def _size_notes(known: Checked, names: list[str], sizes: dict[str, int]) -> list[str]:
    """Return notes on the sizes the corrections used: given ones, or a partition's means."""
    cube = known.cube
    if sizes:
        takers = [n for n in names if _sizes_for(METHODS[n], sizes)]
        others = [n for n in names if n not in takers]
        given = ", ".join(f"{k} = {v}" for k, v in sizes.items())
        if not takers:
            return [f"{given} given, but no method of the table takes them: none used them"]
        rest = f"; {', '.join(others)} read their sizes from the cube" if others else ""
        return [f"{given} as given, used by {', '.join(takers)}{rest}"]
    corrected = [n for n in names if "main" in METHODS[n].one_size]
    if not corrected:
        return []
    main = block_sizes(cube, "main", corrected[0], known=known)
    if not main.partition_means:
        return []
    K, _ = kfold_layout(cube, corrected[0])
    return [
        f"the folds test {main.n2_min} to {main.n2_max} examples, but every repeat partitions "
        f"the {main.mean_n2 * K:.0f} examples, so the mean test size is n/K = "
        f"{main.mean_n2:.4g} and the mean training size n − n/K = {main.mean_n1:.4g}, exactly: "
        f"{', '.join(corrected)} use{'s' if len(corrected) == 1 else ''} them (n2/n1 = "
        "1/(K − 1); Nadeau & Bengio 2003; Bouckaert & Frank 2004), reported rounded; pass n1= "
        "and n2= to state other sizes"
    ]


def _adjust(
    results: dict[str, InferenceResult], adjust: str | None, alpha: float
) -> tuple[dict[str, xr.DataArray], dict[str, Adjustment]]:
    """Adjust each method's p-values over its comparisons (none for ``adjust=None``)."""
    adjusted: dict[str, xr.DataArray] = {}
    adjustments: dict[str, Adjustment] = {}
    if adjust is None:
        return adjusted, adjustments
    for method, res in results.items():
        if "pvalue" not in res.frame_columns:  # a posterior: no p-value
            continue
        weights = weights_of(res.estimate)
        tested = None
        if CONTRAST in res.pvalue.dims and weights:
            tested = [not is_level(weights.get(str(c))) for c in res.pvalue[CONTRAST].values]
        adjusted[method], size = adjust_pvalues(res.pvalue, tested, adjust, alpha)
        over = tuple(str(d) for d in res.pvalue.dims if d != CONTRAST)
        adjustments[method] = Adjustment(adjust, adjust_name(adjust), size, over)
    return adjusted, adjustments
