"""Every Python block of README.md and docs/*.md runs as written (issue 15, point 5).

Each page's Python blocks run in order, in one namespace, in a subprocess (``sys.executable``,
``MPLBACKEND=Agg``, one BLAS thread) whose working directory is a fresh temporary
directory; then the page runs a second time, in a new subprocess, in the same directory: a
user who runs a page twice must not be stopped, e.g. by a file the first run saved. Pages
cannot leak state into each other or into pytest. A failure names the page and the line of
the failing block's first line of code; tracebacks point at lines of the page.

What runs:

* fenced blocks whose info string is ``python``, ``py``, ``python3`` or ``pycon``;
* a ``pycon`` block, or a Python block whose first line starts with ``>>>``, is a doctest:
  its statements run in the page's namespace and its shown output must match
  (``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``, as for the package's own doctests);
* ``bash``, ``console``, ``text``, ``latex``, MyST directives (``{eval-rst}`` ...) and any
  other fence are not run.

A block that is genuinely too expensive for the suite (a full simulation study, a cluster)
is skipped by an HTML comment on the line right before its fence, with a non-empty reason::

    <!-- docs-test: skip (re-runs the 1000-dataset study: minutes) -->

The parser refuses a marker without a reason or not right before a Python fence. Keep
such blocks few: rather make a block cheap as written.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the README and every page of docs/ (studies.md is listed even if it is missing: pending)
PAGES = sorted(
    {ROOT / "README.md", ROOT / "docs" / "studies.md"} | set((ROOT / "docs").glob("*.md"))
)
RUN_LANGUAGES = {"python", "py", "python3", "pycon"}
DOCTEST_LANGUAGES = {"pycon"}
TIMEOUT = 600  # seconds per run of a page (generous: the machine may be busy)

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*docs-test:(?P<body>.*?)-->\s*$")
SKIP = re.compile(r"^\s*skip\s*\((?P<reason>.*)\)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str  # path relative to the repository root
    line: int  # line number (1-based) of the block's first line of code
    language: str
    source: str
    skip: str | None  # reason of a docs-test skip marker, None if the block runs
    doctest: bool


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def parse_page(path: Path, page: str | None = None) -> list[Block]:
    """Fenced code blocks of ``path``, in order; raise ``ValueError`` on a bad marker."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = _relative(path) if page is None else page
    blocks = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            if MARKER.match(lines[i]) and not (i + 1 < len(lines) and FENCE.match(lines[i + 1])):
                raise ValueError(f"{page}:{i + 1}: a docs-test marker must precede a fence")
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"].expandtabs())
        language = (opening["info"].strip().split() or [""])[0].lower()
        start = end = i + 1
        while end < len(lines):
            closing = FENCE.match(lines[end])
            if (
                closing
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"].strip()
            ):
                break
            end += 1
        body = [
            line[indent:] if line[:indent].strip() == "" else line for line in lines[start:end]
        ]
        source = textwrap.dedent("\n".join(body)) + "\n"
        skip = None
        marker = MARKER.match(lines[i - 1]) if i > 0 else None
        if marker:
            found = SKIP.match(marker["body"])
            if found is None or not found["reason"].strip():
                raise ValueError(
                    f"{page}:{i}: a docs-test marker reads "
                    f"'<!-- docs-test: skip (reason) -->' with a non-empty reason"
                )
            if language not in RUN_LANGUAGES:
                raise ValueError(f"{page}:{i}: a docs-test skip marker on a {language!r} block")
            skip = found["reason"].strip()
        first_code = source.lstrip("\n").split("\n", 1)[0].lstrip()
        blocks.append(
            Block(
                page=page,
                line=start + 1,
                language=language,
                source=source,
                skip=skip,
                doctest=language in DOCTEST_LANGUAGES or first_code.startswith(">>>"),
            )
        )
        i = end + 1
    return blocks


def python_blocks(path: Path, page: str | None = None) -> list[Block]:
    return [b for b in parse_page(path, page) if b.language in RUN_LANGUAGES]


# Runs in the subprocess: executes the blocks (JSON) in one namespace, compiled with the
# page's name and line numbers so that tracebacks point into the page; stops at the first
# failing block. Prints the time of each block (wall, and CPU of this process and of the
# children it has reaped).
RUNNER = r"""
import doctest, json, os, sys, time, traceback

blocks = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
for block in blocks:
    where = f"{block['page']}:{block['line']}"
    print(f"--- block {where}", flush=True)
    start, cpu = time.perf_counter(), sum(os.times()[:4])
    try:
        if block["doctest"]:
            test = doctest.DocTestParser().get_doctest(
                block["source"], namespace, where, block["page"], block["line"] - 1
            )
            runner = doctest.DocTestRunner(
                optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
            )
            runner.run(test, clear_globs=False)
            if runner.failures:
                raise AssertionError(f"{runner.failures} doctest example(s) failed")
        else:
            padded = "\n" * (block["line"] - 1) + block["source"]
            exec(compile(padded, block["page"], "exec"), namespace)
    except BaseException:
        traceback.print_exc()
        print(f"FAILED: the block at {where}", file=sys.stderr, flush=True)
        sys.exit(1)
    took = f"{time.perf_counter() - start:.1f} s, cpu {sum(os.times()[:4]) - cpu:.1f} s"
    print(f"--- block {where}: {took}", flush=True)
"""


def run_page(blocks: list[Block], directory: Path, attempt: str) -> str:
    """Run `blocks` in a subprocess with cwd `directory`; fail the test if one fails."""
    script = directory.parent / f"{directory.name}-runner.py"
    data = directory.parent / f"{directory.name}-blocks.json"
    script.write_text(RUNNER, encoding="utf-8")
    data.write_text(json.dumps([dataclasses.asdict(b) for b in blocks]), encoding="utf-8")
    # one BLAS/OpenMP thread: pytest-xdist already runs pages side by side, and
    # oversubscribed BLAS threads make a scikit-learn fit several times slower
    threads = dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONIOENCODING="utf-8", **threads)
    page = blocks[0].page
    try:
        result = subprocess.run(
            [sys.executable, str(script), str(data)],
            cwd=directory,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        started = re.findall(r"^--- block (\S+)$", out, flags=re.M)
        pytest.fail(
            f"{attempt} run of {page} took more than {TIMEOUT} s "
            f"(last block started: {started[-1] if started else 'none'})",
            pytrace=False,
        )
    if result.returncode != 0:
        failed = re.search(r"FAILED: the block at (\S+)", result.stderr)
        where = failed.group(1) if failed else f"{page} (no block reported)"
        pytest.fail(
            f"{attempt} run: the block at {where} failed\n"
            f"--- stderr ---\n{result.stderr[-6000:]}\n--- stdout ---\n{result.stdout[-3000:]}",
            pytrace=False,
        )
    return result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("path", PAGES, ids=[_relative(p) for p in PAGES])
def test_page_blocks_run_twice(path, tmp_path):
    blocks = [b for b in python_blocks(path) if b.skip is None]
    if not blocks:
        return
    directory = tmp_path / "cwd"
    directory.mkdir()
    run_page(blocks, directory, "first")
    run_page(blocks, directory, "second")


@pytest.mark.parametrize("path", PAGES, ids=[_relative(p) for p in PAGES])
def test_markers_are_well_formed(path):
    parse_page(path)  # raises on a marker without a reason or not before a Python fence


def test_parser_reads_fences_markers_and_doctests(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "text\n"
        "```python\n"
        "x = 1\n"
        "```\n"
        "\n"
        "<!-- docs-test: skip (too slow) -->\n"
        "```python\n"
        "slow()\n"
        "```\n"
        "````md\n"
        "```python\n"
        "not a block\n"
        "```\n"
        "````\n"
        "* item\n"
        "\n"
        "  ```pycon\n"
        "  >>> x + 1\n"
        "  2\n"
        "  ```\n"
        "```bash\n"
        "ls\n"
        "```\n",
        encoding="utf-8",
    )
    blocks = python_blocks(page, "page.md")
    assert [(b.line, b.skip, b.doctest) for b in blocks] == [
        (3, None, False),
        (8, "too slow", False),
        (18, None, True),
    ]
    assert blocks[2].source == ">>> x + 1\n2\n"

    page.write_text("<!-- docs-test: skip () -->\n```python\nx\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="non-empty reason"):
        parse_page(page, "page.md")
    page.write_text("<!-- docs-test: skip (why) -->\n\n```python\nx\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must precede a fence"):
        parse_page(page, "page.md")


def test_runner_names_the_failing_block_and_its_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n\n```pycon\n>>> x + 1\n2\n```\n\n```python\ny = 1\n1 / 0\n```\n",
        encoding="utf-8",
    )
    directory = tmp_path / "cwd"
    directory.mkdir()
    with pytest.raises(pytest.fail.Exception) as failure:
        run_page(python_blocks(page, "page.md"), directory, "first")
    message = str(failure.value)
    assert "first run: the block at page.md:11 failed" in message
    assert 'File "page.md", line 12' in message and "ZeroDivisionError" in message

    page.write_text("```python\nx = 1\n```\n\n```pycon\n>>> x + 1\n3\n```\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match="the block at page.md:6 failed"):
        run_page(python_blocks(page, "page.md"), directory, "second")
