"""The docs' method tables state what the registry says (docs/architecture.md)."""

from __future__ import annotations

import pathlib
import re

import pytest

from cvstats.inference.registry import METHODS, applicable_methods

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
ROW = re.compile(r"^\| `(?P<func>\w+)` \|(?P<cells>.*)\|\s*$", re.M)


def method_rows() -> dict[str, list[str]]:
    text = (DOCS / "choosing-a-method.md").read_text()
    return {m["func"]: [c.strip() for c in m["cells"].split("|")] for m in ROW.finditer(text)}


TABLED = sorted(
    {s.function.split(":")[1] for s in METHODS.values() if s.design not in ("kfold", "nested")}
    | {"kfold_t"}
)


@pytest.mark.parametrize("function", TABLED)
def test_methods_table_states_the_registry_estimand_and_target(function):
    rows = method_rows()
    assert function in rows, f"docs/choosing-a-method.md has no table row for `{function}`"
    specs = [s for s in METHODS.values() if s.function.endswith(f":{function}")]
    estimand_target = rows[function][2]
    for spec in specs:
        estimand = "conditional" if spec.estimand == "conditional" else f"`{spec.estimand}`"
        assert estimand_target == f"{estimand} / {spec.target}", spec.name


def test_every_registered_method_is_documented_somewhere():
    text = "\n".join(p.read_text() for p in DOCS.glob("*.md"))
    for spec in METHODS.values():
        assert f"`{spec.function.split(':')[1]}" in text, spec.name


def test_applicable_methods_is_importable_from_compare_too():
    from cvstats.reporting import compare

    assert compare.applicable_methods is applicable_methods
    assert compare.METHODS is METHODS
