"""Fit ``ρ`` and ``r`` across many independent datasets (docs/theory.md §4, §5).

With ``N`` independent datasets of the same size (a simulation, or many
resamples of a large population), the ``J`` main split means ``μ̂_j`` of a
dataset form a row with the Lemma-1 structure (docs/theory.md §2): mean ``n1μ``,
variance ``σ1`` and correlation ``ρ = ρ(n1, n2)``. The estimating-function
fit of docs/theory.md §5 (:func:`cvstats.across.lemma1.fit_lemma1`) across datasets gives
``ρ̂`` with an interval, to compare with the naive ``ρ0 = n2/(n1 + n2)``
(docs/theory.md §3) that the corrected resampled t plugs in: ``ρ > ρ0`` makes it
liberal, ``ρ < ρ0`` conservative. Likewise the ``M`` squared half
differences ``(μ̂_(m) - μ̂^c_(m))²`` of the conservative Z give ``r``
(docs/theory.md §4, method 4).
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import xarray as xr

from cvstats.across.lemma1 import fit_lemma1, with_interval
from cvstats.cube import unit_dim, validate
from cvstats.cube.apply import apply_kernel
from cvstats.cube.checks import validate_alpha
from cvstats.cube.formula import contrasts
from cvstats.cube.schema import EXAMPLE, SPLIT
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, DesignError
from cvstats.inference.blocks import (
    J_DIM,
    M_DIM,
    SIDE_DIM,
    BlockSizes,
    block_positions,
    block_sizes,
    half_means,
    kfold_layout,
    main_means,
    split_means,
)
from cvstats.inference.common import check_not_time_ordered, check_sizes, resolve_size
from cvstats.kernels.lemma1 import political_ratio_from_rho, squared_half_differences
from cvstats.results.estimates import EstimatesResult

__all__ = ["fit_rho", "fit_r", "resolve_cube", "check_datasets", "one_size"]

#: How the political-ratio interval treats ρ outside [0, 1) (kept in the result's attrs).
RATIO_NOTE = (
    "(1 + Jρ/(1-ρ)) / (1 + J n2/n1) at ρ clipped to [0, 1]: estimate and interval bounds "
    "below 0 map to the ratio at ρ = 0 (the true ρ is >= 0 by Lemma 1.2), at or above 1 "
    "to +inf"
)


def resolve_cube(
    data: xr.DataArray | xr.Dataset | str,
    formula: str | xr.DataArray | xr.Dataset | None,
    method: str,
) -> xr.DataArray:
    """Return the validated cube (or contrast cube) a method runs on.

    ``method(cube)`` runs per model; ``method(cube_or_dataset, formula)`` and
    ``method(formula, cube_or_dataset)`` on the contrasts of the formula
    (:func:`cvstats.contrasts`).
    """
    if isinstance(data, str):  # method(formula, data)
        data, formula = formula, data  # type: ignore[assignment]
        if data is None:
            raise CvstatsTypeError(
                f"{method}(formula, data) needs the data: a cube or a Dataset of cubes."
            )
    if formula is not None:
        if not isinstance(formula, str):
            raise CvstatsTypeError(
                f"`formula` must be a str such as 'loss ~ model', got {type(formula).__name__}."
            )
        if not isinstance(data, xr.DataArray | xr.Dataset):
            raise CvstatsTypeError(
                f"`data` must be a cube or a Dataset of cubes, got {type(data).__name__}."
            )
        cube = contrasts(formula, data)
    elif isinstance(data, xr.Dataset):
        raise CvstatsTypeError(
            f"{method} needs a formula to pick a cube from a Dataset, e.g. "
            f"{method}('loss ~ model', data)."
        )
    elif isinstance(data, xr.DataArray):
        cube = data
    else:
        raise CvstatsTypeError(
            f"`data` must be a cube (xarray.DataArray), a Dataset of cubes with a formula, or "
            f"a formula followed by the data; got {type(data).__name__}."
        )
    validate(cube)
    return cube


def check_datasets(cube: xr.DataArray, dataset_dim: Hashable, method: str) -> int:
    """Return the number of datasets ``N`` along ``dataset_dim``; raise if it is not a dim."""
    core = (SPLIT, EXAMPLE, unit_dim(cube))
    if dataset_dim in core:
        raise ArgumentError(
            f"`dataset_dim` = {dataset_dim!r} is a core dim of the cube {list(core)}; it must "
            "name the extra dim of independent datasets."
        )
    if dataset_dim not in cube.dims:
        extra = [str(d) for d in cube.dims if d not in core]
        raise CubeError(
            f"{method} needs many independent datasets along `{dataset_dim}` (an extra dim of "
            f"the cube, e.g. cvstats.from_arrays(..., extra_dims=['{dataset_dim}'])), but the "
            f"cube has dims {[str(d) for d in cube.dims]}"
            + (f"; pass dataset_dim= one of {extra}" if extra else "")
            + ". A single dataset cannot identify ρ (docs/theory.md §2, Proposition 3)."
        )
    N = int(cube.sizes[dataset_dim])
    if N < 2:
        raise DesignError(
            f"{method} needs at least 2 independent datasets along `{dataset_dim}`, got {N}."
        )
    return N


def _attrs(cube: xr.DataArray, method: str, alpha: float, N: int, **extra: object) -> dict:
    attrs: dict[str, object] = {"method": method, "loss": str(cube.name), "alpha": alpha, "N": N}
    if "formula" in cube.attrs:
        attrs["formula"] = cube.attrs["formula"]
    attrs.update(extra)
    return attrs


def one_size(
    cube: xr.DataArray,
    sizes: BlockSizes,
    method: str,
    n1: int | None,
    n2: int | None,
    uses: str,
) -> tuple[int, int]:
    """Return the one ``(n1, n2)`` of a block for a formula that uses them, or raise why not.

    A block whose splits share one test size ``n2`` and one training size ``n1`` (for
    a k-fold main block, up to the rounding of ``n`` into ``K`` folds) gives them,
    unless ``n1``/``n2`` override them. Otherwise no single size is the block's, and
    no median stands in for one: the caller must state both.

    Parameters
    ----------
    cube : xarray.DataArray
        The validated cube.
    sizes : BlockSizes
        The block's sizes (:func:`cvstats.inference.blocks.block_sizes`).
    method : str
        Name of the calling function, for messages.
    n1, n2 : int or None
        The sizes the caller states (both, or neither).
    uses : str
        What the caller computes from them, for the message.

    Raises
    ------
    DesignError
        If the block has splits of different sizes and ``n1`` or ``n2`` is None.
    ArgumentError
        If a stated size is not a positive int, or ``n1 + n2`` exceeds the cube's ``n``.
    """
    pos = block_positions(cube, sizes.block, method)
    n_train = np.asarray(cube["n_train"].values)[pos]
    spread = int(n_train.max() - n_train.min())
    if not sizes.equal or spread > (1 if sizes.kfold else 0):
        if n1 is None or n2 is None:
            differ = []
            if not sizes.equal:
                differ.append(f"test {sizes.n2_min} to {sizes.n2_max} examples")
            if spread > (1 if sizes.kfold else 0):
                differ.append(f"train on {int(n_train.min())} to {int(n_train.max())}")
            raise DesignError(
                f"{method} {uses}: both need one training size n1 and one test size n2, but "
                f"the {sizes.block!r} block's splits {' and '.join(differ)}. No single size "
                "stands for them: for a loss that depends only on the test example, two splits "
                "testing a and b of the n examples have split means correlated sqrt(a b)/n, one "
                "value per pair of splits (n2/(n1 + n2) only when a = b = n2), and split means "
                "of different sizes have different variances, so the Lemma-1 fit estimates an "
                "average. Pass `n1=` and `n2=` to state the sizes to use (e.g. "
                f"n1={sizes.n1}, n2={sizes.n2}, the block's medians), or draw splits of one size."
            )
    return check_sizes(cube, resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2))


def _ratio(rho: xr.DataArray, J: int, n1: int, n2: int) -> xr.DataArray:
    (ratio,) = apply_kernel(political_ratio_from_rho, [rho], [[]], 1, J=J, n1=n1, n2=n2)
    return ratio


def fit_rho(
    data: xr.DataArray | xr.Dataset | str,
    formula: str | xr.DataArray | xr.Dataset | None = None,
    *,
    dataset_dim: Hashable = "dataset",
    alpha: float = 0.05,
    n1: int | None = None,
    n2: int | None = None,
) -> EstimatesResult:
    """Estimate ``n1μ``, ``σ1`` and ``ρ`` across many datasets (docs/theory.md §5).

    For every dataset the ``J`` main-block split means ``μ̂_j`` (docs/theory.md §1)
    are a row with the Lemma-1 structure: mean ``β = n1μ``, variance
    ``δ = σ1`` and correlation ``π = ρ(n1, n2)``. :func:`cvstats.across.lemma1.fit_lemma1`
    across the datasets gives the estimates and their sandwich intervals.

    ``ρ̂`` is compared with ``ρ0 = n2/(n1 + n2)`` (docs/theory.md §3), the value the
    corrected resampled t (method 6) assumes; its political ratio
    ``(1 + Jρ/(1-ρ)) / (1 + J n2/n1)`` is 1 at ``ρ = ρ0``, above 1 (liberal)
    for ``ρ > ρ0`` and below 1 (conservative) for ``ρ < ρ0``. The ratio is
    increasing in ``ρ``, so its interval is the image of the ``ρ`` interval,
    after clipping ``ρ`` to ``[0, 1]``: bounds (and an estimate) below 0 give
    the ratio at ``ρ = 0`` (the true ``ρ`` is ``>= 0`` by Lemma 1.2), bounds at
    or above 1 give ``+inf``.

    For a k-fold main block the ``K·R`` folds of ``R`` repeats are not
    exchangeable (folds of one repeat have disjoint test sets); ``ρ̂`` then
    estimates their average pairwise correlation, which is what enters
    ``Var[μ̂_J]`` and ``E[S²]`` and hence the political ratio. Even for a loss
    that depends only on the test example it is ``(R - 1)/(K R - 1)``, not
    ``ρ0 = 1/K``: for k-fold designs compare political ratios, not ``ρ̂`` and ``ρ0``.

    Parameters
    ----------
    data : xarray.DataArray or xarray.Dataset or str
        A cube (or contrast cube) with an extra dim of independent datasets and
        a main block of ``J >= 2`` splits; with a formula, a cube or a Dataset
        of cubes. Also callable as ``fit_rho(formula, data)``.
    formula : str, optional
        ``"<loss> ~ <terms in model>"`` (as for :func:`cvstats.compare` and
        :func:`cvstats.contrasts`): fit each contrast instead of each model.
    dataset_dim : hashable, default "dataset"
        The extra dim of the ``N >= 2`` independent datasets.
    alpha : float, default 0.05
        Intervals have level ``1 - alpha``.
    n1, n2 : int, optional
        The training and test sizes of ``ρ0 = n2/(n1 + n2)`` and of the
        political ratio; default the main block's. Required (both) when the
        main block's splits differ in test or training size (beyond the
        rounding of ``n`` into ``K`` folds): with test sizes ``a`` and ``b`` the
        naive correlation is ``sqrt(a b)/n``, one value per pair of splits, so no
        single ``ρ0`` exists and the fit is refused
        (:class:`~cvstats.errors.DesignError`) rather than run at a median.

    Returns
    -------
    EstimatesResult
        The variables (a result holding their Dataset,
        :class:`~cvstats.results.estimates.EstimatesResult`), over ``model``
        (or ``contrast``) and any other extra dim:

        * ``mu``, ``mu_se``, ``mu_ci``: ``β̂``, the estimate of ``n1μ``;
        * ``delta``, ``delta_se``, ``delta_ci``: ``σ̂1 = Var[μ̂_j]``;
        * ``rho``, ``rho_se``, ``rho_ci``: ``ρ̂ = Corr[μ̂_j, μ̂_j']``;
        * ``rho0``: ``n2/(n1 + n2)`` (0-d); ``1/K`` for a k-fold main block (``K``
          folds; the same when ``K`` divides ``n``);
        * ``political_ratio``, ``political_ratio_ci``: of the corrected resampled t at
          ``ρ̂`` (with ``n2/n1 = 1/(K-1)`` for a k-fold main block: the corrected
          repeated k-fold t).

        Intervals lie on a trailing ``ci_bound`` dim (``["lower", "upper"]``).
        Attrs ``J``, ``n1``, ``n2`` (main-block training and test sizes, or the
        stated ones; medians over folds for a k-fold whose folds differ by one
        example), ``N``, ``alpha``, ``loss``, ``formula`` (for contrasts),
        ``method`` and ``political_ratio`` (how ``ρ`` is clipped).

    Raises
    ------
    CubeError
        If the cube has no ``dataset_dim`` or is not a valid cube.
    DesignError
        If there are fewer than 2 datasets, no main block or fewer than 2 main
        splits; if the main block's splits differ in size and ``n1``/``n2`` are
        not given; if the cube's training sets are nested (attr
        ``nested_train = 1``, e.g. ``TimeSeriesSplit``): its splits are not
        exchangeable draws of one design, which the Lemma-1 structure assumes.
    ArgumentError
        If ``n1`` or ``n2`` is not a positive int, or ``n1 + n2`` exceeds ``n``.
    FormulaError
        For a formula that does not fit the data.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> rng = np.random.default_rng(0)
    >>> d = cvstats.designs.resampled(20, 5, J=10, seed=0)
    >>> # every test loss of split j equals mu_j: split means are equicorrelated, ρ = 0.4
    >>> mu = rng.normal(size=(300, 1)) * 0.4**0.5 + rng.normal(size=(300, 10)) * 0.6**0.5
    >>> losses = np.broadcast_to(mu[:, :, None, None], (300, 10, 20, 1))
    >>> cube = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])
    >>> fit = fit_rho(cube)
    >>> round(float(fit.rho.squeeze()), 1), float(fit.rho0)
    (0.4, 0.25)
    """
    alpha = validate_alpha(alpha)
    cube = resolve_cube(data, formula, "fit_rho")
    check_not_time_ordered(cube, "fit_rho")
    N = check_datasets(cube, dataset_dim, "fit_rho")
    sizes = block_sizes(cube, "main", "fit_rho")
    stated = n1 is not None and n2 is not None
    n1, n2 = one_size(
        cube,
        sizes,
        "fit_rho",
        n1,
        n2,
        "compares ρ̂ with ρ0 = n2/(n1 + n2) and reports the political ratio "
        "(1 + Jρ/(1-ρ))/(1 + J n2/n1) of the corrected resampled t",
    )
    if sizes.kfold and not stated:
        # folds of one size up to rounding: ρ0 = 1/K and n2/n1 = 1/(K-1), as the corrected
        # repeated k-fold t uses them (equal to n2/(n1 + n2) and n2/n1 when K divides n)
        K, _ = kfold_layout(cube, "fit_rho")
        rho0, odds = 1.0 / K, (K - 1, 1)
    else:
        rho0, odds = n2 / (n1 + n2), (n1, n2)
    mu = main_means(split_means(cube), "fit_rho", min_splits=2)
    fit = fit_lemma1(mu, dataset_dim, J_DIM, alpha=alpha)
    J = sizes.n_splits
    out = fit.dataset.rename(
        {
            "beta": "mu",
            "beta_se": "mu_se",
            "beta_ci": "mu_ci",
            "pi": "rho",
            "pi_se": "rho_se",
            "pi_ci": "rho_ci",
        }
    )
    out["rho0"] = xr.DataArray(rho0)
    out["political_ratio"] = _ratio(out["rho"], J, *odds)
    out["political_ratio_ci"] = _ratio(out["rho_ci"], J, *odds)
    out = out[
        [
            "mu",
            "mu_se",
            "mu_ci",
            "delta",
            "delta_se",
            "delta_ci",
            "rho",
            "rho_se",
            "rho_ci",
            "rho0",
            "political_ratio",
            "political_ratio_ci",
        ]
    ]
    out.attrs = _attrs(
        cube,
        "fit_rho: Lemma-1 estimating equations on the main split means (docs/theory.md §5)",
        alpha,
        N,
        J=J,
        n1=n1,
        n2=n2,
        dataset_dim=str(dataset_dim),
        political_ratio=RATIO_NOTE,
    )
    return EstimatesResult.from_dataset(out)


def fit_r(
    data: xr.DataArray | xr.Dataset | str,
    formula: str | xr.DataArray | xr.Dataset | None = None,
    *,
    dataset_dim: Hashable = "dataset",
    alpha: float = 0.05,
    n1: int | None = None,
    n2: int | None = None,
) -> EstimatesResult:
    """Estimate ``r`` of the conservative Z across many datasets (docs/theory.md §4 method 4, §5).

    For every dataset and half-split ``m`` of the ``"half"`` block,
    ``μ̂_(m)`` is the mean of the ``J`` inner split means on side 0 (inside
    ``D_m``) and ``μ̂^c_(m)`` the same on side 1 (inside ``D_m^c``). The ``M``
    values ``(μ̂_(m) - μ̂^c_(m))²`` of a dataset are a Lemma-1 row with
    correlation ``π = r``; :func:`cvstats.across.lemma1.fit_lemma1` across datasets
    gives ``r̂``, the mean of the values (``β``) and their variance (``δ``).
    ``σ̂²_cz`` (eq. 11) is half the average of the ``M`` values of one dataset,
    so its expectation is ``β/2``, estimated by ``sigma2_cz``, and
    ``Var[σ̂²_cz] = δ (r + (1 - r)/M) / 4`` (Lemma 1.1).

    Parameters
    ----------
    data : xarray.DataArray or xarray.Dataset or str
        A cube (or contrast cube) with an extra dim of datasets and a
        ``"half"`` block of ``M >= 2`` half-splits
        (:func:`cvstats.designs.conservative_z` or ``nadeau_bengio``); with a
        formula, a cube or Dataset of cubes. Also ``fit_r(formula, data)``.
    formula : str, optional
        Contrasts to fit instead of the models (see :func:`fit_rho`).
    dataset_dim : hashable, default "dataset"
        The extra dim of the ``N >= 2`` independent datasets.
    alpha : float, default 0.05
        Intervals have level ``1 - alpha``.
    n1, n2 : int, optional
        The training size inside a half and the test size at which
        ``σ̂²_cz`` estimates the variance (reported in the attrs); default the
        ``"half"`` block's. Required (both) when its splits differ in size, as
        for :func:`cvstats.conservative_z`: no single training size
        ``⌊n/2⌋ - n2`` is then the block's, and the fit is refused
        (:class:`~cvstats.errors.DesignError`) rather than reported at a median.

    Returns
    -------
    EstimatesResult
        The variables (a result holding their Dataset,
        :class:`~cvstats.results.estimates.EstimatesResult`), over ``model``
        (or ``contrast``) and any other extra dim: ``r``,
        ``r_se``, ``r_ci``; ``mean_sq_diff`` (``β̂``, the mean of the ``M``
        squared differences) with ``_se`` and ``_ci``; ``sigma2_cz``
        (``β̂/2``, the expectation of ``σ̂²_cz``) with ``_se`` and ``_ci``;
        ``delta`` (variance of a squared difference) with ``_se`` and ``_ci``.
        Attrs ``M``, ``J`` (inner splits per half), ``n1`` (training size
        inside a half, ``⌊n/2⌋ - n2``), ``n2``, ``N``, ``alpha``, ``loss``.

    Raises
    ------
    CubeError
        If the cube has no ``dataset_dim``.
    DesignError
        If there are fewer than 2 datasets, no ``"half"`` block or ``M < 2``; if
        the ``"half"`` block's splits differ in size and ``n1``/``n2`` are not
        given; if the cube's training sets are nested (attr ``nested_train = 1``).
    ArgumentError
        If ``n1`` or ``n2`` is not a positive int, or ``n1 + n2`` exceeds ``n``.
    """
    alpha = validate_alpha(alpha)
    cube = resolve_cube(data, formula, "fit_r")
    check_not_time_ordered(cube, "fit_r")
    N = check_datasets(cube, dataset_dim, "fit_r")
    sizes = block_sizes(cube, "half", "fit_r")
    n1, n2 = one_size(
        cube,
        sizes,
        "fit_r",
        n1,
        n2,
        "reports σ̂²_cz as an estimate of the variance at one training size "
        "⌊n/2⌋ - n2 inside a half (as conservative_z)",
    )
    halves = half_means(split_means(cube), "fit_r")
    M, J = int(halves.sizes[M_DIM]), int(halves.sizes[J_DIM])
    if M < 2:
        raise DesignError(
            f"fit_r needs at least 2 half-splits (M >= 2) in the 'half' block, got M = {M}; "
            "draw them with cvstats.designs.conservative_z(..., M=...) or nadeau_bengio."
        )
    side = halves.mean(J_DIM)
    (sq_diff,) = apply_kernel(
        squared_half_differences,
        [side.isel({SIDE_DIM: 0}), side.isel({SIDE_DIM: 1})],
        [[], []],
        1,
    )
    fit = fit_lemma1(sq_diff, dataset_dim, M_DIM, alpha=alpha)
    data_vars = {
        "r": fit["pi"],
        "r_se": fit["pi_se"],
        "r_ci": fit["pi_ci"],
        "mean_sq_diff": fit["beta"],
        "mean_sq_diff_se": fit["beta_se"],
        "mean_sq_diff_ci": fit["beta_ci"],
    }
    data_vars.update(with_interval({"sigma2_cz": (fit["beta"] / 2, fit["beta_se"] / 2)}, alpha))
    data_vars.update(
        {"delta": fit["delta"], "delta_se": fit["delta_se"], "delta_ci": fit["delta_ci"]}
    )
    out = xr.Dataset(
        data_vars,
        attrs=_attrs(
            cube,
            "fit_r: Lemma-1 estimating equations on the squared half differences "
            "(docs/theory.md §5)",
            alpha,
            N,
            M=M,
            J=J,
            n1=n1,
            n2=n2,
            dataset_dim=str(dataset_dim),
        ),
    )
    return EstimatesResult.from_dataset(out)
