"""Which method to lead with: the recommendation behind every verdict.

A comparison table (:func:`cvstats.compare`) runs every method a design
supports; a reader needs one answer. :func:`recommend` picks it from the
methods at hand, for the question asked (``target``), by a fixed order of
preference with a reason for each entry. The order and the reasons are written
out in ``docs/choosing-a-method.md`` ("How the verdict picks its method"),
and a test checks that the page and :data:`LEARNER_ORDER` /
:data:`MODEL_ORDER` agree.

The inference layer (see ``docs/architecture.md``): reads the registry only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from cvstats.errors import ArgumentError
from cvstats.inference.registry import METHODS, TARGETS

__all__ = ["LEARNER_ORDER", "MODEL_ORDER", "REASONS", "Recommendation", "recommend"]

#: Preference order for ``target="learner"`` (the unconditional error of the
#: learning algorithms): methods whose variance includes the training-set
#: variability (Nadeau & Bengio 2003, §4), cheapest well-calibrated first.
LEARNER_ORDER: tuple[str, ...] = (
    "corrected_resampled_t",
    "corrected_repeated_kfold_t",
    "conservative_z",
    "corrected_bootstrap_t",
    "dietterich_5x2cv",
    "dietterich_5x2cv_t4",
    "dietterich_5x2cv_t5",
    "combined_5x2cv_f",
    "bayesian_correlated_t",
)

#: Preference order for ``target="model"`` (the models trained on the data at
#: hand), and the fallback when a design cannot answer the learner question.
MODEL_ORDER: tuple[str, ...] = (
    "nested_cv",
    "bayle_cv",
    "bayle_cv_in",
    "resampled_t",
    "bootstrap_t",
    "holdout_t",
    "mcnemar",
    "kfold_t",
)

#: Why each method is where it is in its order (shown by the verdict's notes).
REASONS: Mapping[str, str] = MappingProxyType(
    {
        "corrected_resampled_t": (
            "valid for the learner at no cost beyond the J fits; exact when ρ = ρ0 = n2/n "
            "(Nadeau & Bengio 2003, §4)"
        ),
        "corrected_repeated_kfold_t": (
            "the Nadeau–Bengio correction on repeated k-fold CV, ρ0 = 1/K (Bouckaert & Frank 2004)"
        ),
        "conservative_z": (
            "valid for the learner and on the safe side (Nadeau & Bengio 2003, §4); "
            "used when no corrected t applies"
        ),
        "corrected_bootstrap_t": (
            "the Nadeau–Bengio correction on bootstrap replicates (Nadeau & Bengio 2003, §4)"
        ),
        "dietterich_5x2cv": (
            "the learner's error at training size n/2; Dietterich (1998) found its size acceptable"
        ),
        "dietterich_5x2cv_t4": "Nadeau & Bengio's t4 correction of the 5x2cv t (n/2 μ)",
        "dietterich_5x2cv_t5": "Nadeau & Bengio's t5 correction of the 5x2cv t (n/2 μ)",
        "combined_5x2cv_f": "Alpaydın's (1999) F on 5x2 CV; a p-value without an interval",
        "bayesian_correlated_t": (
            "a posterior with the corrected t's correlation (Corani & Benavoli 2015)"
        ),
        "nested_cv": (
            "an interval for the error of the model fitted on all the data "
            "(Bates, Hastie & Tibshirani 2024)"
        ),
        "bayle_cv": (
            "an asymptotically valid interval for the k-fold test error "
            "(Bayle, Bayle, Janson & Mackey 2020)"
        ),
        "bayle_cv_in": "Bayle et al.'s interval with the within-fold variance estimate",
        "resampled_t": "the J random splits' spread: valid for E[μ̂_J | data]",
        "bootstrap_t": "the bootstrap replicates' spread: valid for E[μ̂_J | data]",
        "holdout_t": "the test losses of the one trained model (Nadeau & Bengio 2003, §4)",
        "mcnemar": "exact for the one trained pair of classifiers (0/1 losses)",
        "kfold_t": (
            "the folds' spread; ignores the correlation between folds "
            "(Bengio & Grandvalet 2004), so only a last resort"
        ),
    }
)


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
        Why this method (from :data:`REASONS`).
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
    if target == "learner":
        for name in LEARNER_ORDER:
            if name in names:
                return Recommendation(name, target, REASONS[name])
    for name in MODEL_ORDER:
        if name in names:
            if target == "model":
                return Recommendation(name, target, REASONS[name])
            supported = set(design_supports)
            dropped = [n for n in LEARNER_ORDER if n in set(left_out)]
            if dropped:
                caveat = _LEFT_OUT.format(names=", ".join(dropped), method=name)
            elif supported & set(LEARNER_ORDER):
                caveat = _NOT_NAMED.format(method=name)
            else:
                caveat = _NO_LEARNER.format(method=name)
            return Recommendation(name, target, REASONS[name], False, caveat)
    raise ArgumentError(f"no method to recommend among {sorted(names)} for target {target!r}.")
