"""One name per concept across the public API (issue 27), checked on every public signature.

The public callables: the names of ``cvstats.__all__`` (and the public methods of its
classes), of ``cvstats.designs.__all__`` and the dotted names ``docs/api.md`` documents.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re
from collections.abc import Callable, Iterator

import pytest

import cvstats
import cvstats.designs

ROOT = pathlib.Path(cvstats.__file__).parent.parent

#: Synonyms of a canonical name: accepted only as a deprecated alias (FutureWarning).
SYNONYMS = {
    "higher_is_better": "greater_is_better",
    "larger_is_better": "greater_is_better",
    "lower_is_better": "greater_is_better",
    "sample_dim": "dataset_dim",
    "datasets_dim": "dataset_dim",
}


def _resolve(dotted: str) -> object:
    module, _, attr = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr)
    except ModuleNotFoundError:  # a class's method
        return getattr(_resolve(module), attr)


def public_callables() -> Iterator[tuple[str, Callable]]:
    names = [f"cvstats.{n}" for n in cvstats.__all__]
    names += [f"cvstats.designs.{n}" for n in cvstats.designs.__all__]
    text = (ROOT / "docs" / "api.md").read_text()
    names += re.findall(r"^\.\. auto(?:function|class):: (cvstats[\w.]*)", text, re.MULTILINE)
    for name in dict.fromkeys(names):
        obj = _resolve(name)
        if inspect.ismodule(obj):
            continue
        yield name, obj
        if inspect.isclass(obj):
            for attr in dir(obj):
                if not attr.startswith("_") and callable(getattr(obj, attr, None)):
                    yield f"{name}.{attr}", getattr(obj, attr)


def parameters(obj: Callable) -> dict[str, inspect.Parameter]:
    try:
        return dict(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return {}


SIGNATURES = {name: parameters(obj) for name, obj in public_callables()}
DOCS = {name: inspect.getdoc(obj) or "" for name, obj in public_callables()}


def test_synonyms_are_only_deprecated_aliases():
    # an old name stays beside the new one, documented as its old name
    wrong = [
        f"{name}({p})"
        for name, params in SIGNATURES.items()
        for p in params
        if p in SYNONYMS
        and (SYNONYMS[p] not in params or f"Old name of ``{SYNONYMS[p]}``" not in DOCS[name])
    ]
    assert wrong == []


def test_method_takes_one_and_methods_several():
    # `method=` (one name, a str) vs `methods=` (a sequence of names), never the other way
    wrong = []
    for name, params in SIGNATURES.items():
        for p, param in params.items():
            note = str(param.annotation)
            if p == "method" and ("Sequence" in note or "list" in note):
                wrong.append(f"{name}(method: {note})")
            if p == "methods" and "Sequence" not in note:
                wrong.append(f"{name}(methods: {note})")
    assert wrong == []
    assert "compare" in str([n for n, ps in SIGNATURES.items() if "methods" in ps])


def test_one_precision_default():
    defaults = {n: ps["precision"].default for n, ps in SIGNATURES.items() if "precision" in ps}
    assert len(defaults) > 20  # the displays of every result class, the tables
    assert set(defaults.values()) == {4}, defaults


@pytest.mark.parametrize("concept", ["greater_is_better", "dataset_dim"])
def test_the_canonical_names_are_used(concept):
    # the probe can fail: the canonical name is in use, so a synonym would be a second one
    assert any(concept in params for params in SIGNATURES.values())
