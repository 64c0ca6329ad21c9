"""The method engine: a method is one declaration next to its function.

A module writes a method's body — what is particular to it: which split means
or losses it reads, its kernel, its result — and declares it with
:func:`method`, whose :class:`~cvstats.inference.registry.MethodSpec` carries
everything else (title, design, estimand and target, options and their
validators, recommendation order and reason, interval, source)::

    @method(MethodSpec(name="resampled_t", title="Resampled t", ...))
    def resampled_t(call: Call, *, n1: int | None = None, n2: int | None = None):
        \"\"\"Docstring of the public function.\"\"\"
        mu, J = ...
        return call.test(call.kernel(kernels.resampled_t, [mu], [[J_DIM]]), ...)

The decorator makes the public function ``resampled_t(cube, *, mu0=0.0,
alpha=0.05, alternative="two-sided", n1=None, n2=None, **options)`` and
registers the declaration (:func:`~cvstats.inference.registry.register`).
A call runs, for every method alike: the renamed keywords (FutureWarning),
the entry the call's options select (:attr:`MethodSpec.fixed`), the option
refusals (unknown options, values of :attr:`MethodSpec.only`), the
validators of its own options, one validation of the cube, the refusal of a
score cube for a method that needs per-example losses and of a time-ordered
cube for a method that pools splits, the checks of ``mu0``, ``alpha`` and
``alternative`` — then the body, with a :class:`Call`.

See ``docs/architecture.md`` ("Adding a method: the recipe").
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import xarray as xr

from cvstats import kernels
from cvstats._deprecation import renamed_argument
from cvstats.cube.apply import apply_kernel
from cvstats.cube.known import Checked
from cvstats.errors import ArgumentError
from cvstats.inference.blocks import BlockSizes, block_sizes, split_means
from cvstats.inference.common import Options, check_call, finish_test
from cvstats.inference.docs import fill_doc
from cvstats.inference.registry import COMMON_DEFAULTS, COMMON_OPTIONS, MethodSpec, register
from cvstats.results import InferenceResult

__all__ = ["Call", "Check", "Choice", "method"]


@dataclass(frozen=True)
class Choice:
    """Validator of an option that takes one of a few values.

    Attributes
    ----------
    values : tuple
        The values it takes (also the values the contract tests try).
    """

    values: tuple[Any, ...]

    def __call__(self, name: str, value: Any) -> Any:
        """Return ``value`` if it is one of :attr:`values`, else raise an ArgumentError."""
        if isinstance(value, str | int | float | bool | None) and value in self.values:
            return value
        raise ArgumentError(f"`{name}` must be one of {list(self.values)}, got {value!r}.")

    @property
    def examples(self) -> tuple[Any, ...]:
        """Valid values (for the contract tests)."""
        return self.values


@dataclass(frozen=True)
class Check:
    """Validator of an option by a function.

    Attributes
    ----------
    func : callable
        ``func(value)`` returns the value to use or raises
        :class:`~cvstats.errors.ArgumentError` naming the option.
    examples : tuple
        Valid values (for the contract tests).
    """

    func: Callable[[Any], Any]
    examples: tuple[Any, ...]

    def __call__(self, name: str, value: Any) -> Any:
        """Return ``func(value)``."""
        return self.func(value)


@dataclass(frozen=True)
class Call:
    """One call of a method: its validated cube, its declaration and its common options.

    The body of a method (:func:`method`) receives it first.

    Attributes
    ----------
    known : Checked
        The cube's validated handle (:class:`cvstats.cube.known.Checked`): made by
        the engine for a method called alone, or handed down by its caller
        (``compare``, which validated the cube once for all its methods).
    spec : MethodSpec
        The declaration of the entry this call runs.
    options : Options
        ``mu0``, ``alpha`` and ``alternative``, checked.
    """

    known: Checked
    spec: MethodSpec
    options: Options

    @property
    def cube(self) -> xr.DataArray:
        """The cube, validated (and refused when the method cannot run on it)."""
        return self.known.cube

    def split_means(self, blocks: Sequence[str] | None, label: str) -> xr.DataArray:
        """Return the test mean of every split of ``blocks`` (``blocks.split_means``).

        Computed once per handle: the methods that share it share the reduction.
        """
        return split_means(self.cube, blocks, label, known=self.known)

    def block_sizes(self, block: str, label: str) -> BlockSizes:
        """Return the sizes of a block (``blocks.block_sizes``), once per handle."""
        return block_sizes(self.cube, block, label, known=self.known)

    @property
    def mu0(self) -> float:
        """The null value, checked."""
        return self.options.mu0

    @property
    def alternative(self) -> str:
        """The alternative, checked."""
        return self.options.alternative

    def kernel(
        self,
        kernel: Callable[..., Any],
        inputs: Sequence[xr.DataArray],
        core_dims: Sequence[Sequence[str]],
        n_out: int = 4,
        **kwargs: Any,
    ) -> tuple[xr.DataArray, ...]:
        """Apply a numpy kernel over named dims (:func:`~cvstats.cube.apply.apply_kernel`)."""
        return apply_kernel(kernel, inputs, core_dims, n_out, **kwargs)

    def test(
        self,
        stat: Sequence[xr.DataArray],
        *,
        n1: int,
        n2: int,
        n_splits: int,
        n_fits: int | None = None,
        params: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> InferenceResult:
        """The result of a z/t test from a kernel's ``(estimate, stderr, statistic, df)``.

        The p-value for the alternative and the declaration's fields
        (:func:`~cvstats.inference.common.finish_test`); ``n_fits`` defaults
        to ``n_splits``.
        """
        return finish_test(
            stat,
            self.cube,
            self.spec,
            self.options,
            n1=n1,
            n2=n2,
            n_splits=n_splits,
            n_fits=n_splits if n_fits is None else n_fits,
            params=params,
            **fields,
        )

    def pvalue(self, statistic: xr.DataArray, df: xr.DataArray) -> xr.DataArray:
        """p-value of a z or t statistic for the call's alternative (``df = inf``: normal)."""
        (p,) = apply_kernel(
            kernels.pvalue, [statistic, df], [[], []], 1, alternative=self.alternative
        )
        return p


def _own_options(body: Callable[..., Any]) -> dict[str, Any]:
    """Return the body's own options (its keyword-only parameters after the call) and defaults."""
    params = list(inspect.signature(body).parameters.values())
    if not params or params[0].kind not in (
        params[0].POSITIONAL_ONLY,
        params[0].POSITIONAL_OR_KEYWORD,
    ):
        raise TypeError(f"{body.__name__}: a method's body takes the Call first")
    own: dict[str, Any] = {}
    for p in params[1:]:
        if p.kind is not p.KEYWORD_ONLY or p.default is p.empty:
            raise TypeError(
                f"{body.__name__}: a method's own options are keyword-only with a default "
                f"(`{p.name}` is not)"
            )
        if p.name in COMMON_OPTIONS:
            raise TypeError(f"{body.__name__}: `{p.name}` is a common option, taken by the engine")
        own[p.name] = p.default
    return own


def _signature(body: Callable[..., Any], own: Mapping[str, Any]) -> inspect.Signature:
    """Return the public signature: cube, common options, its own options, ``**options``."""
    kw = inspect.Parameter.KEYWORD_ONLY
    annotations = {"mu0": "float", "alpha": "float", "alternative": "str"}
    body_params = inspect.signature(body).parameters
    params = [
        inspect.Parameter(
            "cube", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=xr.DataArray
        ),
        *(
            inspect.Parameter(n, kw, default=COMMON_DEFAULTS[n], annotation=annotations[n])
            for n in COMMON_OPTIONS
        ),
        *(body_params[n] for n in own),
        inspect.Parameter("options", inspect.Parameter.VAR_KEYWORD, annotation=Any),
    ]
    return inspect.Signature(params, return_annotation=inspect.signature(body).return_annotation)


def _select(entries: Sequence[MethodSpec], values: Mapping[str, Any]) -> MethodSpec:
    """Return the entry whose fixed options the call's values match (the only one, if one)."""
    if len(entries) == 1:
        return entries[0]
    for entry in entries:
        if all(values.get(k) == v for k, v in entry.fixed.items()):
            return entry
    keys = sorted({k for e in entries for k in e.fixed})
    choices = {k: [e.fixed[k] for e in entries if k in e.fixed] for k in keys}
    given = {k: values.get(k) for k in keys}
    shown = ", ".join(f"`{k}` must be one of {v}, got {given[k]!r}" for k, v in choices.items())
    raise ArgumentError(f"{shown}.")


def method(*entries: MethodSpec) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a method: register its entries and make its public function from its body.

    Parameters
    ----------
    *entries : MethodSpec
        Its declaration; several when one function runs as several methods
        of a comparison table, told apart by their :attr:`MethodSpec.fixed`
        options (Dietterich's 5x2cv variants, Bayle et al.'s two variances).
        Their :attr:`~MethodSpec.options` and :attr:`~MethodSpec.func` are
        filled here.

    Returns
    -------
    callable
        A decorator of the body ``body(call, *, <own options>)``, whose
        docstring (with :func:`~cvstats.inference.docs.fill_doc`'s fragments)
        becomes the public function's.
    """
    if not entries:
        raise TypeError("method() needs at least one MethodSpec")

    def decorate(body: Callable[..., Any]) -> Callable[..., Any]:
        own = _own_options(body)
        options = (*COMMON_OPTIONS, *own)

        @functools.wraps(body, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
        def public(cube: xr.DataArray | Checked, **given: Any) -> Any:
            return _run(public.__method_entries__, body, own, cube, given)  # type: ignore[attr-defined]

        del public.__wrapped__  # the signature is the public one below, not the body's
        public.__signature__ = _signature(body, own)  # type: ignore[attr-defined]
        fill_doc(public)
        registered = tuple(register(replace(e, options=options, func=public)) for e in entries)
        public.__method_entries__ = registered  # type: ignore[attr-defined]
        return public

    return decorate


def _run(
    entries: Sequence[MethodSpec],
    body: Callable[..., Any],
    own: Mapping[str, Any],
    cube: xr.DataArray | Checked,
    given: dict[str, Any],
) -> Any:
    """Run one call of a method: what every method shares, then its body.

    ``cube`` is a cube, validated here, or the validated handle its caller made
    (:class:`~cvstats.cube.known.Checked`: ``compare`` validates once for all its
    methods), which is not validated again.
    """
    first = entries[0]
    name = body.__name__
    for old, new in first.renamed.items():
        if old in given:
            given[new] = renamed_argument(
                old,
                new,
                given.pop(old),
                given.get(new, own[new]),
                name,
                default=own[new],
                stacklevel=5,
            )
    values = {**COMMON_DEFAULTS, **own, **given}
    spec = _select(entries, values)
    spec.check_options(given)
    own_values = {k: values[k] for k in own}
    for key, check in spec.checks.items():
        own_values[key] = check(key, own_values[key])
    opts, known = check_call(
        cube, values["mu0"], values["alpha"], values["alternative"], method=spec
    )
    return body(Call(known, spec, opts), **own_values)
