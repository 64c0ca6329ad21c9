"""Formulas → linear contrasts over the ``model`` dim (theory.md §1).

Comparisons are contrasts: any linear combination ``Σ_m c_m L_m(j, i)`` of the
models' per-example losses has the covariance structure of a single model's
loss, so every inference method applies to it unchanged. This module turns a
formula such as ``"loss ~ model"`` into such contrasts and applies them to a
cube, before any method runs.

How a formula defines contrasts
-------------------------------
The right-hand side is parsed by formulaic (never by hand) and materialized on
a one-row-per-model table whose single column ``model`` is a categorical with
the cube's models as levels, in cube order (so the first model is the
treatment reference). This gives the model matrix ``C`` (models ×
coefficients) of a cell-means regression ``μ = C β``; the coefficients are
``β = W μ`` with ``W = C⁻¹`` (or the least-squares ``pinv(C)`` when there are
fewer coefficients than models), and each row of ``W`` is a weight vector over
the models. For three models ``a, b, c``:

=============================  =======================  ==========================
formula                        coefficient              weights on (a, b, c)
=============================  =======================  ==========================
``loss ~ model``               ``Intercept``            (1, 0, 0)
                               ``model[T.b]``           (-1, 1, 0)
                               ``model[T.c]``           (-1, 0, 1)
``loss ~ 0 + model``           ``model[a]`` ...         identity
``C(model, contr.sum)``        ``Intercept``            (1/3, 1/3, 1/3)
                               ``...[S.a]``             (2/3, -1/3, -1/3)
                               ``...[S.b]``             (-1/3, 2/3, -1/3)
``C(model, contr.helmert)``    ``Intercept``            (1/3, 1/3, 1/3)
                               ``...[H.b]``             (-1/2, 1/2, 0)
                               ``...[H.c]``             (-1/6, -1/6, 1/3)
=============================  =======================  ==========================

formulaic's sum coding drops the *last* level; its Helmert coding is R's
unscaled one (columns ``(-1, 1, 0)`` and ``(-1, -1, 2)``), so the Helmert
coefficient of the ``k``-th level (``k = 2, 3, ...``) is
``(μ_k − mean of the first k − 1 levels) / k``: ``(μ_b − μ_a) / 2``
and ``(μ_c − (μ_a + μ_b) / 2) / 3`` above. A reference level is picked with
``C(model, contr.treatment("b"))``; levels can be reordered with
``C(model, levels=[...])``.

The pairwise differences are not a coding (``K`` models have ``K(K−1)/2``
differences but only ``K − 1`` independent ones): use :func:`pairwise`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Hashable, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
import xarray as xr
from formulaic import Formula
from formulaic.errors import DataMismatchWarning, FormulaicError
from formulaic.formula import SimpleFormula
from formulaic.parser import DefaultFormulaParser

from cvstats.cube import validate
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, FormulaError
from cvstats.schema import CONTRAST, MODEL

__all__ = ["parse_formula", "contrast_matrix", "contrasts", "pairwise"]

#: Two-sided formulas only: no multi-part (``|``) or multi-stage (``[...]``) formulas.
_PARSER = DefaultFormulaParser(feature_flags={"twosided"})
#: formulaic highlights the faulty token between ⧛ ⧚ *and* in ANSI red; keep the markers.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Weights this small relative to the largest one are rounding residue of the inversion.
_ZERO = 1e-12
_EXAMPLE_FORMULA = "write e.g. 'loss ~ model' or 'loss ~ C(model, contr.sum)'"


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------


def _parse(formula: str) -> tuple[str, SimpleFormula]:
    """Parse ``formula`` with formulaic; return the loss name and the right-hand side."""
    if not isinstance(formula, str):
        raise CvstatsTypeError(
            f"`formula` must be a str such as 'loss ~ model', got {type(formula).__name__}."
        )
    try:
        parsed = Formula(formula, _parser=_PARSER)
    except FormulaicError as e:
        raise FormulaError(f"cannot parse the formula {formula!r}: {_ANSI.sub('', str(e))}") from e
    lhs = getattr(parsed, "lhs", None)
    rhs = getattr(parsed, "rhs", None)
    if lhs is None or rhs is None:
        raise FormulaError(
            f"the formula {formula!r} has no left-hand side naming the loss; write "
            "'loss ~ model' (the cube's name on the left, the models on the right)."
        )
    terms = list(lhs)
    names = {str(v) for v in lhs.required_variables}
    factors = list(terms[0].factors) if len(terms) == 1 else []
    if len(factors) != 1 or names != {factors[0].expr}:
        raise FormulaError(
            f"the left-hand side of {formula!r} must be the name of one loss (the cube's "
            f"name), got {str(lhs)!r}; write e.g. 'loss ~ model'."
        )
    others = sorted({str(v) for v in rhs.required_variables} - {MODEL})
    if "pairwise" in others:
        raise FormulaError(
            f"{formula!r}: pairwise differences are not a coding of `model` (K models have "
            "K(K-1)/2 differences but only K-1 independent contrasts); use "
            "cvstats.pairwise(cube) instead."
        )
    if others:
        raise FormulaError(
            f"the right-hand side of {formula!r} uses {others}; the only variable is "
            f"`{MODEL}` (the cube's models), {_EXAMPLE_FORMULA}."
        )
    return next(iter(names)), rhs


def parse_formula(formula: str) -> tuple[str, str]:
    """Split a contrast formula into the loss it names and its right-hand side.

    The formula is parsed by formulaic (two-sided formulas only). The left-hand
    side must be the name of one loss; the right-hand side may only use the
    variable ``model``.

    Parameters
    ----------
    formula : str
        A formula such as ``"loss ~ model"`` or ``"zero_one ~ C(model, contr.sum)"``.

    Returns
    -------
    lhs : str
        The name of the loss (the cube's name, or a variable of a Dataset).
    rhs : str
        formulaic's normalized right-hand side (e.g. ``"1 + model"``).

    Raises
    ------
    FormulaError
        If formulaic cannot parse the formula (its message, with the faulty
        token between ``⧛ ⧚``, is kept), if there is no left-hand side or it is
        not a single name, or if the right-hand side uses a variable other than
        ``model``.

    Examples
    --------
    >>> from cvstats.formula import parse_formula
    >>> parse_formula("loss ~ model")
    ('loss', '1 + model')
    >>> parse_formula("zero_one ~ 0 + model")
    ('zero_one', 'model')
    >>> parse_formula("loss ~ model +")
    Traceback (most recent call last):
    ...
    cvstats.errors.FormulaError: cannot parse the formula 'loss ~ model +': Operator `+` ...
    """
    lhs, rhs = _parse(formula)
    return lhs, str(rhs)


# --------------------------------------------------------------------------
# weights
# --------------------------------------------------------------------------


def _select(data: xr.DataArray | xr.Dataset, loss: str, what: str) -> xr.DataArray:
    """Return the cube named ``loss`` from ``data`` (a cube or a Dataset of cubes)."""
    if isinstance(data, xr.Dataset):
        if loss not in data.data_vars:
            raise FormulaError(
                f"{what} names the loss {loss!r} but the Dataset holds the variables "
                f"{[str(v) for v in data.data_vars]}."
            )
        cube = data[loss]
    elif isinstance(data, xr.DataArray):
        if data.name != loss:
            hint = f"; write e.g. '{data.name} ~ model'" if what.startswith("the formula") else ""
            raise FormulaError(
                f"{what} names the loss {loss!r} but the cube is named {data.name!r}{hint}."
            )
        cube = data
    else:
        raise CvstatsTypeError(
            "`data` must be a cube (xarray.DataArray) or an xarray.Dataset of cubes, got "
            f"{type(data).__name__}."
        )
    if MODEL not in cube.dims or MODEL not in cube.coords:
        raise CubeError(
            f"the cube {loss!r} has no `{MODEL}` dim with model names (dims {list(cube.dims)})."
        )
    return cube


def _model_names(cube: xr.DataArray) -> list[str]:
    """Return the cube's model names, checked to be unique strings."""
    models = cube[MODEL].values.tolist()
    if not all(isinstance(m, str) for m in models) or len(set(models)) != len(models):
        raise CubeError(f"the `{MODEL}` coordinate must hold unique names (str), got {models}.")
    return models


def _format_weights(row: np.ndarray, models: Sequence[str]) -> str:
    """Write a weight vector readably: ``"-1*a + 1*b"``, zero weights omitted."""
    parts = []
    for w, m in zip(row.tolist(), models, strict=True):
        if w == 0:
            continue
        term = f"{abs(w):.4g}*{m}"
        if parts:
            parts.append(f"{'-' if w < 0 else '+'} {term}")
        else:
            parts.append(f"-{term}" if w < 0 else term)
    return " ".join(parts) if parts else "0"


def _weights_array(
    weights: np.ndarray, names: Sequence[str], models: Sequence[str]
) -> xr.DataArray:
    """Wrap a (contrast, model) weight matrix with its coordinates."""
    readable = [_format_weights(row, models) for row in weights]
    return xr.DataArray(
        weights,
        dims=(CONTRAST, MODEL),
        coords={
            CONTRAST: np.asarray(names, dtype=str),
            MODEL: np.asarray(models, dtype=object),
            "weights": (CONTRAST, np.asarray(readable, dtype=str)),
        },
        name="weights",
    )


def _model_matrix(rhs: SimpleFormula, formula: str, models: Sequence[str]) -> pd.DataFrame:
    """Materialize the right-hand side on one row per model (levels in cube order)."""
    frame = pd.DataFrame({MODEL: pd.Categorical(models, categories=models)})
    try:
        with warnings.catch_warnings():
            # A level list that leaves out a model makes formulaic warn and code it as
            # missing: that is an error here, not a warning.
            warnings.simplefilter("error", DataMismatchWarning)
            matrix = rhs.get_model_matrix(frame, context={}, na_action="raise")
    except Exception as e:  # formulaic evaluates Python: any failure is the formula's
        message = _ANSI.sub("", str(e))
        raise FormulaError(
            f"cannot build contrasts from {formula!r}: {type(e).__name__}: "
            f"{message.rstrip()} The models (the levels of `{MODEL}`) are {list(models)}."
        ) from e
    return matrix


def contrast_matrix(formula: str, data: xr.DataArray | xr.Dataset) -> xr.DataArray:
    """Return the contrast weights a formula defines over the models of a cube.

    The right-hand side is materialized by formulaic on one row per model (a
    categorical ``model`` with the cube's models as levels, in cube order), giving
    the model matrix ``C`` of the cell-means regression ``μ = C β``. The weights
    are ``W = C⁻¹`` (``pinv(C)``, the least-squares coefficients, when there are
    fewer coefficients than models): coefficient ``c`` is ``Σ_m W[c, m] μ_m``.

    Parameters
    ----------
    formula : str
        ``"<loss> ~ <terms in model>"``, e.g. ``"loss ~ model"`` (treatment
        contrasts against the first model), ``"loss ~ 0 + model"`` (each model's
        own loss), ``"loss ~ C(model, contr.treatment('b'))"``,
        ``"loss ~ C(model, contr.sum)"``, ``"loss ~ C(model, contr.helmert)"``.
    data : xarray.DataArray or xarray.Dataset
        A cube, whose name must be the formula's left-hand side, or a Dataset of
        cubes, of which the left-hand side picks one.

    Returns
    -------
    xarray.DataArray
        Weights with dims ``("contrast", "model")``; the ``contrast`` coordinate
        holds formulaic's column names (``"Intercept"``, ``"model[T.b]"``, ...)
        and the string coordinate ``weights`` on ``contrast`` spells each row out
        (``"-1*a + 1*b"``, zero weights omitted, 4 significant digits).

    Raises
    ------
    FormulaError
        For every problem of :func:`parse_formula`; a left-hand side that is not
        the cube's name or not a variable of the Dataset; a level that is not a
        model (``contr.treatment("xgb")``) or any other failure to evaluate the
        right-hand side; a coefficient that is not estimable (the model matrix is
        rank deficient); a formula with no coefficient (``loss ~ 0``).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.formula import contrast_matrix
    >>> design = cvstats.designs.resampled(6, n_test=2, J=3, seed=0)
    >>> cube = cvstats.from_arrays(np.ones((3, 6, 3)), design=design,
    ...                            models=["a", "b", "c"], name="loss")
    >>> W = contrast_matrix("loss ~ model", cube)
    >>> W.values
    array([[ 1.,  0.,  0.],
           [-1.,  1.,  0.],
           [-1.,  0.,  1.]])
    >>> W.contrast.values.tolist()
    ['Intercept', 'model[T.b]', 'model[T.c]']
    >>> contrast_matrix("loss ~ C(model, contr.sum)", cube).weights.values.tolist()
    ['0.3333*a + 0.3333*b + 0.3333*c', '0.6667*a - 0.3333*b - 0.3333*c', '-0.3333*a + 0.6667*b - 0.3333*c']
    """  # noqa: E501
    return _weights(formula, data)[1]


def _weights(formula: str, data: xr.DataArray | xr.Dataset) -> tuple[xr.DataArray, xr.DataArray]:
    """Return the cube a formula names and its weights (see :func:`contrast_matrix`)."""
    loss, rhs = _parse(formula)
    cube = _select(data, loss, f"the formula {formula!r}")
    validate(cube)
    models = _model_names(cube)
    matrix = _model_matrix(rhs, formula, models)
    names = [str(c) for c in matrix.columns]
    C = np.asarray(matrix, dtype=float)
    if C.shape != (len(models), len(names)) or not np.isfinite(C).all():
        raise FormulaError(
            f"{formula!r} does not give one finite row per model on the models {models}."
        )
    if not names:
        raise FormulaError(f"{formula!r} defines no contrast; {_EXAMPLE_FORMULA}.")
    rank = np.linalg.matrix_rank(C)
    if rank < len(names):
        # name the first column that adds nothing to the ones before it
        k = next(k for k in range(1, len(names) + 1) if np.linalg.matrix_rank(C[:, :k]) < k)
        raise FormulaError(
            f"the coefficient {names[k - 1]!r} of {formula!r} is not estimable: the formula "
            f"has {len(names)} coefficients but the {len(models)} models {models} only "
            f"determine {rank} of them (rank-deficient coding, e.g. an intercept plus a "
            "full set of model indicators)."
        )
    W = np.linalg.inv(C) if C.shape[0] == C.shape[1] else np.linalg.pinv(C)
    W[np.abs(W) < _ZERO * np.abs(W).max()] = 0.0
    return cube, _weights_array(W, names, models)


# --------------------------------------------------------------------------
# contrast cubes
# --------------------------------------------------------------------------


def _apply(cube: xr.DataArray, weights: xr.DataArray, formula: str) -> xr.DataArray:
    """Return ``weights @ cube`` along ``model``: the contrast cube (lazy on dask)."""
    # einsum propagates NaN (0 * NaN is NaN), and the NaN pattern is the same for every
    # model, so the contrast is NaN exactly off the test sets.
    out = xr.dot(cube, weights.astype(cube.dtype), dim=MODEL)
    dims: list[Hashable] = [d for d in cube.dims if d != MODEL]
    out = out.transpose(*dims, CONTRAST)
    out.name = cube.name
    out.attrs = {**cube.attrs, "formula": formula}
    return out


def contrasts(formula: str, data: xr.DataArray | xr.Dataset) -> xr.DataArray:
    """Apply the contrasts a formula defines to the per-example losses of a cube.

    Every contrast ``c`` gets the losses ``L_c(j, i) = Σ_m W[c, m] L_m(j, i)``
    with the weights ``W`` of :func:`contrast_matrix`. By theory.md §1 a contrast
    has the covariance structure of a single model's loss, so every inference
    method applies to the contrast cube as to a cube of models.

    Parameters
    ----------
    formula : str
        ``"<loss> ~ <terms in model>"``; see :func:`contrast_matrix`.
    data : xarray.DataArray or xarray.Dataset
        A cube named after the formula's left-hand side, or a Dataset of cubes.
        numpy or dask backed: a dask-backed cube gives a lazy result.

    Returns
    -------
    xarray.DataArray
        The contrast cube: dims ``(*extra, "split", "example", "contrast")``
        (``model`` replaced by ``contrast``), NaN exactly where the cube is NaN
        (off the test sets), named after the loss, with every coordinate of the
        cube not on ``model`` (split coordinates, ``in_train``, ...), the
        ``contrast`` and ``weights`` coordinates of :func:`contrast_matrix`, and
        the cube's attrs plus ``formula``.

    Raises
    ------
    FormulaError
        See :func:`contrast_matrix`.

    See Also
    --------
    contrast_matrix : the weights as a ``(contrast, model)`` matrix.
    pairwise : all pairwise differences of models.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.formula import contrasts
    >>> design = cvstats.designs.resampled(6, n_test=2, J=3, seed=0)
    >>> losses = np.broadcast_to([0.5, 0.25, 1.0], (3, 6, 3))
    >>> cube = cvstats.from_arrays(losses, design=design, models=["a", "b", "c"], name="loss")
    >>> diff = contrasts("loss ~ model", cube)
    >>> diff.dims
    ('split', 'example', 'contrast')
    >>> diff.weights.values.tolist()
    ['1*a', '-1*a + 1*b', '-1*a + 1*c']
    >>> diff.mean(["split", "example"]).values
    array([ 0.5 , -0.25,  0.5 ])
    >>> int(diff.isnull().sum()) == int(cube.isnull().sum())  # NaN off the test sets
    True
    """
    cube, weights = _weights(formula, data)
    return _apply(cube, weights, formula)


def pairwise(
    data: xr.DataArray | xr.Dataset,
    *,
    loss: str | None = None,
    models: Sequence[str] | None = None,
) -> xr.DataArray:
    """Return the contrast cube of all pairwise differences of models.

    For every pair ``(a, b)`` with ``a`` before ``b`` (in cube order, or in the
    order of ``models``), the contrast ``"a - b"`` has the losses
    ``L_a(j, i) - L_b(j, i)`` (theory.md §1). Pairwise differences are not a
    coding of ``model`` (``K`` models have ``K(K-1)/2`` of them but only ``K - 1``
    are independent), so they have no formula: this function builds them.

    Parameters
    ----------
    data : xarray.DataArray or xarray.Dataset
        A cube, or a Dataset of cubes (then ``loss`` picks one).
    loss : str, optional
        Name of the loss: must be the cube's name when given with a cube; needed
        with a Dataset of more than one variable.
    models : sequence of str, optional
        The models to compare, in the order that sets each difference's sign
        (default: every model, in cube order). At least two.

    Returns
    -------
    xarray.DataArray
        A contrast cube structured as the one of :func:`contrasts`: dims
        ``(*extra, "split", "example", "contrast")`` with ``contrast`` labels
        ``"a - b"``, the ``weights`` coordinate (``"1*a - 1*b"``) and the attr
        ``formula`` set to ``"<loss> ~ pairwise(model)"`` (a description: the
        ``weights`` coordinate is the exact record).

    Raises
    ------
    FormulaError
        If ``loss`` is not the cube's name or not a variable of the Dataset.
    ArgumentError
        If ``models`` names an unknown model, repeats one or holds fewer than two.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> design = cvstats.designs.resampled(6, n_test=2, J=3, seed=0)
    >>> losses = np.broadcast_to([0.5, 0.25, 1.0], (3, 6, 3))
    >>> cube = cvstats.from_arrays(losses, design=design, models=["a", "b", "c"], name="loss")
    >>> diff = cvstats.formula.pairwise(cube)
    >>> diff.contrast.values.tolist()
    ['a - b', 'a - c', 'b - c']
    >>> diff.mean(["split", "example"]).values
    array([ 0.25, -0.5 , -0.75])
    """
    if loss is None:
        if isinstance(data, xr.Dataset):
            if len(data.data_vars) != 1:
                raise FormulaError(
                    "`loss` is needed to pick a cube from a Dataset of "
                    f"{len(data.data_vars)} variables {[str(v) for v in data.data_vars]}."
                )
            loss = str(next(iter(data.data_vars)))
        elif isinstance(data, xr.DataArray):
            loss = str(data.name)
    cube = _select(data, str(loss), "`loss`")
    validate(cube)
    names = _model_names(cube)
    chosen = list(names) if models is None else [str(m) for m in models]
    unknown = [m for m in chosen if m not in names]
    if unknown:
        raise ArgumentError(f"`models` names unknown model(s) {unknown}; the models are {names}.")
    if len(set(chosen)) != len(chosen) or len(chosen) < 2:
        raise ArgumentError(
            f"`models` must name at least two distinct models, got {chosen}; the models are "
            f"{names}."
        )
    pairs = list(combinations(chosen, 2))
    W = np.zeros((len(pairs), len(names)))
    for row, (a, b) in enumerate(pairs):
        W[row, names.index(a)] = 1.0
        W[row, names.index(b)] = -1.0
    weights = _weights_array(W, [f"{a} - {b}" for a, b in pairs], names)
    return _apply(cube, weights, f"{loss} ~ pairwise({MODEL})")
