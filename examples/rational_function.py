"""The copy-count family of a 3-head model is a rational function of the number of copies
(P2 copy-count rational interpolation; docs/design.md §4.3).

For the queries [(x+u) repeated m times, x] the output is
G(m) = K + Σ_h c_h / (1 + m z_h), z_h = e^{uᵀW_h x}, c_h = −v_h·u: a rational function of type
(H, H) with one pole at m = −1/z_h per head.  The oracle only answers at m = 0, 1, 2, …; the
2H+1 samples m = 0…2H determine G on the whole real line, and with it every pole and residue.
This script draws G over real m (poles visible), the 2H+1 oracle samples and the interpolant.

    python examples/rational_function.py [--out DIR] [--heads 3]
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

import exactattn as ea
from exactattn.arith import get_backend
from exactattn.analysis.experiments import copy_count_samples, copy_count_terms
from exactattn.arith.fields import RealField
from exactattn.learners.p2.interpolation import fit_rational, poles_and_residues, poly_eval

from _common import parser, pyplot, save

DPS = 50
MP = get_backend("mp", DPS)   # interpolation of the (exact) samples at 50 digits
CTX = MP.ctx


def teaching_model(H: int):
    """A d = 2 model whose family I(e₁, e₂) has scores s_h = W_h[0][1] spread over [−1, 1]
    and residues c_h = −v_h[0] of both signs, so the H poles −e^{−s_h} are far apart (P2
    copy-count family)."""
    heads = []
    for h in range(H):
        s = Fraction(2 * h - (H - 1), max(1, H - 1))          # −1 … 1
        c = Fraction((-1) ** h * (h + 1), 2)                   # ½, −1, 3/2, …
        heads.append(([[Fraction(1, 4), s], [Fraction(-h, 4), Fraction(1, 2)]],
                      [-c, Fraction(1, 1 + h)]))
    return ea.MultiHeadAttention(heads)


def interpolate(samples):
    """Reduced rational interpolant through G(0…2H) (P2 rational interpolation), in mpmath
    at 50 digits: (fit, K, [(z_h, c_h)])."""
    field = RealField(MP)
    ys = [CTX.mpf(y.to_mpf(DPS)) for y in samples]
    fit = fit_rational(field, list(range(len(ys))), ys, (len(ys) - 1) // 2)
    K, poles = poles_and_residues(field, fit)
    return fit, field, K, poles


def curve(fit, field, ms, clip):
    """P(m)/Q(m) on a grid; NaN where |G| > clip (so the plot breaks at each pole)."""
    out = []
    for m in ms:
        q = poly_eval(fit.Q, CTX.mpf(m), field)
        y = poly_eval(fit.P, CTX.mpf(m), field) / q if q != 0 else CTX.inf
        out.append(float(y) if abs(y) <= clip else float("nan"))
    return out


def y_span(samples):
    """Half-height of the plotted window: three times the largest sample, plus one."""
    return max(abs(float(y)) for y in samples) * 3 + 1


def draw(plt, ms, ys, samples, poles, H):
    fig, (ax, zoom) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [3, 2]})
    vals = [float(y) for y in samples]
    for a in (ax, zoom):
        a.plot(ms, ys, color="C0", lw=1.6,
               label="interpolant P(m)/Q(m)")
        a.plot(range(len(vals)), vals, "o", color="C3", ms=6,
               label=f"oracle samples m = 0…{2 * H}")
        a.axhline(0, color="0.8", lw=0.6)
    for n, (z, _) in enumerate(poles):
        m_pole = float(-1 / z)
        ax.axvline(m_pole, color="C2", ls="--", lw=1,
                   label="poles m = −1/z_h (value on top)" if n == 0 else None)
        ax.text(m_pole, 1.01, f"{m_pole:.3g}", transform=ax.get_xaxis_transform(),
                ha="center", va="bottom", fontsize=8, color="C2")
    span = y_span(samples)
    ax.set_ylim(-span, span)
    ax.set_xlabel("number of copies m (real)")
    ax.set_ylabel("G(m)")
    ax.set_title(f"G(m) = K + Σ c_h/(1 + m z_h): {H} heads, {H} poles at m = −1/z_h", pad=16)
    ax.legend(loc="lower right", fontsize=8)
    lo, hi = min(vals), max(vals)
    pad = (hi - lo) * 0.3 + 1e-3
    zoom.set_xlim(-0.3, 2 * H + 0.5)
    zoom.set_ylim(lo - pad, hi + pad)
    zoom.set_xlabel("number of copies m")
    zoom.set_ylabel("G(m)")
    zoom.set_title("where the oracle answers: m = 0, 1, …, 2H", pad=16)
    fig.tight_layout()
    return fig


def explanation(model, u, x, samples, K, poles):
    K_true, terms = copy_count_terms(model, u, x)
    lines = [__doc__.strip().split("\n\n")[0].replace("\n", " "), "",
             f"Model: {len(model)} heads in d = 2, u = {u}, x = {x}.",
             f"Samples G(0…{len(samples) - 1}) (exact elements of Q(t), shown to 12 digits):"]
    lines += [f"  G({m}) = {mpmath.nstr(y.to_mpf(20), 12)}" for m, y in enumerate(samples)]
    lines += ["", f"Interpolated (mpmath, {DPS} digits) vs the parameters (exact):",
              f"  K = {mpmath.nstr(K, 12)}   (v·(x+u) = {K_true})"]
    found = sorted(poles, key=lambda zc: float(zc[0]))
    for (z, c), (s, c_true) in zip(found, sorted(terms)):
        lines.append(f"  pole m = {mpmath.nstr(-1 / z, 10)}: score log z = {mpmath.nstr(CTX.chop(CTX.log(z), 1e-30), 10)}"
                     f" (uᵀW x = {s}), residue {mpmath.nstr(c, 10)} (−v·u = {c_true})")
    lines += ["", "Only 2H+1 samples are needed: two different rational functions of type "
              "≤ (H, H) agree on at most 2H points.  On the exact backend the same "
              "interpolation is done in Q(t), t = e^(1/L), where each pole is exactly t^k."]
    return "\n".join(lines)


def main():
    p = parser(__doc__)
    p.add_argument("--heads", type=int, default=3, help="number of heads H (default 3)")
    args = p.parse_args()
    plt = pyplot()
    model = teaching_model(args.heads)
    u, x = [1, 0], [0, 1]
    oracle = ea.Oracle(model, backend="exact")
    samples = copy_count_samples(oracle, u, x, args.heads)
    fit, field, K, poles = interpolate(samples)
    lo = min(float(-1 / z) for z, _ in poles) * 1.4 if poles else -1
    ms = [lo + (2 * args.heads + 0.5 - lo) * i / 1500 for i in range(1501)]
    fig = draw(plt, ms, curve(fit, field, ms, 2 * y_span(samples)), samples, poles, args.heads)
    save(fig, args.out, "rational_function", explanation(model, u, x, samples, K, poles))


if __name__ == "__main__":
    main()
