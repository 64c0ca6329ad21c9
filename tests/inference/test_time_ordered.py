"""Time-ordered splits (``nested_train = 1``): the methods that pool splits refuse them.

``cvstats.designs.from_splitter(TimeSeriesSplit(...))`` records ``nested_train = 1``:
every split trains on the examples of the previous split and more. Such splits are
not exchangeable random draws of one design with one training size ``n1``, which
Lemma 1 and every variance formula over splits assume (docs/theory.md §2, §4), so every
registered method with ``random_splits`` refuses the cube with a ``DesignError``
saying why and what to do (a hold-out test of one split); the hold-out methods on
one split still run; ``compare`` leaves the refused methods out with a note and,
when none is left, raises an error carrying the notes; ``fit_rho``, ``fit_r`` and
``fit_lemma1`` refuse too. The attr travels with the cube (contrasts, selections,
score cubes, the compact form, save/open).
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from sklearn import model_selection as ms
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier
from test_registry_contract import designs_of_kinds

import cvstats
from cvstats import ArgumentError, CubeError, DesignError, designs
from cvstats.cube import scores_from_losses
from cvstats.cube.compact import compact_cube, to_compact
from cvstats.inference.registry import METHODS, applicable_methods, time_ordered_methods

N = 40
WHY = "training sets are nested .* not hold"


def time_series_cube(n_datasets: int = 0, zero_one: bool = False) -> xr.DataArray:
    d = designs.from_splitter(ms.TimeSeriesSplit(4), n=N)
    S = d.sizes["split"]
    rng = np.random.default_rng(0)
    shape = (n_datasets, S, N, 2) if n_datasets else (S, N, 2)
    losses = (rng.random(shape) < 0.4).astype(float) if zero_one else rng.random(shape)
    extra = ["dataset"] if n_datasets else []
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], extra_dims=extra)


#: A small design per design kind; the attr is set by hand to test every method's refusal.
KIND_DESIGNS = designs_of_kinds(N)


def nested_cube(kind: str) -> xr.DataArray:
    d = KIND_DESIGNS[kind]()
    losses = np.random.default_rng(1).random((d.sizes["split"], N, 2))
    cube = cvstats.from_arrays(losses, design=d, models=["a", "b"])
    return cube.assign_attrs(nested_train=1)


def test_the_time_series_design_flags_nested_training_sets():
    cube = time_series_cube()
    assert cube.attrs["nested_train"] == 1
    # the structure admits random-split methods; the attr is what refuses them
    pooled = [n for n in applicable_methods(cube) if METHODS[n].random_splits]
    assert pooled == ["resampled_t", "corrected_resampled_t"]


@pytest.mark.parametrize("name", [n for n, s in METHODS.items() if s.random_splits])
def test_every_method_that_pools_splits_refuses(name):
    spec = METHODS[name]
    cube = nested_cube(spec.design)
    data = cvstats.pairwise(cube) if spec.contrasts == "pairwise" else cube
    reason = spec.cube_refusal(data)
    assert reason is not None and "nested_train" in reason and "holdout_t(cube, split=" in reason
    with pytest.raises(DesignError, match=f"{name} pools the splits .*{WHY}") as info:
        spec.func(data, **spec.fixed)
    assert "Diebold & Mariano" in str(info.value)
    # the same cube without the attr runs
    spec.func(data.assign_attrs(nested_train=0), **spec.fixed)


@pytest.mark.parametrize("name", ["holdout_t", "mcnemar"])
def test_the_hold_out_methods_remain(name):
    spec = METHODS[name]
    assert not spec.random_splits
    cube = time_series_cube(zero_one=True)
    last = int(cube.split.values[np.argmax(cube.n_train.values)])
    assert last == 3
    res = spec.func(cube, split=last)
    expected = spec.func(cube.assign_attrs(nested_train=0), split=last)
    np.testing.assert_array_equal(np.asarray(res.statistic), np.asarray(expected.statistic))
    assert spec.cube_refusal(nested_cube("holdout")) is None


def refusal(cube: xr.DataArray) -> str:
    """The message of the corrected resampled t refusing the cube's contrasts."""
    with pytest.raises(DesignError) as info:
        cvstats.corrected_resampled_t(cvstats.pairwise(cube))
    return str(info.value)


def test_the_refusal_names_the_last_split_and_the_reason():
    cube = time_series_cube()
    message = refusal(cube)
    for words in (
        "corrected_resampled_t pools the splits as exchangeable random draws",
        "attr `nested_train` = 1",
        "grow and overlap",
        "fixed order",
        "holdout_t(cube, split=3)",
        "cube.sel(split=[3])",
    ):
        assert words in message, words
    # what runs over every split in time order is read off the registry
    ordered = time_ordered_methods(cube)
    supported = applicable_methods(cube, defaults_only=False)
    assert ordered == [n for n in supported if not METHODS[n].random_splits]
    for words in [f"{n}(cube) ({METHODS[n].source})" for n in ordered] or [
        "No method of cvstats pools time-ordered splits"
    ]:
        assert words in message, words


def test_the_refusal_names_the_declared_time_ordered_methods(monkeypatch):
    from dataclasses import replace

    from cvstats.inference import registry

    cube = time_series_cube()
    probe = replace(
        METHODS["holdout_t"], name="probe_ordered", design="resampled", source="Probe (2026)"
    )
    monkeypatch.setitem(registry.METHODS._specs, "probe_ordered", probe)
    assert "probe_ordered" in time_ordered_methods(cube)
    message = METHODS["resampled_t"].time_order_refusal(cube)
    assert "use: " in message and "probe_ordered(cube) (Probe (2026))" in message
    assert "No method of cvstats pools" not in message
    scores = scores_from_losses(cube)
    assert "use on a loss cube: " in METHODS["resampled_t"].time_order_refusal(scores)


def overlapping_cube() -> xr.DataArray:
    """Nested training sets whose test windows overlap (a rolling origin, 10 steps ahead)."""
    pairs = [(np.arange(10 + 5 * j), np.arange(10 + 5 * j, 20 + 5 * j)) for j in range(4)]
    d = designs.from_splitter(pairs, n=N)
    assert d.attrs["nested_train"] == 1
    losses = np.random.default_rng(0).random((d.sizes["split"], N, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"])


def test_compare_raises_when_every_method_is_refused():
    cube = overlapping_cube()
    with pytest.raises(ArgumentError, match="no method applies") as info:
        cvstats.compare("loss ~ model", cube)
    message = str(info.value)
    assert "resampled_t left out" in message and "corrected_resampled_t left out" in message
    assert "holdout_t(cube, split=3)" in message
    # named explicitly, the method raises its own error
    with pytest.raises(DesignError, match=WHY):
        cvstats.compare("loss ~ model", cube, methods=["resampled_t"])


def test_compare_on_the_last_split_runs_the_hold_out_methods():
    cube = time_series_cube(zero_one=True)
    table = cvstats.compare("loss ~ model", cube.sel(split=[3]))
    assert list(table.results) == ["holdout_t"]


def test_compare_leaves_out_the_refused_methods_with_a_note():
    # a hold-out block would be allowed, the pooled ones refused: a combined design
    cube = nested_cube("half")
    cube_one = cube.isel(split=[0])  # one main split: hold-out kind
    table = cvstats.compare("loss ~ model", cube_one)
    assert list(table.results) == ["holdout_t"]
    # a design whose methods all pool splits: every one noted
    with pytest.raises(ArgumentError, match="conservative_z left out: each pools the splits"):
        cvstats.compare("loss ~ model", cube)


def test_score_cube_of_time_ordered_splits_is_refused_with_the_loss_cube_route():
    scores = scores_from_losses(time_series_cube())
    assert scores.attrs["nested_train"] == 1
    with pytest.raises(DesignError, match="score cube keeps no per-example losses.*loss="):
        cvstats.resampled_t(scores)
    with pytest.raises(ArgumentError, match="no method applies"):
        cvstats.compare("loss ~ model", scores)


def test_the_attr_travels_with_the_cube(tmp_path):
    cube = time_series_cube(2)
    carried = {
        "pairwise": cvstats.pairwise(cube),
        "contrasts": cvstats.contrasts("loss ~ model", cube),
        "selection": cube.isel(dataset=0),
        "scores": scores_from_losses(cube),
        "compact": compact_cube(to_compact(cube)),
        "netcdf": cvstats.open_cube(cvstats.save(cube, tmp_path / "ts.nc")),
        "zarr": cvstats.open_cube(cvstats.save(cube, tmp_path / "ts.zarr")),
        "scores-netcdf": cvstats.open_cube(
            cvstats.save(scores_from_losses(cube), tmp_path / "scores.nc")
        ),
    }
    for what, data in carried.items():
        assert int(data.attrs["nested_train"]) == 1, what
        with pytest.raises(DesignError, match=WHY):
            cvstats.resampled_t(data)


def test_collect_and_from_cv_results_carry_the_attr():
    rng = np.random.default_rng(0)
    X, y = rng.random((N, 3)), np.tile([0, 1], N // 2)
    cv = ms.TimeSeriesSplit(3)
    design = designs.from_splitter(cv, X)
    learners = {"tree": DecisionTreeClassifier(random_state=0), "lr": LogisticRegression()}
    loss, acc = cvstats.collect(
        learners, X, y, design, loss="zero_one", scoring="accuracy", progress=False
    )
    assert loss.attrs["nested_train"] == 1 and acc.attrs["nested_train"] == 1
    results = {
        name: ms.cross_validate(est, X, y, cv=cv, return_indices=True)
        for name, est in learners.items()
    }
    cube = cvstats.from_cv_results(results, metric="score", greater_is_better=True)
    assert cube.attrs["nested_train"] == 1
    with pytest.raises(DesignError, match=WHY):
        cvstats.resampled_t(cube)


@pytest.mark.parametrize("bad", [2, -1, "yes", 1.0, None])
def test_the_attr_must_be_zero_or_one(bad):
    cube = time_series_cube().assign_attrs(nested_train=bad)
    with pytest.raises(CubeError, match="attr `nested_train` must be 1 .* or 0, or a bool"):
        cvstats.validate(cube)
    with pytest.raises(CubeError, match="attr `nested_train` must be 1"):
        cvstats.resampled_t(cube)


def test_a_bool_attr_is_read_as_the_int():
    # without the `time_ordered` attr the design also records (a cube saved before it)
    cube = time_series_cube()
    del cube.attrs["time_ordered"]
    with pytest.raises(DesignError, match=WHY):
        cvstats.resampled_t(cube.assign_attrs(nested_train=True))
    cvstats.resampled_t(cube.assign_attrs(nested_train=False))
    cvstats.resampled_t(cube.assign_attrs(nested_train=np.int64(0)))
    sliding = sliding_cube()
    with pytest.raises(DesignError, match="splits are time-ordered"):
        cvstats.resampled_t(sliding.assign_attrs(time_ordered=True))
    cvstats.resampled_t(sliding.assign_attrs(time_ordered=np.int64(0)))


def test_fits_across_datasets_refuse():
    cube = time_series_cube(3)
    with pytest.raises(DesignError, match=f"fit_rho pools the splits .*{WHY}"):
        cvstats.fit_rho(cube)
    with pytest.raises(DesignError, match=f"fit_rho pools the splits .*{WHY}"):
        cvstats.fit_rho("loss ~ model", cube)
    half = nested_cube("half")
    half = xr.concat([half, half], dim="dataset", combine_attrs="override")
    with pytest.raises(DesignError, match=f"fit_r pools the splits .*{WHY}"):
        cvstats.fit_r(half)
    scores = scores_from_losses(cube).sel(model="a")
    with pytest.raises(DesignError, match=f"Lemma-1 fit pools the splits .*{WHY}"):
        cvstats.fit_lemma1(scores, "dataset", "split")
    # without the attr, the same values are a Lemma-1 row
    cvstats.fit_lemma1(scores.drop_attrs(), "dataset", "split")


# --- sliding windows: TimeSeriesSplit(max_train_size=...) -------------------------


def sliding_cube() -> xr.DataArray:
    d = designs.from_splitter(ms.TimeSeriesSplit(4, max_train_size=8), n=N)
    losses = np.random.default_rng(2).random((d.sizes["split"], N, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"])


def test_a_sliding_window_is_time_ordered_though_not_nested():
    cube = sliding_cube()
    assert (cube.attrs["nested_train"], cube.attrs["time_ordered"]) == (0, 1)
    assert cube.n_train.values.tolist() == [8, 8, 8, 8]
    message = refusal(cube)
    for words in (
        "corrected_resampled_t pools the splits as exchangeable random draws",
        "splits are time-ordered (attr `time_ordered` = 1",
        "holdout_t(cube, split=3)",
        "diebold_mariano(cube)",
    ):
        assert words in message, words
    # compare runs what takes time-ordered splits and notes the pooled methods
    table = cvstats.compare("loss ~ model", cube)
    assert list(table.results) == time_ordered_methods(cube) == ["diebold_mariano"]
    assert any("resampled_t, corrected_resampled_t left out" in n for n in table.notes)
    # the fits across data sets refuse it too
    with pytest.raises(DesignError, match="fit_rho pools the splits .*time-ordered"):
        cvstats.fit_rho(xr.concat([cube, cube], dim="dataset", combine_attrs="override"))


@pytest.mark.parametrize("bad", [2, "yes", None])
def test_the_time_ordered_attr_must_be_zero_or_one(bad):
    cube = sliding_cube().assign_attrs(time_ordered=bad)
    with pytest.raises(CubeError, match="attr `time_ordered` must be 1 .* or 0, or a bool"):
        cvstats.validate(cube)
