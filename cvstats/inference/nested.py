"""Bates, Hastie & Tibshirani (2024): nested cross-validation interval for ``Err_XY``.

See docs/nested-cv.md. From a cube of the :func:`cvstats.designs.nested_cv`
design (a K-fold ``"main"`` block and a ``"nested"`` block of fits that leave
out each pair of folds), the nested-CV estimate of the mean squared error of
the CV estimate gives a standard error that accounts for the correlation
between folds, and the gap between the nested and plain CV estimates a bias
correction (:mod:`cvstats.kernels.nested`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from cvstats.cube.apply import apply_kernel
from cvstats.cube.groups import group_codes
from cvstats.cube.schema import EXAMPLE, SPLIT
from cvstats.errors import DesignError
from cvstats.inference.blocks import block_positions, kfold_layout
from cvstats.inference.clustered import cluster_title
from cvstats.inference.common import check_options, make_result
from cvstats.inference.docs import fill_doc
from cvstats.inference.engine import Call, method
from cvstats.inference.registry import METHODS, MethodSpec
from cvstats.kernels.nested import NestedTerms
from cvstats.kernels.nested import nested_cv as _nested_kernel
from cvstats.results import InferenceResult

__all__ = ["nested_cv_interval", "nested_cv_terms"]

_METHOD = "Nested CV (Bates, Hastie & Tibshirani)"
NESTED = "nested"
_NESTED_SPLIT = "nested_split"
_TERMS = ("estimate", "stderr", "statistic", "df", "err_ncv", "err_cv", "bias", "mse", "se_naive")


def _layout(cube: xr.DataArray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Positions of the main and nested splits, ``K`` and repeats; checks every pair is there."""
    K, repeats = kfold_layout(cube, _METHOD)
    main = block_positions(cube, "main", _METHOD)
    nested = np.flatnonzero(np.asarray(cube["block"].values) == NESTED)
    if nested.size == 0:
        raise DesignError(
            f"{_METHOD} needs the 'nested' block (fits leaving out each pair of folds), which "
            "this cube does not have; draw the splits with cvstats.designs.nested_cv."
        )
    if K < 3:
        raise DesignError(f"{_METHOD} needs K >= 3 folds, got K = {K}.")
    need = K * (K - 1) // 2
    reps = cube["repeat"].values[nested]
    main_reps = np.unique(cube["repeat"].values[main])
    counts = {int(r): int((reps == r).sum()) for r in main_reps}
    short = {r: c for r, c in counts.items() if c != need}
    if short or not np.isin(reps, main_reps).all():
        raise DesignError(
            f"{_METHOD} needs the K(K-1)/2 = {need} pair fits of every repeat, but the 'nested' "
            f"block has {counts} per repeat; build the design with cvstats.designs.nested_cv."
        )
    return main, nested, K, repeats


def _grouped_kernel(
    main: np.ndarray, nested: np.ndarray, groups: np.ndarray, **kwargs: Any
) -> NestedTerms:
    """Run the nested-CV kernel with the examples' group codes as a third array."""
    return _nested_kernel(main, nested, groups=groups, **kwargs)


def _terms(cube: xr.DataArray, mu0: float) -> tuple[tuple[xr.DataArray, ...], int, int]:
    main, nested, K, repeats = _layout(cube)
    sub_main = cube.isel({SPLIT: main}).reset_coords(drop=True)
    sub_nested = cube.isel({SPLIT: nested}).reset_coords(drop=True)
    sub_nested = sub_nested.rename({SPLIT: _NESTED_SPLIT})
    codes = group_codes(cube)
    arrays = [sub_main, sub_nested]
    core = [[SPLIT, EXAMPLE], [_NESTED_SPLIT, EXAMPLE]]
    if codes is not None:
        arrays.append(codes.reset_coords(drop=True))
        core.append([EXAMPLE])
    terms = apply_kernel(
        _nested_kernel if codes is None else _grouped_kernel,
        arrays,
        core,
        len(_TERMS),
        main_repeat=cube["repeat"].values[main],
        main_fold=cube["fold"].values[main],
        nested_repeat=cube["repeat"].values[nested],
        nested_fold=cube["fold"].values[nested],
        mu0=mu0,
    )
    return terms, K, repeats


@fill_doc
def nested_cv_terms(cube: xr.DataArray) -> xr.Dataset:
    """Return the parts of the nested-CV interval (docs/nested-cv.md), for inspection.

    Parameters
    ----------
    %(cube_nested)s

    Returns
    -------
    xarray.Dataset
        Variables ``estimate``, ``stderr``, ``statistic``, ``df``, ``err_ncv``
        (mean inner loss), ``err_cv`` (mean outer loss), ``bias``, ``mse``
        (``MSE^`` before rescaling) and ``se_naive`` over the cube's extra dims and
        ``model``/``contrast``; attrs ``K`` and ``repeats``.
    """
    check_options(cube, 0.0, 0.1, "two-sided", method=METHODS["nested_cv"])
    terms, K, repeats = _terms(cube, 0.0)
    return xr.Dataset(dict(zip(_TERMS, terms, strict=True)), attrs={"K": K, "repeats": repeats})


@method(
    MethodSpec(
        name="nested_cv",
        title="Nested {K}-fold CV interval for Err_XY (Bates, Hastie & Tibshirani)",
        design="nested",
        kernel="nested_cv",
        estimand="conditional",
        target="model",
        reference="normal",
        direction="near nominal for Err_XY (Bates et al.'s experiments)",
        short="≈ nominal",
        flag="Err_XY: error of the model fitted on all data",
        rank=1,
        reason=(
            "an interval for the error of the model fitted on all the data "
            "(Bates, Hastie & Tibshirani 2024)"
        ),
        source="Bates, Hastie & Tibshirani (2024), Algorithm 1",
        fits="repeats K (K + 1)/2",
        row=170,
        needs="examples",
    )
)
def nested_cv_interval(call: Call) -> InferenceResult:
    r"""Nested cross-validation interval of Bates, Hastie & Tibshirani (2024, Algorithm 1).

    For every repeat ``r`` and outer fold ``k``, ``e_out`` are the losses on
    fold ``k`` of the fit on the other folds and ``e_in`` the losses of the
    inner cross-validation on the other ``K - 1`` folds (fits leaving out fold
    ``k`` and one more). With ``a = (mean(e_in) - mean(e_out))²`` and
    ``b = var(e_out)/|I_k|``::

        MSE^      = mean_{r,k}(a - b)
        estimate  = Err^NCV - (1 + (K-2)/K)(Err^NCV - Err^CV)
        stderr    = clip(sqrt(max(0, (K-1)/K MSE^)), se_naive, sqrt(K) se_naive)

    ``Err^NCV`` the mean of all ``e_in``, ``Err^CV`` of all ``e_out``,
    ``se_naive = sd(e_in)/sqrt(n)``; interval ``estimate ± z_{1-α/2} stderr``.
    For a contrast cube the losses are the contrast's per-example differences.

    The estimand is ``Err_XY``, the error of the model fitted on all ``n``
    examples (``estimand="conditional"``), which the paper's intervals cover
    at close to the nominal rate where the naive CV interval does not.

    Parameters
    ----------
    %(cube_nested)s
    %(mu0)s
    alpha : float, default 0.05
        The interval has level ``1 - alpha``, as everywhere in cvstats (the paper
        reports 90 % intervals: pass ``alpha=0.1`` to reproduce them).
    %(alternative)s

    Returns
    -------
    InferenceResult
        Over the cube's extra dims and ``model``/``contrast``; ``df = inf``,
        ``reference="normal"``, ``n1`` the outer training size,
        ``n_fits = repeats K (K + 1) / 2``. The parts (bias, ``MSE^``, ...)
        are given by :func:`nested_cv_terms`.

    Raises
    ------
    DesignError
        If the cube lacks the k-fold main block or a pair fit of some repeat,
        or (with groups) has too few groups.

    Notes
    -----
    With a ``group`` coordinate on the cube (docs/grouped-data.md), the two
    variances over examples are cluster-robust: ``var(e_out)/|I_k|`` is the
    CR1 variance of the fold mean over its groups (statsmodels' factor
    ``G_k/(G_k-1)``) and ``var(e_in)`` (behind ``se_naive``) sums squared
    per-group sums of deviations (:mod:`cvstats.kernels.nested`); the title
    says ``"cluster-robust variance (G groups)"``. With one example per
    group the result is the iid one. Fewer than 10 groups, or fewer than 2 in
    an outer fold, is a :class:`~cvstats.errors.DesignError`.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.inference.nested import nested_cv_interval
    >>> d = cvstats.designs.nested_cv(40, 4, repeats=2, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> losses = rng.random((d.sizes["split"], 40, 1))
    >>> cube = cvstats.from_arrays(losses, design=d)
    >>> res = nested_cv_interval(cube)
    >>> res.estimand, res.n_fits
    ('conditional', 20)
    """
    cube = call.cube
    terms, K, repeats = _terms(cube, call.mu0)
    estimate, stderr, statistic, df = terms[:4]
    main = block_positions(cube, "main", _METHOD)
    n1 = int(np.median(cube["n_train"].values[main]))
    n2 = int(cube.attrs["n"]) - n1
    fields = call.spec.result_fields(K=K)
    codes = group_codes(cube)
    if codes is not None:
        fields["title"] = cluster_title(fields["title"], codes, codes)  # every example is tested
    return make_result(
        estimate,
        stderr,
        statistic,
        df,
        call.pvalue(statistic, df),
        loss=str(cube.name),
        **fields,
        **call.options._asdict(),
        n1=n1,
        n2=n2,
        n_splits=int(cube.sizes[SPLIT]),
        n_fits=repeats * K * (K + 1) // 2,
    )
