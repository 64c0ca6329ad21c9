"""The package's architecture, enforced: layers, import direction, no cycles, no private imports.

The layers and what each may import are described in ``docs/architecture.md``.
Every test here parses the source (``ast``), so imports inside functions count too.
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

import pytest

import cvstats

PACKAGE = pathlib.Path(cvstats.__file__).parent

#: The layers, lowest first; a module may import its own layer and the ones before it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("cvstats.errors", "cvstats._version", "cvstats.options")),
    ("data model", ("cvstats.cube",)),
    ("designs", ("cvstats.designs",)),
    ("kernels", ("cvstats.kernels",)),
    ("results", ("cvstats.results",)),
    ("inference", ("cvstats.inference",)),
    ("across", ("cvstats.across",)),
    ("reporting", ("cvstats.reporting",)),
    ("studies", ("cvstats.studies",)),
    ("cli", ("cvstats.cli",)),
    ("api", ("cvstats",)),
)


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, pathlib.Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    best, index = "", -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, index = prefix, i
    assert index >= 0, module
    return index


def imports(module: str) -> Iterator[tuple[str, list[str], int]]:
    """Yield ``(imported module, imported names, line)`` for every cvstats import."""
    tree = ast.parse(MODULES[module].read_text())
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


def test_imports_go_down_the_layers():
    wrong = [
        f"{m}:{line} imports {target} ({LAYERS[layer_of(target)][0]} is above "
        f"{LAYERS[layer_of(m)][0]})"
        for m in MODULES
        for target, _, line in imports(m)
        if layer_of(target) > layer_of(m)
    ]
    assert wrong == []


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
    # the root re-exports everything: importing it from inside would close a loop
    wrong = [
        f"{m}:{line}"
        for m in MODULES
        if m != "cvstats"
        for target, _, line in imports(m)
        if target == "cvstats"
    ]
    assert wrong == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("cvstats.kernels")))
def test_kernels_use_numpy_not_xarray_or_pandas(module):
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
    wrong = [
        f"{m}:{line} imports {target}"
        for m in MODULES
        for target, _, line in imports(m)
        if layer_of(target) >= layer_of("cvstats.studies")
        and layer_of(m) < layer_of("cvstats.studies")
    ]
    assert wrong == []


def test_every_subpackage_says_what_lives_there_and_what_it_may_import():
    for name, prefixes in LAYERS[1:-1]:
        for prefix in prefixes:
            doc = ast.get_docstring(ast.parse(MODULES[prefix].read_text())) or ""
            assert "import" in doc, f"{prefix} ({name}): docstring must say what it may import"
