"""The package's architecture, enforced: layers, import direction, no cycles, no private imports.

The layers and what each may import are described in ``docs/architecture.md``.
Every test here parses the source (``ast``), so imports inside functions count too.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re
from collections.abc import Iterator

import pytest

import cvstats

PACKAGE = pathlib.Path(cvstats.__file__).parent

#: The layers, lowest first, and the modules each holds (the table of docs/architecture.md).
LAYERS: dict[str, tuple[str, ...]] = {
    "foundation": (
        "cvstats.errors",
        "cvstats._version",
        "cvstats.options",
        "cvstats.checks",
        "cvstats._deprecation",
    ),
    "data model": ("cvstats.cube",),
    "designs": ("cvstats.designs",),
    "kernels": ("cvstats.kernels",),
    "results": ("cvstats.results",),
    "inference": ("cvstats.inference",),
    "across": ("cvstats.across",),
    "reporting": ("cvstats.reporting",),
    "studies": ("cvstats.studies",),
    "CLI": ("cvstats.cli",),
    "API": ("cvstats",),
}

_BELOW_INFERENCE = {"foundation", "data model", "designs", "kernels", "results"}

#: What each layer may import besides itself (the "may import" column of the table):
#: not a linear order: the kernels sit above the designs in the table but may import
#: only the foundation, and the designs and the results never each other.
ALLOWED: dict[str, frozenset[str]] = {
    "foundation": frozenset(),
    "data model": frozenset({"foundation"}),
    "designs": frozenset({"foundation", "data model"}),
    "kernels": frozenset({"foundation"}),
    "results": frozenset({"foundation", "data model", "kernels"}),
    "inference": frozenset(_BELOW_INFERENCE),
    "across": frozenset(_BELOW_INFERENCE | {"inference"}),
    "reporting": frozenset(_BELOW_INFERENCE | {"inference", "across"}),
    # a client of the library: its public names only (test_the_studies_import_only_public_names)
    "studies": frozenset({"foundation", "designs", "kernels", "API"}),
    # the CLI, not the package root: test_no_module_imports_the_package_root
    "CLI": frozenset(set(LAYERS) - {"CLI"}),
    "API": frozenset(set(LAYERS) - {"API"}),
}


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, pathlib.Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> str:
    """The layer of `module`: the one holding its longest matching prefix."""
    best, layer = "", ""
    for name, prefixes in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, layer = prefix, name
    assert layer, module
    return layer


def imports(module: str, source: str | None = None) -> Iterator[tuple[str, list[str], int]]:
    """Yield ``(imported module, imported names, line)`` for every cvstats import.

    `source` replaces the module's file (to show that a test can fail).
    """
    tree = ast.parse(MODULES[module].read_text() if source is None else source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "cvstats":
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "cvstats":
                continue
            names = [a.name for a in node.names]
            # `from cvstats import kernels`: an import of the submodule cvstats.kernels
            subs = [n for n in names if f"{node.module}.{n}" in MODULES]
            for n in subs:
                yield f"{node.module}.{n}", [], node.lineno
            rest = [n for n in names if n not in subs]
            if rest:
                yield node.module, rest, node.lineno


def graph() -> dict[str, set[str]]:
    return {m: {target for target, _, _ in imports(m) if target in MODULES} for m in MODULES}


def test_every_module_is_in_a_layer():
    for module in MODULES:
        layer_of(module)


def documented_table() -> dict[str, tuple[tuple[str, ...], str]]:
    """The layer table of docs/architecture.md: layer -> (modules, "may import" cell)."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    rows: dict[str, tuple[tuple[str, ...], str]] = {}
    for line in text.split("## The layers", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("layer", "---"):
            modules = tuple(re.findall(r"`(cvstats[\w.]*)`", cells[1]))
            rows[cells[0]] = (modules, cells[3])
    return rows


def documented_allowed(cell: str, earlier: list[str]) -> frozenset[str]:
    """Read a "may import" cell: layer names, "everything above", "everything", "nothing"."""
    names: set[str] = set()
    for part in cell.split(";")[0].split(","):
        part = part.strip()
        if part == "everything above":
            names |= set(earlier)
        elif part == "everything":
            names |= set(LAYERS)
        elif not part.startswith("nothing"):
            names.add(part)
    return frozenset(names)


def test_the_layers_are_the_documented_ones():
    # the dicts above and the table of docs/architecture.md say the same thing, so
    # loosening a rule needs both changed
    table = documented_table()
    assert list(table) == list(LAYERS)
    for i, (layer, (modules, cell)) in enumerate(table.items()):
        assert modules == LAYERS[layer], layer
        allowed = documented_allowed(cell, list(table)[:i]) - {layer}
        assert allowed == ALLOWED[layer], layer


def test_documented_allowed_reads_the_cells():
    earlier = ["foundation", "data model"]
    assert documented_allowed("nothing of cvstats", []) == frozenset()
    assert documented_allowed("foundation; **never xarray**", earlier) == {"foundation"}
    assert documented_allowed("everything above", earlier) == set(earlier)
    assert documented_allowed("everything", earlier) == set(LAYERS)


def forbidden_imports(sources: dict[str, str] | None = None) -> list[str]:
    """Every import a layer may not make (`sources`: module -> source replacing the file)."""
    sources = sources or {}
    return [
        f"{m}:{line} imports {target} ({layer_of(m)} may import only "
        f"{sorted(ALLOWED[layer_of(m)])}, not {layer_of(target)})"
        for m in MODULES
        for target, _, line in imports(m, sources.get(m))
        if layer_of(target) != layer_of(m) and layer_of(target) not in ALLOWED[layer_of(m)]
    ]


def test_imports_follow_the_documented_directions():
    assert forbidden_imports() == []


def test_a_kernel_importing_the_designs_is_refused():
    # the probe can fail: the linear order this test replaced let kernels import designs
    module = "cvstats.kernels.moments"
    source = MODULES[module].read_text() + "\nfrom cvstats.designs.splits import kfold\n"
    assert any(
        w.startswith(f"{module}:") and w.endswith("not designs)")
        for w in forbidden_imports({module: source})
    )


def test_no_import_cycle():
    edges = graph()
    # a package's __init__ importing its own submodules is how re-exports work; a cycle
    # needs a submodule that imports a package it belongs to (or any longer loop)
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_no_private_name_imported_across_modules():
    wrong = [
        f"{m}:{line} imports {name} from {target}"
        for m in MODULES
        for target, names, line in imports(m)
        for name in names
        if name.startswith("_") and name != "__version__"
    ]
    assert wrong == []


def test_no_module_imports_the_package_root():
    # the root re-exports everything: importing it from inside would close a loop; the
    # studies are the exception, a client importing `cvstats` as any user's script does
    # (nothing below them imports them: test_nothing_imports_the_cli_or_the_studies)
    wrong = [
        f"{m}:{line}"
        for m in MODULES
        if m != "cvstats" and layer_of(m) != "studies"
        for target, _, line in imports(m)
        if target == "cvstats"
    ]
    assert wrong == []


@pytest.mark.parametrize(
    "module", sorted(m for m in MODULES if layer_of(m) in ("foundation", "kernels"))
)
def test_kernels_use_numpy_not_xarray_or_pandas(module):
    # the numeric layer and the foundation under it (``import cvstats.kernels`` in a fresh
    # process: tests/architecture/test_import_cost.py)
    tree = ast.parse(MODULES[module].read_text())
    top = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not top & {"xarray", "pandas", "dask"}


def test_only_one_module_calls_apply_ufunc():
    # every dim handling goes through cvstats.cube.apply.apply_kernel
    callers = sorted(
        m for m, p in MODULES.items() if "apply_ufunc(" in p.read_text() and m != __name__
    )
    assert callers == ["cvstats.cube.apply"]


def test_nothing_imports_the_cli_or_the_studies():
    top = {"studies", "CLI", "API"}
    wrong = [
        f"{m}:{line} imports {target}"
        for m in MODULES
        for target, _, line in imports(m)
        if layer_of(target) in top - {"API"} and layer_of(m) not in top
    ]
    assert wrong == []


def test_every_subpackage_says_what_lives_there_and_what_it_may_import():
    for name, prefixes in LAYERS.items():
        if name in ("foundation", "API"):
            continue
        for prefix in prefixes:
            doc = ast.get_docstring(ast.parse(MODULES[prefix].read_text())) or ""
            assert "import" in doc, f"{prefix} ({name}): docstring must say what it may import"


#: The modules whose ``__all__`` is public as a whole, besides ``cvstats`` itself.
PUBLIC_MODULES = ("cvstats.designs", "cvstats.kernels", "cvstats.errors", "cvstats.options")


def documented_names() -> set[str]:
    """The dotted names docs/api.md documents (``.. autofunction::``, ``autoclass`` ...)."""
    text = (PACKAGE.parent / "docs" / "api.md").read_text()
    return set(re.findall(r"^\.\. auto\w+:: (cvstats[\w.]*)", text, flags=re.MULTILINE))


def non_public_imports(module: str, source: str | None = None) -> list[str]:
    """What `module` imports from cvstats that a user's script could not: not public.

    Public, precisely: a module of the studies' own package; ``cvstats`` itself or a
    name of ``cvstats.__all__`` (or a subpackage the root binds, e.g. ``kernels``); a
    module of :data:`PUBLIC_MODULES` or a name of its ``__all__``; a dotted name
    docs/api.md documents (e.g. ``cvstats.checks.validate_alpha``).
    """
    documented = documented_names()
    wrong = []
    for target, names, line in imports(module, source):
        if target == "cvstats.studies" or target.startswith("cvstats.studies."):
            continue
        if not names:  # `import M` or `from P import M` (a module)
            public = target in ("cvstats", *PUBLIC_MODULES)
            names_public = [public]
        elif target == "cvstats":
            names_public = [n in cvstats.__all__ for n in names]
        else:
            exported = getattr(importlib.import_module(target), "__all__", ())
            names_public = [
                (target in PUBLIC_MODULES and n in exported) or f"{target}.{n}" in documented
                for n in names
            ]
        wrong += [
            f"{module}:{line} imports {target}" + (f".{n}" if n else "")
            for n, ok in zip(names or [""], names_public, strict=True)
            if not ok
        ]
    return wrong


def test_the_studies_import_only_public_names():
    # the studies are research code written against cvstats as any user's script is
    # (docs/architecture.md): no data-model, inference or reporting internals
    wrong = [w for m in MODULES if layer_of(m) == "studies" for w in non_public_imports(m)]
    assert wrong == []


def test_a_study_importing_a_private_module_is_refused():
    # the probe can fail: what the studies imported before they were a client
    module = "cvstats.studies._analysis"
    source = MODULES[module].read_text() + (
        "\nfrom cvstats.cube.apply import apply_kernel\n"
        "from cvstats.reporting.tables import PublicationTable\n"
        "from cvstats.across.conditional import REPETITION\n"
        "import cvstats.inference.docs\n"
        "from cvstats import kernels, compare\n"
    )
    wrong = non_public_imports(module, source)
    assert [w.split(" imports ")[1] for w in wrong] == [
        "cvstats.cube.apply.apply_kernel",
        "cvstats.reporting.tables.PublicationTable",
        "cvstats.across.conditional.REPETITION",
        "cvstats.inference.docs",
    ]
