"""Plan an experiment from a pilot: how many splits, for what width and power (docs/theory.md §10).

Before the fits are paid for: from a pilot cube of a few random splits, the
split means' sample variance ``S²`` estimates ``E[S²] = σ1 (1 - ρ)`` (Lemma 1,
docs/theory.md §2), and with ``ρ`` (the test's own ``ρ0``, ``rho=``, or
:func:`~cvstats.across.rho.fit_rho` across the pilot's datasets) Lemma 1 and
Lemma 2 give, for every number of splits ``J``, the expected half-width of the
test's interval, the power of its test to detect a given difference and the
fits it costs: for the corrected resampled t and the corrected repeated k-fold
t, for the (corrected) bootstrap with ``R`` replicates and, from a pilot with a
``"half"`` block, for the conservative Z with ``M`` half-splits (Nadeau & Bengio,
2000, eq. (8); 2003). :func:`plan` returns them with the smallest ``J`` meeting a
target width and/or power within a budget of fits, as a
:class:`~cvstats.results.plan.PlanResult`; when a target is out of reach, it says so and
recommends the knee, the smallest ``J`` within ``knee_tolerance`` (10 %) of the best
half-width (or power) the budget buys (docs/planning.md, "When a target is out of reach").
From a pilot of many datasets, the power and size of the corrected resampled t can also
come from the pilot's datasets themselves, without Lemma 2 (``power_model="pilot"``,
docs/theory.md §10, "The pilot power model").

The parts: :mod:`~cvstats.across.plan.options` (the constants
and argument checks), :mod:`~cvstats.across.plan.pilot` (what the pilot gives: ``S²``, the
halves' variances, ``ρ``), :mod:`~cvstats.across.plan.power` (the Gaussian and the pilot
power models) and :mod:`~cvstats.across.plan.design` (the search over ``J``, the knee and
the result); :func:`plan` checks its arguments (:func:`_plan_iv`) and runs them in turn.
May import the layers below ``across`` and :mod:`cvstats.across.rho` (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from cvstats.across.plan.design import grid_of, plan_result, planned_design, search
from cvstats.across.plan.options import (
    DEFAULT_J,
    DEFAULT_M,
    DEFAULT_R,
    KNEE_TOLERANCE,
    NAME,
    PILOT_MIN_DATASETS,
    PILOT_MIN_SPLITS,
    PLANNED_METHODS,
    POWER_MODELS,
    SEARCH_LIMIT,
    check_knee_tolerance,
    check_method,
    check_targets,
    design_values,
    join_notes,
)
from cvstats.across.plan.pilot import (
    carried_s2,
    estimate_rho,
    half_variance,
    halves_note,
    read_pilot,
)
from cvstats.across.plan.power import (
    Variances,
    choose_power_model,
    grid_curves,
    limits,
    pilot_model_of,
)
from cvstats.cube import validate
from cvstats.cube.checks import validate_alpha
from cvstats.cube.evals import fixed_models_refusal
from cvstats.errors import CvstatsTypeError, DesignError
from cvstats.inference.common import check_not_time_ordered
from cvstats.results.plan import PlanResult

__all__ = [
    "plan",
    "PLANNED_METHODS",
    "POWER_MODELS",
    "PILOT_MIN_DATASETS",
    "PILOT_MIN_SPLITS",
    "DEFAULT_J",
    "DEFAULT_M",
    "DEFAULT_R",
    "SEARCH_LIMIT",
    "KNEE_TOLERANCE",
]


def plan(
    pilot: xr.DataArray,
    *,
    target_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    budget_fits: int | None = None,
    method: str = "corrected_resampled_t",
    J: int | None = None,
    rho: float | xr.DataArray | None = None,
    n_test: int | None = None,
    M: int | Sequence[int] | None = None,
    R: int | Sequence[int] | None = None,
    power_model: str = "auto",
    knee_tolerance: float = KNEE_TOLERANCE,
) -> PlanResult:
    """Plan an experiment from a pilot: width, power and cost against the number of splits.

    From the pilot's main block of ``J_p >= 2`` splits, ``S²`` (the sample
    variance of the split means) estimates ``τ² = E[S²] = σ1 (1 - ρ)`` without
    bias (Lemma 1, docs/theory.md §2), and ``Var[μ̂_J] = τ² (1/J + ρ/(1-ρ))``
    (Nadeau & Bengio, 2000, eq. (6)). Each test rejects when
    ``|μ̂_J| > c σ̂``; with ``E[σ̂²]`` its expected variance estimate and ``ν`` the
    degrees of freedom of ``σ̂²``, the plan gives for ``J`` splits
    (docs/theory.md §10):

    * the half-width ``c sqrt(E[σ̂²])`` of the ``1 - alpha`` interval at the
      expected variance estimate, which is the root mean square of the half-width
      (Lemma 1 only); the mean half-width under Lemma 2 is ``c4`` times it;
    * the power of the two-sided test at level ``alpha`` to detect a true
      difference ``effect``, and its size: under Lemma 2 (``power_model="gaussian"``)
      the statistic is ``sqrt(PR)`` times a noncentral ``t_ν`` with noncentrality
      ``effect / sqrt(Var[μ̂_J])``, ``PR = Var[μ̂_J] / E[σ̂²]`` the political ratio;
      from a pilot of many datasets (``power_model="pilot"``, the corrected resampled
      t only) the mean over the pilot's datasets of each one's rejection rate, without
      Lemma 2's Gaussian split means of one common spread (docs/theory.md §10, "The
      pilot power model");
    * the fits per learner;

    and the smallest ``J`` meeting ``target_width`` and/or the ``power`` to
    detect ``effect`` within ``budget_fits``. The methods
    (docs/theory.md §4):

    * corrected resampled t (method 6): ``E[σ̂²] = (1/J + n2/n1) τ²``,
      ``c = t_{J-1}``, ``ν = J - 1``, ``J`` fits;
    * corrected repeated k-fold t (§9.2): the same with ``n2/n1 = 1/(K-1)``;
    * corrected bootstrap (method 7): ``E[σ̂²] = (1 + J n2/n1) τ²/J``, the same
      as the corrected resampled t's, but ``c = t_{R-1}``, ``ν = R - 1``,
      ``(R + 1) J`` fits; the bootstrap (method 5) with ``n2/n1`` replaced by 0;
    * conservative Z (method 4, Nadeau & Bengio, 2000, eq. (8)):
      ``E[σ̂²_cz] = Var[μ̂'_J] = σ2' + τ'²/J``, the variance of the estimate on
      half the data at the training size ``⌊n/2⌋ - n2``, estimated from the
      pilot's ``"half"`` block; ``c = z_{1-alpha/2}``, ``ν = M`` (assuming
      ``r = 0`` and Gaussian half differences), ``J (1 + 2M)`` fits.

    A target no design can meet is not an error: the plan says so first, and why
    (within the budget, or at any ``J``: the half-width never falls below its
    limit as ``J → ∞``, since ``σ1 ρ`` does not shrink with more splits of the
    same data), and recommends the **knee** rather than the whole budget: for a
    width target out of reach, the smallest ``J`` whose half-width is at most
    ``1 + knee_tolerance`` times the best reachable one (the least half-width of the
    designs searched within the budget, or up to :data:`SEARCH_LIMIT` splits); for a
    power target out of reach, the smallest ``J`` whose power is at least
    ``1 - knee_tolerance`` times the best reachable power; with both targets, the
    larger of the two ``J`` (a target that can be met counting from the smallest ``J``
    meeting it). Beyond the knee, more fits buy less than ``knee_tolerance`` of the
    answer (docs/planning.md, "When a target is out of reach").

    Parameters
    ----------
    pilot : xarray.DataArray
        A loss cube or score cube (:func:`cvstats.from_scores`) with a main block
        of ``J_p >= 2`` splits of one test size, e.g. on
        ``cvstats.designs.resampled(n, n // 10, J=5)``; for
        ``method="conservative_z"`` also a ``"half"`` block of ``J_h >= 2`` inner
        splits per half of the same test size, e.g. on
        ``cvstats.designs.conservative_z(n, n // 10, J=5, M=5)`` (with fewer, the
        clipping of ``σ̂2'`` at 0 biases the plan upward: docs/theory.md §10). A cube of two or
        more models is planned for their pairwise differences
        (:func:`cvstats.pairwise`, which the result's ``note`` says); a contrast
        cube (:func:`cvstats.contrasts`) for its contrasts; a cube of one model for
        its level. Extra dims are kept, except ``dataset``: a ``dataset`` dim holds
        independent datasets of one problem (as for :func:`cvstats.fit_rho`), whose
        variances are pooled (averaged), whose ``ρ`` comes from ``fit_rho`` and, with
        20 or more datasets, over which the power is averaged (``power_model``).
    target_width : float, optional
        The half-width wanted, in the loss's (or score's) units.
    effect : float, optional
        The true difference to detect (``n1μ_a - n1μ_b`` for a contrast), against the
        null of no difference. Under the Gaussian model its sign does not matter
        (two-sided test); under the pilot model it may, as the datasets' effects need
        not be symmetric: the truth is then the null plus ``effect``.
    power : float, default 0.8
        The power wanted to detect ``effect``.
    alpha : float, default 0.05
        Level of the intervals (``1 - alpha``), of the tests and of the pilot's
        bands.
    budget_fits : int, optional
        Most fits per learner allowed.
    method : str, default "corrected_resampled_t"
        The test planned for, one of :data:`PLANNED_METHODS`:
        ``"corrected_resampled_t"``, ``"corrected_repeated_kfold_t"`` (a k-fold
        pilot, :func:`cvstats.designs.kfold`; ``J = K × repeats`` folds with
        ``ρ0 = 1/K``), ``"conservative_z"``, ``"corrected_bootstrap_t"`` or
        ``"bootstrap_t"``. The other tests are not planned (docs/planning.md says
        why).
    J : int, optional
        A number of splits to report on (for k-fold: of folds, a multiple of
        ``K``); default the smallest meeting the targets.
    rho : float or xarray.DataArray, optional
        The correlation ``ρ`` of two split means of the planned design, in
        ``[0, 1)`` (a DataArray over the units for one per contrast). Default:
        from ``fit_rho`` when the pilot has a ``dataset`` dim of two or more
        datasets (random splits), whose interval then widens the power band,
        else the test's own ``ρ0`` (``n2/(n1 + n2)``, or ``1/K``).
    n_test : int, optional
        The test size ``n2`` of the planned random splits (training size
        ``n1 = n1_p + n2_p - n2``); default the pilot's. A loss cube only, and not
        for the conservative Z: the within-split variance of the losses
        (``σ0 - σ3``) carries ``E[S²]`` from the pilot's ``n2`` to this one,
        assuming ``σ0 - σ3`` and ``σ3 - σ2`` do not change with the training size
        (docs/theory.md §10).
    M : int or sequence of int, optional
        Half-splits of the conservative Z (default 10, Nadeau & Bengio, 2000, §4);
        a sequence plans each (an ``M`` dim).
    R : int or sequence of int, optional
        Replicates (``>= 2``) of the bootstraps (default 15); a sequence plans each
        (an ``R`` dim).
    power_model : {"auto", "gaussian", "pilot"}, default "auto"
        The model of the power, the size and their bands (the width does not depend
        on it). ``"gaussian"``: Lemma 2 of Nadeau & Bengio (2003), split means
        jointly Gaussian with one conditional spread (a noncentral t). ``"pilot"``:
        a mixture over the pilot's ``dataset`` dim (at least
        :data:`PILOT_MIN_DATASETS` datasets of at least :data:`PILOT_MIN_SPLITS` main
        splits each, every one with varying split means), for the corrected
        resampled t; for ``J <= J_p`` the rate of rejections on random subsets of
        ``J`` of each dataset's splits (unbiased, whatever the distribution of the
        split means), beyond an approximation assuming split means Gaussian given the
        data, with a spread of their own per dataset (docs/theory.md §10). Not with
        ``rho`` or another ``n_test``. ``"auto"``: ``"pilot"`` when these hold, else
        ``"gaussian"`` (the ``note`` says why, for a pilot with a ``dataset`` dim).
        The result's ``power_model`` says which was used.
    knee_tolerance : float, default 0.1
        Relative tolerance of the knee recommended when a target cannot be met
        (:data:`KNEE_TOLERANCE`, in ``[0, 1)``): the smallest ``J`` within 10 % (by
        default) of the best reachable half-width (or power). 0 recommends the design
        reaching the best, e.g. the whole budget.

    Returns
    -------
    PlanResult
        Over ``J`` (the grid: 2 (or 1) to 50, the ``J`` asked, the designs found and
        the budget's), ``contrast`` (or ``model``), the pilot's extra dims and
        ``M`` or ``R`` (:class:`~cvstats.results.plan.PlanResult`); ``verdict()``
        says it in words.

    Raises
    ------
    DesignError
        If the pilot holds fixed models' answers (:func:`cvstats.from_evals`:
        use :func:`cvstats.plan_eval`), if the pilot's main block has fewer
        than 2 splits or splits of different test sizes, if its split means
        do not vary (zero ``S²``: nothing to plan from), if ``fit_rho`` gives
        ``ρ̂ >= 1``, for a k-fold plan of a pilot that is not k-fold, for a
        conservative Z plan of a pilot without a
        ``"half"`` block of ``J_h >= 2`` inner splits of the main block's test size,
        or for ``power_model="pilot"`` with fewer than 20 datasets, fewer than 5
        main splits per dataset or a dataset whose split means do not vary.
    ArgumentError
        For an unknown ``method`` or ``power_model``, a non-positive
        ``target_width``, a zero ``effect``, ``power`` outside ``(alpha, 1)``, a
        ``budget_fits`` below the smallest design, a ``J`` below 2 (1 for the
        conservative Z and the bootstraps; for k-fold not a multiple of ``K``), a
        ``rho`` outside ``[0, 1)``, an ``n_test`` that leaves no training example,
        an ``M`` (``R``) for another method or below 1 (2), or
        ``power_model="pilot"`` for another method than the corrected resampled t,
        with ``rho`` or with another ``n_test``, or a ``knee_tolerance`` outside
        ``[0, 1)``.
    CubeError
        For a pilot that is not a valid cube, an ``n_test`` other than the
        pilot's on a score cube, or ``power_model="pilot"`` for a pilot without a
        ``dataset`` dim.
    CvstatsTypeError
        For a pilot that is not an xarray.DataArray.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> d = cvstats.designs.resampled(100, 10, J=5, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> losses = rng.normal(size=(5, 100, 2))
    >>> pilot = cvstats.from_arrays(losses, design=d, models=["a", "b"], name="sq")
    >>> res = cvstats.plan(pilot, target_width=0.3)
    >>> res.J_plan.values.tolist()
    [7.0]
    >>> print(res.verdict())
    J = 7 splits (7 fits per learner) give a 95% half-width of 0.29 for a − b, assuming
    ρ = ρ0 = n2/(n1 + n2) = 0.1; the target half-width 0.3 is met from J = 7.
    """
    alpha, targets, knee_tolerance, (param, param_values) = _plan_iv(
        pilot, method, power_model, alpha, target_width, effect, power, knee_tolerance, M, R
    )
    # the steps run in this order, which is the order of the errors a bad input gets
    main = read_pilot(pilot)  # the pilot's main block: S² and its degrees of freedom
    design = planned_design(method, main, n_test)
    model, model_note = choose_power_model(
        power_model,
        method,
        main.means,
        main.n_datasets,
        main.J,
        rho_given=rho is not None,
        n2_changed=design.n2 != main.n2,
    )
    pilot_model = None
    if model == "pilot":
        pilot_model = pilot_model_of(
            main.means, main.s2, main.n_datasets, main.J, design.c_test, alpha
        )
    s2, carry_note = carried_s2(main, design.n2)
    cz = method == "conservative_z"
    halves = half_variance(main.units, design.n2, main.n_datasets) if cz else None
    rho_model = estimate_rho(
        rho, main, s2, c=design.c, rho0=design.rho0, kfold=design.kfold, alpha=alpha
    )
    note = join_notes(
        main.note,
        model_note,
        carry_note,
        halves_note(halves) if halves else "",
        rho_model.note,
    )
    P = xr.DataArray(param_values, dims=param, coords={param: param_values}) if param else None
    var = Variances(method, s2, P, halves, design.c_test, alpha)
    target_width, effect, power = targets
    found = search(
        var,
        design,
        rho_model.k,
        pilot_model,
        J=J,
        budget_fits=budget_fits,
        param=param,
        target_width=target_width,
        effect=effect,
        power=power,
        knee_tolerance=knee_tolerance,
    )
    Jg = grid_of(found, design)
    ks = (rho_model.k, rho_model.k_lo, rho_model.k_hi)
    return plan_result(
        pilot=main,
        design=design,
        rho=rho_model,
        var=var,
        found=found,
        Jg=Jg,
        curves=grid_curves(var, Jg, ks, main.df, effect, pilot_model),
        limits=limits(var, rho_model.k, effect, pilot_model),
        param=param,
        targets=targets,
        alpha=alpha,
        knee_tolerance=knee_tolerance,
        note=note,
        power_model=model,
    )


def _plan_iv(
    pilot: Any,
    method: Any,
    power_model: Any,
    alpha: Any,
    target_width: Any,
    effect: Any,
    power: Any,
    knee_tolerance: Any,
    M: Any,
    R: Any,
) -> tuple[float, tuple[float | None, float | None, float], float, tuple[str, np.ndarray]]:
    """Check :func:`plan`'s arguments that need no pilot, and the pilot itself.

    In this order (the first problem is the one reported): ``method`` and
    ``power_model``, ``alpha``, the targets, ``knee_tolerance``, the pilot (a valid
    cube, not time-ordered), ``M`` and ``R``. Returns ``alpha``, ``(target_width,
    effect, power)``, ``knee_tolerance`` and the design parameter with its values.
    The arguments that need the pilot (``n_test``, ``rho``, ``J``, ``budget_fits``) are
    checked where the pilot is read.
    """
    check_method(method, power_model)
    alpha = validate_alpha(alpha)
    targets = check_targets(target_width, effect, power, alpha)
    knee_tolerance = check_knee_tolerance(knee_tolerance)
    if not isinstance(pilot, xr.DataArray):
        raise CvstatsTypeError(
            f"`pilot` must be a cube (xarray.DataArray), got {type(pilot).__name__}."
        )
    validate(pilot)
    fixed = fixed_models_refusal(pilot, NAME, instead="cvstats.plan_eval")
    if fixed is not None:
        raise DesignError(fixed)
    check_not_time_ordered(pilot, NAME)
    return alpha, targets, knee_tolerance, design_values(method, M, R)
