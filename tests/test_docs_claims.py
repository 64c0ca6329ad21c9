"""What the docs say about the tests names tests that exist (issue 26, point 9).

A page that says "``tests/x.py`` checks ..." or cites a test by name must point at a file and a
test function that exist, so that a reader can find the check (the numbers themselves are checked
by the tests the pages name). Scanned: README.md, docs/*.md and the markdown cells of
notebooks/*.ipynb.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

TEST_PATH = re.compile(r"\btests/[A-Za-z0-9_./-]*[A-Za-z0-9_]")
TEST_NAME = re.compile(r"`(test_[A-Za-z0-9_]+)(?:\[[^\]`]*\])?`")
# keys of scikit-learn's cross_validate and cv_results_ that look like test names
SKLEARN_KEYS = re.compile(r"test_(?:score|idx|indices)$")


def _texts() -> list[tuple[str, str]]:
    texts = [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in PAGES]
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        texts.append((path.relative_to(ROOT).as_posix(), markdown))
    return texts


def _defined_tests() -> set[str]:
    names = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        names.update(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    return names


def test_cited_test_paths_exist():
    missing = [
        f"{page}: {path}"
        for page, text in _texts()
        for path in sorted(set(TEST_PATH.findall(text)))
        if not (ROOT / path).exists()
    ]
    assert not missing, "pages cite test files that do not exist:\n" + "\n".join(missing)


def test_cited_test_names_exist():
    defined = _defined_tests()
    missing = [
        f"{page}: {name}"
        for page, text in _texts()
        for name in sorted(set(TEST_NAME.findall(text)))
        if name not in defined and not SKLEARN_KEYS.match(name)
    ]
    assert not missing, "pages cite tests that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("`tests/across/test_ranks.py` checks", ["tests/across/test_ranks.py"]),
        ("(`tests/kernels/`).", ["tests/kernels"]),
        ("see tests/test_notebooks.py.", ["tests/test_notebooks.py"]),
    ],
)
def test_path_pattern(text, found):
    assert TEST_PATH.findall(text) == found


def test_sklearn_keys_are_not_test_names():
    assert SKLEARN_KEYS.match("test_score") and SKLEARN_KEYS.match("test_idx")
    assert not SKLEARN_KEYS.match("test_demsar_worked_example")
