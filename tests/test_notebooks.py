"""The notebooks run, and their committed outputs are what they produce.

Every notebook in ``notebooks/`` is committed **with its outputs**, executed with the small
parameters of the test suite (``CVSTATS_SMALL=1``), so that a reader sees the results where
people read notebooks (GitHub, nbviewer). The suite executes each notebook once
(:func:`execute`, in a fresh temporary directory) and

* fails on an error output;
* fails when a code cell's text output differs from the committed one (:func:`text_output`,
  compared by :func:`same_text` after :func:`normalise`): the failure shows a diff of the first
  mismatching cell and the command that rewrites the committed outputs.

Refresh the committed outputs after a change that alters them (all notebooks, or some by name)::

    python tests/test_notebooks.py --refresh
    python tests/test_notebooks.py --refresh quickstart tuned_models

and check them without pytest (this executes again: run it after a refresh to see that the
outputs are deterministic)::

    python tests/test_notebooks.py --check

What is compared: the standard output streams and the ``text/plain`` form of results and
displays, cell by cell. Not compared: images, HTML, standard error (warnings, progress bars),
execution counts and timings.

What is committed (:func:`committed`): the executed notebook without its timing metadata,
without standard error (it holds the environment's warnings, with its paths) and without
``image/*`` outputs (a display keeps its other forms, e.g. ``<IPython.core.display.Image
object>``): images are regenerated on every run, are not compared, and one figure alone weighs
hundreds of kilobytes, which every refresh would rewrite; run a notebook to see its figures.
(Under ``MPLBACKEND=Agg`` matplotlib figures are not displayed in the outputs at all.)
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import difflib
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REFRESH_COMMAND = "python tests/test_notebooks.py --refresh"
TIMEOUT = 600  # seconds per cell (generous: the machine may be busy)
# the environment of the kernel: small parameters, no display, one BLAS thread (sums in a fixed
# order, so that outputs do not depend on the number of cores)
ENVIRONMENT = {
    "CVSTATS_SMALL": "1",
    "MPLBACKEND": "Agg",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}

# The one normaliser of volatile text, applied to both sides before comparing (``normalise``).
# Each pattern is replaced by a fixed placeholder.
VOLATILE = [
    # memory addresses in object reprs: <Axes at 0x7f3a...>
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "0x?"),
    # tqdm progress bars: " 40%|████      | 2/5 [00:01<00:02,  1.52it/s]"
    (re.compile(r"\d+%\|[^|\n]*\|[^\n\[]*\[[^\]\n]*\]"), "<progress>"),
    # durations: "1.2 s", "350ms", "0:00:01.5", "took 3.1 seconds"
    (re.compile(r"\b\d+:\d\d:\d\d(?:\.\d+)?\b"), "<time>"),
    (
        re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|µs|us|ns|sec|secs|seconds?|min|minutes?)\b"),
        "<time>",
    ),
]
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


# --------------------------------------------------------------------------- executing


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables (inherited by the kernel) and restore them afterwards."""
    old = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def execute(path: Path, workdir: Path) -> Any:
    """Execute the notebook at ``path`` with :data:`ENVIRONMENT`, in ``workdir``.

    Returns the executed ``nbformat`` notebook (the file is not changed). Files the notebook
    writes land in ``workdir``.
    """
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    with _environment(ENVIRONMENT):
        client.execute()
    return nb


def errors(nb: Any) -> list[str]:
    """The error outputs of ``nb``, as ``"cell i: Name: message"`` lines."""
    return [
        f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]


def _replace_workdir(text: str, workdir: Path | str | None) -> str:
    if workdir is None:
        return text
    for form in sorted({str(workdir), os.path.realpath(workdir)}, key=len, reverse=True):
        text = text.replace(form, "<workdir>")
    return text


def committed(nb: Any, workdir: Path | str | None = None) -> Any:
    """The form of an executed notebook that is committed (see the module docstring).

    ``workdir``, the directory the notebook ran in, is written ``<workdir>`` in the outputs.
    """
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    if "language_info" in nb.metadata:  # drop the interpreter's version: not ours to record
        nb.metadata["language_info"] = {"name": nb.metadata["language_info"].get("name")}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                continue
            if "data" in out:
                for mime in [m for m in out["data"] if m.startswith("image/")]:
                    del out["data"][mime]
                    out.get("metadata", {}).pop(mime, None)
                if not out["data"]:
                    continue
                for mime, value in out["data"].items():
                    if isinstance(value, str):
                        out["data"][mime] = _replace_workdir(value, workdir)
            if "text" in out:
                out["text"] = _replace_workdir(out["text"], workdir)
            outputs.append(out)
        cell.outputs = outputs
    return nb


def refresh(paths: list[Path]) -> None:
    """Execute each notebook and write it back with its outputs (:func:`committed`)."""
    import nbformat

    for path in paths:
        with tempfile.TemporaryDirectory() as workdir:
            nb = execute(path, Path(workdir))
        if errors(nb):
            raise SystemExit(f"{path.name}: not written, it raised\n" + "\n".join(errors(nb)))
        nbformat.write(committed(nb, workdir), path)
        print(f"refreshed {path.relative_to(ROOT)}")


# --------------------------------------------------------------------------- comparing


def text_output(cell: Any) -> str:
    """What a code cell shows as text: its stdout and the ``text/plain`` of its results."""
    parts = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
        elif kind in ("execute_result", "display_data"):
            text = out.get("data", {}).get("text/plain")
            if text is not None:
                parts.append(text if text.endswith("\n") else text + "\n")
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}\n")
    return "".join(parts)


def normalise(text: str, workdir: Path | str | None = None) -> str:
    """Replace the volatile parts of ``text`` by placeholders (the one normaliser).

    Volatile: the working directory of the run (``<workdir>``), memory addresses (``0x?``),
    progress bars (``<progress>``) and durations (``<time>``); see :data:`VOLATILE`.
    Trailing spaces are dropped.
    """
    text = _replace_workdir(text, workdir)
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return "\n".join(line.rstrip() for line in text.splitlines())


def _last_place(number: str) -> float:
    """One unit in the last printed place: ``"0.0125"`` -> 1e-4, ``"3.2e-05"`` -> 1e-6."""
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def _same_number(a: str, b: str) -> bool:
    if a == b:
        return True
    if not all(any(c in x for c in ".eE") for x in (a, b)):
        return False  # integers (counts, sizes, seeds) must be equal, and stay integers
    fa, fb = float(a), float(b)
    # a value may print one unit apart in its last place across platforms (the digit after it
    # differs in the 16th significant digit): allow that much, no more
    return math.isclose(
        fa, fb, rel_tol=0.0, abs_tol=1.0000001 * max(_last_place(a), _last_place(b))
    )


def same_text(expected: str, actual: str) -> bool:
    """Whether two normalised texts show the same thing.

    Words and punctuation must be equal, runs of whitespace count as one space (a table whose
    column widens by a digit is the same table), integers must be equal, and a decimal number
    may differ by one unit in its last printed place (so a last digit that rounds differently on
    another platform is not a change).
    """
    ea, eb = " ".join(expected.split()), " ".join(actual.split())
    if ea == eb:
        return True
    words_a, words_b = NUMBER.split(ea), NUMBER.split(eb)
    numbers_a, numbers_b = NUMBER.findall(ea), NUMBER.findall(eb)
    return (
        words_a == words_b
        and len(numbers_a) == len(numbers_b)
        and all(_same_number(a, b) for a, b in zip(numbers_a, numbers_b, strict=True))
    )


def first_mismatch(
    expected_nb: Any, actual_nb: Any, workdir: Path | str | None = None
) -> str | None:
    """A report of the first code cell whose text output differs, or ``None`` if none does.

    ``expected_nb`` is the committed notebook, ``actual_nb`` the one just executed in
    ``workdir``; both must have the same cells (the executed one is made from the file).
    """
    pairs = [
        (i, old, new)
        for i, (old, new) in enumerate(zip(expected_nb.cells, actual_nb.cells, strict=True))
        if new.cell_type == "code"
    ]
    for i, old, new in pairs:
        expected = normalise(text_output(old), None)
        actual = normalise(text_output(new), workdir)
        if same_text(expected, actual):
            continue
        first_line = new.source.strip().splitlines()[0] if new.source.strip() else ""
        diff = "\n".join(
            difflib.unified_diff(
                expected.splitlines(),
                actual.splitlines(),
                fromfile="committed",
                tofile="produced now",
                lineterm="",
            )
        )
        return f"code cell {i} ({first_line!r}), text output (normalised):\n{diff}"
    return None


def check(
    path: Path, executed: Any, workdir: Path | str | None, committed_nb: Any = None
) -> str | None:
    """The failure message for notebook ``path`` executed as ``executed``, or ``None``.

    ``committed_nb`` is the committed notebook (default: read from ``path``).
    """
    import nbformat

    if committed_nb is None:
        committed_nb = nbformat.read(path, as_version=4)
    mismatch = first_mismatch(committed_nb, executed, workdir)
    if mismatch is None:
        return None
    return (
        f"notebooks/{path.name}: the committed outputs are not what the notebook produces now.\n"
        f"{mismatch}\n"
        f"If the change is intended, refresh the committed outputs:\n"
        f"    {REFRESH_COMMAND} {path.stem}"
    )


# --------------------------------------------------------------------------- tests


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_matches_its_committed_outputs(path, tmp_path):
    pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    nb = execute(path, tmp_path)
    assert not errors(nb), "\n".join(errors(nb))
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
    message = check(path, nb, tmp_path)
    if message is not None:
        pytest.fail(message, pytrace=False)


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"
    assert os.path.isdir(ROOT / "notebooks")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_with_its_outputs(path):
    # cheap (no execution): the file is one top-to-bottom run, in the committed form
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    counts = [cell.get("execution_count") for cell in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"notebooks/{path.name} is not committed as one executed run (execution counts "
        f"{counts}); write its outputs with: {REFRESH_COMMAND} {path.stem}"
    )
    assert any(cell.get("outputs") for cell in code)
    assert committed(nb) == nb, f"run: {REFRESH_COMMAND} {path.stem}"


def _notebook(*outputs: list[dict[str, Any]]) -> Any:
    """A notebook of one code cell per list of outputs."""
    nbformat = pytest.importorskip("nbformat")
    v4 = nbformat.v4
    nb = v4.new_notebook()
    for i, outs in enumerate(outputs):
        cell = v4.new_code_cell(f"step_{i}()", execution_count=i + 1)
        cell.outputs = [nbformat.from_dict(out) for out in outs]
        nb.cells.append(cell)
    return nb


def _stdout(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text}


def _result(text: str, **more: str) -> dict[str, Any]:
    return {
        "output_type": "execute_result",
        "execution_count": 1,
        "metadata": {},
        "data": {"text/plain": text, **more},
    }


def test_normalise_replaces_volatile_parts(tmp_path):
    text = (
        f"saved to {tmp_path}/cube.nc\n"
        "<Axes: > at 0x7f3a2c1d9e50   \n"
        " 40%|████      | 2/5 [00:01<00:02,  1.52it/s]\n"
        "took 1.25 s, then 350ms, then 0:00:03.5\n"
        "p = 0.017 (12 splits, 3 seeds)\n"
    )
    assert normalise(text, tmp_path).splitlines() == [
        "saved to <workdir>/cube.nc",
        "<Axes: > at 0x?",
        " <progress>",
        "took <time>, then <time>, then <time>",
        "p = 0.017 (12 splits, 3 seeds)",
    ]


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ("a   0.125\nb  1.5", "a 0.125 b 1.5", True),  # whitespace only (a realigned table)
        ("p = 0.0171", "p = 0.0172", True),  # one unit in the last printed place
        ("p = 0.0171", "p = 0.0173", False),  # two units
        ("d = 3.2e-05", "d = 3.3e-05", True),
        ("d = 3.2e-05", "d = 3.4e-05", False),
        ("-0.00", "0.00", True),
        ("12 splits", "13 splits", False),  # integers are exact
        ("12 splits", "12.0 splits", False),
        ("worst: aode (3.53)", "worst: nbc (3.53)", False),  # words are exact
        ("a 1.5", "a 1.5 2.5", False),
    ],
)
def test_same_text(expected, actual, same):
    assert same_text(expected, actual) is same


def test_a_changed_output_fails_with_a_diff_and_the_refresh_command(tmp_path):
    old = _notebook(
        [_stdout("unchanged\n")],
        [_result("   estimate  pvalue\n0     0.25   0.031")],
        [_stdout("later\n")],
    )
    new = _notebook(
        [_stdout("unchanged\n")],
        [_result("   estimate  pvalue\n0     0.25   0.047")],
        [_stdout("also changed\n")],
    )
    message = check(ROOT / "notebooks" / "demo.ipynb", new, tmp_path, committed_nb=old)
    assert message is not None
    assert message.startswith("notebooks/demo.ipynb: the committed outputs are not")
    assert "code cell 1 ('step_1()')" in message  # the first mismatching cell only
    assert "-0     0.25   0.031" in message and "+0     0.25   0.047" in message
    assert "also changed" not in message
    assert message.rstrip().endswith(f"{REFRESH_COMMAND} demo")


def test_volatile_and_non_text_changes_pass(tmp_path):
    png = {"image/png": "iVBORw0KGgo="}
    old = _notebook(
        [_result("<Axes at 0x7f0000000001>", **png)],
        [_stdout("wrote <workdir>/x.nc in 2.5 s\n")],  # as a refresh commits it
        [_result("a", **{"text/html": "<b id='u1'>a</b>"})],
    )
    new = _notebook(
        [_result("<Axes at 0x7f00000000ff>", **{"image/png": "other"})],
        [
            _stdout(f"wrote {tmp_path}/x.nc in 0.3 s\n"),
            {"output_type": "stream", "name": "stderr", "text": "warn\n"},
        ],
        [_result("a", **{"text/html": "<b id='u2'>a</b>"})],
    )
    assert check(ROOT / "notebooks" / "demo.ipynb", new, tmp_path, committed_nb=old) is None


def test_committed_form_drops_images_stderr_and_timings():
    nb = _notebook(
        [
            {"output_type": "stream", "name": "stderr", "text": "/venv/tqdm/auto.py: Warning\n"},
            _result("<IPython.core.display.Image object>", **{"image/png": "iVBORw0KGgo="}),
            {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBO="}},
            _stdout("kept\n"),
        ]
    )
    nb.cells[0].metadata["execution"] = {"iopub.status.busy": "2026-11-27T23:00:00Z"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.9"}
    out = committed(nb)
    assert [o.output_type for o in out.cells[0].outputs] == ["execute_result", "stream"]
    assert out.cells[0].outputs[0].data == {"text/plain": "<IPython.core.display.Image object>"}
    assert "execution" not in out.cells[0].metadata
    assert out.metadata["language_info"] == {"name": "python"}
    assert committed(out) == out
    assert "image/png" in nb.cells[0].outputs[1].data  # the input is not changed


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """``python tests/test_notebooks.py --refresh|--check [NAME ...]``."""
    parser = argparse.ArgumentParser(
        prog="python tests/test_notebooks.py",
        description="Rewrite (--refresh) or check (--check) the committed notebook outputs.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--refresh", action="store_true", help="execute and write the outputs")
    action.add_argument("--check", action="store_true", help="execute and compare the outputs")
    parser.add_argument("names", nargs="*", help="notebook names (stems); default: all")
    args = parser.parse_args(argv)
    by_name = {p.stem: p for p in NOTEBOOKS}
    unknown = [n for n in args.names if Path(n).stem not in by_name]
    if unknown:
        parser.error(f"no notebook {unknown} in notebooks/; there are {sorted(by_name)}")
    paths = [by_name[Path(n).stem] for n in args.names] or NOTEBOOKS
    if args.refresh:
        refresh(paths)
        return 0
    failed = 0
    for path in paths:
        with tempfile.TemporaryDirectory() as workdir:
            nb = execute(path, Path(workdir))
            message = "\n".join(errors(nb)) or check(path, nb, workdir)
        print(f"{path.stem}: {'ok' if message is None else 'FAILED'}")
        if message is not None:
            print(message)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
