"""Methods on score cubes: the same answers as on the loss cube, or a refusal that says why.

A score cube holds one value per split and model (``cvstats.cube.score``). Every
registry method that needs split means only (``needs == "split means"``) reads
nothing of a loss cube but its split means, split coordinates and sizes, so on
:func:`cvstats.cube.scores_from_losses` of a loss cube it must give exactly the
loss cube's result (every numeric field to ``rtol=1e-12``, every other field
equal) — checked here for every such method on every fixture cube of
``tests/inference/test_registry_contract.py`` whose design supports it, through
``compare``, lazily, and on random small designs (hypothesis). The methods that
need per-example losses refuse a score cube with a :class:`cvstats.CubeError`
naming the loss cube to collect instead; ``compare`` leaves them out and notes it.
``fit_rho``, ``fit_r`` and ``fit_lemma1`` (split means across data sets) work
unchanged; ``kfold_statistics`` and ``kfold_moments`` (per-example errors) refuse.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import dask.array as da
import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_registry_contract import (
    DESIGN_OF,
    EXTRA_DESIGN_OF,
    cube_of,
    lazy,
)

import cvstats
from cvstats import CubeError, designs
from cvstats.cube import is_score, scores_from_losses
from cvstats.inference.registry import METHODS, MethodSpec, applicable_methods, design_kinds
from cvstats.results import Result

RTOL = 1e-12
SPLIT_MEANS = [n for n, s in METHODS.items() if s.needs == "split means"]
EXAMPLES = [n for n, s in METHODS.items() if s.needs == "examples"]
KINDS = [*DESIGN_OF, *EXTRA_DESIGN_OF]

SETTINGS = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,  # CI-stable: the same examples every run
)


def test_the_registry_has_both_kinds_of_method():
    assert SPLIT_MEANS and EXAMPLES
    assert set(SPLIT_MEANS) | set(EXAMPLES) == set(METHODS)


def run(spec: MethodSpec, cube: xr.DataArray, **options: Any) -> Result:
    cube = cvstats.pairwise(cube) if spec.contrasts == "pairwise" else cube
    return spec.func(cube, **{**spec.fixed, **options})


def fields(res: Result) -> dict[str, Any]:
    """Every field of a result (a frozen dataclass)."""
    return {f.name: getattr(res, f.name) for f in dataclasses.fields(res)}


def assert_same(
    got: Result, want: Result, rtol: float = RTOL, atol: float = 0.0, what: str = ""
) -> None:
    """Numeric fields to ``rtol`` (same dims and coordinates), every other field equal."""
    assert type(got) is type(want)
    g, w = fields(got), fields(want)
    assert set(g) == set(w)
    for name, value in w.items():
        other = g[name]
        if isinstance(value, xr.DataArray):
            assert isinstance(other, xr.DataArray), f"{what} {name}"
            assert other.dims == value.dims, f"{what} {name}"
            for dim in value.dims:
                if dim in value.coords:
                    np.testing.assert_array_equal(other[dim].values, value[dim].values)
            np.testing.assert_allclose(
                np.asarray(other),
                np.asarray(value),
                rtol=rtol,
                atol=atol,
                equal_nan=True,
                err_msg=f"{what} {name}",
            )
        else:
            assert other == value, f"{what} {name}: {other!r} != {value!r}"


def cases() -> list[tuple[str, str]]:
    """(method, fixture kind) for every split-mean method and fixture its design supports."""
    return [
        (name, kind)
        for kind in KINDS
        for name in SPLIT_MEANS
        if METHODS[name].design in design_kinds(cube_of(kind))
    ]


def test_every_split_mean_method_has_a_case():
    assert {name for name, _ in cases()} == set(SPLIT_MEANS)


@pytest.mark.parametrize(("name", "kind"), cases())
def test_split_mean_methods_equal_on_both_forms(name, kind):
    spec = METHODS[name]
    cube = cube_of(kind)
    scores = scores_from_losses(cube)
    assert is_score(scores)
    assert_same(run(spec, scores), run(spec, cube), what=f"{name} on {kind}")
    # on the pairwise contrasts of each form: the same contrasts, summed in another order
    # (so probabilities near 0, such as 1 - 1, differ by rounding: atol)
    assert_same(
        run(spec, cvstats.pairwise(scores)),
        run(spec, cvstats.pairwise(cube)),
        rtol=1e-10,
        atol=1e-14,
        what=f"{name} on the pairwise contrasts of {kind}",
    )


@pytest.mark.parametrize("name", SPLIT_MEANS)
def test_split_mean_methods_stay_lazy_on_a_score_cube(name):
    spec = METHODS[name]
    kind = next(k for n, k in cases() if n == name)
    scores = scores_from_losses(cube_of(kind))
    res = run(spec, lazy(scores))
    for field in res.value_fields:
        assert getattr(res, field).chunks is not None, field
    computed = type(res)(
        **{k: (v.compute() if isinstance(v, xr.DataArray) else v) for k, v in fields(res).items()}
    )
    assert_same(computed, run(spec, scores), what=name)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "holdout"])  # holdout: below
def test_compare_on_both_forms(kind):
    cube = cube_of(kind)
    scores = scores_from_losses(cube)
    on_losses = cvstats.compare("loss ~ model", cube)
    on_scores = cvstats.compare("loss ~ model", scores)
    left_out = [n for n in on_losses.results if METHODS[n].needs == "examples"]
    assert list(on_scores.results) == [n for n in on_losses.results if n not in left_out]
    for name in on_scores.results:
        assert_same(
            on_scores.results[name], on_losses.results[name], rtol=1e-10, atol=1e-14, what=name
        )
    notes = [n for n in on_scores.notes if "per-example losses" in n]
    assert [n.split(" left out: ")[0] for n in notes] == left_out
    for note in notes:
        assert "score cube" in note and "cvstats.collect(..., loss=...)" in note
    assert applicable_methods(scores, defaults_only=False) == [
        n for n in applicable_methods(cube, defaults_only=False) if METHODS[n].needs != "examples"
    ]


@pytest.mark.parametrize("name", EXAMPLES)
def test_methods_needing_examples_refuse_a_score_cube(name):
    spec = METHODS[name]
    scores = scores_from_losses(cube_of(spec.design))
    match = (
        rf"{name} needs per-example losses, but got a score cube .*variance .*"
        r"cvstats\.collect\(\.\.\., loss=\.\.\.\) or cvstats\.from_arrays"
    )
    with pytest.raises(CubeError, match=match):
        run(spec, scores)
    with pytest.raises(CubeError, match=match):  # named in compare: an error, before running
        cvstats.compare("loss ~ model", scores, methods=[name])
    assert name not in applicable_methods(scores, defaults_only=False)
    assert name not in applicable_methods(scores, target="model", defaults_only=False)
    assert name in applicable_methods(scores, defaults_only=False, per_example=True)


def test_compare_with_no_applicable_method_says_why():
    scores = scores_from_losses(cube_of("holdout"))
    with pytest.raises(cvstats.ArgumentError, match="no method applies.*holdout_t left out"):
        cvstats.compare("loss ~ model", scores)


# ---------------------------------------------------------------------------
# random small designs
# ---------------------------------------------------------------------------


@st.composite
def loss_cubes(draw):
    seed = draw(st.integers(0, 2**16))
    family = draw(st.sampled_from(["resampled", "kfold", "nadeau_bengio", "5x2", "bootstrap"]))
    if family == "resampled":
        n = draw(st.integers(8, 40))
        n_test, J = draw(st.integers(1, n // 2)), draw(st.integers(2, 6))
        d = designs.resampled(n, n_test, J=J, seed=seed)
    elif family == "kfold":
        n = draw(st.integers(6, 40))
        K = draw(st.integers(2, min(6, n // 2)))
        d = designs.kfold(n, K, repeats=draw(st.integers(1, 3)), seed=seed)
    elif family == "nadeau_bengio":
        n = draw(st.integers(16, 40))
        d = designs.nadeau_bengio(
            n,
            draw(st.integers(2, n // 2 - 2)),
            J=draw(st.integers(2, 4)),
            M=draw(st.integers(2, 3)),
            R=draw(st.integers(2, 3)),
            seed=seed,
        )
    elif family == "5x2":
        d = designs.five_by_two(draw(st.integers(4, 40)), seed=seed)
    else:
        n = draw(st.integers(10, 40))
        d = designs.bootstrap(
            n, draw(st.integers(2, n // 2)), J=2, R=draw(st.integers(2, 4)), seed=seed
        )
    n_models = draw(st.integers(1, 3))
    extra = draw(st.sampled_from([(), (2,)]))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    rng = np.random.default_rng(seed)
    shape = (*extra, d.sizes["split"], d.sizes["example"], n_models)
    losses = rng.gamma(2.0, draw(st.floats(0.05, 20.0)), size=shape)
    losses += rng.normal(0.0, 0.5, size=(*shape[:-2], 1, n_models))  # split effects
    return cvstats.from_arrays(
        losses.astype(dtype),
        design=d,
        models=[f"m{i}" for i in range(n_models)],
        extra_dims=["dataset"] if extra else (),
    )


@SETTINGS
@given(cube=loss_cubes())
def test_split_mean_methods_equal_on_random_designs(cube):
    scores = scores_from_losses(cube)
    assert scores.dtype == cube.dtype
    names = applicable_methods(cube, defaults_only=False)
    assert applicable_methods(scores, defaults_only=False) == [
        n for n in names if METHODS[n].needs != "examples"
    ]
    for name in names:
        spec = METHODS[name]
        if spec.needs == "examples":
            with pytest.raises(CubeError, match="needs per-example losses"):
                run(spec, scores)
            continue
        assert_same(run(spec, scores), run(spec, cube), what=name)


# ---------------------------------------------------------------------------
# analyses across data sets
# ---------------------------------------------------------------------------


def assert_same_estimates(got: xr.Dataset, want: xr.Dataset) -> None:
    assert set(got.data_vars) == set(want.data_vars)
    assert got.attrs == want.attrs
    for name in want.data_vars:
        np.testing.assert_allclose(got[name].values, want[name].values, rtol=RTOL, err_msg=name)


@pytest.mark.filterwarnings("ignore::cvstats.ZeroVarianceWarning")
@pytest.mark.parametrize(
    ("func", "kind"),
    [(cvstats.fit_rho, "resampled"), (cvstats.fit_rho, "kfold"), (cvstats.fit_r, "half")],
)
def test_across_datasets_on_a_score_cube(func, kind):
    cube = cube_of(kind)  # three data sets along `dataset`
    scores = scores_from_losses(cube)
    assert_same_estimates(func(scores), func(cube))
    with_formula = func("loss ~ model", scores)
    expected = func("loss ~ model", cube)
    for name in expected.data_vars:
        np.testing.assert_allclose(with_formula[name], expected[name], rtol=1e-10)


def test_fit_lemma1_on_a_score_cube():
    cube = cube_of("resampled")
    scores = scores_from_losses(cube)
    main = np.asarray(scores["block"].values) == "main"
    got = cvstats.fit_lemma1(scores.isel(split=main), "dataset", "split")
    want = cvstats.fit_lemma1(cube.isel(split=main).mean("example"), "dataset", "split")
    assert_same_estimates(got, want)


@pytest.mark.parametrize("func", [cvstats.kfold_statistics, cvstats.kfold_moments])
def test_kfold_variance_refuses_a_score_cube(func):
    scores = scores_from_losses(cube_of("kfold"))
    with pytest.raises(CubeError, match="needs per-example losses.*score cube"):
        func(scores)


def test_dask_score_cube_from_dask_losses():
    cube = cube_of("resampled")
    chunked = cube.copy(data=da.from_array(cube.values, chunks=(1, 5, -1, -1)))
    scores = scores_from_losses(chunked)
    assert scores.chunks is not None
    res = cvstats.corrected_resampled_t(scores)
    assert res.estimate.chunks is not None
    assert_same(
        type(res)(
            **{
                k: (v.compute() if isinstance(v, xr.DataArray) else v)
                for k, v in fields(res).items()
            }
        ),
        cvstats.corrected_resampled_t(cube),
    )


def test_per_example_analyses_outside_the_registry_refuse_a_score_cube():
    design = cvstats.designs.nested_cv(40, 4, seed=0)
    losses = np.random.default_rng(0).random((design.sizes["split"], 40, 2))
    nested = cvstats.from_arrays(losses, design=design, models=["a", "b"], name="loss")
    with pytest.raises(cvstats.CubeError, match="needs per-example losses"):
        cvstats.inference.nested.nested_cv_terms(scores_from_losses(nested))
    d = cvstats.designs.kfold(40, 4, repeats=2, seed=1)
    cube = cvstats.from_arrays(
        np.random.default_rng(1).random((8, 40, 2)), design=d, models=["a", "b"], name="loss"
    )
    with pytest.raises(cvstats.CubeError, match="needs per-example losses"):
        cvstats.cv_estimates(scores_from_losses(cube))
