"""The reader's view of a comparison table: contrasts, per-model levels, a verdict.

:class:`~cvstats.reporting.compare.ComparisonTable` keeps every number; this
module shows what a person deciding something reads first:

* the **comparisons** (contrasts whose weights sum to zero, e.g. ``tree −
  logreg``), one row per contrast and method, with the estimate, the
  interval and the p-value (adjusted for multiple comparisons unless
  ``adjust=None``), within 100 characters;
* the **per-model estimates** (each model's own error or metric with its
  interval, from the recommended method; not tests);
* the **verdict**: per contrast, in plain words, from the method recommended
  for the design and the target (:func:`cvstats.inference.recommend.recommend`),
  saying when the other methods valid for the same question disagree and
  when the design cannot answer the learner question.

Every view of the table (:meth:`ComparisonTable.to_frame`, the exports, the
summaries, the verdict) labels a contrast the same way (:func:`contrast_labels`)
and takes the same rows for tests: a row that is one model's own level
(:func:`level_contrasts`) is an estimate with an interval, never a test.

The reporting layer (see ``docs/architecture.md``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from cvstats.cube.schema import CONTRAST
from cvstats.inference.recommend import Recommendation, recommend
from cvstats.inference.registry import METHODS
from cvstats.reporting.formatting import latex_escape
from cvstats.results.base import format_value
from cvstats.results.ranges import CLIP_COLUMN, CLIP_MARK, table_clip_notes
from cvstats.results.verdict import (
    Verdict,
    evidence_of,
    is_level,
    parse_weights,
    pvalue_text,
    quantity_of,
    readable_label,
    row_sentence,
    weights_of,
)

#: A :class:`cvstats.reporting.compare.ComparisonTable` (which imports this module).
ComparisonTable = Any

__all__ = [
    "LEVEL_NOTE",
    "WIDTH",
    "comparison_rows",
    "contrast_labels",
    "default_summary",
    "level_contrasts",
    "levels_method",
    "table_recommendation",
    "table_verdict",
    "ci_text",
    "table_weights",
    "wrap_lines",
]

#: Width of the default summary, in characters.
WIDTH = 100

#: Start of :func:`cvstats.compare`'s note for a cube of several models compared as it is
#: (each model tested on its own); the verdict leads with it.
MODELS_ON_THEIR_OWN = "each model is tested on its own against mu0"

#: What every view says of a model's own level (e.g. the treatment coding's ``Intercept``).
LEVEL_NOTE = "one model's own level: an estimate with its interval, not a test"

_LIBERAL = "†"
_HALF = "‡"
_LABEL_WIDTH = 28


def table_recommendation(table: ComparisonTable) -> Recommendation:
    """Return the method the table's verdict leads with (:func:`recommend`)."""
    return recommend(
        table.results, table.target, design_supports=table.supported, left_out=table.left_out
    )


def table_weights(table: ComparisonTable) -> dict[str, str]:
    """Return each contrast label's ``weights`` string, over every result of the table.

    (McNemar's result holds only the differences of two models.)
    """
    out: dict[str, str] = {}
    for res in table.results.values():
        out.update(weights_of(getattr(res, "estimate", getattr(res, "mean", None))))
    return out


def contrast_labels(table: ComparisonTable) -> dict[str, str]:
    """Return each contrast's label as every view of the table shows it.

    ``"tree − logreg"`` for a difference, a model's name for its own level,
    other weights spelled out (:func:`~cvstats.results.verdict.readable_label`);
    a contrast keeps its own label when two would read the same.
    """
    weights = table_weights(table)
    raw: list[str] = []
    for res in table.results.values():
        estimate = getattr(res, "estimate", getattr(res, "mean", None))
        if estimate is not None and CONTRAST in estimate.dims:
            raw += [str(c) for c in estimate[CONTRAST].values if str(c) not in raw]
    labels = {c: readable_label(c, weights.get(c)) for c in raw}
    counts = pd.Series(list(labels.values()), dtype=object).value_counts()
    return {c: label if counts[label] == 1 else c for c, label in labels.items()}


def level_contrasts(table: ComparisonTable) -> list[str]:
    """Return the contrasts that are one model's own level (weights ``1*m``): not tests."""
    return [c for c, w in table_weights(table).items() if is_level(w)]


def _marker(name: str, target: str) -> str:
    spec = METHODS[name]
    mark = _LIBERAL if target == "learner" and spec.conditional else ""
    if spec.estimand == "n/2 μ":
        mark += _HALF
    return mark


def comparison_rows(table: ComparisonTable) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split the table's tidy frame into comparisons and per-model levels.

    Returns
    -------
    comparisons, levels : pandas.DataFrame
        The rows of :meth:`ComparisonTable.rows` (``contrast`` the contrast
        cube's own label, ``label`` the one shown) that are tests (weights
        summing to zero, or unknown weights), and those that are one model's
        level (weights ``1*m``, e.g. the treatment coding's ``Intercept``).
    """
    frame = table.rows()
    test = frame.pop("test").to_numpy(bool)
    return frame[test].reset_index(drop=True), frame[~test].reset_index(drop=True)


def ci_text(low: float, high: float, precision: int, clipped: bool = False) -> str:
    """Return an interval as ``"[low, high]"`` (marked when clipped), or ``""`` without one."""
    if np.isnan(low) or np.isnan(high):
        return ""
    low_text, high_text = (format_value(v, precision, nan="") for v in (low, high))
    return f"[{low_text}, {high_text}]{CLIP_MARK if clipped else ''}"


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _short_names(table: ComparisonTable, labels: Sequence[str]) -> dict[str, str]:
    """Short names ``m1``, ``m2`` ... of the models, when a label is too long to show whole.

    A cut label loses the end of a difference (``"logisticregression__C=0.1 −…"``)
    and cut labels can look the same, so then every model is written short and
    the summary lists the names. Empty when every label fits (the usual case),
    or when the models' names are short already (a long label is then a long
    coding, which short names would not shorten).
    """
    if all(len(label) <= _LABEL_WIDTH for label in labels):
        return {}
    models: list[str] = []
    for weights in table_weights(table).values():
        models += [m for _, m in parse_weights(weights) if m not in models]
    if not models:  # a cube of models compared as it is: its labels are the models
        models = list(dict.fromkeys(labels))
    if max(len(m) for m in models) <= 6:
        return {}
    taken = set(models)
    prefix = next(
        p
        for p in ("m", "M", "model ", "#")
        if not taken & {f"{p}{i}" for i in range(1, len(models) + 1)}
    )
    return {m: f"{prefix}{i}" for i, m in enumerate(models, 1)}


def _extra_dims(frame: pd.DataFrame) -> list[str]:
    from cvstats.results import FRAME_COLUMNS

    skip = {*FRAME_COLUMNS, "pvalue_raw", "note", "label", CONTRAST}
    return [c for c in frame.columns if c not in skip]


def _summary_class() -> type:
    """Return a statsmodels ``Summary`` class whose tables may differ in width."""
    from statsmodels.iolib.summary import Summary

    class ReaderSummary(Summary):  # type: ignore[misc]
        """The reader's view: each table rendered on its own (statsmodels merges them)."""

        def __repr__(self) -> str:
            # the text itself (statsmodels wraps it in its class name and quotes)
            return self.as_text()

        def as_latex(self) -> str:
            body = "\n\n".join(t.as_latex_tabular() for t in self.tables)
            if self.extra_txt is not None:
                text = latex_escape(self.extra_txt).replace("\n", " \\newline\n ")
                body += "\n\n" + text
            return body

        def as_csv(self) -> str:
            body = "\n\n".join(t.as_csv() for t in self.tables)
            return body if self.extra_txt is None else f"{body}\n\n{self.extra_txt}"

    return ReaderSummary


def default_summary(table: ComparisonTable, precision: int = 4) -> Any:
    """Return the default view: comparisons, per-model estimates, verdict and notes.

    Parameters
    ----------
    table : ComparisonTable
    precision : int, default 4
        Significant digits.

    Returns
    -------
    statsmodels.iolib.summary.Summary
        ``as_text()`` is at most :data:`WIDTH` characters wide.
    """
    from statsmodels.iolib.table import SimpleTable

    comparisons, _ = comparison_rows(table)
    levels = table.levels
    level_frame = levels.to_frame() if levels is not None else None
    unit = "model"
    if level_frame is not None and "model" not in level_frame.columns:
        unit = CONTRAST
    weights = table_weights(table)
    labels = contrast_labels(table)
    shown = [str(v) for v in comparisons["label"]] if len(comparisons) else []
    if level_frame is not None:
        shown += [str(v) for v in level_frame[unit]]
    names = _short_names(table, shown)

    def label_of(contrast: str) -> str:
        """Return the row's label as contrast_labels writes it, with the short names if any."""
        if contrast not in weights:  # no weights: the label is a model's name, or its own
            return names.get(contrast, contrast)
        if not names:
            return labels.get(contrast, contrast)
        return readable_label(contrast, weights[contrast], names)

    rec = table_recommendation(table)
    adj = table.adjustment()
    level = f"{100 * (1 - table.alpha):g}% CI"
    smry = _summary_class()()
    extra = _extra_dims(comparisons)
    if len(comparisons):
        rows = []
        first = [rec.method, *(n for n in table.results if n != rec.method)]
        order = {n: i for i, n in enumerate(first)}
        comparisons = comparisons.assign(_o=comparisons["method"].map(order))
        keys = [*extra, "label"]
        rank = {k: {v: i for i, v in enumerate(pd.unique(comparisons[k]))} for k in keys}
        sort = pd.DataFrame({k: comparisons[k].map(rank[k]) for k in keys}).assign(
            _o=comparisons["_o"]
        )
        comparisons = comparisons.loc[sort.sort_values([*keys, "_o"], kind="stable").index]
        for _, r in comparisons.iterrows():
            name = str(r["method"])
            rows.append(
                [
                    *(_short(str(r[d]), 12) for d in extra),
                    _short(label_of(str(r[CONTRAST])), _LABEL_WIDTH),
                    name + _marker(name, table.target),
                    format_value(float(r["estimate"]), precision, nan=""),
                    ci_text(float(r["ci_lower"]), float(r["ci_upper"]), precision, r[CLIP_COLUMN]),
                    pvalue_text(float(r["pvalue"]), table.alpha)
                    .removeprefix("p = ")
                    .replace("p ", ""),
                ]
            )
        smry.tables.append(
            SimpleTable(
                rows,
                headers=[
                    *extra,
                    "contrast",
                    "method",
                    "estimate",
                    level,
                    "p-value" if adj is None else f"{adj.name} p",
                ],
                title=f"Comparisons: {_short(table.formula, 60)}",
            )
        )
    if levels is not None and level_frame is not None:
        frame = level_frame
        lextra = [d for d in frame.columns if d not in levels.frame_columns and d != unit]

        def level_label(value: Any) -> str:
            if not names:
                return str(value)
            return names.get(str(value), str(value)) if unit == "model" else label_of(str(value))

        rows = [
            [
                *(_short(str(r[d]), 12) for d in lextra),
                _short(level_label(r[unit]), _LABEL_WIDTH),
                format_value(float(r["estimate"]), precision, nan=""),
                ci_text(float(r["ci_lower"]), float(r["ci_upper"]), precision, r[CLIP_COLUMN]),
            ]
            for _, r in frame.iterrows()
        ]
        smry.tables.append(
            SimpleTable(
                rows,
                headers=[*lextra, "model", "estimate", level],
                title=f"Per-model estimates ({levels.method}; not tests)",
            )
        )
    text = []
    if names:  # the labels were cut alike: the models are written m1, m2 ... above
        legend = "; ".join(f"{short} = {model}" for model, short in names.items())
        text += wrap_lines(f"Models (names too long for the tables): {legend}.", bullet=False)
    text += ["Verdict:", *wrap_lines(str(table_verdict(table)), bullet=True)]
    text += wrap_lines(_legend(table, rec), bullet=False)
    shown = [comparisons, *([level_frame] if level_frame is not None else [])]
    clipped = table_clip_notes(pd.concat(shown, ignore_index=True), table.results)
    text += wrap_lines("\n".join(clipped), bullet=False)
    smry.add_extra_txt(text)
    return smry


def wrap_lines(text: str, *, bullet: bool) -> list[str]:
    """Wrap lines at :data:`WIDTH`; indented lines (a verdict's details) stay indented."""
    out: list[str] = []
    for line in text.splitlines():
        if not line:
            continue
        if line.startswith("  "):
            first, rest = "    ", "    "
        else:
            first, rest = ("- " if bullet else ""), "  "
        out += textwrap.wrap(line.strip(), WIDTH, initial_indent=first, subsequent_indent=rest)
    return out


def _target_line(table: ComparisonTable, rec: Recommendation) -> str:
    """Return the legend's "Target:" line: the target the verdict's method answers."""
    models = "the models trained on these data (conditional error)"
    if table.target == "learner" and rec.answers_target:
        return (
            "Target: the learners (unconditional error: would the algorithms differ on new "
            "data sets of this size?)."
        )
    if table.target == "learner":  # a fallback: it answers another question
        return (
            f"Target: {models}, not the learners asked about: no method valid for the "
            f"learners is in the table (see the caveat), so {rec.method} answers instead."
        )
    return f"Target: {models}."


def _legend(table: ComparisonTable, rec: Recommendation) -> str:
    lines = [f"Verdict from {rec.method}: {rec.reason}.", _target_line(table, rec)]
    skipped = [n for n in table.results if n != rec.method and not _same_question(table, rec, n)]
    if skipped:  # (only under target="learner": every method of a model table is valid)
        lines.append(
            "Disagreeing lines name only methods valid for the learners at the verdict's "
            f"training size; {', '.join(skipped)} (liberal for the learners, or about another "
            "training size) are in the table only."
        )
    names = list(table.results)
    if table.target == "learner" and any(METHODS[n].conditional for n in names):
        lines.append(
            f"{_LIBERAL} valid for the models trained on these data only: liberal for the "
            "learners (p-values too small; Nadeau & Bengio 2003, §4)."
        )
    halves = [table.results[n] for n in names if METHODS[n].estimand == "n/2 μ"]
    if halves:
        lines.append(
            f"{_HALF} estimates the error at training size n/2 = {halves[0].n1} (5x2 CV), "
            "not at the main block's n1."
        )
    # (a note the verdict leads with as a caveat is not repeated)
    lines += [f"Note: {n}" for n in table.notes if not n.startswith(MODELS_ON_THEIR_OWN)]
    lines.append("All rows and columns: summary(full=True) or to_frame().")
    return "\n".join(lines)


def _tests(table: ComparisonTable) -> list[str]:
    """Return the methods of the table that are tests (not posteriors)."""
    return [n for n, res in table.results.items() if "p_rope" not in res.frame_columns]


def _same_question(table: ComparisonTable, rec: Recommendation, name: str) -> bool:
    """Whether a method answers the question the verdict's method answers.

    For the learners: valid for the learner (not liberal for it) and about the
    same training size (the 5x2 methods estimate the error at ``n/2``); none
    when the verdict fell back to a method for the models (:func:`recommend`'s
    caveat). For the models: every method valid for the models at hand.
    """
    spec, mine = METHODS[name], METHODS[rec.method]
    if table.target == "model":
        return spec.conditional
    return rec.answers_target and spec.target == "learner" and spec.estimand == mine.estimand


def _significance(
    table: ComparisonTable, rec: Recommendation
) -> dict[tuple[Any, ...], list[tuple[str, bool, float]]]:
    """For each (contrast, extra coords): (method, significant, p) of the other valid tests.

    Only the tests that answer the verdict's question (:func:`_same_question`),
    with the p-values the table shows (adjusted, if it was).
    """
    out: dict[tuple[Any, ...], list[tuple[str, bool, float]]] = {}
    shown = table.shown_results()
    for name in _tests(table):
        res = shown[name]
        if name == rec.method or not _same_question(table, rec, name):
            continue
        frame = res.to_frame()
        dims = [c for c in frame.columns if c not in res.frame_columns]
        for _, r in frame.iterrows():
            ev = evidence_of(res, r)
            out.setdefault(tuple(r[d] for d in dims), []).append(
                (name, ev.significant, float(r["pvalue"]))
            )
    return out


def table_verdict(table: ComparisonTable) -> Verdict:
    """Return the table's verdict: one sentence per comparison, from the recommended method.

    Under each sentence, the methods valid for the same question whose test
    decides otherwise at the table's level (a method liberal for the learners,
    or about another training size, stays in the table only). A caveat comes
    first when the design cannot answer the learner question (naming the
    method the verdict falls back to and the target it answers), and when a
    cube of several models was compared as it is (each model on its own). The
    p-values are the table's (adjusted for multiple comparisons, unless
    ``adjust=None``), and the last line says over what.

    Parameters
    ----------
    table : ComparisonTable

    Returns
    -------
    Verdict
    """
    rec = table_recommendation(table)
    res = table.shown_results()[rec.method]
    adj = table.adjustment()
    estimate = getattr(res, "estimate", None)
    q = quantity_of((estimate if estimate is not None else res.mean).attrs, res.loss)
    weights = table_weights(table)
    frame = res.to_frame()
    dims = [c for c in frame.columns if c not in res.frame_columns]
    others = _significance(table, rec)
    lines = [f"Caveat: {rec.caveat}."] if rec.caveat else []
    lines += [f"Caveat: {n}." for n in table.notes if n.startswith(MODELS_ON_THEIR_OWN)]
    caveats = len(lines)
    for _, row in frame.iterrows():
        label = str(row[CONTRAST]) if CONTRAST in dims else str(res.loss)
        w = weights.get(label)
        if CONTRAST in dims and is_level(w):
            continue
        extra = [f"{d} = {row[d]}" for d in dims if d != CONTRAST]
        prefix = f"{', '.join(extra)}: " if extra else ""
        sentence = row_sentence(res, row, label, w, q, adjusted=adj.name if adj else "")
        lines.append(prefix + sentence)
        if "p_rope" in row:
            continue
        mine = evidence_of(res, row).significant
        differ = [
            (n, p) for n, sig, p in others.get(tuple(row[d] for d in dims), []) if sig != mine
        ]
        if differ:
            listed = ", ".join(
                f"{n}{_marker(n, table.target)} ({pvalue_text(p, table.alpha) or 'no p'})"
                for n, p in differ[:3]
            )
            if len(differ) > 3:
                listed += f" and {len(differ) - 3} more"
            verb = "finds" if len(differ) == 1 else "find"
            finds = f"{verb} no difference" if mine else f"{verb} a difference"
            lines.append(f"  Disagreeing: {listed} {finds} at level {table.alpha:g}.")
    if len(lines) == caveats:
        lines.append(
            "No comparison between models in this formula (only per-model levels); "
            "use 'loss ~ model' or cvstats.pairwise(cube) to compare them."
        )
    elif adj is not None:
        lines.append(
            f"p-values {adj.words()}; the {100 * (1 - table.alpha):g}% intervals are not adjusted."
        )
    return Verdict("\n".join(lines))


def levels_method(names: Sequence[str], rec: str) -> str | None:
    """Return the method that estimates the per-model levels (one with an interval)."""
    for name in [rec, *names]:
        spec = METHODS[name]
        if spec.contrasts == "any" and spec.interval == "confidence":
            return name
    return None
