import dataclasses
import functools
import inspect
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import cvstats
from cvstats import ArgumentError, CvstatsTypeError
from cvstats.reporting.tables import (
    TABLE_COLUMNS,
    PublicationTable,
    html_label,
    latex_label,
)
from cvstats.reporting.tables import nadeau_bengio_table as _nadeau_bengio_table
from cvstats.reporting.tables import publication_table as _publication_table

#: The layouts and the formatting rule below are pinned at 3 significant digits, the
#: tables' default before issue 27 (4 since, the default of every display of cvstats:
#: test_precision_default_is_the_one_of_every_display); an explicit precision wins.
publication_table = functools.partial(_publication_table, precision=3)
nadeau_bengio_table = functools.partial(_nadeau_bengio_table, precision=3)

GREEK = "αβγδεζηθικλμνξπρστυφχψωΓΔΘΛΞΠΣΥΦΨΩ"


def cells(table):
    """The displayed cells as {(row label, column label): text}, from the plain layout."""
    shown = table._layout(
        lambda p: " ".join(p) if len(p) < 3 else "{} [{}, {}]".format(*p), str, False, " "
    )
    nr = len(table.rows)
    out = {}
    for rec in shown.itertuples(index=False, name=None):
        for head, text in zip(shown.columns[nr:], rec[nr:], strict=True):
            out[rec[0] if nr == 1 else rec[:nr], head] = text
    return out


def one(estimate, lower=np.nan, upper=np.nan, **kwargs):
    frame = pd.DataFrame(
        {"q": ["x"], "s": ["S"], "estimate": [estimate], "ci_lower": [lower], "ci_upper": [upper]}
    )
    return cells(publication_table(frame, rows="q", columns="s", **kwargs))["x", "S"]


@pytest.fixture
def nb_frame():
    # a Table-2-like layout: quantities x simulations, one missing cell, one estimate-only
    rows = [
        ("n/2 μ_A", "Simulation 1", 96.86, 93.53, 100.17),
        ("n/2 μ_A", "Simulation 2", 70.2, 68.0, 72.4),
        ("n/2 μ_A-B", "Simulation 1", -1.234, -2.5, 0.031),
        ("n/2 μ_A-B", "Simulation 2", 0.52, 0.11, 0.93),
        ("ρ_A(n/2, n/10)", "Simulation 1", 0.0312, 0.0201, 0.0415),
        ("r_A-B", "Simulation 2", 0.03, np.nan, np.nan),
    ]
    return pd.DataFrame(rows, columns=["quantity", "simulation", *TABLE_COLUMNS])


# -- cell formatting ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "kwargs", "expected"),
    [
        ((96.86, 93.53, 100.17), {}, "96.9 [93.5, 100.2]"),
        ((96.86, 93.53, 100.17), {"precision": 2}, "97 [94, 100]"),
        ((96.86, 93.53, 100.17), {"precision": 2, "fmt": "f"}, "96.86 [93.53, 100.17]"),
        ((0.0312, 0.0201, 0.0415), {}, "0.0312 [0.0201, 0.0415]"),
        ((0.0312, 0.0201, 0.0415), {"precision": 0, "fmt": "f"}, "0 [0, 0]"),
        ((99.96, 99.0, 101.0), {}, "100 [99, 101]"),  # rounding up drops a decimal
        ((12345.6, 12000.0, 13000.0), {}, "12346 [12000, 13000]"),  # never exponent notation
        ((-1.234, -2.5, 0.031), {}, "-1.23 [-2.50, 0.03]"),
        ((-0.0004, -0.1, 0.2), {}, "0.000 [-0.100, 0.200]"),  # scale = half-width; no "-0.000"
        ((-0.5, -np.inf, 0.1), {}, "-0.500 [-inf, 0.100]"),  # one-sided interval
        ((0.0, 0.0, 0.0), {}, "0.00 [0.00, 0.00]"),
        ((3.0, np.nan, np.nan), {}, "3.00"),  # no bounds: estimate only
        ((np.nan, 1.0, 2.0), {}, ""),  # missing estimate: empty cell
    ],
)
def test_cell_formatting(values, kwargs, expected):
    assert one(*values, **kwargs) == expected


def _precision_defaults() -> dict[str, object]:
    """The default ``precision`` of every public function and display method taking one."""
    found = {}
    for name in cvstats.__all__:
        obj = getattr(cvstats, name)
        members = [(name, obj)]
        if inspect.isclass(obj):
            members += [(f"{name}.{m}", getattr(obj, m)) for m in dir(obj) if m[0] != "_"]
        for label, member in members:
            try:
                parameters = inspect.signature(member).parameters
            except (TypeError, ValueError):
                continue
            if "precision" in parameters:
                found[label] = parameters["precision"].default
    return found


def test_precision_default_is_the_one_of_every_display():
    # issue 27: one default for `precision` (significant digits) across the API: the
    # publication tables used 3, every result and ComparisonTable 4
    defaults = _precision_defaults()
    assert {"publication_table", "nadeau_bengio_table", "InferenceResult.summary"} <= set(defaults)
    assert {"ComparisonTable.to_latex", "PlanResult.to_markdown"} <= set(defaults)
    assert set(defaults.values()) == {4}, defaults
    assert PublicationTable.__dataclass_fields__["precision"].default == 4
    frame = pd.DataFrame(
        {"q": ["x"], "s": ["S"], "estimate": [0.04567], "ci_lower": [0.01], "ci_upper": [0.1]}
    )
    assert cells(_publication_table(frame, rows="q", columns="s"))["x", "S"] == (
        "0.04567 [0.01000, 0.10000]"
    )


def test_missing_cells_are_empty_and_bounds_optional(nb_frame):
    table = publication_table(nb_frame, rows="quantity", columns="simulation")
    shown = cells(table)
    assert shown["ρ_A(n/2, n/10)", "Simulation 2"] == ""  # pair absent from the data
    assert shown["r_A-B", "Simulation 1"] == ""
    assert shown["r_A-B", "Simulation 2"] == "0.0300"  # NaN bounds: estimate only
    # a frame without any bound column shows estimates only
    bare = nb_frame.drop(columns=["ci_lower", "ci_upper"])
    plain = cells(publication_table(bare, rows="quantity", columns="simulation"))
    assert plain["n/2 μ_A", "Simulation 1"] == "96.9"
    ignored = publication_table(
        nb_frame, rows="quantity", columns="simulation", lower=None, upper=None
    )
    assert cells(ignored) == plain
    assert ignored.to_frame()[["ci_lower", "ci_upper"]].isna().all().all()


def test_custom_value_columns():
    frame = pd.DataFrame({"r": ["a"], "c": ["b"], "mean": [1.0], "lo": [0.5], "hi": [1.5]})
    table = publication_table(
        frame, rows="r", columns="c", estimate="mean", lower="lo", upper="hi"
    )
    assert cells(table)["a", "b"] == "1.00 [0.50, 1.50]"
    assert list(table.to_frame().columns) == ["r", "c", *TABLE_COLUMNS]


def test_to_frame_holds_numbers_not_strings(nb_frame):
    table = publication_table(nb_frame, rows="quantity", columns="simulation", precision=1)
    frame = table.to_frame()
    assert list(frame.columns) == ["quantity", "simulation", *TABLE_COLUMNS]
    assert all(frame[c].dtype == np.float64 for c in TABLE_COLUMNS)
    np.testing.assert_array_equal(frame["estimate"], nb_frame["estimate"])
    frame.loc[0, "estimate"] = -1.0  # a copy
    assert table.to_frame().loc[0, "estimate"] == 96.86
    # precision is a display option: replace() reformats the same numbers
    finer = dataclasses.replace(table, precision=4)
    assert cells(finer)["n/2 μ_A", "Simulation 1"] == "96.86 [93.53, 100.17]"


# -- ordering and layout ------------------------------------------------------------------


def test_default_order_is_first_appearance(nb_frame):
    shuffled = nb_frame.iloc[[4, 1, 0, 5, 3, 2]]
    table = publication_table(shuffled, rows="quantity", columns="simulation")
    assert table.row_keys == (("ρ_A(n/2, n/10)",), ("n/2 μ_A",), ("r_A-B",), ("n/2 μ_A-B",))
    assert table.column_keys == (("Simulation 1",), ("Simulation 2",))
    # to_frame follows the table's order (row, then column)
    assert table.to_frame()["quantity"].tolist()[:3] == ["ρ_A(n/2, n/10)", "n/2 μ_A", "n/2 μ_A"]


def test_row_and_column_order(nb_frame):
    table = publication_table(
        nb_frame,
        rows="quantity",
        columns="simulation",
        row_order=["r_A-B", "n/2 μ_A-B"],
        column_order=["Simulation 2", "Simulation 1"],
    )
    # listed labels first, the others after in order of appearance
    assert [k[0] for k in table.row_keys] == ["r_A-B", "n/2 μ_A-B", "n/2 μ_A", "ρ_A(n/2, n/10)"]
    assert table.column_keys == (("Simulation 2",), ("Simulation 1",))
    header = table.to_markdown().splitlines()[0]
    assert header.index("Simulation 2") < header.index("Simulation 1")
    with pytest.raises(ArgumentError, match=r"`row_order` lists \['n/2 μ_C'\], not in the data"):
        publication_table(nb_frame, rows="quantity", columns="simulation", row_order=["n/2 μ_C"])
    with pytest.raises(ArgumentError, match="`column_order` must be a sequence or a mapping"):
        publication_table(nb_frame, rows="quantity", columns="simulation", column_order="S")


@pytest.fixture
def multi_frame():
    records = []
    for quantity in ["μ_A", "ρ_A"]:
        for config in ["n/2", "9n/10"]:
            for sim in [1, 2]:
                est = 1.0 + sim + (config == "n/2") + 10 * (quantity == "ρ_A")
                records.append((quantity, config, sim, est, est - 0.5, est + 0.5))
    return pd.DataFrame(
        records, columns=["quantity", "configuration", "simulation", *TABLE_COLUMNS]
    )


def test_multiindex_rows(multi_frame):
    table = publication_table(
        multi_frame, rows=("quantity", "configuration"), columns="simulation"
    )
    assert table.row_keys == (
        ("μ_A", "n/2"),
        ("μ_A", "9n/10"),
        ("ρ_A", "n/2"),
        ("ρ_A", "9n/10"),
    )
    assert cells(table)[("ρ_A", "9n/10"), "2"] == "13.0 [12.5, 13.5]"
    # sparse labels in LaTeX, HTML and text; repeated in Markdown
    latex = table.to_latex()
    assert "quantity & configuration & 1 & 2 \\\\" in latex
    assert "$\\mu_{A}$ & n/2 & 3.00 [2.50, 3.50] & 4.00 [3.50, 4.50] \\\\" in latex
    assert "\n & 9n/10 & 2.00 [1.50, 2.50] & 3.00 [2.50, 3.50] \\\\" in latex
    assert "\\multirow" not in latex  # no extra LaTeX package needed
    markdown = table.to_markdown()
    assert markdown.count("| μ_A ") == 2 and markdown.count("| ρ_A ") == 2
    html = table.to_html()
    assert html.count("<td>μ<sub>A</sub></td>") == 1
    assert str(table).splitlines()[3].startswith("            9n/10")
    # per-level orders, by mapping; and full key tuples
    by_level = publication_table(
        multi_frame,
        rows=("quantity", "configuration"),
        columns="simulation",
        row_order={"quantity": ["ρ_A"], "configuration": ["9n/10", "n/2"]},
    )
    assert by_level.row_keys == (
        ("ρ_A", "9n/10"),
        ("ρ_A", "n/2"),
        ("μ_A", "9n/10"),
        ("μ_A", "n/2"),
    )
    by_key = publication_table(
        multi_frame,
        rows=("quantity", "configuration"),
        columns="simulation",
        row_order=[("ρ_A", "9n/10")],
    )
    assert by_key.row_keys[0] == ("ρ_A", "9n/10")
    assert by_key.row_keys[1:] == table.row_keys[:3]
    with pytest.raises(ArgumentError, match=r"entries must be tuples of 2 labels"):
        publication_table(
            multi_frame,
            rows=("quantity", "configuration"),
            columns="simulation",
            row_order=["μ_A"],
        )
    with pytest.raises(ArgumentError, match=r"`row_order` names \['config'\]"):
        publication_table(
            multi_frame,
            rows=("quantity", "configuration"),
            columns="simulation",
            row_order={"config": ["n/2"]},
        )


def test_multilevel_columns(multi_frame):
    table = publication_table(
        multi_frame, rows="quantity", columns=("configuration", "simulation")
    )
    latex = table.to_latex()
    assert "\\multicolumn{2}{c}{n/2} & \\multicolumn{2}{c}{9n/10}" in latex
    assert "quantity & 1 & 2 & 1 & 2 \\\\" in latex
    assert "| quantity   | n/2 / 1 " in table.to_markdown()
    assert '<th colspan="2" halign="left">n/2</th>' in table.to_html()


def test_index_levels_are_accepted(nb_frame):
    indexed = nb_frame.set_index(["quantity", "simulation"])
    assert cells(publication_table(indexed, rows="quantity", columns="simulation")) == cells(
        publication_table(nb_frame, rows="quantity", columns="simulation")
    )


# -- inputs ---------------------------------------------------------------------------


def rho_dataset():
    rho = xr.DataArray(
        [[0.1, 0.25], [0.3, -0.02]],
        dims=("learner", "simulation"),
        coords={"learner": ["A", "B"], "simulation": ["Simulation 1", "Simulation 2"]},
    )
    bounds = xr.DataArray(["lower", "upper"], dims="ci_bound")
    rho_ci = xr.concat([rho - 0.05, rho + 0.05], dim=bounds).transpose(..., "ci_bound")
    return xr.Dataset({"rho": rho, "rho_ci": rho_ci, "n": xr.DataArray(3)})


def test_dataset_with_ci_variable():
    ds = rho_dataset()
    table = publication_table(ds, rows="learner", columns="simulation", estimate="rho")
    assert cells(table) == {
        ("A", "Simulation 1"): "0.100 [0.050, 0.150]",
        ("A", "Simulation 2"): "0.250 [0.200, 0.300]",
        ("B", "Simulation 1"): "0.300 [0.250, 0.350]",
        ("B", "Simulation 2"): "-0.0200 [-0.0700, 0.0300]",
    }
    frame = table.to_frame()
    assert list(frame.columns) == ["learner", "simulation", *TABLE_COLUMNS]
    np.testing.assert_allclose(
        frame["ci_upper"], ds["rho_ci"].sel(ci_bound="upper").values.ravel()
    )
    # the one <name>/<name>_ci pair is found without `estimate`; dims may be transposed
    auto = publication_table(ds.transpose("simulation", ...), rows="learner", columns="simulation")
    assert cells(auto) == cells(table)
    # rows/columns may name a scalar coordinate
    picked = publication_table(
        ds.sel(simulation="Simulation 2"), rows="learner", columns="simulation"
    )
    assert cells(picked)["B", "Simulation 2"] == "-0.0200 [-0.0700, 0.0300]"


def test_dataset_with_bound_variables_and_dataarray():
    ds = rho_dataset()
    flat = xr.Dataset(
        {
            "estimate": ds["rho"],
            "ci_lower": ds["rho_ci"].sel(ci_bound="lower", drop=True),
            "ci_upper": ds["rho_ci"].sel(ci_bound="upper", drop=True),
        }
    )
    expected = cells(publication_table(ds, rows="learner", columns="simulation"))
    assert cells(publication_table(flat, rows="learner", columns="simulation")) == expected
    only = cells(publication_table(ds["rho"], rows="learner", columns="simulation"))
    assert only["A", "Simulation 1"] == "0.100"


def test_dataset_errors():
    ds = rho_dataset()
    with pytest.raises(
        ArgumentError, match=r"`estimate` 'mu' is not a variable .*\['rho', 'rho_ci', 'n'\]"
    ):
        publication_table(ds, rows="learner", columns="simulation", estimate="mu")
    bad = ds.rename({"ci_bound": "bound"})
    with pytest.raises(ArgumentError, match="'rho_ci' needs a `ci_bound` dim"):
        publication_table(bad, rows="learner", columns="simulation")
    other = ds.assign_coords(ci_bound=["lo", "hi"])
    with pytest.raises(
        ArgumentError, match="must include 'lower' and 'upper', got \\['lo', 'hi'\\]"
    ):
        publication_table(other, rows="learner", columns="simulation")
    with pytest.raises(ArgumentError, match="bound variable 'rho_lo' is not in the Dataset"):
        publication_table(
            xr.Dataset({"estimate": ds["rho"]}),
            rows="learner",
            columns="simulation",
            lower="rho_lo",
        )


def test_duplicate_entries_raise():
    ds = rho_dataset()
    stacked = xr.concat([ds, ds], dim="dataset")
    with pytest.raises(
        ArgumentError,
        match=r"`data` has 2 entries for row \('A',\) and column \('Simulation 1',\); "
        r"they differ in \['dataset'\]: every \(rows, columns\) pair must be unique",
    ):
        publication_table(stacked, rows="learner", columns="simulation")
    frame = pd.DataFrame({"r": ["a", "a"], "c": ["b", "b"], "estimate": [1.0, 2.0]})
    with pytest.raises(
        ArgumentError, match=r"2 entries for row \('a',\) and column \('b',\): every"
    ):
        publication_table(frame, rows="r", columns="c")


def test_inference_result_input():
    d = cvstats.designs.conservative_z(60, 6, J=4, M=2, seed=0)
    losses = np.random.default_rng(0).random((2, d.sizes["split"], 60, 2))
    cube = cvstats.from_arrays(losses, design=d, models=["A", "B"], extra_dims=["dataset"])
    res = cvstats.corrected_resampled_t(cube)
    table = publication_table(res, rows="model", columns="dataset", fmt="f", precision=4)
    frame = res.to_frame()
    row = frame[(frame.model == "B") & (frame.dataset == 1)].iloc[0]
    expected = f"{row.estimate:.4f} [{row.ci_lower:.4f}, {row.ci_upper:.4f}]"
    assert cells(table)["B", "1"] == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"rows": "nope"},
            ArgumentError,
            r"name\(s\) \['nope'\] not in `data`; columns: \['q', 's'",
        ),
        ({"rows": []}, ArgumentError, "`rows` must be a name or a non-empty sequence"),
        ({"rows": ("q", "q")}, ArgumentError, "`rows` names a column twice"),
        ({"columns": "q"}, ArgumentError, r"\['q'\] appear in both `rows` and `columns`"),
        ({"columns": "estimate"}, ArgumentError, "cannot use the value column names"),
        ({"estimate": "mean"}, ArgumentError, "`estimate` column 'mean' not in `data`"),
        ({"lower": "lo"}, ArgumentError, "`lower` column 'lo' not in `data`"),
        ({"fmt": "e"}, ArgumentError, r"`fmt` must be one of \['g', 'f'\], got 'e'"),
        ({"precision": 0}, ArgumentError, "`precision` must be >= 1 with fmt='g', got 0"),
        ({"precision": -1, "fmt": "f"}, ArgumentError, "`precision` must be >= 0"),
        ({"precision": 2.5}, CvstatsTypeError, "`precision` must be an int, got float"),
    ],
)
def test_argument_errors(kwargs, error, match):
    frame = pd.DataFrame(
        {"q": ["x"], "s": ["S"], "estimate": [1.0], "ci_lower": [0.0], "ci_upper": [2.0]}
    )
    args = {"rows": "q", "columns": "s", **kwargs}
    with pytest.raises(error, match=match):
        publication_table(frame, **args)


def test_data_errors():
    with pytest.raises(CvstatsTypeError, match="`data` must be a pandas DataFrame, .* got list"):
        publication_table([1, 2], rows="q", columns="s")
    one_bound = pd.DataFrame({"q": ["x"], "s": ["S"], "estimate": [1.0], "ci_lower": [0.0]})
    with pytest.raises(ArgumentError, match="has the bound 'ci_lower' but not the other one"):
        publication_table(one_bound, rows="q", columns="s")
    words = pd.DataFrame({"q": ["x"], "s": ["S"], "estimate": ["high"]})
    with pytest.raises(ArgumentError, match="column 'estimate' must hold numbers"):
        publication_table(words, rows="q", columns="s")
    holes = pd.DataFrame({"q": ["x", None], "s": ["S", "S"], "estimate": [1.0, 2.0]})
    with pytest.raises(ArgumentError, match=r"label column\(s\) \['q'\] hold missing values"):
        publication_table(holes, rows="q", columns="s")


# -- outputs --------------------------------------------------------------------------


def test_latex_booktabs_caption_label_pdflatex_safe(nb_frame):
    caption = "Estimates of n/2 μ and ρ with 95% intervals"
    table = publication_table(
        nb_frame, rows="quantity", columns="simulation", caption=caption, label="tab:nb"
    )
    latex = table.to_latex()
    for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert latex.count(rule) == 1
    assert latex.index("\\toprule") < latex.index("\\midrule") < latex.index("\\bottomrule")
    assert "\\caption{Estimates of n/2 $\\mu$ and $\\rho$ with 95\\% intervals}" in latex
    assert "\\label{tab:nb}" in latex
    assert "\\begin{tabular}{lcc}" in latex
    assert latex.isascii()  # no raw Unicode (Greek or else)
    assert not set(GREEK) & set(latex)
    assert "n/2 $\\mu_{A}$ & 96.9 [93.5, 100.2] & 70.2 [68.0, 72.4] \\\\" in latex
    assert "$\\rho_{A}$(n/2, n/10) & 0.0312 [0.0201, 0.0415] &  \\\\" in latex
    assert "$r_{A-B}$ &  & 0.0300 \\\\" in latex
    assert "n/2 $\\mu_{A-B}$ & $-$1.23 [$-$2.50, 0.03]" in latex  # math minus
    # without caption and label: a bare tabular
    bare = publication_table(nb_frame, rows="quantity", columns="simulation").to_latex()
    assert bare.startswith("\\begin{tabular}") and "\\caption" not in bare


def test_latex_row_label_starting_with_bracket():
    frame = pd.DataFrame({"q": ["[A]", "*B"], "s": ["S", "S"], "estimate": [1.0, 2.0]})
    latex = publication_table(frame, rows="q", columns="s").to_latex()
    assert "\n{}[A] & 1.00 \\\\\n{}*B & 2.00 \\\\\n" in latex


def test_latex_infinite_bound():
    frame = pd.DataFrame(
        {"q": ["x"], "s": ["S"], "estimate": [-0.5], "ci_lower": [-np.inf], "ci_upper": [0.1]}
    )
    latex = publication_table(frame, rows="q", columns="s").to_latex()
    assert "$-$0.500 [$-\\infty$, 0.100]" in latex


@pytest.mark.parametrize(
    ("text", "latex", "html"),
    [
        ("n/2 μ_A", "n/2 $\\mu_{A}$", "n/2 μ<sub>A</sub>"),
        ("ρ_A-B(n/2, n/10)", "$\\rho_{A-B}$(n/2, n/10)", "ρ<sub>A-B</sub>(n/2, n/10)"),
        ("r_A-B", "$r_{A-B}$", "<i>r</i><sub>A-B</sub>"),
        ("n1μ", "n1$\\mu$", "n1μ"),
        ("μ\u0302_J", "$\\hat{\\mu}_{J}$", "μ\u0302<sub>J</sub>"),
        ("σ²", "$\\sigma^{2}$", "σ<sup>2</sup>"),
        ("σ_{n/2}^2", "$\\sigma_{n/2}^{2}$", "σ<sub>n/2</sub><sup>2</sup>"),
        ("ci_lower", "ci\\_lower", "ci_lower"),
        ("50% & $5 < 6", "50\\% \\& \\$5 < 6", "50% &amp; $5 &lt; 6"),
        ("a ± b ≤ ∞", "a $\\pm$ b $\\leq$ $\\infty$", "a ± b ≤ ∞"),
    ],
)
def test_label_rule(text, latex, html):
    assert latex_label(text) == latex
    assert html_label(text) == html


def test_markdown_contents(nb_frame):
    table = publication_table(
        nb_frame, rows="quantity", columns="simulation", caption="Table 2 | sims"
    )
    lines = table.to_markdown().splitlines()
    assert lines[0] == "Table 2 \\| sims"
    assert lines[1] == ""
    assert lines[2] == "| quantity       | Simulation 1            | Simulation 2         |"
    assert lines[3].startswith("|:---")
    assert "| n/2 μ_A        | 96.9 [93.5, 100.2]      | 70.2 [68.0, 72.4]    |" in lines
    assert "| r_A-B          |                         | 0.0300               |" in lines
    assert len(lines) == 4 + 4


def test_html_contents(nb_frame):
    table = publication_table(
        nb_frame, rows="quantity", columns="simulation", caption="Table 2: ρ & μ", label="tab-nb"
    )
    html = table.to_html()
    assert html.startswith('<table class="dataframe" id="tab-nb">\n  <caption>')
    assert "<caption>Table 2: ρ &amp; μ</caption>" in html
    assert "<th>quantity</th>" in html and "<th>Simulation 2</th>" in html
    assert "<td>n/2 μ<sub>A-B</sub></td>" in html
    assert "<td>-1.23 [-2.50, 0.03]</td>" in html
    assert "<td>ρ<sub>A</sub>(n/2, n/10)</td>" in html
    assert html.count("<tr") == 1 + 4  # header row + 4 body rows
    assert table._repr_html_() == html
    text = str(table)
    assert text.startswith("Table 2: ρ & μ\n\nquantity ")
    assert "n/2 μ_A         96.9 [93.5, 100.2]       70.2 [68.0, 72.4]" in text
    assert repr(table) == text
    assert all(line == line.rstrip() for line in text.splitlines())


def test_outputs_are_deterministic(nb_frame):
    def render(frame):
        table = publication_table(
            frame,
            rows="quantity",
            columns="simulation",
            caption="Table 2",
            label="tab:2",
            row_order=["n/2 μ_A", "n/2 μ_A-B", "ρ_A(n/2, n/10)", "r_A-B"],
            column_order=["Simulation 1", "Simulation 2"],
        )
        return table.to_latex(), table.to_markdown(), table.to_html(), str(table)

    first = render(nb_frame)
    assert render(nb_frame.copy()) == first
    assert render(nb_frame.iloc[::-1]) == first  # same cells in another order
    assert render(nb_frame.iloc[[3, 0, 5, 1, 4, 2]].reset_index(drop=True)) == first


def test_frozen():
    table = publication_table(
        pd.DataFrame({"q": ["x"], "s": ["S"], "estimate": [1.0]}), rows="q", columns="s"
    )
    assert isinstance(table, PublicationTable)
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.precision = 5


# -- Nadeau & Bengio layout -------------------------------------------------------------


def test_nadeau_bengio_table_from_mapping(nb_frame):
    d = cvstats.designs.resampled(40, 8, J=4, seed=0)
    losses = np.random.default_rng(1).random((d.sizes["split"], 40, 1))
    res = cvstats.corrected_resampled_t(cvstats.from_arrays(losses, design=d, models=["A"]))
    low, high = res.conf_int()
    table = nadeau_bengio_table(
        {
            "Simulation 1": {
                "n/2 μ_A": (96.86, 93.53, 100.17),
                "n/2 μ_A-B": (-1.234, -2.5, 0.031),
                "ρ_A(n/2, n/10)": (0.0312, 0.0201, 0.0415),
                "r_A-B": None,
            },
            "Simulation 2": {
                "n/2 μ_A": (70.2, 68.0, 72.4),
                "n/2 μ_A-B": (0.52, 0.11, 0.93),
                "r_A-B": 0.03,
                "n1μ_A (one data set)": res,
            },
        },
        caption="Table 2",
        label="tab:nb2",
        quantities=["n/2 μ_A", "n/2 μ_A-B", "ρ_A(n/2, n/10)"],
    )
    assert table.rows == ("quantity",) and table.columns == ("simulation",)
    shown = cells(table)
    assert shown["r_A-B", "Simulation 1"] == ""
    assert shown["r_A-B", "Simulation 2"] == "0.0300"
    frame = table.to_frame().set_index(["quantity", "simulation"])
    got = frame.loc[("n1μ_A (one data set)", "Simulation 2")]
    np.testing.assert_allclose(
        got.to_numpy(dtype=float),
        [res.estimate.item(), low.item(), high.item()],
    )
    # the same numbers as a tidy frame give the same table
    again = nadeau_bengio_table(table.to_frame(), caption="Table 2", label="tab:nb2")
    assert again.to_latex() == table.to_latex()
    # the generic function with the same arguments
    generic = publication_table(
        nb_frame, rows="quantity", columns="simulation", caption="Table 2", label="tab:nb2"
    )
    sub = nadeau_bengio_table(nb_frame, caption="Table 2", label="tab:nb2")
    assert sub.to_html() == generic.to_html()


def test_nadeau_bengio_table_errors():
    with pytest.raises(CvstatsTypeError, match=r"`entries` must be a mapping"):
        nadeau_bengio_table([("a", 1.0)])
    with pytest.raises(CvstatsTypeError, match=r"`entries`\['S'\] must be a mapping"):
        nadeau_bengio_table({"S": 1.0})
    with pytest.raises(
        ArgumentError, match=r"entry \['S'\]\['q'\] must be .* sequence of length 2"
    ):
        nadeau_bengio_table({"S": {"q": (1.0, 2.0)}})
    with pytest.raises(ArgumentError, match=r"entry \['S'\]\['q'\] must be .* got 'big'"):
        nadeau_bengio_table({"S": {"q": "big"}})
    d = cvstats.designs.resampled(40, 8, J=4, seed=0)
    losses = np.random.default_rng(1).random((d.sizes["split"], 40, 2))
    res = cvstats.corrected_resampled_t(cvstats.from_arrays(losses, design=d, models=["A", "B"]))
    with pytest.raises(ArgumentError, match=r"InferenceResult over dims \{'model': 2\}"):
        nadeau_bengio_table({"S": {"q": res}})


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_compiles_with_pdflatex(tmp_path, multi_frame, nb_frame):
    tables = [
        publication_table(
            nb_frame,
            rows="quantity",
            columns="simulation",
            caption="Table 2: μ, ρ & r",
            label="t1",
        ),
        publication_table(multi_frame, rows=("quantity", "configuration"), columns="simulation"),
        publication_table(multi_frame, rows="quantity", columns=("configuration", "simulation")),
    ]
    body = "\n\n".join(t.to_latex() for t in tables)
    source = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        f"{body}\n\\end{{document}}\n"
    )
    (tmp_path / "table.tex").write_text(source, encoding="utf-8")
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "table.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert (tmp_path / "table.pdf").exists()
