"""Notebook displays and the reporting protocol, class by class (issue 15, points 3 and 4).

Every public result class — the results of the tests and of the comparisons
across datasets, the fits' :class:`~cvstats.results.EstimatesResult`, the
publication table — has one short ``repr`` (at most ``REPR_LINES`` lines, naming
the class) and one ``_repr_html_`` (a small captioned table, every string
escaped), both from :mod:`cvstats.results.base` (``text_display``,
``html_display``, ``Display``), plus ``to_frame``, ``to_latex``, ``to_markdown``,
``to_html`` and, where a picture says more, ``plot``. Each instance below comes
from a small real computation on a cube whose second model is named
``<script>alert(1)</script>``.
"""

from __future__ import annotations

import dataclasses
import html
import inspect
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from test_result_contract import (  # noqa: E402
    ACROSS_CLASSES,
    EVAL_CLASSES,
    SELECTION_CLASSES,
    across_results,
    eval_results,
    result_classes,
    selection_results,
)

import cvstats  # noqa: E402
import cvstats.results  # noqa: E402
from cvstats import ArgumentError  # noqa: E402
from cvstats.reporting import tables  # noqa: E402
from cvstats.results import (  # noqa: E402
    BayesianDatasetsResult,
    BayesianResult,
    EstimatesResult,
    FriedmanResult,
    InferenceResult,
    PairwiseResult,
    RankReport,
    WilcoxonResult,
    WinnerTable,
)
from cvstats.results.base import (  # noqa: E402
    HTML_ROWS,
    REPR_LINES,
    Display,
    html_display,
    text_display,
    truncate_frame,
)

HOSTILE = "<script>alert(1)</script>"
MODELS = ["a", HOSTILE, "c"]

#: The protocol every displayed result class has.
PROTOCOL = ("to_frame", "to_latex", "to_markdown", "to_html", "_repr_html_", "__repr__")
#: Public classes whose displays are tested in their own files (their protocol
#: methods are still checked here): ComparisonTable in tests/reporting/test_verdict.py,
#: CubeDescription in tests/reporting/test_describe.py.
ELSEWHERE = {"ComparisonTable", "CubeDescription"}


# ---------------------------------------------------------------------------
# one instance of every class, from small real computations
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cube(gamma_datasets_cube):
    """Three learners (one with a hostile name), 8 datasets, 8 random splits each."""
    return gamma_datasets_cube(8, MODELS)


@pytest.fixture(scope="module")
def objects(cube):
    """``{label: object}``: every displayed class, scalar and over extra dims."""
    one = cube.isel(dataset=0)
    per_dataset = cvstats.corrected_resampled_t(cvstats.pairwise(cube))
    frame = per_dataset.to_frame()
    scalar = cvstats.corrected_resampled_t(one.sel(model=["a"]))
    post = cvstats.bayesian_correlated_t(one.sel(model=["a"]))
    return {
        # 0-d: one model's numbers without its dim
        "inference_0d": squeezed(scalar),
        "bayes_0d": squeezed(post),
        "inference_scalar": scalar,
        "inference_models": cvstats.corrected_resampled_t(one),
        "inference_datasets": per_dataset,  # 18 rows: truncated
        "bayes_scalar": post,
        "bayes_contrasts": cvstats.bayesian_correlated_t(cvstats.pairwise(one), rope=0.05),
        # the rank tests, winner_table, the fits (one of them on contrasts below)
        **across_results(cube, ["a", HOSTILE], fit_r_models=["a", HOSTILE]),
        **eval_results(MODELS),
        **selection_results(MODELS),
        "fit_rho_contrasts": cvstats.fit_rho("sq ~ model", cube),
        "plan": cvstats.plan(cube, target_width=0.5, effect=0.4),
        "publication": tables.publication_table(
            frame, rows=["contrast"], columns=["dataset"], caption="Per dataset"
        ),
        "publication_long": tables.publication_table(
            frame, rows=["dataset", "contrast"], columns=["method"], caption="Long"
        ),
    }


def squeezed(res):
    """The result with its values' size-1 dims dropped (0-d DataArrays)."""
    values = {k: getattr(res, k).squeeze(drop=True) for k in res.value_fields}
    return dataclasses.replace(res, **values)


CLASSES = {
    "inference_0d": InferenceResult,
    "bayes_0d": BayesianResult,
    "inference_scalar": InferenceResult,
    "inference_models": InferenceResult,
    "inference_datasets": InferenceResult,
    "bayes_scalar": BayesianResult,
    "bayes_contrasts": BayesianResult,
    **ACROSS_CLASSES,
    **EVAL_CLASSES,
    **SELECTION_CLASSES,
    "fit_rho_contrasts": EstimatesResult,
    "plan": cvstats.PlanResult,
    "publication": cvstats.PublicationTable,
    "publication_long": cvstats.PublicationTable,
}
#: What ``plot()`` draws: a forest plot for the tests, the posterior with its rope,
#: the critical-difference diagram, an estimate with its intervals (ρ̂ against ρ0).
WITH_PLOT = {
    "bayes_sign",
    "bayes_signed_rank",
    "hierarchical",
    "inference_0d",
    "bayes_0d",
    "inference_scalar",
    "inference_models",
    "inference_datasets",
    "bayes_scalar",
    "bayes_contrasts",
    "friedman",
    "rank_report",
    "pairwise_matrix",
    "compare_datasets",
    "plan",
    "mcs",
    "cvc",
    *(label for label, cls in CLASSES.items() if cls is EstimatesResult),
}
#: Labels whose displays show the hostile model name (the others have no model).
NO_NAMES = {"inference_0d", "bayes_0d", "inference_scalar", "bayes_scalar", "fit_lemma1"}
SHOWS_NAMES = set(CLASSES) - NO_NAMES


def key_numbers(obj) -> list[str]:
    """Numbers a display must show, formatted to 4 significant digits."""
    if isinstance(obj, InferenceResult):
        return [
            f"{float(obj.estimate.values.flat[0]):.4g}",
            f"{float(obj.pvalue.values.flat[0]):.4g}",
        ]
    if isinstance(obj, BayesianResult):
        return [f"{float(obj.mean.values.flat[0]):.4g}", f"{float(obj.p_rope.values.flat[0]):.4g}"]
    if isinstance(obj, FriedmanResult):
        return [f"{float(obj.statistic):.4g}", f"{float(obj.pvalue):.4g}"]
    if isinstance(obj, WilcoxonResult):
        return [f"{float(obj.pvalue):.4g}", f"{float(obj.median_difference):.4g}"]
    if isinstance(obj, PairwiseResult):
        return [f"{float(obj.pvalue_adjusted[0]):.4g}"]
    if isinstance(obj, cvstats.EffectSizeResult):
        return [f"{float(obj.cohens_d):.4g}", f"{float(obj.cliffs_delta):.4g}"]
    if isinstance(obj, cvstats.PairwiseMatrix):
        return [f"{obj.to_frame()['pvalue_adjusted'].iloc[0]:.4g}"]
    if isinstance(obj, cvstats.ControlResult):
        return [f"{float(obj.statistic[0]):.4g}", f"{float(obj.pvalue_adjusted[0]):.4g}"]
    if isinstance(obj, cvstats.ChosenTest):
        return [f"{float(obj.pvalue):.4g}"]
    if isinstance(obj, cvstats.DatasetsComparison):
        return [f"{float(obj.average_rank[0]):.4g}"]
    if isinstance(obj, cvstats.HierarchicalResult):
        return [f"{float(obj.p_rope):.4g}", f"{float(obj.mean_right):.4g}"]
    if isinstance(obj, BayesianDatasetsResult):
        return [f"{float(obj.p_left):.4g}", f"{float(obj.p_right):.4g}"]
    if isinstance(obj, RankReport):
        return [f"{obj.to_frame()['rank_difference'].iloc[0]:.4g}"]
    if isinstance(obj, WinnerTable):
        return [f"{obj.agreement:.4g}"]
    if isinstance(obj, EstimatesResult):
        q = obj.quantities[0]
        return [f"{float(obj[q].values.flat[0]):.4g}"]
    if isinstance(obj, cvstats.EvalResult):
        return [f"{float(obj.estimate[0]):.4g}", f"{float(obj.stderr[0]):.4g}"]
    if isinstance(obj, cvstats.MCSResult | cvstats.CVCResult):
        return [f"{float(obj.pvalue[0]):.4g}", f"{float(obj.mean_loss[0]):.4g}"]
    if isinstance(obj, cvstats.BBCResult):
        return [f"{float(obj.estimate):.4g}", f"{float(obj.naive):.4g}"]
    if isinstance(obj, cvstats.EvalPlan):
        return [str(int(obj.questions.values.flat[0]))]
    if isinstance(obj, cvstats.PlanResult):
        return [f"{obj.to_frame('plan')['half_width'].iloc[0]:.4g}"]
    assert isinstance(obj, cvstats.PublicationTable)
    first = str(obj).splitlines()[4 if obj.caption else 2]
    return [first.split()[-3]]  # the last cell's estimate, as the table formats it


class _Checker(HTMLParser):
    """Collects the tags of a fragment and checks that they nest."""

    VOID = {"br", "hr", "img", "meta", "input", "col", "link", "path", "use", "circle", "rect"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def check_html(text: str) -> _Checker:
    parser = _Checker()
    parser.feed(text)
    parser.close()
    assert parser.errors == [] and parser.stack == [], (parser.errors, parser.stack)
    return parser


# ---------------------------------------------------------------------------
# coverage: every public class with a frame is here, with the whole protocol
# ---------------------------------------------------------------------------


def public_classes() -> dict[str, type]:
    """Public classes with ``to_frame``: ``cvstats.__all__`` and ``cvstats.results.__all__``."""
    out = {}
    for module in (cvstats, cvstats.results):
        for name in module.__all__:
            obj = getattr(module, name)
            if (
                inspect.isclass(obj)
                and obj is not cvstats.results.Result
                and hasattr(obj, "to_frame")
            ):
                out[name] = obj
    return out


def test_the_fixture_covers_every_public_result_class(objects):
    """Every result class (found, not listed) and every public class with a frame is here."""
    assert set(objects) == set(CLASSES)
    covered = {type(o) for o in objects.values()}
    classes = {*public_classes().values(), *result_classes()}
    missing = sorted(
        c.__name__ for c in classes if c not in covered and c.__name__ not in ELSEWHERE
    )
    assert missing == [], f"add an instance of {missing} to `objects` in this file"


@pytest.mark.parametrize("name", sorted(public_classes()))
def test_every_public_class_has_the_protocol(name):
    cls = public_classes()[name]
    lacking = [m for m in PROTOCOL if not callable(getattr(cls, m, None))]
    # a dataclass writes its own repr (field by field, ~80 lines) unless told not to
    code = getattr(inspect.unwrap(cls.__repr__), "__code__", None)
    if code is None or code.co_filename == "<string>":  # object's, or the dataclass's
        lacking.append("a short __repr__ (Display, and dataclass(repr=False))")
    assert lacking == [], f"{name} lacks {lacking}"


# ---------------------------------------------------------------------------
# the short repr
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_repr_is_short_and_names_the_class(objects, label):
    obj = objects[label]
    assert type(obj) is CLASSES[label]
    text = repr(obj)
    lines = text.splitlines()
    assert 3 <= len(lines) <= REPR_LINES, (label, len(lines))
    assert all(line == line.rstrip() for line in lines)
    if isinstance(obj, cvstats.PublicationTable):
        # a publication table shows as itself, below its caption (as ``str``)
        assert lines[0] == obj.caption
        if len(str(obj).splitlines()) <= REPR_LINES:
            assert text == str(obj)
    else:
        assert lines[0].startswith(f"{type(obj).__name__}: ")
    for number in key_numbers(obj):
        assert number in text, (label, number)


@pytest.mark.parametrize("label", ["inference_datasets", "publication_long"])
def test_a_long_repr_is_cut_and_counts_what_it_leaves_out(objects, label):
    obj = objects[label]
    text = repr(obj)
    assert len(text.splitlines()) == REPR_LINES
    total = len(obj.to_frame()) if label == "inference_datasets" else len(obj.row_keys)
    (note,) = [line for line in text.splitlines() if "more rows" in line]
    hidden = int(note.split()[1])
    assert note == f"… {hidden} more rows ({total} in all)"
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line) == {"-", " "})
    body = lines[rule + 1 : lines.index(note)]
    rows = [line for line in body if not line.startswith("…")]
    assert len(rows) + hidden == total and len(rows) == len(body) - 1  # one "…" row
    assert rows[0].startswith("d0") and rows[-1].startswith("d7")  # first and last rows
    assert any(
        line.lstrip().startswith("…") and "more rows" not in line for line in text.splitlines()
    )


def test_repr_of_a_scalar_and_of_results_over_dims(objects):
    res = objects["inference_0d"]
    scalar = repr(res).splitlines()
    header = ["estimate", "stderr", "statistic", "df", "pvalue", "ci_lower", "ci_upper"]
    assert scalar[-3].split() == header
    assert scalar[-1].split()[0] == f"{float(res.estimate):.4g}"
    assert len(scalar) == 7  # heading (3), blank, header (2), one row
    over = repr(objects["inference_datasets"])
    assert over.splitlines()[4].split()[:2] == ["dataset", "contrast"]


def test_repr_of_the_estimates_leads_with_them_not_with_xarray(objects):
    fit = objects["fit_rho"]
    text = repr(fit)
    assert text.startswith("EstimatesResult: fit_rho")
    assert "<xarray" not in text and "Dimensions:" not in text
    header = text.splitlines()[3].split()
    assert header == ["quantity", "model", "estimate", "stderr", "ci_lower", "ci_upper"]
    # a 0-d quantity shows once, not once per model
    assert sum(line.startswith("rho0 ") for line in text.splitlines()) == 1


# ---------------------------------------------------------------------------
# the HTML display
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_repr_html_is_a_small_escaped_table(objects, label):
    obj = objects[label]
    out = obj._repr_html_()
    parser = check_html(out)
    assert "table" in parser.tags and "caption" in parser.tags
    assert "<script" not in out.lower()
    if label in SHOWS_NAMES:
        assert html.escape(HOSTILE) in out, label
    for number in key_numbers(obj):
        assert number in out, (label, number)
    if isinstance(obj, EstimatesResult):
        # the estimates first, xarray's view of the Dataset below them
        assert out.index("cvstats-display") < out.index("xarray.Dataset")
        body = out[: out.index("<details>")]
    else:
        body = out
    assert body.count("<tr") <= HTML_ROWS + 2  # header rows and the cut rows


def test_a_long_html_display_is_cut(objects):
    obj = objects["inference_datasets"]
    out = obj._repr_html_()
    assert "<td>…</td>" in out
    assert f"more rows ({len(obj.to_frame())} in all)" in out
    small = objects["publication"]
    assert small._repr_html_() == small.to_html()
    long = objects["publication_long"]._repr_html_()
    assert "more rows (24 in all)" in long and "<td>…</td>" in long
    check_html(long)


def test_html_names_the_class_in_its_caption(objects):
    out = objects["inference_models"]._repr_html_()
    caption = out[out.index("<caption") : out.index("</caption>")]
    assert "<strong>InferenceResult: Corrected resampled t" in caption
    assert "estimand n1μ" in caption


# ---------------------------------------------------------------------------
# the reporting protocol and the pictures
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_protocol_methods_return_something(objects, label):
    obj = objects[label]
    frame = obj.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0
    for method in ("to_latex", "to_markdown", "to_html"):
        text = getattr(obj, method)()
        assert isinstance(text, str) and text.strip(), (label, method)
    assert "<script" not in obj.to_html().lower()


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_plot_draws_or_says_there_is_none(objects, label):
    obj = objects[label]
    if label in WITH_PLOT:
        ax = obj.plot()
        try:
            assert isinstance(ax, matplotlib.axes.Axes)
            assert ax.has_data() or ax.texts or ax.lines
        finally:
            plt.close("all")
    else:  # e.g. a publication table, a table for print: no picture
        with pytest.raises(ArgumentError, match="has no plot"):
            obj.plot()


def test_forest_plot_of_a_test_has_a_row_per_element_and_mu0(objects):
    res = objects["inference_datasets"]
    ax = res.plot(alpha=0.1)
    try:
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert len(labels) == len(res.to_frame())
        assert labels[0].startswith("d0  a - ")
        assert "90% interval" in ax.get_xlabel()
        assert any(list(line.get_xdata()) == [res.mu0, res.mu0] for line in ax.lines)
    finally:
        plt.close("all")


def test_posterior_plot_shades_the_rope(objects):
    ax = objects["bayes_contrasts"].plot()
    try:
        assert "rope" in [t.get_text() for t in ax.get_legend().get_texts()]
    finally:
        plt.close("all")


def test_rho_plot_draws_rho_hat_against_rho0(objects):
    fit = objects["fit_rho"]
    ax = fit.plot()
    try:
        rho0 = float(fit.rho0)
        assert any(list(line.get_xdata()) == [rho0, rho0] for line in ax.lines)
        assert [t.get_text() for t in ax.get_yticklabels()] == MODELS
        assert ax.get_xlabel().startswith("ρ̂")
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == [f"ρ0 = n2/(n1 + n2) = {rho0:.3g}"]
    finally:
        plt.close("all")
    ax = fit.plot("mu")
    try:
        assert ax.get_xlabel().startswith("mu")
    finally:
        plt.close("all")
    with pytest.raises(ArgumentError, match="`quantity` must be one of"):
        fit.plot("nope")


def test_estimates_keep_xarrays_dataset_plots(objects):
    fit = objects["fit_rho"]
    ax = fit.plot.scatter(x="mu", y="delta")
    try:
        assert ax is not None
    finally:
        plt.close("all")
    assert "scatter" in dir(fit.plot)


def test_friedman_plot_is_the_cd_diagram(objects):
    ax = objects["friedman"].plot()
    try:
        assert any(t.get_text().startswith("CD = ") for t in ax.texts)
    finally:
        plt.close("all")


# ---------------------------------------------------------------------------
# the shared helpers themselves
# ---------------------------------------------------------------------------


def test_truncate_frame_keeps_first_and_last_rows():
    frame = pd.DataFrame({"x": range(10), "y": list("abcdefghij")})
    shown, hidden = truncate_frame(frame, 10)
    assert shown is frame and hidden == 0
    shown, hidden = truncate_frame(frame, 6)
    assert hidden == 5 and len(shown) == 6
    assert shown["x"].tolist() == [0, 1, 2, "…", 8, 9]
    assert shown["y"].tolist() == ["a", "b", "c", "…", "i", "j"]


def test_text_display_fits_its_lines_and_drops_notes_first():
    frame = pd.DataFrame({"name": [f"m{i}" for i in range(100)], "value": np.arange(100) / 7})
    for max_lines in (8, 12, 20):
        text = text_display(
            frame, ["Thing: a test", "detail"], ["note 1", "note 2"], max_lines=max_lines
        )
        assert len(text.splitlines()) <= max_lines
        assert "… " in text and "(100 in all)" in text
    text = text_display(frame.head(2), ["Thing"], ["note 1", "note 2"])
    assert text.splitlines()[-2:] == ["note 1", "note 2"]
    # numbers right-aligned to 4 digits, text left-aligned
    assert text.splitlines()[5] == "m1       0.1429"  # heading, blank, header (2), m0


def test_text_display_keeps_cells_on_one_line_and_short():
    frame = pd.DataFrame({"name": ["two\nlines", "x" * 100], "value": [1.0, 2.0]})
    text = text_display(frame, ["Thing\nwith a newline"])
    lines = text.splitlines()
    assert lines[0] == "Thing with a newline"
    assert len(lines) == 1 + 1 + 2 + 2
    assert "two lines" in text and "x" * 39 + "…" in text and "x" * 41 not in text


def test_html_display_escapes_every_string():
    frame = pd.DataFrame({HOSTILE: [HOSTILE, "<b>ok</b>"], "value": [1.5, np.nan]})
    out = html_display(frame, [HOSTILE, "a & b"], [f"note {HOSTILE}"])
    check_html(out)
    assert "<script" not in out and "<b>" not in out
    assert out.count(html.escape(HOSTILE)) == 4  # heading, header, cell, note
    assert "a &amp; b" in out and "<td>1.5</td>" in out and "<td>nan</td>" in out


def test_display_mixin_is_reusable():
    # what another displayed object (e.g. a comparison table) needs: to_frame and hooks
    class Thing(Display):
        def to_frame(self):
            return pd.DataFrame({"method": ["m1", "m2"], "estimate": [0.25, 0.5]})

        def _caption(self):
            return "two methods"

        def _display_notes(self):
            return ["a note"]

    text = repr(Thing())
    assert text.splitlines()[0] == "Thing: two methods" and text.endswith("a note")
    out = Thing()._repr_html_()
    check_html(out)
    assert "<strong>Thing: two methods</strong>" in out and "<p>a note</p>" in out


# ---------------------------------------------------------------------------
# the verdict: every result says what it means in words
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(set(CLASSES) - {"publication", "publication_long"}))
def test_every_result_has_a_verdict(objects, label):
    obj = objects[label]
    verdict = obj.verdict()
    assert isinstance(verdict, str) and verdict.strip(), label
    assert repr(verdict) == str(verdict) and "<ul" in verdict._repr_html_()
    # a model name is escaped in the HTML form too
    assert "<script>" not in verdict._repr_html_()


def test_verdict_is_printed_under_the_summary(objects):
    res = objects["inference_models"]
    text = res.summary().as_text()
    assert "Verdict:" in text and str(res.verdict()).splitlines()[0][:40] in text
