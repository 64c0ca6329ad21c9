"""The project stands on its own: no reference to a file outside the repository.

Docstrings, docs, notebooks, CLI help and tests cite the papers (author, year,
equation or section) and the project's own pages, ``docs/theory.md`` (§1–§9)
and ``docs/studies.md`` (its "Designs of the studies", §A–§F). This test reads
every tracked text file and fails on

* any path into a directory outside the repository (``../shared``, a ``spec/``
  folder) or a page that does not exist here (the working papers' names);
* ``theory.md`` outside ``docs/`` not written ``docs/theory.md``;
* a section number that the page cited does not have;
* "the spec" as a source (say which paper or page instead).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

# the names are assembled so that this file does not match itself
_OUTSIDE = re.compile("|".join([r"\.\./shared", "shared/" + "spec", "simul" + r"ations\.md"]))
_SPEC = re.compile(r"\b(?:the spec|spec's|spec formulas?|of the spec)\b", re.IGNORECASE)
_THEORY = re.compile(
    r"(?P<path>[\w./-]*)theory\.md(?P<anchor>#[\w-]*)?(?:\)?\s*§\s*(?P<sec>\d+))?"
)
_STUDIES = re.compile(r"studies\.md\)?\s*§\s*(?P<sec>[A-F])\b")
_TEXT = {".py", ".md", ".ipynb", ".toml", ".txt", ".cfg", ".rst", ".yml", ".yaml", ""}


def _tracked() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [p for p in out if Path(p).suffix in _TEXT and p != THIS and (ROOT / p).is_file()]


def _sections(page: str, pattern: str) -> set[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return set(re.findall(pattern, text, re.M))


def test_the_project_pages_exist():
    assert {str(n) for n in range(1, 10)} <= _sections("theory.md", r"^## (\d+)\. ")
    assert set("ABCDEF") <= _sections("studies.md", r"^### ([A-F])\. ")


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return {p: (ROOT / p).read_text(encoding="utf-8", errors="replace") for p in _tracked()}


def _where(path: str, text: str, start: int) -> str:
    line = text.count("\n", 0, start) + 1
    return f"{path}:{line}: {text.splitlines()[line - 1].strip()[:120]}"


def test_no_reference_outside_the_repository(files):
    bad = [_where(p, t, m.start()) for p, t in files.items() for m in _OUTSIDE.finditer(t)]
    assert not bad, "references to files outside the repository:\n" + "\n".join(bad)


def test_theory_is_cited_as_the_project_page(files):
    theory = _sections("theory.md", r"^## (\d+)\. ")
    bad = []
    for path, text in files.items():
        in_docs = path.startswith("docs/")
        for m in _THEORY.finditer(text):
            prefix = m["path"]
            ok_path = (
                prefix.endswith("docs/")
                or (in_docs and prefix in ("", "./"))
                or (path.startswith("notebooks/") and prefix.endswith("../docs/"))
            )
            if not ok_path or (m["sec"] and m["sec"] not in theory):
                bad.append(_where(path, text, m.start()))
    assert not bad, "cite docs/theory.md with an existing section:\n" + "\n".join(bad)


def test_studies_sections_exist(files):
    sections = _sections("studies.md", r"^### ([A-F])\. ")
    bad = [
        _where(p, t, m.start())
        for p, t in files.items()
        for m in _STUDIES.finditer(t)
        if m["sec"] not in sections
    ]
    assert not bad, "\n".join(bad)


def test_no_unnamed_spec_as_a_source(files):
    bad = [_where(p, t, m.start()) for p, t in files.items() for m in _SPEC.finditer(t)]
    assert not bad, "name the paper or docs/theory.md instead of 'the spec':\n" + "\n".join(bad)
