"""Which method to lead with: the recommendation behind every verdict.

A comparison table (:func:`cvstats.compare`) runs every method a design
supports; a reader needs one answer. :func:`recommend` picks it from the
methods at hand, for the question asked (``target``), by a fixed order of
preference with a reason for each entry. The order and the reasons are each
method's declaration (:attr:`~cvstats.inference.registry.MethodSpec.rank` and
:attr:`~cvstats.inference.registry.MethodSpec.reason`): ``LEARNER_ORDER``,
``MODEL_ORDER`` and ``REASONS`` are read off the registry, and
``docs/choosing-a-method.md`` ("How the verdict picks its method") renders
the same table from it.

The inference layer (see ``docs/architecture.md``): reads the registry only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from cvstats.errors import ArgumentError
from cvstats.inference.registry import METHODS, TARGETS, order

__all__ = ["LEARNER_ORDER", "MODEL_ORDER", "REASONS", "Recommendation", "recommend"]  # noqa: F822


def __getattr__(name: str) -> Any:
    # the orders and reasons are read off the declarations (MethodSpec.rank, .reason), so
    # a new method takes its place by its declaration alone
    if name == "LEARNER_ORDER":
        # preference order for ``target="learner"`` (the unconditional error of the
        # learning algorithms): methods whose variance includes the training-set
        # variability (Nadeau & Bengio 2003, §4), cheapest well-calibrated first.
        return order("learner")
    if name == "MODEL_ORDER":
        # preference order for ``target="model"`` (the models trained on the data at
        # hand), and the fallback when a design cannot answer the learner question.
        return order("model")
    if name == "REASONS":
        return MappingProxyType({n: s.reason for n, s in METHODS.items()})
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Recommendation:
    """The method a verdict leads with, and why.

    Attributes
    ----------
    method : str
        A key of :data:`cvstats.inference.registry.METHODS`.
    target : {"learner", "model"}
        The question asked.
    reason : str
        Why this method (its declaration's ``reason``).
    answers_target : bool
        False when ``target="learner"`` but none of the methods at hand is
        valid for the learner: the recommendation then answers for the models
        trained on these data, and :attr:`caveat` says so.
    caveat : str
        Empty, or why no method valid for the learner is at hand, which method
        the verdict comes from and the target it answers (the models trained
        on these data), and how to get a method that answers the learner
        question.
    """

    method: str
    target: str
    reason: str
    answers_target: bool = True
    caveat: str = ""


#: How a fallback's verdict answers (the target its method is valid for).
_FALLBACK = (
    "the verdict comes from {method}, which answers for the models trained on these data "
    "(target 'model'; liberal for the learners)"
)
_NO_LEARNER = (
    "this design cannot answer the learner question (is one algorithm better on data sets "
    "like this one?): none of its methods accounts for the choice of training set, so "
    f"{_FALLBACK}; for the learners, collect J >= 2 random splits (cvstats.designs.resampled) "
    "or repeated k-fold and use the corrected t"
)
_LEFT_OUT = (
    "the methods valid for the learner question that this design supports ({names}) were "
    f"left out for this cube (the notes say why, and how to run them), so {_FALLBACK}"
)
_NOT_NAMED = (
    f"none of the methods named is valid for the learner question, so {_FALLBACK}; add "
    "corrected_resampled_t (or another method valid for the learner) to `methods`"
)


def recommend(
    available: Iterable[str],
    target: str = "learner",
    *,
    design_supports: Iterable[str] = (),
    left_out: Iterable[str] = (),
) -> Recommendation:
    """Pick the method a verdict should lead with.

    Parameters
    ----------
    available : iterable of str
        Methods at hand (e.g. those a comparison table ran).
    target : {"learner", "model"}
        The question: the unconditional error of the learners, or the
        conditional error of the models trained on these data.
    design_supports : iterable of str, optional
        Every method the cube's design supports (e.g.
        :func:`~cvstats.inference.registry.applicable_methods`); used only to
        say, when no learner method is at hand, whether the design or the
        choice of ``methods`` is the reason.
    left_out : iterable of str, optional
        Methods the design supports that were left out for this cube or these
        options (e.g. :func:`cvstats.compare` leaves out a corrected t whose
        splits test different numbers of examples, with a note saying how to
        run it); when they include the learner methods, the caveat says so
        rather than blaming the design or ``methods``.

    Returns
    -------
    Recommendation

    Raises
    ------
    ArgumentError
        For an unknown target, or when no method at hand is in either order.

    Examples
    --------
    >>> from cvstats.inference.recommend import recommend
    >>> recommend(["resampled_t", "corrected_resampled_t", "conservative_z"]).method
    'corrected_resampled_t'
    >>> rec = recommend(["holdout_t"], "learner")
    >>> rec.method, rec.answers_target
    ('holdout_t', False)
    """
    if target not in TARGETS:
        raise ArgumentError(f"`target` must be one of {list(TARGETS)}, got {target!r}.")
    names = set(available)
    unknown = sorted(n for n in names if n not in METHODS)
    if unknown:
        raise ArgumentError(f"unknown method(s) {unknown}; choose from {list(METHODS)}.")
    learner = order("learner")
    if target == "learner":
        for name in learner:
            if name in names:
                return Recommendation(name, target, METHODS[name].reason)
    for name in order("model"):
        if name in names:
            if target == "model":
                return Recommendation(name, target, METHODS[name].reason)
            supported = set(design_supports)
            dropped = [n for n in learner if n in set(left_out)]
            if dropped:
                caveat = _LEFT_OUT.format(names=", ".join(dropped), method=name)
            elif supported & set(learner):
                caveat = _NOT_NAMED.format(method=name)
            else:
                caveat = _NO_LEARNER.format(method=name)
            return Recommendation(name, target, METHODS[name].reason, False, caveat)
    raise ArgumentError(f"no method to recommend among {sorted(names)} for target {target!r}.")
