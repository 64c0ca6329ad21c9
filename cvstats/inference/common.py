"""What every inference method shares.

Input checks, the one kernel-applying helper around :func:`xarray.apply_ufunc`,
and the assembly of the result.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np
import xarray as xr

from cvstats import kernels
from cvstats._deprecation import renamed_argument
from cvstats.cube.apply import apply_kernel
from cvstats.cube.checks import validate_alpha, validate_alternative
from cvstats.cube.evals import fixed_models_refusal
from cvstats.cube.known import Checked
from cvstats.cube.score import examples_refusal, is_score
from cvstats.cube.validation import checked
from cvstats.errors import ArgumentError, CubeError, DesignError
from cvstats.inference.blocks import BlockSizes
from cvstats.inference.clustered import warn_if_straddling
from cvstats.inference.registry import MethodSpec, time_order_refusal
from cvstats.results import InferenceResult

__all__ = [
    "correction_sizes",
    "reported_size",
    "renamed_option",
    "Options",
    "check_call",
    "check_options",
    "check_sizes",
    "check_not_time_ordered",
    "apply_kernel",
    "pvalues",
    "make_result",
    "finish_test",
    "resolve_size",
]

#: A size from the cube: an int, or a float for the mean sizes of a k-fold partition.
_Size = TypeVar("_Size", int, float)


class Options(NamedTuple):
    """The options every test takes, checked."""

    mu0: float
    alpha: float
    alternative: str


def check_call(
    cube: xr.DataArray | Checked,
    mu0: float,
    alpha: float,
    alternative: str,
    *,
    method: MethodSpec,
) -> tuple[Options, Checked]:
    """Check a call of a method (its options refused or not already) and validate its cube once.

    Refuses, with a :class:`~cvstats.errors.CubeError` saying why and what to
    collect instead, a score cube (:mod:`cvstats.cube.score`) when the method
    needs per-example losses (``method.needs == "examples"``); validates the
    cube, unless it comes as its validated handle
    (:class:`~cvstats.cube.known.Checked`, from a caller that validated it);
    refuses, with a :class:`~cvstats.errors.DesignError`, a cube whose training
    sets are nested (attr ``nested_train = 1``, e.g. ``TimeSeriesSplit``) when
    the method pools splits as exchangeable random draws
    (:meth:`MethodSpec.time_order_refusal`), and a cube of fixed models'
    answers (:func:`cvstats.from_evals`: no training set is resampled); warns
    when a group of the cube's ``group`` coordinate straddles a split's
    training and test sets (:func:`~cvstats.inference.clustered.warn_if_straddling`;
    not for a handle, whose holder warns); and checks ``mu0``, ``alpha`` and
    ``alternative``.

    Returns
    -------
    options : Options
    known : Checked
        The cube's validated handle.
    """
    raw = cube.cube if isinstance(cube, Checked) else cube
    if method.needs == "examples" and is_score(raw):
        raise CubeError(examples_refusal(method.name))
    known = checked(cube)
    fixed = fixed_models_refusal(raw, method.name)
    if fixed is not None:
        raise DesignError(fixed)
    if not isinstance(cube, Checked):  # a caller with a handle (compare) warns once itself
        warn_if_straddling(raw)
    ordered = method.time_order_refusal(raw)  # after validation, which names a non-cube
    if ordered is not None:
        raise DesignError(ordered)
    if isinstance(mu0, bool) or not isinstance(mu0, numbers.Real) or not np.isfinite(mu0):
        raise ArgumentError(f"`mu0` must be a finite real number, got {mu0!r}.")
    return Options(float(mu0), validate_alpha(alpha), validate_alternative(alternative)), known


def check_options(
    cube: xr.DataArray,
    mu0: float,
    alpha: float,
    alternative: str,
    *,
    method: MethodSpec,
    extra: Mapping[str, Any] | None = None,
) -> Options:
    """Validate the cube and the options of ``method`` (its registry entry).

    For a function outside the engine that runs as a method does (e.g.
    :func:`cvstats.inference.nested.nested_cv_terms`): refuses, with an
    :class:`~cvstats.errors.ArgumentError`, a value of a common option the
    method does not support (``method.only``) and any option in ``extra`` it
    does not take; then :func:`check_call`.
    """
    method.check_options({"mu0": mu0, "alternative": alternative, **(extra or {})})
    return check_call(cube, mu0, alpha, alternative, method=method)[0]


def check_not_time_ordered(cube: xr.DataArray, method: str) -> None:
    """Refuse a cube whose training sets are nested, for an analysis that pools its splits.

    For the analyses outside the registry that treat the splits as exchangeable
    random draws (:func:`cvstats.fit_rho`, :func:`cvstats.fit_r`,
    :func:`cvstats.fit_lemma1`); see
    :func:`cvstats.inference.registry.time_order_refusal`.

    Raises
    ------
    DesignError
        If the cube's attr ``nested_train`` is 1.
    """
    problem = time_order_refusal(cube, method)
    if problem is not None:
        raise DesignError(problem)


def check_sizes(cube: xr.DataArray, n1: float, n2: float) -> tuple[float, float]:
    """Check ``n1 + n2`` against the cube's ``n`` (for user overrides); return them."""
    n = int(cube.attrs["n"])
    if n1 + n2 > n:
        raise ArgumentError(
            f"`n1` + `n2` = {n1} + {n2} exceeds the cube's n = {n} examples; pass sizes that "
            "fit the design (or None: from the cube)."
        )
    return n1, n2


def correction_sizes(
    cube: xr.DataArray, sizes: BlockSizes, n1: int | None, n2: int | None
) -> tuple[float, float]:
    """Return the ``(n1, n2)`` a Nadeau–Bengio correction uses on the block of ``sizes``.

    Each size the caller gives (a positive int, ``n1 + n2 <= n``), else the
    block's :attr:`~cvstats.inference.blocks.BlockSizes.correction`: its one
    size, or the exact mean sizes ``n - n/K`` and ``n/K`` of a k-fold partition
    of unequal folds. The caller has refused a block without either
    (:func:`~cvstats.inference.blocks.check_one_size`) unless both are given.
    """
    default = sizes.correction or (float(sizes.n1), float(sizes.n2))
    return check_sizes(
        cube, resolve_size("n1", n1, default[0]), resolve_size("n2", n2, default[1])
    )


def reported_size(value: float) -> int:
    """Return a size as results report it: the nearest int (a mean ``n/K`` may be fractional)."""
    return int(round(value))


def resolve_size(name: str, given: int | None, from_cube: _Size) -> int | _Size:
    """``n1``/``n2``: the cube's value unless the caller overrides it."""
    if given is None:
        return from_cube
    if isinstance(given, bool) or not isinstance(given, numbers.Integral) or given < 1:
        raise ArgumentError(
            f"`{name}` must be a positive int (or None: from the cube), got {given!r}."
        )
    return int(given)


def pvalues(statistic: xr.DataArray, df: xr.DataArray, alternative: str) -> xr.DataArray:
    """p-values of a z or t statistic (``df = inf``: normal)."""
    (p,) = apply_kernel(kernels.pvalue, [statistic, df], [[], []], 1, alternative=alternative)
    return p


def make_result(
    estimate: xr.DataArray,
    stderr: xr.DataArray,
    statistic: xr.DataArray,
    df: xr.DataArray,
    pvalue: xr.DataArray,
    **fields: Any,
) -> InferenceResult:
    """Assemble an :class:`InferenceResult`; its values stay DataArrays (0-d for a scalar)."""
    return InferenceResult(
        estimate=estimate,
        stderr=stderr,
        statistic=statistic,
        df=df,
        pvalue=pvalue,
        **fields,
    )


def finish_test(
    stat: Sequence[xr.DataArray],
    cube: xr.DataArray,
    method: MethodSpec,
    options: Options,
    *,
    n1: int,
    n2: int,
    n_splits: int,
    n_fits: int,
    params: Mapping[str, Any] | None = None,
    **fields: Any,
) -> InferenceResult:
    """Assemble the result of a z/t test from a kernel's ``(estimate, stderr, statistic, df)``.

    The p-value for the alternative, the cube's loss name, the options and the
    method's registry fields (:meth:`MethodSpec.result_fields`, its templates
    filled from ``params``); ``fields`` override any of them.
    """
    estimate, stderr, statistic, df = stat
    return make_result(
        estimate,
        stderr,
        statistic,
        df,
        pvalues(statistic, df, options.alternative),
        loss=str(cube.name),
        **{
            **method.result_fields(**(params or {})),
            **options._asdict(),
            "n1": n1,
            "n2": n2,
            "n_splits": n_splits,
            "n_fits": n_fits,
            **fields,
        },
    )


def renamed_option(
    options: dict[str, Any], old: str, new: str, value: Any, default: Any, method: str
) -> Any:
    """Take a renamed option's old keyword out of ``options`` (FutureWarning), or ``value``.

    The options that pick a form of a test are called ``variant`` everywhere
    (``docs/architecture.md``); their old names keep working for a while.
    """
    if old not in options:
        return value
    return renamed_argument(
        old, new, options.pop(old), value, method, default=default, stacklevel=4
    )
