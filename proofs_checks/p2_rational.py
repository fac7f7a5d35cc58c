"""P2-rational: the copy-count family is a type-(H, H) rational function, and 2H + 1 samples
determine it (P2, copy-count interpolation; docs/design.md §4.3).

For the queries [(x+u) repeated m times, x] a head (W, v) puts softmax weight m·e^{s_a} on the
copies of a = x+u and e^{s_x} on x, so with z = e^{uᵀWx} = e^{s_a − s_x}

    f(m) = (m z·v·a + v·x)/(m z + 1) = v·(x+u) − (v·u)/(1 + m z),

and summing over heads G(m) = K + Σ_h c_h/(1 + m z_h), K = Σ_h v_h·(x+u), c_h = −v_h·u.

Proved here, with sympy, for H = 1, 2, 3 (full: also 4):

1. the identity above, for symbolic m (softmax with multiplicities) and, through the library's
   own attention code on the symbolic backend, for the actual token lists m = 0 … 2H, with
   symbolic W_h, v_h, u, x (d = 2);
2. G = N/D in lowest terms with deg N = deg D = H, D = Π(1 + m z_h), poles m = −1/z_h with
   residues c_h/z_h (partial-fraction coefficients c_h) and G(∞) = K, G(0) = v·x;
3. the linearised interpolation system N(m) − G(m)D(m) = 0, D(0) = 1, at m = 0 … 2H: after
   multiplying row m by D(m) > 0 its determinant, computed exactly over Z[z, c, K]
   (python-flint polynomials, fraction-free Bareiss elimination) and factored, is
   (−1)^{H(H−1)/2} Π_{k≤2H} k! · Π_h c_h z_h · Π_{a<b} (z_a − z_b)²,
   independent of K, nonzero exactly when every head is visible (c_h ≠ 0) and the poles are
   distinct — the genericity conditions of docs/design.md §4.3.  Witness and degree 2H + H(H−1) are
   written to the certificate, and an exact rational instance is checked in Q(t).
"""

from __future__ import annotations

import math
from fractions import Fraction

import sympy

from exactattn.arith import ExpElement, exp_rational
from exactattn.models.attention import random_multi_head

from .certificates import (element_json, heads_json, new_certificate, poly_json, rational,
                           vector_json)
from .registry import Claim, Verdict, register
from .symbolic_tools import dot, is_identically_zero, symbolic_attention, symbolic_head

__all__ = ["CLAIM", "copy_count_identity", "rational_structure", "interpolation_matrix",
           "closed_form_determinant", "interpolation_determinant", "exact_instance"]


def _symbols(H):
    z = sympy.symbols(f"z1:{H + 1}", positive=True)
    c = sympy.symbols(f"c1:{H + 1}")
    return z, c, sympy.Symbol("K"), sympy.Symbol("m", nonnegative=True)


def copy_count_identity(H: int, dim: int = 2) -> dict:
    """Step 1 (P2 copy-count family): F([(x+u)×m, x]) = K + Σ c_h/(1 + m z_h) with
    z_h = exp(uᵀW_h x), for symbolic m and for the token lists m = 0 … 2H."""
    heads = [symbolic_head(str(h + 1), dim) for h in range(H)]
    u = sympy.symbols(f"u1:{dim + 1}")
    x = sympy.symbols(f"x1:{dim + 1}")
    a = [xi + ui for xi, ui in zip(x, u)]
    m = sympy.Symbol("m", nonnegative=True)
    z = [sympy.exp(dot(u, [dot(row, x) for row in W])) for W, _ in heads]
    K = sum((dot(v, a) for _, v in heads), sympy.Integer(0))
    c = [-dot(v, u) for _, v in heads]
    G = lambda mm: K + sum((ch / (1 + mm * zh) for ch, zh in zip(c, z)), sympy.Integer(0))  # noqa: E731
    # softmax with multiplicity m on token a (the definition, not the library code)
    softmax_m = sum(((m * sympy.exp(dot(a, [dot(row, x) for row in W])) * dot(v, a)
                      + sympy.exp(dot(x, [dot(row, x) for row in W])) * dot(v, x))
                     / (m * sympy.exp(dot(a, [dot(row, x) for row in W]))
                        + sympy.exp(dot(x, [dot(row, x) for row in W])))
                     for W, v in heads), sympy.Integer(0))
    general = is_identically_zero(softmax_m - G(m))
    lists = [is_identically_zero(symbolic_attention(heads, [a] * mm + [list(x)]) - G(mm))
             for mm in range(2 * H + 1)]
    at_zero = is_identically_zero(G(0) - sum((dot(v, x) for _, v in heads), sympy.Integer(0)))
    return {"symbolic_m": general, "token_lists": lists, "G0_is_v_dot_x": at_zero}


def rational_structure(H: int) -> dict:
    """Step 2: type (H, H), lowest terms, poles −1/z_h, residues c_h/z_h, G(∞) = K."""
    z, c, K, m = _symbols(H)
    G = K + sum((c[h] / (1 + m * z[h]) for h in range(H)), sympy.Integer(0))
    N, D = sympy.fraction(sympy.cancel(sympy.together(G)))
    Np, Dp = sympy.Poly(N, m), sympy.Poly(D, m)
    target = sympy.prod([1 + m * zh for zh in z])
    lowest = sympy.Poly(sympy.gcd(N, D), m).degree() == 0
    scaled = sympy.cancel(D / target)
    poles_ok = scaled.free_symbols.isdisjoint({m}) and scaled != 0
    residues = [sympy.simplify(sympy.residue(G, m, -1 / z[h]) - c[h] / z[h]) == 0 for h in range(H)]
    at_inf = sympy.simplify(sympy.limit(G, m, sympy.oo) - K) == 0
    gens = (m,) + tuple(z) + tuple(c) + (K,)
    return {"deg_N": Np.degree(), "deg_D": Dp.degree(), "lowest_terms": lowest,
            "D_is_prod": bool(poles_ok), "residues": residues, "limit_K": at_inf,
            "N": sympy.Poly(sympy.cancel(N / scaled), *gens, domain="QQ"),
            "D": sympy.Poly(target, *gens, domain="QQ"), "gens": gens}


def interpolation_matrix(H: int, z, c, K, one):
    """Cleared linearised system at m = 0 … 2H over any commutative ring (`one` its unit):
    row m is [D(m) m^j]_{0≤j≤H} ++ [−P(m) m^j]_{1≤j≤H}, D = Π(1 + m z_h), P = G·D
    = K·D + Σ_h c_h Π_{g≠h}(1 + m z_g).  Row m of the system N(m) − G(m)D(m) = 0 (unknowns
    n_0…n_H, d_1…d_H, d_0 = 1) times D(m) > 0."""
    rows = []
    for mm in range(2 * H + 1):
        Dm = one
        for zh in z:
            Dm = Dm * (1 + mm * zh)
        Pm = K * Dm
        for h in range(H):
            term = c[h]
            for g in range(H):
                if g != h:
                    term = term * (1 + mm * z[g])
            Pm = Pm + term
        rows.append([Dm * mm ** j for j in range(H + 1)] + [-Pm * mm ** j for j in range(1, H + 1)])
    return rows


def bareiss_determinant(M):
    """Fraction-free Gaussian elimination (Bareiss): every division is exact in the polynomial
    ring, so the determinant of a polynomial matrix is computed without fractions."""
    M = [list(r) for r in M]
    n, sign, prev = len(M), 1, None
    for k in range(n - 1):
        if M[k][k] == 0:
            p = next((r for r in range(k + 1, n) if M[r][k] != 0), None)
            if p is None:
                return M[0][0] * 0
            M[k], M[p], sign = M[p], M[k], -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                num = M[k][k] * M[i][j] - M[i][k] * M[k][j]
                M[i][j] = num if prev is None else num / prev
        prev = M[k][k]
    return sign * M[n - 1][n - 1]


def closed_form_determinant(H: int, z, c, one=1):
    """(−1)^{H(H−1)/2} Π_{k=1}^{2H} k! · Π_h c_h z_h · Π_{a<b} (z_a − z_b)²."""
    out = one * ((-1) ** (H * (H - 1) // 2) * math.prod(math.factorial(k) for k in range(1, 2 * H + 1)))
    for h in range(H):
        out = out * c[h] * z[h]
    for a in range(H):
        for b in range(a + 1, H):
            out = out * (z[a] - z[b]) ** 2
    return out


def interpolation_determinant(H: int):
    """Step 3: the determinant of the cleared system as an exact polynomial in z, c, K
    (python-flint fmpz_mpoly, Bareiss), its factorisation over Z, independence of K and
    equality with the closed form; returned as a sympy Poly in z, c."""
    import flint
    names = tuple(f"z{h}" for h in range(1, H + 1)) + tuple(f"c{h}" for h in range(1, H + 1)) + ("K",)
    ctx = flint.fmpz_mpoly_ctx.get(names)
    g = ctx.gens()
    one = ctx.from_dict({(0,) * len(names): 1})
    z, c, K = g[:H], g[H:2 * H], g[2 * H]
    det = bareiss_determinant(interpolation_matrix(H, z, c, K, one))
    independent = det.degrees()[-1] == 0
    closed_equal = det == closed_form_determinant(H, z, c, one)
    gens = tuple(sympy.Symbol(n) for n in names[:-1])
    poly = sympy.Poly.from_dict({e[:-1]: int(a) for e, a in det.to_dict().items()}, *gens, domain="QQ")
    const, factors = det.factor()
    factors = [(sympy.Poly.from_dict({e[:-1]: int(a) for e, a in f.to_dict().items()}, *gens,
                                     domain="QQ"), int(k)) for f, k in factors]
    return {"poly": poly, "gens": gens, "closed_form_equal": bool(closed_equal and independent),
            "constant": sympy.Integer(int(const)), "factors": factors,
            "independent_of_K": bool(independent)}


def _witness(H):
    """z_h = h, c_h = 1: every c_h ≠ 0 and the z_h are distinct."""
    return [Fraction(h) for h in range(1, H + 1)] + [Fraction(1)] * H


def exact_instance(H: int, seed: int = 0):
    """A rational model (d = 2) checked in Q(t): the exact oracle output on [(x+u)×m, x] equals
    K + Σ c_h/(1 + m t^{k_h}) for m = 0 … 2H (P2 copy-count family, exact backend)."""
    model = random_multi_head(2, H, seed=seed)
    u, x = [1, -2], [2, 1]
    a = [p + q for p, q in zip(x, u)]
    ok, values = True, []
    for mm in range(2 * H + 1):
        got = model([a] * mm + [x], "exact")
        values.append(got)
        want = ExpElement.from_rational(sum(Fraction(sum(vi * ai for vi, ai in zip(h.v, a)))
                                            for h in model.heads))
        for h in model.heads:
            score = sum(u[i] * h.W[i][j] * x[j] for i in range(2) for j in range(2))
            ch = -sum(vi * ui for vi, ui in zip(h.v, u))
            want = want + ExpElement.from_rational(ch) / (1 + mm * exp_rational(score))
        ok = ok and got == want
    return model, u, x, ok, values


def run(params) -> Verdict:
    """Check P2-rational for each H in params["H"] (symbolic proofs + exact instance)."""
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    for H in params["H"]:
        ident = copy_count_identity(H, params.get("d", 2))
        verdict.expect(ident["symbolic_m"] and all(ident["token_lists"]) and ident["G0_is_v_dot_x"],
                       f"H={H}: F([(x+u)×m, x]) = K + Σ c_h/(1+m z_h) (symbolic m and "
                       f"m=0..{2 * H}, d={params.get('d', 2)}), G(0) = v·x",
                       f"H={H}: copy-count identity not proved: {ident}")
        st = rational_structure(H)
        verdict.expect(st["deg_N"] == H and st["deg_D"] == H and st["lowest_terms"]
                       and st["D_is_prod"] and all(st["residues"]) and st["limit_K"],
                       f"H={H}: type ({H},{H}) in lowest terms, D = Π(1+m z_h), poles −1/z_h, "
                       f"residues c_h/z_h, G(∞) = K", f"H={H}: rational structure wrong: {st}")
        det = interpolation_determinant(H)
        wit = _witness(H)
        value = det["poly"].eval(dict(zip(det["gens"], [sympy.Rational(q.numerator, q.denominator)
                                                        for q in wit])))
        verdict.expect(det["closed_form_equal"] and det["independent_of_K"] and value != 0,
                       f"H={H}: det of the {2 * H + 1}×{2 * H + 1} linearised system = "
                       f"{sympy.factor(det['poly'].as_expr())} (degree {det['poly'].total_degree()}, "
                       f"no K), {value} at the witness",
                       f"H={H}: determinant differs from the closed form or vanishes at the witness")
        model, u, x, ok, values = exact_instance(H, seed=H)
        verdict.expect(ok, f"H={H}: exact instance in Q(t) agrees for m=0..{2 * H}",
                       f"H={H}: exact instance in Q(t) disagrees")
        cert["checks"].append(_determinant_check(H, det, wit, value))
        cert["checks"].append({"kind": "copy-count", "dim": 2, "model": heads_json(model.heads),
                               "u": vector_json(u), "x": vector_json(x),
                               "m_values": list(range(2 * H + 1)),
                               "values": [element_json(y) for y in values]})
        cert["checks"].append({"kind": "rational-form", "H": H,
                               "numerator": poly_json(st["N"], st["gens"]),
                               "denominator": poly_json(st["D"], st["gens"])})
        cert["symbolic"].append({"H": H, "d": params.get("d", 2),
                                 "copy_count_identity_symbolic_m": ident["symbolic_m"],
                                 "copy_count_identity_token_lists": all(ident["token_lists"]),
                                 "G0_is_v_dot_x": ident["G0_is_v_dot_x"],
                                 "lowest_terms": st["lowest_terms"],
                                 "residues_c_over_z": all(st["residues"]),
                                 "limit_at_infinity_is_K": st["limit_K"],
                                 "determinant_equals_closed_form": det["closed_form_equal"]})
    verdict.certificate = cert
    return verdict


def _determinant_check(H, det, wit, value):
    gens = det["gens"]
    return {"kind": "determinant", "H": H,
            "determinant": poly_json(det["poly"], gens),
            "constant": rational(det["constant"]),
            "factors": [{"factor": poly_json(sympy.Poly(f, *gens, domain="QQ"), gens),
                         "multiplicity": int(k)} for f, k in det["factors"]],
            "degree": int(det["poly"].total_degree()),
            "witness": vector_json(wit), "value": rational(value)}


CLAIM = register(Claim(
    id="P2-rational",
    reference="P2 copy-count interpolation",
    statement="G(m) = K + Σ c_h/(1+m z_h) is type (H,H), poles −1/z_h, residues c_h/z_h; "
              "2H+1 samples determine it (det ≠ 0)",
    sizes={"quick": {"H": [1, 2, 3], "d": 2}, "full": {"H": [1, 2, 3, 4], "d": 2}},
    run=run))
