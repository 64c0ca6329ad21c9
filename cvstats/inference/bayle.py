"""Bayle, Bayle, Janson & Mackey (2020): a CV interval for the k-fold test error.

See docs/beyond.md. From the main block of a K-fold cube (one repeat), the
out-of-fold errors ``e_i`` (a model's losses, or a contrast of models) give
``R̂ = mean(e_i)`` and ``R̂ ± z σ̂ / sqrt(n)`` with ``σ̂²`` the all-pairs
(``"out"``) or within-fold (``"in"``) variance of the ``e_i``
(:mod:`cvstats.kernels.bayle`).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from cvstats.cube import in_test
from cvstats.cube.groups import group_codes
from cvstats.cube.schema import EXAMPLE, SPLIT
from cvstats.errors import DesignError
from cvstats.inference.blocks import block_positions, kfold_layout
from cvstats.inference.clustered import cluster_title, clustered_test
from cvstats.inference.engine import Call, method
from cvstats.inference.registry import MethodSpec
from cvstats.kernels.bayle import BAYLE_VARIANCES
from cvstats.kernels.bayle import bayle_cv as _bayle_kernel
from cvstats.results import InferenceResult

__all__ = ["bayle_cv", "out_of_fold_errors"]

_METHOD = "Bayle's CV interval"


def out_of_fold_errors(cube: xr.DataArray, method: str = _METHOD) -> tuple[xr.DataArray, ...]:
    """Out-of-fold errors ``e`` and fold labels of the cube's K-fold run (no validation).

    Returns
    -------
    tuple of xarray.DataArray
        ``e`` over ``(*extra, example, model|contrast)`` and ``fold`` over
        ``(*extra, example)``.

    Raises
    ------
    DesignError
        If the main block is not one K-fold run testing every example once.
    """
    K, repeats = kfold_layout(cube, method)
    if repeats != 1:
        raise DesignError(
            f"{method} uses one K-fold run, but the main block has {repeats} repeats; select "
            "one with cube.isel(split=cube.repeat <= 0)."
        )
    main = cube.isel({SPLIT: block_positions(cube, "main", method)})
    mask = in_test(main)
    times = mask.sum(SPLIT)
    if bool((times != 1).any()):
        raise DesignError(
            f"{method} needs every example tested exactly once in the K-fold run, but "
            f"{int((times != 1).sum())} example(s) are tested "
            f"{sorted(set(np.unique(times.values).tolist()) - {1})} times."
        )
    e = main.sum(SPLIT, skipna=True)
    fold = (mask * main["fold"]).sum(SPLIT)
    e = e.drop_vars([c for c in e.coords if c not in e.dims])
    fold = fold.drop_vars([c for c in fold.coords if c not in fold.dims])
    return e, fold


def _bayle(variance: str) -> MethodSpec:
    out = variance == "out"
    return MethodSpec(
        name="bayle_cv" + ("" if out else f"_{variance}"),
        title="Bayle et al. {K}-fold CV interval for the k-fold test error ({variant})",
        design="kfold",
        kernel="bayle_cv",
        estimand="conditional",
        target="model",
        reference="normal",
        direction=(
            "valid for the k-fold test error; liberal for n1μ (ignores training-set variability)"
        ),
        short="liberal for n1μ",
        flag="k-fold test error (conditional); liberal for the learner",
        rank=2 if out else 3,
        reason=(
            "an asymptotically valid interval for the k-fold test error "
            "(Bayle, Bayle, Janson & Mackey 2020)"
            if out
            else "Bayle et al.'s interval with the within-fold variance estimate"
        ),
        source="Bayle, Bayle, Janson & Mackey (2020), Theorems 1–2",
        fits="K",
        row=40 if out else 50,
        needs="examples",
        fixed={"variant": variance},
        default=out,
        renamed={"variance": "variant"},
    )


@method(*(_bayle(v) for v in BAYLE_VARIANCES))
def bayle_cv(call: Call, *, variant: str = "out") -> InferenceResult:
    r"""Cross-validation interval and test of Bayle, Bayle, Janson & Mackey (2020).

    From one K-fold run with out-of-fold errors ``e_i`` (losses of a model, or
    a contrast of models' losses; ``B_j`` the test block of fold ``j``)::

        R̂ = (1/n) Σ_i e_i
        σ̂²_out = (1/n) Σ_i (e_i - R̂)²
        σ̂²_in  = (1/K) Σ_j (|B_j| - 1)⁻¹ Σ_{i ∈ B_j} (e_i - R̂_j)²

    statistic ``(R̂ - μ0) sqrt(n) / σ̂``, reference ``N(0, 1)``, interval
    ``R̂ ± z_{1-α/2} σ̂ / sqrt(n)``.

    The estimand is the **k-fold test error**: the average over folds of the
    conditional error of the ``K`` fold models, ``(1/K) Σ_j ε(A(D \ B_j))``
    (``estimand="conditional"``). Bayle et al. prove asymptotic coverage of
    it under loss-stability conditions. It ignores the variance of that error
    across training sets, so it can be **liberal for the unconditional error**
    ``n1μ`` of the learner; use the corrected tests for that target.

    With a ``group`` coordinate on the cube (docs/grouped-data.md), ``σ̂²/n``
    is replaced by the cluster-robust (CR1) variance of ``R̂`` over the ``G``
    groups, with statsmodels' small-sample factor ``G/(G-1)``
    (:mod:`cvstats.kernels.cluster`), and the title says
    ``"cluster-robust variance (G groups)"``. With one example per group it is
    ``n/(n-1)`` times today's ``σ̂²_out/n`` (the sample variance's
    denominator ``n - 1`` instead of Bayle et al.'s ``n``). Fewer than 10
    groups, or ``variant="in"``, is a :class:`~cvstats.errors.DesignError`.

    Parameters
    ----------
    %(cube_kfold)s
    variant : {"out", "in"}, default "out"
        All-pairs or within-fold variance estimator (formerly ``variance=``).
    %(test_options)s

    Returns
    -------
    InferenceResult
        Over the cube's extra dims and ``model``/``contrast``; ``df = inf``,
        ``reference="normal"``, ``n_splits = n_fits = K``.

    Raises
    ------
    DesignError
        If the main block is not one K-fold run.
    ArgumentError
        If `variant` is not ``"out"`` or ``"in"``.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.inference.bayle import bayle_cv
    >>> d = cvstats.designs.kfold(40, 5, seed=0)
    >>> cube = cvstats.from_arrays(np.random.default_rng(0).random((5, 40, 1)), design=d)
    >>> res = bayle_cv(cube)
    >>> res.reference, res.estimand, res.n_splits
    ('normal', 'conditional', 5)
    """
    e, fold = out_of_fold_errors(call.cube)
    K, _ = kfold_layout(call.cube, _METHOD)
    sizes = call.block_sizes("main", _METHOD)
    params = {"K": K, "variant": variant}
    codes = group_codes(call.cube)
    if codes is None:
        stat = call.kernel(
            _bayle_kernel, [e, fold], [[EXAMPLE], [EXAMPLE]], variance=variant, mu0=call.mu0
        )
        return call.test(stat, n1=sizes.n1, n2=sizes.n2, n_splits=K, params=params)
    if variant != "out":
        raise DesignError(
            f"{_METHOD} with variant={variant!r} (the within-fold variance) has no "
            "cluster-robust form in cvstats; the cube has a `group` coordinate, so use "
            "variant='out', whose variance is then cluster-robust (docs/grouped-data.md)."
        )
    stat = clustered_test(codes, e, mu0=call.mu0, reference="z", method=_METHOD)
    title = cluster_title(call.spec.result_fields(**params)["title"], e, codes)
    return call.test(stat, n1=sizes.n1, n2=sizes.n2, n_splits=K, params=params, title=title)
