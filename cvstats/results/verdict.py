"""Verdicts: a result's answer in plain words.

A result holds numbers in the papers' notation; a practitioner must write a
sentence. This module writes it, per contrast (and per coordinate of any extra
dim such as ``dataset``):

    tree has 2.5 points more error than logreg (95% CI −1.4 to 6.4; corrected
    resampled t, p = 0.19): no evidence that either generalizes better when
    trained on 513 examples.

The wording follows the metric's direction (a score cube's
``greater_is_better``: higher AUC is better, higher loss is worse), names the
better model in words, and says what the result is about: the learners
trained on ``n1`` examples (``target="learner"``, the unconditional error of
Nadeau & Bengio 2003, §1) or the models trained on these data
(``target="model"``). Zero-one losses are read as error rates and their
differences given in percentage points.

The results layer (see ``docs/architecture.md``): imports the data model only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from cvstats.cube.schema import CONTRAST

__all__ = [
    "Evidence",
    "evidence_of",
    "Quantity",
    "Verdict",
    "parse_weights",
    "posterior_sentence",
    "quantity_of",
    "readable_label",
    "result_verdict",
    "contrast_sentence",
]

#: Loss names read as error rates (differences in percentage points).
ERROR_LOSSES = ("zero_one",)
#: Said after an interval clipped at the metric's range (:mod:`cvstats.results.ranges`).
CLIPPED = ", clipped at the metric's range"

_TERM = re.compile(r"^(?P<sign>[+-] |-)?(?P<coef>[0-9.]+(?:e[+-]?\d+)?)\*(?P<model>.+)$")
_SPLIT = re.compile(r" (?=[+-] [0-9.]+(?:e[+-]?\d+)?\*)")
_PROPER = ("Dietterich", "McNemar", "Bayle", "Alpaydın", "Bayesian")


class Verdict(str):
    """Plain-words answer: a ``str`` that displays itself (in a notebook too)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{escape(line)}</li>" for line in self.splitlines() if line)
        return f"<ul class='cvstats-verdict'>{items}</ul>"


@dataclass(frozen=True)
class Quantity:
    """What the cube measures, for the wording.

    Attributes
    ----------
    noun : str
        ``"error"`` (zero-one losses), ``"<name> loss"``, or a score cube's metric.
    higher_is_better : bool
        The metric's direction.
    points : bool
        Whether values are error rates, shown in percent and differences in
        percentage points.
    negated : bool
        Whether the values are a loss negated (scikit-learn's ``neg_*`` scorers):
        the sentences speak of the loss itself (``noun`` without ``neg_``), its
        values and intervals negated back; ``higher_is_better`` stays the
        direction of the values (True), which decides who is better.
    """

    noun: str
    higher_is_better: bool = False
    points: bool = False
    negated: bool = False

    def amount(self, value: float, decimals: int) -> str:
        """Format a value (a level) in the quantity's unit."""
        if self.points:
            return f"{_num(100 * value, decimals)}%"
        return _num(self.scale(value), decimals)

    def scale(self, value: float) -> float:
        """Return the value in display units (percent for error rates; a loss un-negated)."""
        value = 100 * value if self.points else value
        return -value if self.negated else value

    def bounds(self, low: float, high: float) -> tuple[float, float]:
        """Return an interval in display units, lower bound first."""
        lo, hi = self.scale(low), self.scale(high)
        return (hi, lo) if self.negated else (lo, hi)


def quantity_of(attrs: Mapping[str, Any], loss: str) -> Quantity:
    """Read what a cube (or a result's estimate) measures from its attributes.

    Parameters
    ----------
    attrs : mapping
        The cube's attributes (kept on a result's ``estimate``): a score
        cube's ``greater_is_better`` and ``metric``, a collected cube's ``loss``.
    loss : str
        The cube's name (fallback for the noun).

    Returns
    -------
    Quantity
    """
    if "greater_is_better" in attrs:
        metric = str(attrs.get("metric", loss))
        higher = bool(int(attrs["greater_is_better"]))
        if higher and metric.startswith("neg_") and len(metric) > 4:  # a loss, negated
            return Quantity(metric[4:], True, negated=True)
        return Quantity(metric, higher)
    name = str(attrs.get("loss", loss))
    if name in ERROR_LOSSES:
        return Quantity("error", False, True)
    return Quantity(name if name.endswith("loss") else f"{name} loss")


def parse_weights(weights: str) -> list[tuple[float, str]]:
    """Read a contrast's ``weights`` string (``"-1*a + 1*b"``) into ``(weight, model)`` pairs.

    Returns an empty list when the string is not in that form (a contrast
    cube built by hand).

    Examples
    --------
    >>> parse_weights("-1*logreg + 1*tree")
    [(-1.0, 'logreg'), (1.0, 'tree')]
    """
    terms = []
    for part in _SPLIT.split(weights.strip()):
        match = _TERM.match(part)
        if match is None:
            return []
        sign = -1.0 if (match["sign"] or "").strip() == "-" else 1.0
        terms.append((sign * float(match["coef"]), match["model"]))
    return terms


def readable_label(label: str, weights: str | None, names: Mapping[str, str] | None = None) -> str:
    """Return a contrast's label as people write it: ``"tree − logreg"``.

    A difference of two models is written positive model first; a single model
    by its name; other weights spelled out (``"0.5 a + 0.5 b − c"``); without
    readable weights, the label itself. ``names`` writes a model under another
    name (a summary's short ``m1``, ``m2`` ...).

    Examples
    --------
    >>> readable_label("model[T.tree]", "-1*logreg + 1*tree")
    'tree − logreg'
    >>> readable_label("Intercept", "1*logreg")
    'logreg'
    >>> readable_label("a - b", "1*a - 1*b", {"a": "m1", "b": "m2"})
    'm1 − m2'
    """
    terms = parse_weights(weights) if weights else []
    if not terms:
        return label
    if names:
        terms = [(w, names.get(m, m)) for w, m in terms]
    pair = _pair(terms)
    if pair is not None:
        return f"{pair[0]} − {pair[1]}"
    if len(terms) == 1 and terms[0][0] == 1:
        return terms[0][1]
    out = []
    for i, (w, model) in enumerate(terms):
        coef = "" if abs(w) == 1 else f"{abs(w):.3g} "
        sign = ("−" if w < 0 else "") if i == 0 else (" − " if w < 0 else " + ")
        out.append(f"{sign}{coef}{model}")
    return "".join(out)


def _pair(terms: Sequence[tuple[float, str]]) -> tuple[str, str] | None:
    """Return ``(a, b)`` when the weights are ``a − b``, else None."""
    if len(terms) == 2 and sorted(w for w, _ in terms) == [-1.0, 1.0]:
        a = next(m for w, m in terms if w > 0)
        b = next(m for w, m in terms if w < 0)
        return a, b
    return None


def is_level(weights: str | None) -> bool:
    """Whether a contrast is one model's own level (weights ``1*m``), not a comparison."""
    terms = parse_weights(weights) if weights else []
    return len(terms) == 1 and terms[0][0] == 1


@dataclass(frozen=True)
class Evidence:
    """One row of a test: what a sentence is made of.

    Attributes
    ----------
    estimate, low, high, pvalue : float
        The estimate, its interval (NaN when the method gives none; ±inf for a
        one-sided interval) and p-value.
    method : str
        The method's title.
    mu0, alpha : float
        Null value and level.
    n1 : int
        Training size the estimand refers to.
    target : {"learner", "model"}
        What the method's variance is valid for.
    clipped : bool
        Whether the interval was clipped at the metric's range
        (:mod:`cvstats.results.ranges`).
    adjusted : str
        Empty, or the name of the multiple-comparison adjustment ``pvalue``
        went through (``"Holm"``): the sentence then says "Holm-adjusted p".
    """

    estimate: float
    low: float
    high: float
    pvalue: float
    method: str
    mu0: float
    alpha: float
    n1: int
    target: str
    clipped: bool = False
    adjusted: str = ""

    @property
    def significant(self) -> bool:
        """Whether the test rejects at ``alpha`` (or the interval excludes ``mu0``)."""
        if np.isfinite(self.pvalue):
            return bool(self.pvalue < self.alpha)
        if np.isnan(self.low) or np.isnan(self.high):
            return False
        return not (self.low <= self.mu0 <= self.high)


def short_title(title: str) -> str:
    """Return a method's title for a sentence: no parentheses, lower case unless a name.

    A name is one of :data:`_PROPER`, an acronym (two capitals first), or a first
    word with a capital inside it ("McNemar", "Diebold–Mariano": common words have
    none), so a method named after its authors keeps their case without an edit here.

    Examples
    --------
    >>> short_title("Corrected resampled t (Nadeau & Bengio)")
    'corrected resampled t'
    >>> short_title("Diebold–Mariano (h = 1)")
    'Diebold–Mariano'
    """
    text = re.sub(r"\s*\([^)]*\)", "", title).strip()
    first = text.split(" ", 1)[0]
    named = text.startswith(_PROPER) or text[:2].isupper() or first[1:] != first[1:].lower()
    if text and not named:
        text = text[0].lower() + text[1:]
    return text


def _decimals(*values: float) -> int:
    """Decimals that show two significant digits of the interval's half-width."""
    finite = [abs(v) for v in values if np.isfinite(v)]
    spread = max(finite) if finite else 0.0
    if len(values) == 3 and all(np.isfinite(values[1:])):
        spread = abs(values[2] - values[1]) / 2 or spread
    if spread == 0 or not np.isfinite(spread):
        return 2
    return int(min(max(0, 1 - math.floor(math.log10(spread))), 8))


def _num(value: float, decimals: int) -> str:
    if not np.isfinite(value):
        return "∞" if value > 0 else "−∞" if value < 0 else "n/a"
    text = f"{value:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "−")


def pvalue_text(p: float, alpha: float) -> str:
    """``"p = 0.19"``, ``"p < 0.001"``; enough digits to keep the side of ``alpha``."""
    if not np.isfinite(p):
        return ""
    if p < 0.001:
        return "p < 0.001"
    for digits in (2, 3, 4):
        text = f"{p:.{digits}g}"
        if (float(text) < alpha) == (p < alpha) and float(text) != alpha:
            break
    return f"p = {text}"


def _interval_text(ev: Evidence, q: Quantity, decimals: int, level: float, unit: str = "") -> str:
    lo, hi = q.bounds(ev.low, ev.high)
    if np.isnan(lo) or np.isnan(hi):
        return ""
    if not np.isfinite(lo) and np.isfinite(hi):
        return f"{level:g}% upper bound {_num(hi, decimals)}{unit}"
    if np.isfinite(lo) and not np.isfinite(hi):
        return f"{level:g}% lower bound {_num(lo, decimals)}{unit}"
    text = f"{level:g}% CI {_num(lo, decimals)}{unit} to {_num(hi, decimals)}{unit}"
    return text + (CLIPPED if ev.clipped else "")


def _details(ev: Evidence, q: Quantity, decimals: int) -> str:
    p = pvalue_text(ev.pvalue, ev.alpha)
    if p and ev.adjusted:
        p = f"{ev.adjusted}-adjusted {p}"
    parts = [
        _interval_text(ev, q, decimals, 100 * (1 - ev.alpha)),
        ", ".join(p for p in (short_title(ev.method), p) if p),
    ]
    return "; ".join(p for p in parts if p)


def contrast_sentence(label: str, weights: str | None, ev: Evidence, q: Quantity) -> str:
    """One sentence for one contrast of a test.

    Parameters
    ----------
    label : str
        The contrast's label (used when ``weights`` are not a difference of two
        models).
    weights : str or None
        The contrast's ``weights`` coordinate.
    ev : Evidence
        The numbers.
    q : Quantity
        What is measured.

    Returns
    -------
    str
    """
    d = q.scale(ev.estimate)
    decimals = _decimals(d, q.scale(ev.low), q.scale(ev.high))
    details = _details(ev, q, decimals)
    terms = parse_weights(weights) if weights else []
    pair = _pair(terms)
    zero = ev.mu0 == 0
    if pair is not None:
        a, b = pair
        if not np.isfinite(d):
            said = f"{a} − {b}: no estimate"
        elif _num(d, decimals).lstrip("−") == _num(0.0, decimals):
            said = f"{a} and {b} have the same {q.noun} to {decimals} decimals"
        elif q.points:
            said = f"{a} has {_num(abs(d), decimals)} points {'more' if d > 0 else 'less'} error"
            said += f" than {b}"
        else:
            more = "higher" if d > 0 else "lower"
            said = f"{a} has {_num(abs(d), decimals)} {more} {q.noun} than {b}"
        if zero:
            return f"{said} ({details}): {_conclusion(ev, q, a, b)}."
    elif len(terms) == 1 and terms[0][0] == 1:
        model = terms[0][1]
        said = f"{model}'s {q.noun} is {q.amount(ev.estimate, decimals)}"
        if zero:
            unit = "%" if q.points else ""
            interval = _interval_text(ev, q, decimals, 100 * (1 - ev.alpha), unit)
            return f"{said} ({'; '.join(p for p in (interval, short_title(ev.method)) if p)})."
    else:
        said = f"{readable_label(label, weights)}: {_num(d, decimals)}"
    mu0 = _num(q.scale(ev.mu0), decimals)
    if q.points and pair is not None:
        mu0 += " point" if mu0 in ("1", "−1") else " points"
    verb = "evidence" if ev.significant else "no evidence"
    what = "the difference" if pair is not None else "it"
    return f"{said} ({details}): {verb} that {what} differs from {mu0}."


def _conclusion(ev: Evidence, q: Quantity, a: str, b: str) -> str:
    if not ev.significant or not np.isfinite(ev.estimate) or ev.estimate == 0:
        if ev.target == "learner":
            return f"no evidence that either generalizes better when trained on {ev.n1} examples"
        return "no evidence that either, as trained on these data, does better"
    a_better = ev.estimate > 0 if q.higher_is_better else ev.estimate < 0
    better, worse = (a, b) if a_better else (b, a)
    if ev.target == "learner":
        return (
            f"evidence that {better} generalizes better than {worse} when trained on "
            f"{ev.n1} examples"
        )
    return (
        f"evidence that {better}, as trained on these data, does better than {worse} "
        "(a statement about these trained models, not the learning algorithms)"
    )


def posterior_sentence(
    label: str,
    weights: str | None,
    row: Mapping[str, float],
    q: Quantity,
    *,
    alpha: float,
    rope: tuple[float, float],
) -> str:
    """One sentence for one contrast of a posterior (the Bayesian correlated t).

    The decision follows Benavoli et al. (2017): a region (left of, inside or
    right of the rope) is declared when its posterior probability is at least
    0.95; otherwise no decision.
    """
    mean = q.scale(row["mean"])
    decimals = _decimals(mean, q.scale(row["ci_lower"]), q.scale(row["ci_upper"]))
    level = 100 * (1 - alpha)
    low, high = q.bounds(row["ci_lower"], row["ci_upper"])
    pair = _pair(parse_weights(weights) if weights else [])
    # a level of an error rate in percent, as the frequentist sentence writes it
    pct = "%" if q.points and pair is None else ""
    shown = f"{_num(low, decimals)}{pct} to {_num(high, decimals)}{pct}"
    cred = f"{level:g}% credible interval {shown}"
    cred += CLIPPED if bool(row.get("ci_clipped", False)) else ""
    a, b = pair if pair is not None else (readable_label(label, weights), "")
    unit = " points" if q.points else ""
    if rope[0] == -rope[1]:
        within = f"±{_num(abs(q.scale(rope[1])), decimals)}{pct or unit}"
    else:  # an asymmetric rope: its two ends, in the order of the values shown
        lo, hi = sorted(q.bounds(*rope))
        within = f"[{_num(lo, decimals)}{pct}, {_num(hi, decimals)}{pct}]{'' if pct else unit}"
    no_rope = rope[0] == rope[1] == 0  # the default: no region of practical equivalence
    left_better = not q.higher_is_better  # left of the rope: a − b < rope[0]
    probs = {
        "left": float(row["p_left"]),
        "rope": float(row["p_rope"]),
        "right": float(row["p_right"]),
    }
    if pair is not None:
        names = {
            "left": f"{a if left_better else b} better",
            "rope": f"equivalent within {within}",
            "right": f"{b if left_better else a} better",
        }
        said = f"{a} − {b}: posterior mean {_num(mean, decimals)}{unit}"
    else:
        names = {
            "left": "below the rope",
            "rope": f"within {within}",
            "right": "above the rope",
        }
        if no_rope:
            names.update(left="below 0", right="above 0")
        said = f"{a}: posterior mean {q.amount(row['mean'], decimals)}"
    # the regions in the order of the values shown (a negated loss shows them reversed)
    order = ("right", "rope", "left") if q.negated else ("left", "rope", "right")
    if no_rope:  # an empty rope has probability 0: said once, not as a region
        order = tuple(k for k in order if k != "rope")
    odds = ", ".join(f"P({names[k]}) = {probs[k]:.2f}" for k in order)
    if no_rope:
        odds += " (no rope: pass rope= for practical equivalence)"
    best = max(probs, key=lambda k: probs[k])
    if probs[best] >= 0.95:
        decision = f"decision: {names[best]} (probability at least 0.95)"
    else:
        decision = "no decision: no region has posterior probability 0.95"
    return f"{said} ({cred}; Bayesian correlated t): {odds}; {decision}."


def _prefix(row: pd.Series, dims: Sequence[str]) -> str:
    extra = [f"{d} = {row[d]}" for d in dims]
    return f"{', '.join(extra)}: " if extra else ""


def weights_of(estimate: Any) -> dict[str, str]:
    """Map each contrast label of a result's estimate to its ``weights`` string."""
    coords = getattr(estimate, "coords", {})
    if "weights" not in coords or CONTRAST not in getattr(estimate, "dims", ()):
        return {}
    return {
        str(c): str(w)
        for c, w in zip(estimate[CONTRAST].values, coords["weights"].values, strict=True)
    }


def result_verdict(result: Any) -> Verdict:
    """Return the verdict of one result (an ``InferenceResult`` or ``BayesianResult``).

    One line per contrast (and per coordinate of any extra dim). A result on a
    cube of models rather than contrasts gives each model's level.

    Parameters
    ----------
    result : InferenceResult or BayesianResult

    Returns
    -------
    Verdict
    """
    estimate = getattr(result, "estimate", None)
    if estimate is None:
        estimate = result.mean
    q = quantity_of(estimate.attrs, result.loss)
    weights = weights_of(estimate)
    frame = result.to_frame()
    dims = [c for c in frame.columns if c not in result.frame_columns]
    unit = CONTRAST if CONTRAST in dims else ("model" if "model" in dims else None)
    others = [d for d in dims if d != unit]
    lines = []
    for _, row in frame.iterrows():
        label = str(row[unit]) if unit else str(result.loss)
        w = weights.get(label) if unit == CONTRAST else (f"1*{label}" if unit else None)
        lines.append(_prefix(row, others) + row_sentence(result, row, label, w, q))
    return Verdict("\n".join(lines))


def row_sentence(
    result: Any,
    row: Mapping[str, Any],
    label: str,
    w: str | None,
    q: Quantity,
    *,
    adjusted: str = "",
) -> str:
    """Return the sentence of one row of a result's frame.

    ``adjusted``: the name of the adjustment the row's p-value went through, if any.
    """
    if "p_rope" in row:
        return posterior_sentence(label, w, row, q, alpha=result.alpha, rope=result.rope)
    return contrast_sentence(label, w, evidence_of(result, row, adjusted=adjusted), q)


def evidence_of(result: Any, row: Mapping[str, Any], *, adjusted: str = "") -> Evidence:
    """Return the :class:`Evidence` of one row of a test result's frame."""
    return Evidence(
        float(row["estimate"]),
        float(row["ci_lower"]),
        float(row["ci_upper"]),
        float(row["pvalue"]),
        str(getattr(result, "title", result.method)),
        float(result.mu0),
        float(result.alpha),
        int(result.n1),
        str(result.target),
        bool(row.get("ci_clipped", False)),
        adjusted,
    )


# --- results across datasets -----------------------------------------------------------


def _p(value: Any, alpha: float) -> str:
    return pvalue_text(float(np.asarray(value)), alpha) or "no p-value"


def friedman_verdict(res: Any) -> Verdict:
    """Return the verdict of a Friedman test (Demšar 2006, §3.2.2).

    Decides on Iman & Davenport's F (Demšar's recommendation), names the best
    and worst average ranks and the Nemenyi critical difference.
    """
    ranks = res.average_ranks.sort_values()
    p = float(np.asarray(res.iman_davenport_pvalue))
    differ = p < res.alpha
    best, worst = ranks.index[0], ranks.index[-1]
    cd = float(np.asarray(res.critical_difference))
    lines = [
        f"Across {res.n_datasets} datasets, the {res.n_models} models' average ranks "
        + ("differ" if differ else "show no evidence of a difference")
        + f" (Iman–Davenport F, {_p(p, res.alpha)}; Friedman χ², {_p(res.pvalue, res.alpha)})."
        + f" Best average rank: {best} ({ranks.iloc[0]:.2f}); worst: {worst} "
        + f"({ranks.iloc[-1]:.2f}); rank 1 is the "
        + f"{'highest' if res.higher_is_better else 'lowest'} value."
    ]
    if differ:
        pairs = [
            f"{a} < {b}"
            for i, a in enumerate(ranks.index)
            for b in ranks.index[i + 1 :]
            if ranks[b] - ranks[a] > cd
        ]
        found = "; ".join(pairs) if pairs else "none"
        lines.append(
            f"  Nemenyi (CD = {cd:.2f} at level {res.alpha:g}): pairs whose average ranks "
            f"differ by more than CD (better first): {found}."
        )
    return Verdict("\n".join(lines))


def _a_ahead(res: Any) -> bool:
    """Whether a Wilcoxon test finds ``a`` ahead: by the signed-rank sums, else by wins."""
    plus, minus = res.rank_sums
    if np.isfinite(plus) and np.isfinite(minus) and plus != minus:
        return bool(plus > minus)
    return bool(res.wins > res.losses)


def wilcoxon_verdict(res: Any, alpha: float = 0.05) -> Verdict:
    """Return the verdict of a Wilcoxon signed-rank test over datasets (Demšar 2006, §3.1.3)."""
    p = float(np.asarray(res.pvalue))
    a, b = res.model_a, res.model_b
    said = (
        f"{a} vs {b} over {res.n_datasets} datasets: {a} better on {res.wins}, worse on "
        f"{res.losses}, tied on {res.ties} (Wilcoxon signed-rank, {_p(p, alpha)})"
    )
    if np.isfinite(p) and p < alpha:
        better = a if _a_ahead(res) else b
        return Verdict(f"{said}: evidence that {better} is better on datasets like these.")
    return Verdict(f"{said}: no evidence that either is better on datasets like these.")


#: Posterior probability at which a Bayesian test across datasets decides (the 0.95 of
#: Benavoli, Corani, Demšar & Zaffalon 2017).
BAYES_DECISION = 0.95


def bayes_datasets_verdict(res: Any) -> Verdict:
    """Return the verdict of a Bayesian sign or signed-rank test across datasets.

    The more probable learner first ("probability 0.76 that b is practically
    better on a new dataset; 0.18 practically equivalent; 0.06 that a is"),
    then the decision at :data:`BAYES_DECISION` (Benavoli et al. 2017).
    """
    a, b = res.model_a, res.model_b
    probs = res.probabilities()
    rope = res.rope > 0
    said = f"{res.title}, {a} vs {b} over {res.n_datasets} datasets" + (
        f" (rope ±{res.rope:g})" if rope else " (no rope)"
    )
    if not np.isfinite(probs["left"]):
        return Verdict(f"{said}: the ties won every posterior draw; give a rope > 0.")
    first, second = (a, b) if probs["left"] >= probs["right"] else (b, a)
    p_first = probs["left"] if first == a else probs["right"]
    p_second = probs["right"] if first == a else probs["left"]
    practically = "practically better" if rope else "better"
    parts = [f"probability {p_first:.2f} that {first} is {practically} on a new dataset"]
    if rope:
        parts.append(f"{probs['rope']:.2f} practically equivalent")
    parts.append(f"{p_second:.2f} that {second} is")
    best = max(probs, key=lambda k: probs[k])
    if probs[best] < BAYES_DECISION:
        decision = f"no region reaches {BAYES_DECISION:g}: the datasets do not decide"
    elif best == "rope":
        decision = f"{a} and {b} are practically equivalent"
    else:
        decision = f"{a if best == 'left' else b} is {practically}"
    return Verdict(f"{said}: {'; '.join(parts)}. Decision: {decision}.")


def hierarchical_verdict(res: Any) -> Verdict:
    """Return the verdict of the hierarchical correlated t test across datasets.

    The new-dataset probabilities as :func:`bayes_datasets_verdict` says them,
    then those of the mean difference ``μ0``, and a warning when the chains did
    not converge (Corani et al. 2017, §3).
    """
    first = bayes_datasets_verdict(res)
    mean = res.probabilities("mean")
    a, b = res.model_a, res.model_b
    practically = "practically " if res.rope > 0 else ""
    text = (
        f"{first} On the mean difference: probability {mean['right']:.2f} that {b} is "
        f"{practically}better, {mean['left']:.2f} that {a} is"
        + (f", {mean['rope']:.2f} practically equivalent." if res.rope > 0 else ".")
    )
    if not res.converged:
        text += (
            " Warning: the chains have not converged (R̂ > 1.01 or ESS < 400); "
            "rerun with more draws."
        )
    return Verdict(text)


def pairwise_verdict(res: Any) -> Verdict:
    """Return the verdict of corrected pairwise Wilcoxon tests."""
    lines = []
    for test, p, reject in zip(
        res.tests,
        np.asarray(res.pvalue_adjusted).ravel(),
        np.asarray(res.reject).ravel(),
        strict=True,
    ):
        a, b = test.model_a, test.model_b
        if bool(reject):
            better = a if _a_ahead(test) else b
            worse = b if better == a else a
            lines.append(
                f"{better} better than {worse} ({a}: {test.wins} wins, {test.losses} losses; "
                f"{res.correction}-adjusted {_p(p, res.alpha)})."
            )
        else:
            lines.append(
                f"{a} vs {b}: no evidence of a difference ({res.correction}-adjusted "
                f"{_p(p, res.alpha)})."
            )
    return Verdict("\n".join(lines))


#: The names of statsmodels' ``multipletests`` methods in words.
_ADJUST_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "simes-hochberg": "Hochberg",
    "hommel": "Hommel",
    "sidak": "Šidák",
    "holm-sidak": "Holm–Šidák",
    "fdr_bh": "Benjamini–Hochberg",
    "fdr_by": "Benjamini–Yekutieli",
}


def _count(n: int, word: str) -> str:
    """Return ``"1 win"``, ``"3 wins"``, ``"2 losses"``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('s') else 's'}"


def adjustment_name(method: str) -> str:
    """Return the name of a ``multipletests`` method in words (``"holm"`` -> ``"Holm"``)."""
    return _ADJUST_NAMES.get(method, method)


def matrix_verdict(res: Any) -> Verdict:
    """Return the verdict of the all-pairs matrix: one line per pair of learners.

    A pair that differs at the family-wise level names the learner ahead by the
    test's own statistic (the larger signed-rank sum, or the better average
    rank), with its wins, ties and losses and the mean difference.
    """
    models = res.models
    adjusted = "Nemenyi" if res.adjust == "nemenyi" else f"{adjustment_name(res.adjust)}-adjusted"
    lines = []
    for i, j in combinations(range(len(models)), 2):
        stat = np.asarray(res.statistic)
        ahead = i if stat[i, j] > stat[j, i] else j
        if stat[i, j] == stat[j, i]:
            ahead = i if res.wins.values[i, j] >= res.losses.values[i, j] else j
        other = j if ahead == i else i
        a, b = models[ahead], models[other]
        counts = (
            _count(int(getattr(res, f).values[ahead, other]), word)
            for f, word in (("wins", "win"), ("ties", "tie"), ("losses", "loss"))
        )
        record = (
            f"{a}: {', '.join(counts)}; mean difference "
            f"{_g(float(res.mean_difference.values[ahead, other]))}; "
            f"{adjusted} {_p(res.pvalue_adjusted.values[i, j], res.alpha)}"
        )
        if bool(res.reject.values[i, j]):
            lines.append(f"{a} better than {b} ({record}).")
        else:
            lines.append(f"{models[i]} vs {models[j]}: no evidence of a difference ({record}).")
    return Verdict("\n".join(lines))


#: The adjustments of comparisons against a control, as the verdict names them.
_CONTROL_ADJUST = {"holm": "Holm", "hochberg": "Hochberg", "bonferroni": "Bonferroni–Dunn"}


def control_verdict(res: Any) -> Verdict:
    """Return the verdict of comparisons against a control (Demšar 2006, §3.2.2)."""
    control = res.control
    r_control = float(res.average_ranks[control])
    lines = []
    for model, diff, p, reject in zip(
        res.rank_difference["model"].values,
        np.asarray(res.rank_difference),
        np.asarray(res.pvalue_adjusted),
        np.asarray(res.reject),
        strict=True,
    ):
        ranks = f"average ranks {model} {r_control + float(diff):.2f}, {control} {r_control:.2f}"
        adjusted = f"{_CONTROL_ADJUST.get(res.adjust, res.adjust)}-adjusted {_p(p, res.alpha)}"
        if bool(reject):
            better, worse = (control, model) if diff > 0 else (model, control)
            lines.append(f"{better} better than {worse} ({ranks}; {adjusted}).")
        else:
            lines.append(
                f"{model} vs {control}: no evidence of a difference ({ranks}; {adjusted})."
            )
    return Verdict("\n".join(lines))


def effect_size_verdict(res: Any) -> Verdict:
    """Return the verdict of the effect sizes of two learners over datasets."""
    a, b = res.model_a, res.model_b
    d, delta = float(np.asarray(res.cohens_d)), float(np.asarray(res.cliffs_delta))
    if d == 0 or not np.isfinite(d):
        ahead = f"{a} and {b} have the same mean"
    else:
        better = a if (d > 0) == res.greater_is_better else b
        ahead = f"{better} is ahead on average"
    gamma = float(np.asarray(res.akinshin_gamma))
    return Verdict(
        f"{ahead} over {res.n_datasets} datasets: Cohen's d = {d:.2f} ({res.d_magnitude}), "
        f"Akinshin's γ = {gamma:.2f} ({res.gamma_magnitude}), "
        f"Cliff's δ = {delta:.2f} ({res.delta_magnitude}), on {a} - {b}."
    )


def rank_report_verdict(res: Any) -> Verdict:
    """Return the verdict of a rank report: the Friedman verdict, then the pairwise one."""
    return Verdict(f"{friedman_verdict(res.friedman)}\n{pairwise_verdict(res.pairwise)}")


def winner_verdict(res: Any) -> Verdict:
    """Return the verdict of a winner table (conditional vs CV winners on a population)."""
    a, b = res.models
    agreement = float(np.asarray(res.agreement))
    return Verdict(
        f"On {res.n_datasets} samples, cross-validation picked the model that was truly "
        f"better on that sample ({a} or {b}, by its conditional error) {100 * agreement:.0f}% "
        "of the time: a CV winner says this much about the better trained model."
    )


def estimates_verdict(res: Any) -> Verdict:
    """Return the verdict of an estimating-function fit (``fit_rho``, ``fit_r``, ``fit_lemma1``).

    For ``fit_rho``, whether ρ̂ is above, below or consistent with ρ0 = n2/n,
    the correlation the corrected resampled t assumes (Nadeau & Bengio 2003,
    §4): above, the corrected t is liberal for these learners; below,
    conservative. Otherwise each quantity's estimate and interval.
    """
    frame = res.to_frame()
    if "quantity" not in frame.columns or "estimate" not in frame.columns:
        return Verdict("")
    units = [c for c in frame.columns if c not in res_columns(frame)]
    alpha = float(res.attrs.get("alpha", 0.05))
    level = f"{100 * (1 - alpha):g}%"
    lines = []
    for key, group in frame.groupby(units, sort=False) if units else [((), frame)]:
        rows = group.set_index("quantity")
        name = ", ".join(str(k) for k in np.atleast_1d(key)) if units else ""
        prefix = f"{name}: " if name else ""
        if "rho" in rows.index and "rho0" in rows.index:
            r, r0 = rows.loc["rho"], float(rows.loc["rho0", "estimate"])
            low, high = float(r["ci_lower"]), float(r["ci_upper"])
            if low > r0:
                what = "above ρ0: the corrected resampled t is liberal for these learners"
            elif high < r0:
                what = "below ρ0: the corrected resampled t is conservative for these learners"
            else:
                what = "consistent with ρ0: no evidence against the corrected t's assumption"
            lines.append(
                f"{prefix}ρ̂ = {_g(r['estimate'])} ({level} CI {_g(low)} to {_g(high)}) "
                f"against ρ0 = n2/n = {_g(r0)}: {what}."
            )
            continue
        shown = [
            f"{q} = {_g(v['estimate'])} ({level} CI {_g(v['ci_lower'])} to {_g(v['ci_upper'])})"
            for q, v in rows.iterrows()
            if np.isfinite(float(v.get("ci_lower", np.nan)))
        ]
        lines.append(prefix + "; ".join(shown) + ".")
    return Verdict("\n".join(lines))


def _g(value: Any) -> str:
    return f"{float(value):.3g}".replace("-", "−")


def res_columns(frame: pd.DataFrame) -> set[str]:
    """Return the value columns of an estimates frame (the rest are unit dims)."""
    return {"quantity", "estimate", "stderr", "ci_lower", "ci_upper"} & set(frame.columns)
