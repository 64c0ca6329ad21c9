"""The registry contract: every method of ``METHODS`` keeps the same promises.

Every test here is parametrized over :data:`cvstats.inference.registry.METHODS`, so
a method added to the registry is held to the contract without a new test. Each
method runs on a small fixture cube of its design kind (one cube per key of
:data:`~cvstats.inference.registry.DESIGNS`; a kind without a fixture fails
loudly), with an extra ``dataset`` dim of three data sets with different losses
and three models. The contract, for every method:

1. **Vectorized** — a result over the ``dataset`` dim equals looping over its
   slices (every numeric field, ``rtol=1e-12``, NaN equal to NaN).
2. **Lazy** — on a dask-chunked cube the numeric fields are dask-backed (not
   computed), and equal the eager result once computed.
3. **Coordinates** — the ``dataset`` labels and the ``model``/``contrast`` labels
   come back on every numeric field, and no other dim does.
4. **Options** — every option of ``spec.options`` is accepted with a valid value
   and shows in the result; the function's keyword-only parameters are exactly
   ``spec.options`` (with ``cube`` first and ``**options`` last), the common ones
   first with the common defaults, and its docstring documents each of them.
5. **Refusals** — an option outside ``spec.options`` (an unknown one, or a real
   option of another method) and a value refused by ``spec.only`` raise
   :class:`cvstats.ArgumentError` naming the option.
6. **Registry fields** — ``method``, ``title``, ``reference``, ``estimand``,
   ``target`` and ``direction`` are :meth:`MethodSpec.result_fields` (templates
   filled from the cube and the options), except the documented overrides in
   :data:`REFERENCE_OVERRIDES`.
7. **compare** — ``cvstats.compare(contrast_cube, methods=[name])`` returns the
   numbers of calling the function on that contrast cube.
8. **Applicability** — :func:`applicable_methods` lists exactly the default methods
   whose design is among :func:`design_kinds` of each fixture cube (checked
   against hand-written kinds), ``compare`` runs exactly those the cube does not
   refuse (:meth:`MethodSpec.cube_refusal`: the pooled methods on a declared
   time-ordered kind) and notes the others, and a method with ``default=False``
   (McNemar) runs only when named.

Methods whose ``contrasts`` is ``"pairwise"`` (McNemar) run on the pairwise
contrast cube :func:`cvstats.pairwise`; a design kind used by a ``zero_one``
method gets 0/1 losses.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
import xarray as xr

import cvstats
from cvstats import ArgumentError, designs
from cvstats.inference.bayes import design_rho
from cvstats.inference.registry import (
    COMMON_OPTIONS,
    DESIGNS,
    METHODS,
    MethodSpec,
    applicable_methods,
    declared_kind,
    design_kinds,
)
from cvstats.results.base import Result

N = 48
DATASETS = ["iris", "wine", "adult"]
MODELS = ["a", "b", "c"]
REGISTRY_FIELDS = ("method", "title", "reference", "estimand", "target", "direction")
COMMON_DEFAULTS = {"mu0": 0.0, "alpha": 0.05, "alternative": "two-sided"}


def designs_of_kinds(n: int) -> dict[str, Callable[[], xr.Dataset]]:
    """A small design of ``n`` examples per design kind (a key of DESIGNS), built on call."""
    return {
        "holdout": lambda: designs.holdout(n, 12, seed=1),
        "resampled": lambda: designs.resampled(n, 8, J=5, seed=2),
        "kfold": lambda: designs.kfold(n, 4, seed=3),
        "repeated_kfold": lambda: designs.kfold(n, 4, repeats=3, seed=4),
        "half": lambda: designs.conservative_z(n, 6, J=3, M=2, seed=5),
        "replicate": lambda: designs.bootstrap(n, 8, J=3, R=3, seed=6),
        "5x2": lambda: designs.five_by_two(n, seed=7),
        "nested": lambda: designs.nested_cv(n, 4, seed=8),
        "main": lambda: designs.kfold(n, 4, repeats=2, seed=12),
    }


#: A small design per design kind (a key of DESIGNS).
DESIGN_OF = designs_of_kinds(N)

#: More designs, for the applicability checks only: every block at once, and a combination.
EXTRA_DESIGN_OF = {
    "nadeau_bengio": lambda: designs.nadeau_bengio(N, 6, J=3, M=2, R=2, seed=9),
    "kfold+5x2": lambda: designs.combine(
        designs.kfold(N, 4, seed=10), designs.five_by_two(N, seed=11)
    ),
}

#: The design kinds of each fixture cube, written out by hand (not read off design_kinds).
EXPECTED_KINDS = {
    "holdout": {"holdout"},
    "resampled": {"resampled", "main"},
    "kfold": {"kfold", "repeated_kfold", "main"},
    "repeated_kfold": {"repeated_kfold", "main"},
    "half": {"resampled", "half", "main"},
    "replicate": {"resampled", "replicate", "main"},
    "5x2": {"5x2"},
    "main": {"repeated_kfold", "main"},
    "nested": {"nested", "kfold", "repeated_kfold", "main"},
    "nadeau_bengio": {"resampled", "half", "replicate", "5x2", "main"},
    "kfold+5x2": {"kfold", "repeated_kfold", "5x2", "main"},
}

#: Methods whose result's ``reference`` follows the option picking their form (``variant``,
#: formerly ``reference`` for holdout_t), as each documents, instead of the registry's.
REFERENCE_OVERRIDES = {
    "holdout_t": {"z": "normal", "t": "t"},  # a normal or a t_{n2-1} reference
    "mcnemar": {"z": "normal", "corrected": "chi2(1)", "exact": "binomial"},
}

#: The option names that pick the form of a test (one per method at most).
FORM_OPTIONS = ("variant", "reference", "variance")

#: A value of `spec.only`'s options that differs from every method's single value.
REFUSED = {"mu0": 0.1, "alternative": "less"}

NAMES = list(METHODS)
ALL_OPTIONS = sorted({o for s in METHODS.values() for o in s.options})


# ---------------------------------------------------------------------------
# fixture cubes
# ---------------------------------------------------------------------------


def _zero_one(kind: str) -> bool:
    return any(s.zero_one for s in METHODS.values() if s.design == kind)


@functools.cache
def cube_of(kind: str) -> xr.DataArray:
    """The fixture cube of a design kind: 3 data sets x splits x N examples x 3 models."""
    factory = DESIGN_OF.get(kind) or EXTRA_DESIGN_OF.get(kind)
    declared = declared_kind(kind)
    if factory is None and declared is not None:  # a kind a method declared, with its example
        factory = functools.partial(declared.example, N)
    if factory is None:
        pytest.fail(
            f"design kind {kind!r} (registry DESIGNS) has no fixture cube: add a design to "
            "DESIGN_OF in tests/inference/test_registry_contract.py"
        )
    design = factory()
    # the declared kinds after the fixed ones, so that adding one changes no other fixture
    declared_kinds = sorted(k for k in DESIGNS if declared_kind(k) is not None)
    seed = [*sorted([*DESIGN_OF, *EXTRA_DESIGN_OF]), *declared_kinds].index(kind)
    rng = np.random.default_rng(100 + seed)
    shape = (len(DATASETS), design.sizes["split"], N, len(MODELS))
    if _zero_one(kind):
        rate = np.array([[0.2, 0.35, 0.5], [0.3, 0.2, 0.45], [0.4, 0.5, 0.25]])
        losses = (rng.random(shape) < rate[:, None, None, :]).astype(float)
    else:  # each data set its own scale, each split its own shift, each model its own mean
        scale = np.array([1.0, 2.5, 0.4])[:, None, None, None]
        losses = scale * rng.gamma(2.0, 1.0, size=shape)
        losses += rng.normal(0.0, 0.3, size=(*shape[:2], 1, 1))
        losses += np.array([0.0, 0.2, 0.5])
    return cvstats.from_arrays(
        losses,
        design=design,
        models=MODELS,
        extra_dims=["dataset"],
        extra_coords={"dataset": DATASETS},
        name="loss",
    )


@functools.cache
def contrast_of(kind: str) -> xr.DataArray:
    """The pairwise contrast cube of a fixture cube."""
    return cvstats.pairwise(cube_of(kind))


def lazy(cube: xr.DataArray) -> xr.DataArray:
    """The cube with dask-backed losses in 2 x 2 chunks (coordinates in memory, as open_cube)."""
    chunks = tuple({"dataset": 2, "split": -(-n // 2)}.get(d, -1) for d, n in cube.sizes.items())
    return cube.copy(data=da.from_array(cube.values, chunks=chunks))


def subject(spec: MethodSpec, cube: xr.DataArray) -> xr.DataArray:
    """The cube a method is called on: the model cube, or its pairwise contrasts."""
    if spec.contrasts == "any":
        return cube
    if spec.contrasts == "pairwise":
        return cvstats.pairwise(cube)
    pytest.fail(f"{spec.name}: unknown `contrasts` {spec.contrasts!r} in the registry")


@functools.cache
def subject_of(name: str) -> xr.DataArray:
    """The fixture cube a registry entry is called on."""
    spec = METHODS[name]
    if spec.contrasts == "pairwise":
        return contrast_of(spec.design)
    return subject(spec, cube_of(spec.design))


@functools.cache
def default_result(name: str) -> Result:
    """The registry entry run with its defaults on its fixture cube (computed once)."""
    return run(METHODS[name], subject_of(name))


@functools.cache
def contrast_result(name: str) -> Result:
    """The registry entry run with its defaults on the pairwise contrasts of its fixture cube."""
    return run(METHODS[name], contrast_of(METHODS[name].design))


def unit(cube: xr.DataArray) -> str:
    return "contrast" if "contrast" in cube.dims else "model"


def run(spec: MethodSpec, cube: xr.DataArray, **options: Any) -> Result:
    """Call the registry entry's function with its fixed options (and ``options``)."""
    return spec.func(cube, **{**spec.fixed, **options})


def values(value: Any) -> xr.DataArray:
    """A result field as a DataArray (a float today for 0-d results, a DataArray tomorrow)."""
    return value if isinstance(value, xr.DataArray) else xr.DataArray(value)


def numbers(res: Result) -> dict[str, xr.DataArray]:
    """The numeric fields of a result, as DataArrays."""
    return {f: values(getattr(res, f)) for f in res.value_fields}


def assert_fields_equal(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert set(got) == set(want)
    for f in want:
        g, w = got[f], want[f]
        g = g.transpose(*w.dims) if set(g.dims) == set(w.dims) else g
        np.testing.assert_allclose(
            np.asarray(g), np.asarray(w), rtol=1e-12, atol=0, equal_nan=True, err_msg=f
        )


def template_params(spec: MethodSpec, cube: xr.DataArray) -> dict[str, Any]:
    """What a registry template may name: the function's defaults, ``K`` and ``repeats``."""
    params = {
        p.name: p.default
        for p in inspect.signature(spec.func).parameters.values()
        if p.kind is p.KEYWORD_ONLY and p.default is not inspect.Parameter.empty
    }
    main = np.asarray(cube["block"].values) == "main"
    if main.any():
        params["K"] = int(np.unique(cube["fold"].values[main]).size)
        params["repeats"] = int(np.unique(cube["repeat"].values[main]).size)
    if "rho" in spec.options and params.get("rho") is None:  # the design's ρ (1/K or n2/n)
        params["rho"] = design_rho(cube)
    return params


def form_option(spec: MethodSpec) -> str:
    """The option that picks the form of a method's test."""
    names = [o for o in FORM_OPTIONS if o in spec.options]
    if len(names) != 1:
        pytest.fail(f"{spec.name}: expected one form option among {FORM_OPTIONS}, got {names}")
    return names[0]


def expected_fields(spec: MethodSpec, cube: xr.DataArray, **options: Any) -> dict[str, Any]:
    params = {**template_params(spec, cube), **spec.fixed, **options}
    fields = spec.result_fields(**params)
    if spec.name in REFERENCE_OVERRIDES:
        fields["reference"] = REFERENCE_OVERRIDES[spec.name][params[form_option(spec)]]
    return fields


def main_sizes(cube: xr.DataArray) -> tuple[int, int]:
    """``n1`` and ``n2`` of the main block of a cube."""
    main = np.asarray(cube["block"].values) == "main"
    first = cube.isel(split=np.flatnonzero(main), dataset=0).isel({unit(cube): 0})
    n2 = first.notnull().sum("example").values
    return int(np.median(cube["n_train"].values[main])), int(np.median(n2))


def valid_value(spec: MethodSpec, option: str, cube: xr.DataArray) -> Any:
    """A valid value of one of a method's options, unlike its default where possible."""
    if option in spec.only:
        return spec.only[option]
    if option in spec.fixed:
        return spec.fixed[option]
    if option == "mu0":
        return 0.1
    if option == "alpha":
        return 0.1
    if option == "alternative":
        return "less"
    if option in ("n1", "n2"):
        n1, n2 = main_sizes(cube)
        return n1 - 3 if option == "n1" else n2 - 1
    if option == "split":
        return cube["split"].values[np.asarray(cube["block"].values) == "main"][0].item()
    if option == "models":
        return (MODELS[2], MODELS[0])
    if option in spec.checks:  # the declaration's validator knows valid values
        default = template_params(spec, cube).get(option)
        other = [v for v in spec.checks[option].examples if v != default]
        if other:  # the last: McNemar's "corrected" (two-sided only) comes before "exact"
            return other[-1]
    pytest.fail(
        f"{spec.name}: no valid value known for its option {option!r}; declare a validator "
        "with examples for it (MethodSpec.checks: engine.Choice or engine.Check)"
    )


def option_cube(spec: MethodSpec, option: str) -> xr.DataArray:
    """The cube to pass ``option`` with: ``models`` picks models of a model cube."""
    return cube_of(spec.design) if option == "models" else subject_of(spec.name)


# ---------------------------------------------------------------------------
# the fixtures cover the registry
# ---------------------------------------------------------------------------


def test_every_design_kind_has_a_fixture_cube():
    missing = sorted(k for k in set(DESIGNS) - set(DESIGN_OF) if declared_kind(k) is None)
    assert not missing, f"design kinds without a fixture cube: {missing}"
    unknown = sorted({s.design for s in METHODS.values()} - set(DESIGNS))
    assert not unknown, f"registry designs that are not DESIGNS keys: {unknown}"
    for kind in DESIGNS:
        assert kind in design_kinds(cube_of(kind)), kind


# ---------------------------------------------------------------------------
# 1-3. vectorized, lazy, coordinates
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_vectorized_over_extra_dim_equals_loop(name):
    spec = METHODS[name]
    cube = subject_of(name)
    res = default_result(name)
    for label in DATASETS:
        one = run(spec, cube.sel(dataset=label))
        for f in res.value_fields:
            got = values(getattr(res, f)).sel(dataset=label)
            want = values(getattr(one, f))
            assert set(got.dims) == set(want.dims), f
            np.testing.assert_allclose(
                np.asarray(got.transpose(*want.dims)),
                np.asarray(want),
                rtol=1e-12,
                atol=0,
                equal_nan=True,
                err_msg=f"{name} {f} {label}",
            )
    # the data sets differ, so a method that ignored the extra dim would show it
    est = np.asarray(values(getattr(res, res.value_fields[0])))
    assert not np.allclose(est[0], est[1])


@pytest.mark.parametrize("name", NAMES)
def test_dask_cube_stays_lazy(name):
    spec = METHODS[name]
    lazy_cube = subject(spec, lazy(cube_of(spec.design)))
    assert isinstance(lazy_cube.data, da.Array)
    with dask.config.set(scheduler="synchronous"):  # the graph is the same; faster on tiny chunks
        res = run(spec, lazy_cube)
    eager = default_result(name)
    for f in res.value_fields:
        value = getattr(res, f)
        assert isinstance(value, xr.DataArray), f
        assert isinstance(value.data, da.Array), f"{name}.{f} was computed"
    with dask.config.set(scheduler="synchronous"):
        computed = {f: getattr(res, f).compute() for f in res.value_fields}
    assert_fields_equal(computed, numbers(eager))
    assert {k: getattr(res, k) for k in REGISTRY_FIELDS} == {
        k: getattr(eager, k) for k in REGISTRY_FIELDS
    }


def _assert_labels(res: Result, cube: xr.DataArray, name: str) -> None:
    for f in res.value_fields:
        value = values(getattr(res, f))
        assert set(value.dims) == {"dataset", unit(cube)}, (name, f, value.dims)
        assert value["dataset"].values.tolist() == DATASETS, (name, f)
        labels = cube[unit(cube)].values.tolist()
        assert value[unit(cube)].values.tolist() == labels, (name, f)


@pytest.mark.parametrize("name", NAMES)
def test_coordinates_survive(name):
    spec = METHODS[name]
    cube = cube_of(spec.design)
    contrast = contrast_of(spec.design)
    assert contrast["contrast"].values.tolist() == ["a - b", "a - c", "b - c"]
    _assert_labels(contrast_result(name), contrast, name)
    if spec.contrasts == "any":
        _assert_labels(default_result(name), cube, name)
    elif "models" in spec.options:  # a pairwise method picks two models of a model cube
        res = run(spec, cube, models=("c", "a"))
        for f in res.value_fields:
            value = values(getattr(res, f))
            assert value.dims == ("dataset",), (name, f)
            assert value["dataset"].values.tolist() == DATASETS
            assert value["contrast"].item() == "c - a", (name, f)


# ---------------------------------------------------------------------------
# 4. options: accepted, and the same as the function's signature and docstring
# ---------------------------------------------------------------------------

OPTION_CASES = [(n, o) for n, s in METHODS.items() for o in s.options]


@pytest.mark.parametrize(("name", "option"), OPTION_CASES)
def test_every_option_is_accepted(name, option):
    spec = METHODS[name]
    cube = option_cube(spec, option)
    value = valid_value(spec, option, cube)
    res = run(spec, cube, **{option: value})
    assert isinstance(res, Result)
    if option in COMMON_OPTIONS or option in ("n1", "n2"):
        assert getattr(res, option) == value
    if option == "models":
        first = values(getattr(res, res.value_fields[0]))
        assert first["contrast"].item() == f"{value[0]} - {value[1]}"
    if option == "split":  # the one split of the hold-out design, named: same result
        assert_fields_equal(numbers(res), numbers(default_result(name)))
    got = {k: getattr(res, k) for k in REGISTRY_FIELDS}
    assert got == expected_fields(spec, cube, **{option: value})


@pytest.mark.parametrize("name", NAMES)
def test_all_options_together(name):
    spec = METHODS[name]
    cube = cube_of(spec.design) if "models" in spec.options else subject_of(name)
    options = {o: valid_value(spec, o, cube) for o in spec.options}
    res = run(spec, cube, **options)
    assert {o: getattr(res, o) for o in COMMON_OPTIONS} == {o: options[o] for o in COMMON_OPTIONS}
    assert {k: getattr(res, k) for k in REGISTRY_FIELDS} == expected_fields(spec, cube, **options)


def _documented(func: Any) -> set[str]:
    doc = inspect.getdoc(func) or ""
    params = doc.split("Parameters\n----------\n", 1)[-1].split("\n\n", 1)[0]
    section = re.split(r"\n(?:Returns|Raises|Examples|Notes|See Also)\n-+\n", params)[0]
    names: set[str] = set()
    for match in re.finditer(r"^([A-Za-z_][\w, ]*?) :", section, flags=re.MULTILINE):
        names.update(n.strip() for n in match.group(1).split(","))
    return names


@pytest.mark.parametrize("name", NAMES)
def test_signature_and_docstring_match_registry_options(name):
    spec = METHODS[name]
    params = list(inspect.signature(spec.func).parameters.values())
    assert params[0].name == "cube" and params[0].kind is params[0].POSITIONAL_OR_KEYWORD
    assert params[-1].kind is params[-1].VAR_KEYWORD
    middle = params[1:-1]
    assert all(p.kind is p.KEYWORD_ONLY for p in middle), [p.name for p in middle]
    assert sorted(p.name for p in middle) == sorted(spec.options)
    assert len(spec.options) == len(set(spec.options))
    assert spec.options[: len(COMMON_OPTIONS)] == COMMON_OPTIONS
    defaults = {p.name: p.default for p in middle}
    assert {k: defaults[k] for k in COMMON_OPTIONS} == COMMON_DEFAULTS
    assert set(spec.fixed) <= set(spec.options) and set(spec.only) <= set(COMMON_OPTIONS)
    documented = _documented(spec.func)
    assert {"cube", *spec.options} <= documented, sorted({"cube", *spec.options} - documented)


# ---------------------------------------------------------------------------
# 5. refusals
# ---------------------------------------------------------------------------

FOREIGN_VALUES = {
    "variant": "t4",
    "variance": "in",
    "reference": "t",
    "split": 0,
    "models": ("a", "b"),
    "n1": 10,
    "n2": 5,
}
FOREIGN_CASES = [
    (n, o) for n, s in METHODS.items() for o in ["bogus", *ALL_OPTIONS] if o not in s.options
]


@pytest.mark.parametrize(("name", "option"), FOREIGN_CASES)
def test_foreign_option_is_refused(name, option):
    spec = METHODS[name]
    cube = subject_of(name)
    with pytest.raises(ArgumentError, match=rf"{name} does not take .*'{option}'"):
        run(spec, cube, **{option: FOREIGN_VALUES.get(option, 1)})


ONLY_CASES = [(n, k) for n, s in METHODS.items() for k in s.only]


@pytest.mark.parametrize(("name", "option"), ONLY_CASES)
def test_value_refused_by_only(name, option):
    spec = METHODS[name]
    cube = subject_of(name)
    value = REFUSED.get(option)
    if value is None or value == spec.only[option]:
        pytest.fail(f"{name}: no refused value known for its `only` option {option!r}")
    with pytest.raises(ArgumentError, match=rf"takes {option}={spec.only[option]!r} only"):
        run(spec, cube, **{option: value})
    # compare refuses it too when the method is named
    with pytest.raises(ArgumentError, match=rf"takes {option}={spec.only[option]!r} only"):
        cvstats.compare(contrast_of(spec.design), methods=[name], **{option: value})
    # the value it supports is accepted
    assert getattr(run(spec, cube, **{option: spec.only[option]}), option) == spec.only[option]


# ---------------------------------------------------------------------------
# 6. registry fields
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_result_fields_come_from_registry(name):
    spec = METHODS[name]
    cube = subject_of(name)
    res = default_result(name)
    assert res.method == spec.name
    assert {k: getattr(res, k) for k in REGISTRY_FIELDS} == expected_fields(spec, cube)
    assert res.target == spec.target and res.estimand == spec.estimand
    assert res.loss == "loss"
    assert (res.mu0, res.alpha, res.alternative) == tuple(COMMON_DEFAULTS.values())


@pytest.mark.parametrize("function", sorted({s.function for s in METHODS.values()}))
def test_function_defaults_name_a_registry_entry(function):
    """Called with its defaults, a function reports the entry whose fixed options they are."""
    entries = [s for s in METHODS.values() if s.function == function]
    spec = entries[0]
    res = spec.func(subject_of(spec.name))
    assert res.method in [s.name for s in entries]
    defaults = template_params(METHODS[res.method], subject_of(spec.name))
    assert all(defaults[k] == v for k, v in METHODS[res.method].fixed.items())


def test_holdout_t_reference_follows_its_form_option():
    spec = METHODS["holdout_t"]
    cube = cube_of(spec.design)
    res = cvstats.holdout_t(cube, **{form_option(spec): "t"})
    assert (res.reference, res.title) == ("t", "Hold-out t (t reference)")
    assert np.isfinite(np.asarray(values(res.df))).all()
    res = cvstats.holdout_t(cube)
    assert (res.reference, res.title) == ("normal", "Hold-out t (z reference)")
    assert np.isinf(np.asarray(values(res.df))).all()


# ---------------------------------------------------------------------------
# 7. compare runs the same computation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_compare_matches_direct_call(name):
    spec = METHODS[name]
    contrast = contrast_of(spec.design)
    table = cvstats.compare(contrast, methods=[name])
    assert list(table.results) == [name]
    got = table.results[name]
    want = contrast_result(name)
    assert_fields_equal(numbers(got), numbers(want))
    assert {k: getattr(got, k) for k in REGISTRY_FIELDS} == {
        k: getattr(want, k) for k in REGISTRY_FIELDS
    }
    assert table.to_frame()["method"].unique().tolist() == [name]


# ---------------------------------------------------------------------------
# 8. applicability
# ---------------------------------------------------------------------------

ALL_KINDS = [*DESIGN_OF, *EXTRA_DESIGN_OF, *(k for k in DESIGNS if declared_kind(k) is not None)]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_applicable_methods_follow_design_kinds(kind):
    cube = cube_of(kind)
    kinds = design_kinds(cube)
    if declared_kind(kind) is None:
        assert kinds == EXPECTED_KINDS[kind]
    else:  # a kind a method declared: its example design is of it
        assert kind in kinds
    supported = [n for n, s in METHODS.items() if s.design in kinds]
    defaults = [n for n in supported if METHODS[n].default]
    assert applicable_methods(cube) == defaults
    assert applicable_methods(cube, defaults_only=False) == supported
    assert applicable_methods(cube, "model") == [n for n in defaults if METHODS[n].conditional]
    contrast = contrast_of(kind)
    assert design_kinds(contrast) == kinds and applicable_methods(contrast) == defaults
    # compare runs exactly the default ones the cube does not refuse (the pooled methods
    # on time-ordered splits), noting the others; the rest only when named
    ran = [n for n in defaults if METHODS[n].cube_refusal(contrast) is None]
    table = cvstats.compare(contrast)
    assert list(table.results) == ran
    for name in set(defaults) - set(ran):
        assert any(name in note and "left out" in note for note in table.notes), name
    runs = [n for n in supported if METHODS[n].cube_refusal(contrast) is None]
    named = [n for n in runs if not METHODS[n].default]
    if named:
        assert list(cvstats.compare(contrast, methods=named).results) == named


def test_mcnemar_runs_only_when_named():
    assert not METHODS["mcnemar"].default
    contrast = contrast_of(METHODS["mcnemar"].design)
    assert "mcnemar" not in cvstats.compare(contrast).results
    assert "mcnemar" in applicable_methods(contrast, defaults_only=False)
    assert list(cvstats.compare(contrast, methods=["mcnemar", "holdout_t"]).results) == [
        "mcnemar",
        "holdout_t",
    ]


# ---------------------------------------------------------------------------
# 9. the declarations carry what the engine, recommend, the docs and the verdict need
# ---------------------------------------------------------------------------

#: A declaration field, and a value the registry refuses for it.
MISSING = {
    "title": "",
    "kernel": "",
    "estimand": "",
    "reference": "",
    "direction": "",
    "short": "",
    "reason": "",
    "source": "",
    "fits": "",
    "design": "no_such_design",
    "target": "both",
    "interval": "maybe",
    "needs": "everything",
    "contrasts": "some",
    "rank": 0,
    "func": None,
}


@pytest.mark.parametrize(("field", "bad"), list(MISSING.items()))
def test_a_declaration_lacking_a_field_is_refused(field, bad):
    from dataclasses import replace

    from cvstats.inference.registry import register

    entry = replace(METHODS["corrected_resampled_t"], name="probe_method", **{field: bad})
    with pytest.raises(ValueError, match=f"`{field}`|no function"):
        register(entry)
    assert "probe_method" not in METHODS


def test_a_flag_goes_with_the_models_target():
    from dataclasses import replace

    from cvstats.inference.registry import register

    for name, flag in (("corrected_resampled_t", "liberal"), ("resampled_t", "")):
        entry = replace(METHODS[name], name="probe_method", flag=flag)
        with pytest.raises(ValueError, match="flag"):
            register(entry)


def test_every_registered_declaration_is_complete():
    for spec in METHODS.values():
        assert spec.func is not None and spec.func.__method_entries__, spec.name
        assert spec in spec.func.__method_entries__, spec.name
        for key in (*spec.fixed, *spec.checks, *spec.renamed.values()):
            assert key in spec.options, (spec.name, key)
    for target in ("learner", "model"):
        ranks = [METHODS[n].rank for n in cvstats.inference.registry.order(target)]
        assert len(set(ranks)) == len(ranks), f"two {target} methods share a rank: {ranks}"


def test_orders_and_tables_are_read_off_the_declarations():
    from cvstats.inference import recommend
    from cvstats.inference.registry import method_table

    order = method_table("order")
    for target, names in (("learner", recommend.LEARNER_ORDER), ("model", recommend.MODEL_ORDER)):
        rows = order[order["target"] == target]
        assert tuple(rows["method"]) == names
        assert rows["rank"].tolist() == list(range(1, len(names) + 1))
        assert all(METHODS[n].target == target for n in names)
    assert dict(recommend.REASONS) == {n: s.reason for n, s in METHODS.items()}
    table = method_table()
    assert table["method"].tolist() == list(METHODS)
    assert table["source"].str.len().min() > 0
    with pytest.raises(ArgumentError, match="`kind`"):
        method_table("nope")


def test_the_public_function_is_the_declared_one():
    for spec in METHODS.values():
        assert getattr(cvstats, spec.func.__name__) is spec.func
        assert getattr(cvstats.inference, spec.func.__name__) is spec.func
        assert spec.function == f"{spec.func.__module__}:{spec.func.__name__}"
