"""Notebook display: LaTeX for heads, models and learner results, so Jupyter shows
the matrices W_h and vectors v_h of a model (docs/design.md §1) or of the recovered canonical heads
(P2).  Used by the ``_repr_latex_`` / ``_repr_markdown_`` methods of
:class:`~exactattn.models.AttentionHead`, :class:`~exactattn.models.MultiHeadAttention`,
:class:`~exactattn.models.transformer.OneLayerTransformer`,
:class:`~exactattn.learners.result.LearnResult` and its Transformer subclass.

Rationals print as exact fractions; real entries (mpf, float) to 6 significant digits.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["latex_number", "latex_matrix", "latex_vector", "latex_heads", "latex_transformer",
           "MAX_HEADS_SHOWN"]

#: notebooks list at most this many heads in full, then say how many more there are
MAX_HEADS_SHOWN = 12


def latex_number(x) -> str:
    """An exact rational as \\frac{p}{q}; anything else to 6 significant digits."""
    if isinstance(x, int) and not isinstance(x, bool):
        x = Fraction(x)
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return str(x.numerator)
        sign = "-" if x < 0 else ""
        return f"{sign}\\tfrac{{{abs(x.numerator)}}}{{{x.denominator}}}"
    import mpmath
    if hasattr(x, "evalf"):  # a real sympy constant such as sqrt(2)
        x = mpmath.mpf(str(x.evalf(20)))
    return mpmath.nstr(mpmath.mpf(x) if isinstance(x, (int, float)) else x, 6)


def latex_matrix(rows) -> str:
    body = r" \\ ".join(" & ".join(latex_number(a) for a in r) for r in rows)
    return r"\begin{pmatrix} " + body + r" \end{pmatrix}"


def latex_vector(v) -> str:
    """v as a row, transposed: (v_1, …, v_d)^⊤."""
    return r"\begin{pmatrix} " + " & ".join(latex_number(a) for a in v) + r" \end{pmatrix}^{\top}"


def latex_heads(heads, title: str | None = None) -> str:
    """$$…$$ block listing W_h, v_h for (W, v) pairs, one row per head (docs/design.md §1), under an
    optional LaTeX ``title`` row."""
    heads = list(heads)
    rows = [title] if title else []
    if not heads:
        rows.append(r"\text{no heads: } F \equiv 0")
    rows += [f"W_{{{h}}} &= {latex_matrix(W)}, & v_{{{h}}} &= {latex_vector(v)}"
             for h, (W, v) in enumerate(heads[:MAX_HEADS_SHOWN], 1)]
    if len(heads) > MAX_HEADS_SHOWN:
        rows.append(f"&\\;\\dots\\ \\text{{{len(heads) - MAX_HEADS_SHOWN} more heads}}")
    return r"$$\begin{aligned} " + r" \\ ".join(rows) + r" \end{aligned}$$"


def latex_transformer(heads, A, w, title: str | None = None) -> str:
    """$$…$$ block for a one-layer Transformer (docs/design.md §1.1): W_h and V_h per head, then
    the FFN's A and w."""
    heads = list(heads)
    rows = [title] if title else []
    rows += [f"W_{{{h}}} &= {latex_matrix(W)}, & V_{{{h}}} &= {latex_matrix(V)}"
             for h, (W, V) in enumerate(heads[:MAX_HEADS_SHOWN], 1)]
    if len(heads) > MAX_HEADS_SHOWN:
        rows.append(f"&\\;\\dots\\ \\text{{{len(heads) - MAX_HEADS_SHOWN} more heads}}")
    rows.append(f"A &= {latex_matrix(A)}, & w &= {latex_vector(w)}")
    return r"$$\begin{aligned} " + r" \\ ".join(rows) + r" \end{aligned}$$"
