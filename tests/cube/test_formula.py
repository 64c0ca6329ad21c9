import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from formulaic import model_matrix
from formulaic.errors import FormulaSyntaxError
from test_cube import own_splits_cube

import cvstats
from cvstats import ArgumentError, CvstatsTypeError, FormulaError, designs
from cvstats.cube.formula import contrast_matrix, contrasts, pairwise, parse_formula

MODELS = ["a", "b", "c"]


@pytest.fixture(scope="module")
def design():
    return designs.resampled(20, n_test=4, J=5, seed=0)


@pytest.fixture(scope="module")
def cube(design):
    losses = np.random.default_rng(0).random((design.sizes["split"], 20, 3))
    cube = cvstats.from_arrays(losses, design=design, models=MODELS, name="loss")
    cvstats.validate(cube)
    return cube


def cell_means_weights(rhs, models=MODELS):
    """Independent path: least-squares coefficients of the cell-means regression.

    With one row per model and response y = e_m (the m-th unit vector), the
    coefficients are the weights of model m; lstsq on the identity gives all of them.
    """
    frame = pd.DataFrame({"model": pd.Categorical(models, categories=models)})
    C = np.asarray(model_matrix(rhs, frame), dtype=float)
    W, *_ = np.linalg.lstsq(C, np.eye(len(models)), rcond=None)
    return W


def manual_contrasts(cube, W):
    """Σ_m W[c, m] L_m by a loop over models (NaN where the losses are NaN)."""
    L = cube.values
    out = np.zeros((*L.shape[:-1], W.shape[0]))
    for c in range(W.shape[0]):
        for m in range(W.shape[1]):
            out[..., c] += W[c, m] * L[..., m]
    return out


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------


def test_parse_formula():
    assert parse_formula("loss ~ model") == ("loss", "1 + model")
    assert parse_formula("zero_one ~ 0 + model") == ("zero_one", "model")
    assert parse_formula("loss ~ C(model, contr.sum)") == ("loss", "1 + C(model, contr.sum)")
    assert parse_formula("`my loss` ~ model")[0] == "my loss"


# --------------------------------------------------------------------------
# codings, each against weights derived independently
# --------------------------------------------------------------------------


def test_treatment_default_reference_is_first_model(cube):
    W = contrast_matrix("loss ~ model", cube)
    assert W.dims == ("contrast", "model")
    assert W.contrast.values.tolist() == ["Intercept", "model[T.b]", "model[T.c]"]
    assert W.model.values.tolist() == MODELS
    # Intercept = μ_a, model[T.b] = μ_b − μ_a, model[T.c] = μ_c − μ_a
    expected = [[1, 0, 0], [-1, 1, 0], [-1, 0, 1]]
    np.testing.assert_allclose(W.values, expected, atol=1e-12)
    np.testing.assert_allclose(W.values, cell_means_weights("model"), atol=1e-12)
    assert W.weights.values.tolist() == ["1*a", "-1*a + 1*b", "-1*a + 1*c"]


@pytest.mark.parametrize(
    "rhs", ["C(model, contr.treatment('b'))", "C(model, contr.treatment(base='b'))"]
)
def test_treatment_named_reference(cube, rhs):
    W = contrast_matrix(f"loss ~ {rhs}", cube)
    assert W.contrast.values.tolist() == ["Intercept", f"{rhs}[T.a]", f"{rhs}[T.c]"]
    # Intercept = μ_b, [T.a] = μ_a − μ_b, [T.c] = μ_c − μ_b
    expected = [[0, 1, 0], [1, -1, 0], [0, -1, 1]]
    np.testing.assert_allclose(W.values, expected, atol=1e-12)
    np.testing.assert_allclose(W.values, cell_means_weights(rhs), atol=1e-12)


@pytest.mark.parametrize("formula", ["loss ~ 0 + model", "loss ~ model - 1"])
def test_no_intercept_is_identity(cube, formula):
    W = contrast_matrix(formula, cube)
    assert W.contrast.values.tolist() == ["model[a]", "model[b]", "model[c]"]
    np.testing.assert_array_equal(W.values, np.eye(3))
    assert W.weights.values.tolist() == ["1*a", "1*b", "1*c"]
    # the contrast cube is the cube itself
    out = contrasts(formula, cube)
    np.testing.assert_array_equal(out.values, cube.values)


def test_sum_coding(cube):
    rhs = "C(model, contr.sum)"
    W = contrast_matrix(f"loss ~ {rhs}", cube)
    # formulaic's sum coding drops the last level: columns S.a = (1, 0, -1), S.b = (0, 1, -1).
    # μ_m = β0 + β_m (m = a, b), μ_c = β0 − β_a − β_b  ⇒  β0 = grand mean,
    # β_a = μ_a − grand mean, β_b = μ_b − grand mean.
    g = np.full(3, 1 / 3)
    expected = [g, np.eye(3)[0] - g, np.eye(3)[1] - g]
    assert W.contrast.values.tolist() == ["Intercept", f"{rhs}[S.a]", f"{rhs}[S.b]"]
    np.testing.assert_allclose(W.values, expected, atol=1e-12)
    np.testing.assert_allclose(W.values, cell_means_weights(rhs), atol=1e-12)
    assert W.weights.values.tolist() == [
        "0.3333*a + 0.3333*b + 0.3333*c",
        "0.6667*a - 0.3333*b - 0.3333*c",
        "-0.3333*a + 0.6667*b - 0.3333*c",
    ]


def test_helmert_coding(cube):
    rhs = "C(model, contr.helmert)"
    W = contrast_matrix(f"loss ~ {rhs}", cube)
    # formulaic's Helmert coding is R's unscaled contr.helmert: columns
    # H.b = (-1, 1, 0), H.c = (-1, -1, 2). Solving μ = β0 + β1 H.b + β2 H.c by hand:
    #   μ_a + μ_b + μ_c = 3 β0           ⇒ β0 = mean
    #   μ_b − μ_a = 2 β1                 ⇒ β1 = (μ_b − μ_a) / 2
    #   μ_c − (μ_a + μ_b)/2 = 3 β2       ⇒ β2 = (μ_c − (μ_a + μ_b)/2) / 3
    expected = [[1 / 3, 1 / 3, 1 / 3], [-1 / 2, 1 / 2, 0], [-1 / 6, -1 / 6, 1 / 3]]
    frame = pd.DataFrame({"model": pd.Categorical(MODELS, categories=MODELS)})
    np.testing.assert_array_equal(
        np.asarray(model_matrix(rhs, frame))[:, 1:], [[-1, -1], [1, -1], [0, 2]]
    )
    assert W.contrast.values.tolist() == ["Intercept", f"{rhs}[H.b]", f"{rhs}[H.c]"]
    np.testing.assert_allclose(W.values, expected, atol=1e-12)
    np.testing.assert_allclose(W.values, cell_means_weights(rhs), atol=1e-12)
    assert W.weights.values.tolist()[1:] == ["-0.5*a + 0.5*b", "-0.1667*a - 0.1667*b + 0.3333*c"]


@pytest.mark.parametrize(
    "rhs",
    [
        "model",
        "C(model, contr.sum)",
        "C(model, contr.helmert)",
        "C(model, contr.poly)",
        "C(model, contr.diff)",
        "C(model, levels=['c', 'b', 'a'])",
        "1",  # fewer coefficients than models: least squares (the grand mean)
    ],
)
def test_weights_are_cell_means_coefficients(cube, rhs):
    W = contrast_matrix(f"loss ~ {rhs}", cube)
    np.testing.assert_allclose(W.values, cell_means_weights(rhs), atol=1e-12)


def test_pairwise_weights_and_values(cube):
    out = pairwise(cube)
    assert out.contrast.values.tolist() == ["a - b", "a - c", "b - c"]
    assert out.weights.values.tolist() == ["1*a - 1*b", "1*a - 1*c", "1*b - 1*c"]
    L = cube.values
    expected = np.stack([L[..., 0] - L[..., 1], L[..., 0] - L[..., 2], L[..., 1] - L[..., 2]], -1)
    np.testing.assert_array_equal(out.values, expected)
    assert out.attrs["formula"] == "loss ~ pairwise(model)"


def test_pairwise_subset_sets_order_and_sign(cube):
    out = pairwise(cube, models=["c", "a"])
    assert out.contrast.values.tolist() == ["c - a"]
    assert out.weights.values.tolist() == ["-1*a + 1*c"]
    np.testing.assert_array_equal(
        out.isel(contrast=0).values, cube.sel(model="c").values - cube.sel(model="a").values
    )


# --------------------------------------------------------------------------
# the contrast cube
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "formula",
    ["loss ~ model", "loss ~ C(model, contr.sum)", "loss ~ C(model, contr.helmert)", "loss ~ 1"],
)
def test_values_are_weighted_sums(cube, formula):
    W = contrast_matrix(formula, cube).values
    out = contrasts(formula, cube)
    np.testing.assert_allclose(out.values, manual_contrasts(cube, W), atol=1e-12)


def test_nan_pattern_preserved_with_zero_weights(cube):
    # the Intercept of 'loss ~ model' has weight 0 on b and c: 0 * NaN must stay NaN
    out = contrasts("loss ~ model", cube)
    assert (contrast_matrix("loss ~ model", cube).values == 0).any()
    tested = cube.notnull().isel(model=0).values
    for c in range(out.sizes["contrast"]):
        np.testing.assert_array_equal(out.isel(contrast=c).notnull().values, tested)
    assert np.isfinite(out.values[tested]).all()


def test_structure_coords_and_attrs(cube):
    out = contrasts("loss ~ model", cube)
    assert out.dims == ("split", "example", "contrast")
    assert out.name == "loss"
    assert out.attrs == {**cube.attrs, "formula": "loss ~ model"}
    for name, coord in cube.coords.items():
        if "model" not in coord.dims:
            xr.testing.assert_identical(out[name], coord)
    assert "model" not in out.coords
    assert out.weights.dims == ("contrast",)
    assert out.weights.values.tolist() == ["1*a", "-1*a + 1*b", "-1*a + 1*c"]
    assert all(isinstance(v, str | int | np.integer) for v in out.attrs.values())


def test_contrast_cube_roundtrips_netcdf(cube, tmp_path):
    out = contrasts("loss ~ C(model, contr.sum)", cube)
    path = tmp_path / "contrasts.nc"
    out.to_netcdf(path, engine="h5netcdf")
    with xr.open_dataarray(path, engine="h5netcdf") as back:
        back = back.load()
    np.testing.assert_array_equal(back.values, out.values)
    assert back.contrast.values.tolist() == out.contrast.values.tolist()
    assert back.weights.values.tolist() == out.weights.values.tolist()
    assert back.attrs["formula"] == "loss ~ C(model, contr.sum)"


def test_dataset_input_picks_the_lhs_variable(cube):
    ds = xr.Dataset({"loss": cube, "other": cube * 2})
    out = contrasts("other ~ model", ds)
    assert out.name == "other"
    np.testing.assert_allclose(out.values, 2 * contrasts("loss ~ model", cube).values)
    xr.testing.assert_identical(pairwise(ds, loss="loss"), pairwise(cube))


def test_extra_leading_dim():
    # each dataset has its own splits (own NaN pattern)
    cube, mask = own_splits_cube([7, 8], MODELS, n=16, n_test=4, J=3, seed=2)
    cvstats.validate(cube)
    out = contrasts("loss ~ C(model, contr.sum)", cube)
    assert out.dims == ("dataset", "split", "example", "contrast")
    np.testing.assert_array_equal(out.dataset, [7, 8])
    W = contrast_matrix("loss ~ C(model, contr.sum)", cube).values
    np.testing.assert_allclose(out.values, manual_contrasts(cube, W), atol=1e-12)
    np.testing.assert_array_equal(out.notnull().isel(contrast=1).values, mask)
    assert pairwise(cube).dims == ("dataset", "split", "example", "contrast")


def test_dask_backed_cube_stays_lazy(cube):
    lazy = cube.chunk({"split": 2})
    out = contrasts("loss ~ C(model, contr.helmert)", lazy)
    assert out.chunks is not None
    pw = pairwise(lazy)
    assert pw.chunks is not None
    xr.testing.assert_allclose(out.compute(), contrasts("loss ~ C(model, contr.helmert)", cube))
    xr.testing.assert_identical(pw.compute(), pairwise(cube))


def test_antisymmetry(cube):
    b_vs_a = contrasts("loss ~ model", cube).sel(contrast="model[T.b]")
    a_vs_b = contrasts("loss ~ C(model, contr.treatment('b'))", cube).sel(
        contrast="C(model, contr.treatment('b'))[T.a]"
    )
    np.testing.assert_array_equal(b_vs_a.values, -a_vs_b.values)
    np.testing.assert_array_equal(
        pairwise(cube, models=["b", "a"]).values, -pairwise(cube, models=["a", "b"]).values
    )
    np.testing.assert_array_equal(
        b_vs_a.values, -pairwise(cube, models=["a", "b"]).isel(contrast=0).values
    )


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------


def test_error_unknown_variable(cube):
    with pytest.raises(FormulaError, match=r"uses \['x'\]; the only variable is `model`"):
        contrasts("loss ~ model + x", cube)
    with pytest.raises(FormulaError, match=r"uses \['learner'\]"):
        parse_formula("loss ~ learner")


def test_error_unknown_level(cube):
    msg = r"'xgb'.*not among the provided levels\. The models .* are \['a', 'b', 'c'\]"
    with pytest.raises(FormulaError, match=msg):
        contrasts("loss ~ C(model, contr.treatment('xgb'))", cube)


def test_error_levels_leaving_out_a_model(cube):
    # formulaic would warn and code model c as missing
    with pytest.raises(FormulaError, match=r"outside of the nominated levels.*\{'c'\}"):
        contrast_matrix("loss ~ C(model, levels=['a', 'b'])", cube)


def test_error_bad_syntax_keeps_formulaic_context(cube):
    with pytest.raises(FormulaError, match="cannot parse the formula") as info:
        contrasts("loss ~ model +", cube)
    message = str(info.value)
    assert "loss ~ model ⧛+⧚" in message  # formulaic's marker around the faulty token
    assert "\x1b" not in message  # without its terminal colour codes
    assert isinstance(info.value.__cause__, FormulaSyntaxError)
    with pytest.raises(FormulaError, match=re.escape("loss ~ ⧛C(model⧚")):
        parse_formula("loss ~ C(model")
    with pytest.raises(FormulaError, match=re.escape("loss ~ model ⧛|⧚ model")):
        parse_formula("loss ~ model | model")  # multi-part formulas are disabled


@pytest.mark.parametrize("formula", ["~ model", "model"])
def test_error_missing_lhs(cube, formula):
    with pytest.raises(FormulaError, match="no left-hand side.*write 'loss ~ model'"):
        contrasts(formula, cube)


@pytest.mark.parametrize("formula", ["np.log(loss) ~ model", "loss + other ~ model"])
def test_error_lhs_not_a_name(formula):
    with pytest.raises(FormulaError, match="must be the name of one loss"):
        parse_formula(formula)


def test_error_lhs_is_not_the_loss_name(cube):
    msg = "names the loss 'zero_one' but the cube is named 'loss'; write e.g. 'loss ~ model'"
    with pytest.raises(FormulaError, match=re.escape(msg)):
        contrasts("zero_one ~ model", cube)
    with pytest.raises(FormulaError, match="but the cube is named 'loss'"):
        pairwise(cube, loss="zero_one")


def test_error_dataset_without_the_variable(cube):
    ds = xr.Dataset({"loss": cube, "squared": cube})
    with pytest.raises(FormulaError, match=r"'zero_one'.*variables \['loss', 'squared'\]"):
        contrasts("zero_one ~ model", ds)
    with pytest.raises(FormulaError, match=r"`loss` is needed.*\['loss', 'squared'\]") as err:
        pairwise(ds)
    # the message names the call that works
    assert "cvstats.pairwise(data, loss='loss')" in str(err.value)
    xr.testing.assert_identical(pairwise(ds, loss="loss"), pairwise(ds["loss"]))
    # the description pairwise writes in `formula` is not a formula: the error says what is
    with pytest.raises(FormulaError, match="not a coding") as err:
        cvstats.compare(pairwise(ds["squared"]).attrs["formula"], ds)
    assert "cvstats.compare(cvstats.pairwise(data, loss='squared'))" in str(err.value)


@pytest.mark.parametrize(
    ("build", "formula", "match"),
    [
        (
            contrast_matrix,
            "loss ~ C(model, spans_intercept=False)",
            r"coefficient '.*\[c\]' .* is not estimable",
        ),
        (contrasts, "loss ~ 0", "defines no contrast"),
        (contrasts, "loss ~ pairwise(model)", r"cvstats.compare\(cvstats.pairwise\(cube\)\)"),
        (contrasts, "loss ~ np.log(model)", "cannot build contrasts.*np.log"),
    ],
    ids=["not_estimable", "no_contrast", "pairwise_spelling_points_to_pairwise", "evaluation"],
)
def test_error_formula_that_builds_no_contrast(cube, build, formula, match):
    with pytest.raises(FormulaError, match=match):
        build(formula, cube)


def test_error_types(cube):
    with pytest.raises(CvstatsTypeError, match="`formula` must be a str"):
        contrasts(3, cube)
    with pytest.raises(CvstatsTypeError, match="`data` must be a cube"):
        contrasts("loss ~ model", cube.values)


def test_error_pairwise_models(cube):
    with pytest.raises(ArgumentError, match=r"unknown model\(s\) \['xgb'\]; the models are"):
        pairwise(cube, models=["a", "xgb"])
    with pytest.raises(ArgumentError, match="at least two distinct models"):
        pairwise(cube, models=["a", "a"])
    with pytest.raises(ArgumentError, match="at least two distinct models"):
        pairwise(cube, models=["a"])
