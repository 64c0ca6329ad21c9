"""Execute every notebook in notebooks/ with small parameters (CVSTATS_SMALL=1)."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("CVSTATS_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors
    if path.stem == "tuned_models":
        # the notebook's displays are the HTML ones: a result, the cube's description and a
        # verdict each render as HTML in the executed outputs
        html = [
            "".join(out.get("data", {}).get("text/html", ""))
            for cell in nb.cells
            if cell.cell_type == "code"
            for out in cell.get("outputs", [])
        ]
        assert any("cvstats-display" in h for h in html), "no result HTML display"
        assert any("cvstats-verdict" in h for h in html), "no verdict HTML display"
        assert sum(bool(h) for h in html) >= 4


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"
    assert os.path.isdir(ROOT / "notebooks")
