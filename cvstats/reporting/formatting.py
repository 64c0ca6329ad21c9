"""Formatting helpers shared by the reporting modules (text only, no statistics)."""

from __future__ import annotations

__all__ = ["latex_escape"]


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters in plain text (captions, labels).

    pandas escapes table cells itself (``Styler.format(escape="latex")``) but
    offers no public function for one string, so this small table is kept.

    Examples
    --------
    >>> latex_escape("50% of a_b")
    '50\\% of a\\_b'
    """
    specials = {
        "\\": r"\textbackslash{}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "%": r"\%",
        "_": r"\_",
        "&": r"\&",
        "#": r"\#",
        "$": r"\$",
        "{": r"\{",
        "}": r"\}",
    }
    return "".join(specials.get(ch, ch) for ch in text)
