"""The docs' method tables are rendered from the declarations (docs/architecture.md)."""

from __future__ import annotations

import importlib.util
import pathlib

from cvstats.inference.registry import METHODS, applicable_methods, method_table

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


def _conf():
    spec = importlib.util.spec_from_file_location("docs_conf", DOCS / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_method_pages_render_the_registry_tables():
    text = (DOCS / "choosing-a-method.md").read_text()
    assert "```{cvstats-registry} methods\n```" in text
    assert "```{cvstats-registry} order\n```" in text


def test_the_rendered_methods_table_states_each_declaration():
    rows = _conf()._registry_markdown("methods").splitlines()[2:]
    assert len(rows) == len(METHODS)
    for row, spec in zip(rows, METHODS.values(), strict=True):
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[0] == f"`{spec.func.__name__}`"
        assert cells[1].startswith(f"`{spec.name}`")
        assert cells[4] == f"{spec.estimand} / {spec.target}"
        assert cells[-1] == spec.source


def test_the_rendered_order_is_recommends():
    from cvstats.inference.recommend import LEARNER_ORDER, MODEL_ORDER

    rows = _conf()._registry_markdown("order").splitlines()[2:]
    named = [(r.split(" | ")[1].strip("`"), r.split(" | ")[2]) for r in rows]
    assert [m for m, t in named if t == "learner"] == list(LEARNER_ORDER)
    assert [m for m, t in named if t == "model"] == list(MODEL_ORDER)
    # a pipe inside a reason is escaped, not a new cell
    assert all(r.count(" | ") == 3 for r in rows)
    assert len(method_table("order")) == len(rows)


def test_every_registered_method_is_documented_somewhere():
    text = "\n".join(p.read_text() for p in DOCS.glob("*.md"))
    for spec in METHODS.values():
        assert f"`{spec.func.__name__}" in text, spec.name


def test_applicable_methods_is_importable_from_compare_too():
    from cvstats.reporting import compare

    assert compare.applicable_methods is applicable_methods
    assert compare.METHODS is METHODS
