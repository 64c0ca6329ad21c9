import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

import cvstats  # noqa: E402
from cvstats import ArgumentError, FormulaError, designs  # noqa: E402
from cvstats.cli import main  # noqa: E402
from cvstats.results import FRAME_COLUMNS  # noqa: E402
from cvstats.studies import METHOD_NAMES  # noqa: E402


@pytest.fixture(scope="module")
def cube():
    d = designs.nadeau_bengio(100, 10, J=5, M=3, R=3, seed=4)
    rng = np.random.default_rng(4)
    losses = rng.random((d.sizes["split"], 100, 3)) + np.array([0.0, 0.1, 0.3])
    return cvstats.from_arrays(losses, design=d, models=["ols", "ridge", "tree"], name="loss")


#: compare's default methods on a Nadeau–Bengio cube: every method of docs/theory.md §4
#: (the studies' list, kept apart from the registry compare reads) but the hold-out t
ALL_LEARNER = [m for m in METHOD_NAMES if m != "holdout_t"]


def test_compare_rows_equal_direct_method_calls(cube):
    table = cvstats.compare("loss ~ model", cube)
    frame = table.to_frame()
    assert list(frame.columns) == ["contrast", *FRAME_COLUMNS, "note"]
    assert list(table.results) == ALL_LEARNER
    assert len(frame) == 3 * len(ALL_LEARNER)
    # contrasts keep the formula's order, methods the table's order
    assert list(pd.unique(frame["contrast"])) == ["Intercept", "model[T.ridge]", "model[T.tree]"]
    assert frame["method"].tolist()[: len(ALL_LEARNER)] == ALL_LEARNER
    # a row equals the method run on the contrast directly (contrast = tree - ols)
    diff = (cube.sel(model="tree") - cube.sel(model="ols")).expand_dims(model=["d"], axis=-1)
    direct = cvstats.conservative_z(diff)
    row = frame[(frame.contrast == "model[T.tree]") & (frame.method == "conservative_z")]
    np.testing.assert_allclose(row["statistic"], direct.statistic.values.ravel(), rtol=1e-12)
    np.testing.assert_allclose(row["ci_upper"], direct.conf_int().high.values.ravel(), rtol=1e-12)


def test_learner_target_flags_liberal_methods(cube):
    frame = cvstats.compare("loss ~ model", cube).to_frame()
    flagged = set(frame.loc[frame.note == "liberal for the learner", "method"])
    assert flagged == {"resampled_t", "bootstrap_t"}
    text = cvstats.compare("loss ~ model", cube).summary(full=True).as_text()
    assert "Note: resampled_t, bootstrap_t: liberal for the learner." in text


def test_model_target_restricts_to_conditional_methods(cube):
    table = cvstats.compare("loss ~ model", cube, target="model")
    assert list(table.results) == ["resampled_t", "bootstrap_t"]
    assert (table.to_frame().note == "conditional error of the models at hand").all()
    with pytest.raises(ArgumentError, match=r"\['conservative_z'\] infer the unconditional"):
        cvstats.compare("loss ~ model", cube, target="model", methods=["conservative_z"])


def test_methods_by_name_and_errors(cube):
    table = cvstats.compare("loss ~ 0 + model", cube, methods=["corrected_resampled_t"])
    assert table.to_frame().contrast.tolist() == ["model[ols]", "model[ridge]", "model[tree]"]
    with pytest.raises(ArgumentError, match="unknown method"):
        cvstats.compare("loss ~ model", cube, methods=["t_test"])
    with pytest.raises(ArgumentError, match="`target` must be one of"):
        cvstats.compare("loss ~ model", cube, target="both")
    with pytest.raises(FormulaError):
        cvstats.compare("loss ~ learner", cube)
    with pytest.raises(ArgumentError, match="two-sided only"):
        cvstats.compare("loss ~ model", cube, methods=["combined_5x2cv_f"], alternative="greater")


def test_pairwise_and_dataset_of_cubes(cube):
    table = cvstats.compare(cvstats.pairwise(cube), methods=["corrected_resampled_t"])
    assert table.to_frame().contrast.tolist() == ["ols - ridge", "ols - tree", "ridge - tree"]
    ds = xr.Dataset({"loss": cube, "other": cube * 2})
    a = cvstats.compare("other ~ model", ds, methods=["resampled_t"]).to_frame()
    b = cvstats.compare("loss ~ model", cube, methods=["resampled_t"]).to_frame()
    np.testing.assert_allclose(a.estimate, 2 * b.estimate, rtol=1e-12)
    np.testing.assert_allclose(a.statistic, b.statistic, rtol=1e-12)


def test_extra_dims_are_rows(cube):
    stacked = xr.concat([cube, cube + 0.5], dim="dataset").drop_vars("in_train")
    frame = cvstats.compare("loss ~ model", stacked, methods=["resampled_t"]).to_frame()
    assert list(frame.columns[:2]) == ["contrast", "dataset"]
    assert len(frame) == 3 * 2


def test_exports(cube):
    table = cvstats.compare("loss ~ model", cube)
    latex = table.to_latex()
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    assert "corrected\\_resampled\\_t" in latex  # escaped
    assert "μ" not in latex and "$\\mu$" in latex  # pdflatex-safe
    assert latex.isascii(), sorted({c for c in latex if not c.isascii()})
    # pairwise contrasts are labelled "a − b" (U+2212), which pdflatex rejects: set as math
    pairs = cvstats.compare(cvstats.pairwise(cube)).to_latex()
    assert pairs.isascii() and " $-$ " in pairs, sorted({c for c in pairs if not c.isascii()})
    assert "loss \\textasciitilde{} model" in latex
    md = table.to_markdown()
    assert md.splitlines()[0].startswith("loss ~ model: 9 methods")
    assert "| contrast" in md
    html = table.to_html()
    assert "<table" in html and "conservative_z" in html
    assert table.to_frame().equals(table.to_frame())  # deterministic: no timestamps


def test_plot_draws_every_interval(cube):
    table = cvstats.compare("loss ~ model", cube, methods=["resampled_t", "combined_5x2cv_f"])
    ax = table.plot()
    assert len(ax.get_yticklabels()) == 6
    # one interval line per finite interval (3 resampled t rows); F has none
    assert len(ax.collections[0].get_segments()) == 3
    matplotlib.pyplot.close(ax.figure)


def test_mcnemar_in_compare_uses_pairwise_contrasts():
    d = designs.holdout(200, 60, seed=0)
    rng = np.random.default_rng(0)
    losses = (rng.random((1, 200, 3)) < [0.1, 0.2, 0.3]).astype(float)
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b", "c"], name="zero_one")
    table = cvstats.compare(
        "zero_one ~ model", cube, methods=["holdout_t", "mcnemar"], target="model"
    )
    mc = table.results["mcnemar"]
    assert mc.estimate.contrast.values.tolist() == ["model[T.b]", "model[T.c]"]
    direct = cvstats.mcnemar(cube, models=["b", "a"])
    np.testing.assert_allclose(float(mc.pvalue.sel(contrast="model[T.b]")), direct.pvalue)


def test_cli_table_formats(cube, tmp_path, capsys):
    path = tmp_path / "cube.nc"
    cvstats.save(cube, path)
    for fmt, marker in [
        ("text", "Comparisons: loss ~ model"),
        ("latex", "\\toprule"),
        ("markdown", "| contrast"),
        ("html", "<table"),
    ]:
        assert main(["table", str(path), "--format", fmt, "--methods", "conservative_z"]) == 0
        assert marker in capsys.readouterr().out
    assert main(["table", str(path), "--formula", "loss ~ 0 + model", "--target", "model"]) == 0
    out = capsys.readouterr().out
    assert "No comparison between models" in out and "conservative_z" not in out
    assert "tree" in out and "model[tree]" not in out  # labels people read


def test_caption_counts_methods_in_words(cube):
    one = cvstats.compare("loss ~ model", cube, methods=["resampled_t"])
    two = cvstats.compare("loss ~ model", cube, methods=["resampled_t", "corrected_resampled_t"])
    assert "loss ~ model: 1 method, H0" in one.to_markdown()
    assert "loss ~ model: 2 methods, H0" in two.to_markdown()


def test_summary_repr_is_its_text(cube):
    # a notebook's text/plain view: the table itself, not statsmodels' class name in quotes
    smry = cvstats.compare("loss ~ model", cube).summary()
    assert repr(smry) == smry.as_text()
    assert not repr(smry).startswith("<class")
