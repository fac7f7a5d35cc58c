"""Mutation testing of the evidence chain (docs/evidence.md, "Mutation testing").

A fixed set of mutants — deliberate bugs in the learners, the claims and the independent
checker — is applied one at a time to a scratch copy of the repository.  A mutant is *killed*
when the chosen tests fail or ``exactattn check --quick`` fails on the mutated copy (or either
runs past the time limit), and *survives* otherwise.  Standard library only.

    python tools/mutation.py                 # every mutant, prints one line each and the rate
    python tools/mutation.py --list          # the mutant set
    python tools/mutation.py --only M07 M12  # some mutants
    python tools/mutation.py --json          # one JSON object

Exit status 0 when the kill rate is at least --threshold (default 0.9), 1 otherwise, 2 when a
mutant no longer applies (its text is not found exactly once: the set must be updated).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: run first (fast); then `exactattn check --quick`; then LATE_TESTS on its certificates.
#: tests/test_tools.py is not among them: it checks that the mutants apply to the unmutated
#: repository, so it fails on every mutated copy and would count as a kill.
TESTS = ["tests/test_enclosure.py", "tests/test_field_matching.py", "tests/test_cli_foundation.py", "tests/test_multiplicities.py", "tests/test_interpolation.py", "tests/test_matching.py", "tests/test_proves.py", "tests/test_core.py", "tests/test_inexact.py", "tests/test_head_count.py", "tests/test_front_door.py", "tests/test_fibre_checker.py", "tests/test_proofs_checks_rules.py", "tests/test_proofs_checks.py", "tests/test_multi_head.py", "tests/test_single_head.py",
         "tests/test_low_rank.py", "tests/test_noise.py", "tests/test_certs_beyond.py",
         "tests/test_beyond_floor.py", "tests/test_certs_approx.py",
         "tests/test_checker_forgeries.py", "tests/test_forgery_corpus.py", "tests/test_checker_prices.py",
         "tests/test_named_failures.py", "tests/test_sweep_store_faults.py", "tests/test_limits.py",
         "tests/test_hostile.py"]
LATE_TESTS = ["tests/test_proofs_checks_evidence.py"]

C = "proofs_checks/checker/"

#: (id, what, [(file, old text, new text), ...]) — each old text must occur exactly once
MUTANTS = [
    # --- the survivors of the audit
    ("M01", "checker skips 'every failure lies in the bad set'",
     [(C + "bad_set.py", 'require(got == "recovered", f"monte_carlo: seed {seed}: recorded failure',
       'require(True or got == "recovered", f"monte_carlo: seed {seed}: recorded failure')]),
    ("M02", "checker skips 'recovered = canonical(true)'",
     [(C + "run.py", "require(canonical_form(model) == multiset(rec),",
       "require(True or canonical_form(model) == multiset(rec),")]),
    ("M03", "checker skips the determinant spot check",
     [(C + "determinant.py", "require(det(M) == peval(p, pt[:n]),", "require(True or det(M) == peval(p, pt[:n]),")]),
    ("M04", "Schwartz–Zippel degree replaced by the number of factors (prover)",
     [("exactattn/analysis/genericity.py", "return sum(int(f.total_degree()) for f in factors)",
       "return len(factors)")]),
    ("M05", "Schwartz–Zippel degree replaced by the number of factors (checker)",
     [(C + "bad_set.py", "D = sum(degree(f) for f in factors)", "D = len(factors)")]),
    ("M06", "matching polynomials dropped from both prover and checker",
     [("exactattn/analysis/genericity.py", "        if fam.matches:\n", "        if False:\n"),
      (C + "bad_set.py", "        if match:\n            (u1, x1), (u2, x2) = match\n            for a, b, cc",
       "        if False:\n            (u1, x1), (u2, x2) = match\n            for a, b, cc"),
      (C + "run_multi_head.py", "        if match:\n            (u1, x1), (u2, x2) = match\n            s1",
       "        if False:\n            (u1, x1), (u2, x2) = match\n            s1")]),
    ("M07", "the Monte Carlo rate test made always true",
     [(C + "binomial.py", "return bound >= 1 or upper_tail(n, k, bound) > level", "return True")]),
    ("M08", "P1 Thm 6.1 Lipschitz constant 5 → 4 (the bound is no longer rigorous)",
     [("exactattn/learners/p1/noisy.py", "LIPSCHITZ = 5\n", "LIPSCHITZ = 4\n")]),
    # --- the checker
    ("M09", "checker: transcript not compared with the rebuilt schedule",
     [(C + "run.py", "require(toks == expected[k],", "require(True or toks == expected[k],")]),
    ("M10", "checker: answers not reproduced",
     [(C + "run.py", "require(same_element(attention(m, toks), ans),",
       "require(True or same_element(attention(m, toks), ans),")]),
    ("M11", "checker: genericity at the recovered model not evaluated",
     [(C + "run_multi_head.py", "    bad = violations(recovered, run[\"U\"], run[\"X\"], run[\"H0\"])",
       "    bad = []")]),
    ("M12", "checker: duplicate JSON keys accepted",
     [(C + "parse.py", "object_pairs_hook=_no_duplicates, ", "")]),
    ("M13", "checker: bool accepted for int",
     [(C + "parse.py", 'require(type(n) is int, f"{where}: expected an integer',
       'require(isinstance(n, int), f"{where}: expected an integer')]),
    ("M14", "checker: multiplicity not bounded",
     [(C + "bad_set.py", 'mult = integer(pair[1], f"{where}: multiplicity", 1, degree(p))',
       'mult = integer(pair[1], f"{where}: multiplicity", 1)')]),
    ("M15", "checker: binomial tail off by one",
     [(C + "binomial.py", "    for i in range(k):\n        T = T * (n - i)", "    for i in range(k - 1):\n        T = T * (n - i)")]),
    ("M16", "checker: Clopper–Pearson limit not required to be the least",
     [(C + "binomial.py", "(limit == 0 or not is_upper_limit(n, k, limit - step, level))", "True")]),
    ("M17", "checker: zero residues not dropped in the learner re-derivation",
     [(C + "predict.py", "return [(s, c) for s, c in groups.items() if c != 0]",
       "return [(s, c) for s, c in groups.items()]")]),
    ("M18", "checker: count derivation with H0 samples per family",
     [(C + "count.py", "count = _padd(count, _pmul(fams, {(0, 1): Fraction(2)}))",
       "count = _padd(count, _pmul(fams, {(0, 1): Fraction(1)}))")]),
    ("M19", "checker: count not recounted on its run's transcript",
     [(C + "count.py", "require(c[\"queries\"] == n and c[\"max_length\"] == longest,",
       "require(True or c[\"queries\"] == n and c[\"max_length\"] == longest,")]),
    ("M20", "checker: same raw parameters accepted",
     [(C + "recovery.py", "require(m1 != m2,", "require(True or m1 != m2,")]),
    ("M21", "checker: canonical form keeps zero sums",
     [(C + "qt.py", "return frozenset((W, v) for W, v in groups.items() if any(groups[W]))",
       "return frozenset((W, v) for W, v in groups.items())")]),
    ("M22", "checker: draws X before U",
     [(C + "bad_set.py", "    U = [[Fraction(rng.randint(-box, box)) for _ in range(d)] for _ in range(d)]\n"
       "    X = [[Fraction(rng.randint(-box, box)) for _ in range(d)] for _ in range(d)]",
       "    X = [[Fraction(rng.randint(-box, box)) for _ in range(d)] for _ in range(d)]\n"
       "    U = [[Fraction(rng.randint(-box, box)) for _ in range(d)] for _ in range(d)]")]),
    ("M23", "checker: Bonferroni correction dropped",
     [(C + "bad_set.py", "    level = alpha / tests\n", "    level = alpha\n")]),
    ("M24", "checker: poles of one family not required to be separated",
     [(C + "run_multi_head.py", "            if s[a] == s[b]:", "            if False:")]),
    # --- the learners
    ("M25", "learner: several matching candidates not flagged",
     [("exactattn/learners/p2/matching.py", "(AmbiguousMatching, \"several heads\", lambda n: n > 1)",
       "(AmbiguousMatching, \"several heads\", lambda n: n > 2)")]),
    ("M26", "learner: colliding poles and invisible heads named the other way round",
     [("exactattn/learners/p2/matching.py", "        if len(counts) > 1:\n            raise CollidingPoles(",
       "        if len(counts) > 1:\n            raise InvisibleHead(")]),
    ("M27", "learner: one sample fewer per family",
     [("exactattn/learners/p2/schedule.py", "            for m in range(1, 2 * self.H0 + 1):",
       "            for m in range(1, 2 * self.H0):")]),
    ("M28", "schedule structure: one matching family more",
     [("exactattn/learners/p2/schedule.py", '{"loops": [["i", 2, "d"]],', '{"loops": [["i", 1, "d"]],')]),
    ("M29", "learner: single-head probes from the smallest |v|",
     [("exactattn/learners/p1/single_head.py", "p = max(range(d), key=lambda i: abs(v[i]))",
       "p = min(range(d), key=lambda i: abs(v[i]))")]),
    ("M30", "learner: one spot check fewer when the rank is revealed",
     [("exactattn/learners/p1/low_rank.py", "for i in range(1, min(r, d - 1 - r) + 1):",
       "for i in range(1, min(r, d - 1 - r)):")]),
    ("M31", "learner: bases drawn X before U",
     [("exactattn/learners/p2/recovery.py", "    return [draw() for _ in range(d)], [draw() for _ in range(d)]",
       "    X = [draw() for _ in range(d)]\n    return [draw() for _ in range(d)], X")]),
    # --- the claims and certificates
    ("M32", "claim: no Bonferroni correction in P2-prob1",
     [("proofs_checks/p2_prob1.py", "params[\"seed\"], 2 * len(configs),", "params[\"seed\"], 1,")]),
    ("M33", "certificate writer: Q(t) elements not over the smallest L",
     [("proofs_checks/certificates.py", "    g = g or 1\n", "    g = 1\n")]),
    ("M34", "claim: P2-count's derivation reads samples m = 0 … 2H0",
     [("proofs_checks/p2_count.py", "count = sympy.expand(len(st[\"initial\"]) + families * (samples - lo + 1))",
       "count = sympy.expand(len(st[\"initial\"]) + families * (samples - lo + 2))")]),
    ("M35", "claim: P2-prob1 counts a wrong model as recovered",
     [("proofs_checks/p2_prob1.py", "rec = {\"seed\": seed, \"outcome\": \"recovered\" if same_canonical(model, res.heads)\n           else \"wrong-model\"}",
       "rec = {\"seed\": seed, \"outcome\": \"recovered\"}")]),
    # --- the run checker of the schedules beyond P2 (economy, adaptive, multi-head low rank)
    ("M36", "checker: a direction may be seen by another head",
     [(C + "run_economy.py", "require(all(dot(vs[g], b) == 0 for g in range(H) if g != a),",
       "require(True or all(dot(vs[g], b) == 0 for g in range(H) if g != a),")]),
    ("M37", "checker: pair residues not required distinct and non-zero",
     [(C + "run_economy.py", "require(ra != 0 and rg != 0 and ra != rg,",
       "require(True or ra != 0 and rg != 0 and ra != rg,")]),
    ("M38", "checker: skeleton block F_h C_h not required invertible",
     [(C + "run_multi_low_rank.py", "require(det([[dot(f, c) for c in C] for f in F]) != 0,",
       "require(True or det([[dot(f, c) for c in C] for f in F]) != 0,")]),
    ("M39", "checker: column-1 heads not required visible (economy)",
     [(C + "run_economy.py", "require(visible(heads, U[i]), f\"run: the draw is not generic",
       "require(True or visible(heads, U[i]), f\"run: the draw is not generic")]),
    ("M40", "checker: adaptive column-1 families rebuilt with 2H0 samples",
     [(C + "run_economy.py", "n = 2 * H0 if (i == 0 or known) else 2 * H", "n = 2 * H0")]),
    ("M41", "checker: economy-count blocks not recounted on the rebuilt schedule",
     [(C + "economy_count.py", "require(rebuilt == {k: v for k, v in measured.items() if v},",
       "require(True or rebuilt == {k: v for k, v in measured.items() if v},")]),
    ("M42", "checker: low-rank floor factors not required to multiply to W",
     [(C + "floor.py", "require(all(sum((Q[a][k] * K[b][k] for k in range(r)), Fraction(0)) == W[a][b]",
       "require(True or all(sum((Q[a][k] * K[b][k] for k in range(r)), Fraction(0)) == W[a][b]")]),
    ("M43", "checker: low-rank floor minor taken on the W columns, not the factors'",
     [(C + "floor.py", "M = [[row[j] for j in cols] for row in (factored(x, factors, d, p) for x in M)]",
       "M = [[row[j % len(row)] for j in cols] for row in M]")]),
    ("M44", "learner: low-rank floor claim states the full floor H(d²+d)",
     [("proofs_checks/floor.py", "    P = low_rank_floor(d, H, r)\n", "    P = dimension_floor(d, H)\n")]),
    ("M45", "learner: a reconstruction-dependent failure named after two prime sizes",
     [("exactattn/learners/p2/engines.py", 'STRUCTURAL = ("colliding-poles", "invisible-head")',
       'STRUCTURAL = ("colliding-poles", "invisible-head", "not-attention", '
       '"certification-failed")')]),
    ("M46", "checker: economy-prob1 runs not required to be the draw of their seed",
     [(C + "economy_prob1.py", "    require(isinstance(vec, dict) and [[rat(x, \"U\")",
       "    require(True or isinstance(vec, dict) and [[rat(x, \"U\")")]),
    ("M47", "checker: economy-prob1 seeds may repeat",
     [(C + "economy_prob1.py", "    require(seed not in seen,", "    require(True or seed not in seen,")]),
    ("M48", "checker: economy-prob1 counts its runs without checking them",
     [(C + "economy_prob1.py", "        check_run(run)\n", "        pass\n")]),
    # --- the answer-fibre checker (claim unique)
    ("M49", "checker: a fibre node's children not compared with the labelling enumeration",
     [(C + "fibre.py", "require(len(kids) == len(expected),",
       "require(True or len(kids) == len(expected),")]),
    ("M50", "checker: a fibre witness 0 = c accepted without c ≠ 0",
     [(C + "fibre.py", "require(c != 0, f\"{where}: the combination reads 0 = 0",
       "require(True or c != 0, f\"{where}: the combination reads 0 = 0")]),
    # --- the approximate-oracle and Transformer checkers (issue 21 item 6)
    ("M51", "checker: P1-T6.1 answers not required within τ_eff of the true answers",
     [(C + "noisy_single.py", "require(off.upper_abs() <= tau_eff,",
       "require(True or off.upper_abs() <= tau_eff,")]),
    ("M52", "checker: P1-T6.1 stated bound not compared with its recomputation",
     [(C + "noisy_single.py", "require((bound_W - stated_W).upper_abs() <= agree * bound_W.hi,",
       "require(True or (bound_W - stated_W).upper_abs() <= agree * bound_W.hi,")]),
    ("M53", "checker: P2-approx recorded C not compared with the re-derived one",
     [(C + "noisy_multi.py", "require(abs(stated - C.mid()) <= C_AGREE * C.hi,",
       "require(True or abs(stated - C.mid()) <= C_AGREE * C.hi,")]),
    ("M54", "checker: Transformer ReLU signs not re-derived",
     [(C + "transformer.py", "require(got == s,", "require(True or got == s,")]),
    ("M55", "evaluator: groups compared without their per-head data (certification shortcut)",
     [("exactattn/arith/multiplicities.py",
       "and self.sorted_heads() == other.sorted_heads())", ")")]),
    ("M56", "evaluator: the certification shortcut ignores the query's multiplicities",
     [("exactattn/arith/exact.py", "packed[1] == prepared.mult and ", "")]),
    ("M57", "evaluator: packed equality ignores the multiplicities",
     [("exactattn/arith/multiplicities.py", "if type(other) is PackedElement and self._mult == other._mult \\\n",
       "if type(other) is PackedElement \\\n")]),
    ("M58", "images: a packed answer's image drops a head's factor",
     [("exactattn/arith/multiplicities.py", "for (_, vals), pw in zip(self.heads, powers)], P)",
       "for (_, vals), pw in list(zip(self.heads, powers))[1:]], P)")]),
    ("M59", "discrete log: a digit read against the shared table without c⁻¹",
     [("exactattn/arith/modular.py", "x += (d * c_inv % q) * q ** j", "x += d * q ** j")]),
    ("M60", "checker: Q(t) equality drops the common denominators",
     [(C + "qt.py", "left, right = e2 * f1, e1 * f2", "left, right = 1, 1")]),
    ("M61", "checker: the depth scan counts brackets inside strings",
     [(C + "parse.py", '_BRACKETS.findall(_STRING.sub("", text))', "_BRACKETS.findall(text)")]),
    ("M62", "checker: the depth scan skips one more level per string",
     [(C + "parse.py", "        else:\n            depth -= 1\n    return best",
       "        else:\n            depth -= 2\n    return best")]),
    ("M63", "mp roots: the coefficients handed to flint in reverse order",
     [("exactattn/arith/fields.py", "found = acb_poly(cs).roots(tol=tol)",
       "found = acb_poly(cs[::-1]).roots(tol=tol)")]),
    ("M64", "images: the two-token weights take the other token's value",
     [("exactattn/arith/modular.py", "make([a2 * p2 % P, a1 * p1 % P])",
       "make([a2 * p2 % P, a2 * p1 % P])")]),
    ("M65", "images: a family's answers without their denominators' inverses",
     [("exactattn/arith/modular.py", "out[i] = ctx(num * inv % P)", "out[i] = ctx(num)")]),
    ("M66", "too few heads: poles not checked to be e^(k/L)",
     [("exactattn/learners/p2/head_count.py",
       "                engine.score(z)                  # e^(k/L) in the window, or NotAttention",
       "                pass")]),
    ("M67", "too few heads: a family of the type told called more heads",
     [("exactattn/learners/p2/head_count.py", "            if fit.n <= H0:",
       "            if fit.n < H0:")]),
    ("M68", "cost: a known head count's validation not priced before the schedule",
     [("exactattn/learners/multi_head.py",
       "    if heads is not None and n_valid:      # the validation a run of H heads can never avoid",
       "    if False:")]),
    ("M69", "sweep: configurations not priced before the first trial",
     [("exactattn/sweep/trials.py",
       "            check_cost(params[\"d\"], params[\"H\"] if params[\"H0\"] is None else None,",
       "            (lambda *a, **k: None)(params[\"d\"], params[\"H\"] if params[\"H0\"] is None else None,")]),
    ("M70", "Lucas proof: a prime factor without a base of full order accepted",
     [("exactattn/arith/modular.py", "        else:\n            return False\n    return True",
       "        else:\n            continue\n    return True")]),
    ("M71", "evaluator: an answer whose end coefficients vanish taken for zero",
     [("exactattn/arith/multiplicities.py",
       "if not self.nonzero(mult) and self.polynomials(mult)[0].is_zero():",
       "if not self.nonzero(mult):")]),
    ("M72", "evaluator: the zero test adds the heads' end values without their weights",
     [("exactattn/arith/multiplicities.py", "num, den = num * B + A * den, den * B",
       "num, den = num + A, den")]),
    ("M73", "interpolation: samples past the square system not checked",
     [("exactattn/learners/p2/interpolation.py", "used = 2 * fit.n + 1 if field.exact else 0",
       "used = len(ms)")]),
    ("M74", "images: a two-token answer read at μ₁ alone (μ₂ ignored)",
     [("exactattn/arith/modular.py", "m1 if m2 == 1 else m1 * pow(m2, -1, P) % P", "m1")]),
    ("M75", "images: the family polynomial N drops the final token's values",
     [("exactattn/arith/modular.py", "make([a2 * p2 % P, a1 * p1 % P])", "make([0, a1 * p1 % P])")]),
    ("M76", "matching: the exact look-up table misses the matching family's last head",
     [("exactattn/learners/p2/matching.py", "table = {(s_c, c_c) for s_c, c_c in sumfam}",
       "table = {(s_c, c_c) for s_c, c_c in sumfam[:-1]}")]),
    ("M77", "genericity: the heads' scores compared without their common denominator",
     [("exactattn/learners/p2/genericity.py", "int(num[i, j]) * (D // int(den))", "int(num[i, j])")]),
    ("M78", "evaluator: integer scores taken against the first token, not the final one",
     [("exactattn/arith/exact.py", "    xN = order[-1]\n    S = []", "    xN = order[0]\n    S = []")]),
    ("M79", "F_p quadratic roots: a non-square discriminant's false square root accepted",
     [("exactattn/arith/fields.py", "    if s * s != disc:\n", "    if False:\n")]),
    ("M80", "F_p quadratic roots: a double root counted once",
     [("exactattn/arith/fields.py", "        return [(-b * inv, 2)], True", "        return [(-b * inv, 1)], True")]),
    ("M81", "F_p quadratic roots: the square root's exponent (p − 1)/4, not (p + 1)/4",
     [("exactattn/arith/fields.py", "    s = disc ** ((p + 1) // 4)", "    s = disc ** ((p - 1) // 4)")]),
    ("M82", "powers of τ: one power too many",
     [("exactattn/arith/modular.py", "        return int(self.tau ** K)", "        return int(self.tau ** (K + 1))")]),
    ("M83", "P2 step 5 in integers: X⁻¹ where X⁻ᵀ belongs",
     [("exactattn/arith/exact.py", "            self.XT = XI.transpose()", "            self.XT = XI")]),
    ("M84", "P2 step 5 in integers: the right-hand side's denominator dropped",
     [("exactattn/arith/exact.py", "        return _over(self.U * num, self.dU * den)",
       "        return _over(self.U * num, self.dU)")]),
    ("M85", "matching family's poles: fewer candidate roots than the degree accepted",
     [("exactattn/learners/p2/interpolation.py", "    if len(found) != n:\n        return None",
       "    if not found:\n        return None")]),
    ("M86", "matching family's poles: the candidates never tried",
     [("exactattn/learners/p2/interpolation.py",
       "    found = _roots_among(field, fit.Q, n, candidates) if candidates and field.exact else None",
       "    found = None")]),
    ("M87", "mp/float error: the digits always judged against S, never against |F(X)|",
     [("exactattn/models/enclosure.py", "            relative = not F.contains(0)",
       "            relative = False")]),
    ("M88", "mp/float error: the tolerance 10^-k taken without its scale",
     [("exactattn/models/enclosure.py", "                limit = tol * scale",
       "                limit = tol")]),
    ("M89", "eval: a decimal query entry read through float for the error bound",
     [("exactattn/cli/eval.py", "        return Fraction(man) * Fraction(10) ** exp",
       "        return float(x)")]),
    ("M90", "printed bounds (error bars, eval's error) rounded to nearest, not up",
     [("exactattn/arith/numbers.py",
       "    n = -(-q * Fraction(10) ** (digits - 1 - e) // 1)",
       "    n = round(q * Fraction(10) ** (digits - 1 - e))")]),
    ("M91", "mp/float error: S the last value's size, not the largest",
     [("exactattn/models/enclosure.py", "        out = out.max(abs(b))",
       "        out = abs(b)")]),
    ("M93", "Euclid fit: a denominator with a root at a node accepted",
     [("exactattn/arith/fields.py",
       "    if t.degree() > max_degree or t.gcd(M).degree() > 0:",
       "    if t.degree() > max_degree:")]),
    ("M94", "Euclid fit: a denominator above the type accepted (extra samples)",
     [("exactattn/arith/fields.py",
       "    if t.degree() > max_degree or t.gcd(M).degree() > 0:",
       "    if t.gcd(M).degree() > 0:")]),
    ("M95", "Euclid fit: the remainder sequence stopped one step early",
     [("exactattn/arith/fields.py", "    while r1.degree() > max_degree:",
       "    while r1.degree() > max_degree + 1:")]),
    ("M96", "Euclid fit: Q not normalised to Q(0) = 1",
     [("exactattn/arith/fields.py", "    inv = pow(int(t.coeffs()[0]), -1, p)", "    inv = 1")]),
    ("M97", "matching (shared u): only the first head with the reference's residue tried",
     [("exactattn/learners/p2/matching.py", "range(len(fam)) if by_c is None else by_c.get(c_a, ()):",
       "range(len(fam)) if by_c is None else by_c.get(c_a, ())[:1]:")]),
    ("M98", "the m = 0 sample v·(x_1 + x_j) taken as v·x_j (x_1's share dropped)",
     [("exactattn/learners/p2/recovery.py",
       "        return [sum((vX[k] for k in fam.x_key[1:]), vX[fam.x_key[0]]) for fam in fams]",
       "        return [vX[fam.x_key[-1]] for fam in fams]")]),
    ("M99", "validation (exact): every query accepted once the model has the certification's test",
     [("exactattn/learners/result/validation.py",
       "        if first is not None and first([(tokens, answer)], be) is None:",
       "        if first is not None:")]),
    ("M100", "learn --json: the error bar as the nearest double, possibly below the bound",
     [("exactattn/cli/learn.py", "        f = math.nextafter(f, math.inf)", "        f = f")]),
    ("M101", "paired roots: r taken for Q's root without the factor z_a",
     [("exactattn/arith/fields.py", "            out.append(-c0 / c1 * z)", "            out.append(-c0 / c1)")]),
    ("M102", "paired roots: a non-linear gcd's first two coefficients read as a root",
     [("exactattn/arith/fields.py",
       "            if g.degree() != 1:\n                return None\n            c0, c1 = (self.ctx(int(c)) for c in g.coeffs())",
       "            c0, c1 = (self.ctx(int(c)) for c in g.coeffs()[:2])")]),
    ("M103", "learner: the paired gcds never tried (every family back to the root finder)",
     [("exactattn/learners/p2/recovery.py", "    if fit.n < 3 or not hasattr(field, \"paired_roots\"):",
       "    if True:")]),
    ("M104", "F_p matching: a failed F_p run raises its own failure (no lifting run)",
     [("exactattn/learners/p2/recovery.py",
       "        except (BadReduction, LearningFailure):\n            if in_field:\n                continue\n            raise",
       "        except (BadReduction, LearningFailure):\n            raise")]),
    ("M105", "F_p matching: a model failing certification returned without the lifting run",
     [("exactattn/learners/p2/recovery.py",
       "        if cert is None or cert[\"certified\"]:\n            return previous",
       "        return previous")]),
    ("M106", "F_p matching: poles joined by adding, as scores are",
     [("exactattn/learners/p2/recovery.py", "    join = operator.mul if engine else operator.add",
       "    join = operator.add")]),
    ("M107", "F_p matching: column 1's poles kept as images, not lifted to scores",
     [("exactattn/learners/p2/recovery.py",
       "            S[a][i][0], C[a][i] = score(s), scalar(c)",
       "            S[a][i][0], C[a][i] = s, scalar(c)")]),
    ("M108", "F_p matching: the lifting run's model certified again when it is the same",
     [("exactattn/learners/p2/recovery.py",
       "        if previous is not None and model == previous[0]:\n            return previous",
       "        if False:\n            return previous")]),
    ("M109", "F_p matching: never tried (every prime lifts every family)",
     [("exactattn/learners/p2/recovery.py", "    for in_field in (True, False) if certify and engine.field.p < 1 << 63 else (False,):",
       "    for in_field in (False,):")]),
    ("M92", "an assumption (a noise level τ) printed rounded up, claiming more than assumed",
     [("exactattn/arith/numbers.py", "    text = upper_decimal(-q, digits)            # negated",
       "    return upper_decimal(q, digits)            # negated")]),
    # --- the certificate checker's audit (tests/test_checker_forgeries.py)
    ("M110", "checker: a negative stated ε_v (compared through its square) accepted",
     [(C + "noisy_single.py", "require(stated_W >= 0 and stated_v >= 0,",
       "require(True or stated_W >= 0 and stated_v >= 0,")]),
    ("M111", "checker: P2-canonical runs need not be on the raw model",
     [(C + "claims.py", 'require(all(multiset(heads(r["model"], p["d"], "run.model")) == raw for r in runs),',
       'require(True or all(multiset(heads(r["model"], p["d"], "run.model")) == raw for r in runs),')]),
    ("M112", "checker: P2-canonical raw model need not merge and drop",
     [(C + "claims.py", "require(any(n >= 2 and nonzero for n, nonzero in sums) and",
       "require(True or any(n >= 2 and nonzero for n, nonzero in sums) and")]),
    ("M113", "checker: P2-count runs not tied to their (d, H, H0)",
     [(C + "claims.py", "require(got == grid, \"params: the runs are not one per (d, H, H0)",
       "require(True or got == grid, \"params: the runs are not one per (d, H, H0)")]),
    ("M114", "checker: P2-count counts may refer to another run of their size",
     [(C + "claims.py", 'require([c.get("run") for c in counts] == index,',
       'require(True or [c.get("run") for c in counts] == index,')]),
    ("M115", "checker: P2-count symbolic record may be dropped",
     [(C + "claims.py", "require(len(symbolic) == 1, f\"params: P2-count records",
       "require(True or len(symbolic) == 1, f\"params: P2-count records")]),
    ("M116", "checker: multi-head low-rank rank 0 read",
     [(C + "run_multi_low_rank.py", 'integer(r, "run.params.rank", 1, dim)',
       'integer(r, "run.params.rank", 0, dim)')]),
    ("M117", "checker: multi-head low-rank heads above the given rank accepted",
     [(C + "run_multi_low_rank.py", "require(rk <= r,", "require(True or rk <= r,")]),
    ("M118", "checker: copy-count u, x read without their length",
     [(C + "copy_count.py", 'vector(c.get("u"), "copy-count.u", dim), vector(c.get("x"), "copy-count.x", dim)',
       'vector(c.get("u"), "copy-count.u"), vector(c.get("x"), "copy-count.x")')]),
    ("M119", "checker: unknown fields of a polynomial object accepted",
     [(C + "poly.py", '    only(data, ("variables", "terms"), where, optional=("degree",))\n', "")]),
    ("M120", "checker: unknown fields of a floor record accepted",
     [(C + "floor.py", '    only(c, FIELDS, "floor", optional=LOW_RANK_FIELDS if low else ())\n', "")]),
    ("M121", "checker: unknown fields of an economy-count record and its blocks accepted",
     [(C + "economy_count.py", '    only(c, FIELDS, "economy-count")\n', ""),
      (C + "economy_count.py", "        only(b, (\"name\", \"multiplicity\", \"samples\", \"length\"), f\"economy-count.blocks[{b['name']}]\")\n", "")]),
    ("M122", "checker: attention evaluated without its cost bound",
     [(C + "qt.py", '    product_work([{int(s * L) for s in scores} for scores, _ in parts], "attention")\n', "")]),
    ("M123", "checker: elements of Q(t) cross-multiplied without a cost bound",
     [(C + "qt.py", 'require(work <= MAX_TERM_WORK, f"comparing elements of Q(t)',
       'require(True or work <= MAX_TERM_WORK, f"comparing elements of Q(t)')]),
    ("M124", "checker: proportional elements of Q(t) cross-multiplied (no linear equality)",
     [(C + "qt.py", "if L1 == L2 and _proportional(n1, d1, n2, d2):", "if False:")]),
    ("M125", "checker: common denominators without a bound on their size",
     [(C + "qt.py", "require(bits <= MAX_DENOMINATOR_BITS,", "require(True or bits <= MAX_DENOMINATOR_BITS,")]),
    ("M126", "--oracle-digits beyond the backend's own digits accepted",
     [("exactattn/cli/learn.py", "if a.oracle_digits is not None and own is not None and a.oracle_digits > own:",
       "if False:")]),
    ("M127", "the fibre search without its row-operation budget",
     [("exactattn/learners/p2/fibre.py", "        if ROW_OPS[0] - self.ops_start > row_budget(d):\n",
       "        if False:\n")]),
    ("M128", "⌊log₁₀ a⌋ (and so ⌈−log₁₀ η⌉) from the bit-length estimate, never lowered",
     [("exactattn/arith/numbers.py", "    while Fraction(10) ** e > a:\n        e -= 1\n", "")]),
    ("M129", "η shown through float64 even below its range (prints 0)",
     [("exactattn/learners/result/precision.py", "    if f >= sys.float_info.min or eta == 0:", "    if True:")]),
    ("M130", "the noise sweep's estimate without the constant's Jacobian",
     [("exactattn/cli/noise.py", "return (levels * p2_work(d, H, validate=0) + jacobian) * scale",
       "return levels * p2_work(d, H, validate=0) * scale")]),
    ("M131", "check --out onto an existing file accepted before the run",
     [("exactattn/cli/check.py", "    if os.path.exists(path) and not os.path.isdir(path):", "    if False:")]),
    ("M132", "the checker reports success when its output was closed",
     [(C + "verify.py", "        return CLOSED\n", "        return 0\n")]),
    ("M133", "a named failure no command caught becomes a traceback",
     [("exactattn/cli/main.py", "    except LearningFailure as e:             # a named failure no command caught itself",
       "    except ZeroDivisionError as e:")]),
    ("M134", "checker: a Transformer evaluated without its cost bound",
     [(C + "transformer.py", "        product_work([{int(sc * L) for sc in row} for row in scores], \"transformer\",\n",
       "        (lambda *a: 0)([{int(sc * L) for sc in row} for row in scores], \"transformer\",\n")]),
    ("M135", "checker: nesting bounded below what a fibre certificate at d = 8 needs",
     [(C + "parse.py", "MAX_DEPTH = 320", "MAX_DEPTH = 200")]),
    ("M136", "--certify-unique --certificate beyond the checker's limits accepted",
     [("exactattn/cli/learn.py", "    if a.dim > MAX_DIM or H0 > MAX_H0:", "    if False:")]),
    ("M140", "checker: P2-unique counts a true model's raw heads, not its canonical heads",
     [(C + "claims.py", '_canonical_heads(c, "truth"),', 'len(c.get("truth") or ()),')]),
    ("M141", "checker: a same-function record's recovered entry need not be canonical",
     [(C + "recovery.py", 'require(not name.startswith("recovered") or is_canonical(m),',
       'require(True or is_canonical(m),')]),
    ("M142", "checker: a recovered entry need not be the heads its run recovered",
     [(C + "claims.py", "        require(read_canonical(models[name], d,",
       "        require(True or read_canonical(models[name], d,")]),
    ("M143", "checker: P2-count's count fits may be dropped or duplicated",
     [(C + "claims.py", 'require([f.get("quantity") for f in fits] == ["queries", "max_length"],',
       'require(True or [f.get("quantity") for f in fits] == ["queries", "max_length"],')]),
    ("M144", "checker: a count fit may leave out measured points",
     [(C + "claims.py", "require(len(got) == len(points) and set(got) == set(points),",
       "require(True or len(got) == len(points) and set(got) == set(points),")]),
    ("M145", "checker: the table of records not checked",
     [(C + "verify.py", "        check_records(cid, params, checks)\n", "")]),
    ("M146", "checker: a copy-count model need not be canonical",
     [(C + "copy_count.py", '    require(is_canonical(model), "copy-count:',
       '    require(True or is_canonical(model), "copy-count:')]),
    ("M147", "checker: a fibre witness summed without its price",
     [(C + "fibre.py", "        require(self.work <= budget,", "        require(True or self.work <= budget,")]),
    ("M148", "checker: a fibre witness with more terms than unknowns + 1",
     [(C + "fibre.py", "        require(len(lam) <= nvars + 1,", "        require(True or len(lam) <= nvars + 1,")]),
    ("M149", "checker: the pieces re-solved without their price",
     [(C + "fibre.py", "        require(price <= budget,", "        require(True or price <= budget,")]),
    ("M150", "checker: a FIFO read (blocks for ever)",
     [(C + "verify.py", "        if not stat.S_ISREG(os.fstat(fd).st_mode):", "        if False:")]),
    ("M151", "checker: a fibre witness term with coefficient 0",
     [(C + "fibre.py", '            require(x != 0, f"{where}[{key}]: a witness term',
       '            require(True, f"{where}[{key}]: a witness term')]),
    ("M152", "an oracle's StopIteration escapes unnamed",
     [("exactattn/oracles/oracle.py",
       "        if e is None or isinstance(e, ExactAttnError) or not isinstance(e, Exception):",
       "        if e is None or isinstance(e, (ExactAttnError, StopIteration)) "
       "or not isinstance(e, Exception):")]),
    ("M153", "learn_multi_head without its size checks (max_attempts=0 returns None)",
     [("exactattn/learners/multi_head.py", "    _check_sizes(max_attempts, heads, heads_bound)\n", "")]),
    ("M154", "dps unbounded above",
     [("exactattn/arith/mp.py", "or not MIN_DPS <= dps <= MAX_DPS:", "or dps < MIN_DPS:")]),
    ("M155", "random models unbounded",
     [("exactattn/models/attention.py",
       "    if heads > MAX_HEADS or heads * (dim * dim + dim) > MAX_RANDOM_ENTRIES:",
       "    if False:")]),
    ("M156", "eval prints an exact answer of any size",
     [("exactattn/cli/eval.py", "        if chars > MAX_ANSWER_CHARS and not args.force:",
       "        if False:")]),
    ("M157", "the fibre search's labellings not charged to its budget",
     [("exactattn/learners/p2/fibre.py", "        ROW_OPS[0] += 1\n        if H - h < len(poles_left):",
       "        if H - h < len(poles_left):")]),
    ("M158", "the low-rank learner's numeric ValueError left unnamed",
     [("exactattn/learners/p1/low_rank.py", "            except ValueError as e:       # mp/float",
       "            except ZeroDivisionError as e:       # mp/float")]),
    ("M159", "sweep store: an unreadable row breaks every summary",
     [("exactattn/sweep/store.py", "            except (TypeError, ValueError) as e:    # a row",
       "            except ZeroDivisionError as e:    # a row")]),
    ("M160", "sweep store: a full disk reported as a damaged store",
     [("exactattn/sweep/store.py", 'if "disk is full" in text or "disk I/O error" in text:',
       "if False:")]),
    ("M161", "sweep store: a locked store fails at once",
     [("exactattn/sweep/store.py", "            time.sleep(pause)\n", "            raise\n")]),
    ("M162", "sweep spec: a spec nested too deeply is 'run too large' (exit 1)",
     [("exactattn/sweep/spec.py", "            except RecursionError:\n                raise SpecError("
       "f\"spec file {str(path)!r} is nested too deeply\") from None\n            except "
       "json.JSONDecodeError",
       "            except json.JSONDecodeError")]),
]

_IGNORE = shutil.ignore_patterns(".git", ".venv*", "__pycache__", ".pytest_cache", ".ruff_cache",
                                 ".hypothesis", "certificates", "*.egg-info", "build", "dist")


def apply(root: Path, patches) -> None:
    """Apply one mutant's patches to the copy at `root`; ValueError if one does not apply."""
    for rel, old, new in patches:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise ValueError(f"{rel}: the text to mutate occurs {text.count(old)} times")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")


def check_applies(mutants=MUTANTS, root=ROOT) -> list:
    """The ids of mutants whose text is not found exactly once in the repository."""
    stale = []
    for mid, _, patches in mutants:
        for rel, old, _ in patches:
            if (root / rel).read_text(encoding="utf-8").count(old) != 1:
                stale.append(mid)
                break
    return stale


def _run(cmd, cwd, timeout, **extra):
    env = dict(os.environ, PYTHONPATH=str(cwd), HYPOTHESIS_PROFILE="dev", **extra)
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
        return done.returncode, (done.stdout + done.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        return "timeout", ""


BASELINE = ("M00", "no mutation (the copy must pass everything)", [])


def run_mutant(mutant, timeout=900) -> dict:
    """Apply one mutant to a scratch copy; run TESTS, then ``exactattn check --quick`` (which
    writes its certificates), then LATE_TESTS on those certificates; killed at the first
    failure (or timeout)."""
    mid, what, patches = mutant
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mid}-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(ROOT, copy, ignore=_IGNORE)
        apply(copy, patches)
        certs = Path(tmp) / "certs"
        pytest = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
        steps = [("tests", pytest + TESTS, {}),
                 ("check --quick", [sys.executable, "-m", "exactattn.cli", "check", "--quick",
                                    "--quiet", "--out", str(certs)], {}),
                 ("tests on its certificates", pytest + LATE_TESTS,
                  {"EXACTATTN_QUICK_CERTS": str(certs)})]
        by, code, first = None, 0, None
        for name, cmd, extra in steps:
            code, out = _run(cmd, copy, timeout, **extra)
            if code != 0:
                by = name
                first = next((ln.split(" - ")[0][len("FAILED "):] for ln in out.splitlines()
                              if ln.startswith("FAILED ")), None)
                break
    return {"id": mid, "what": what, "killed": by is not None, "by": by, "test": first,
            "timeout": code == "timeout", "seconds": round(time.perf_counter() - start, 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="*", metavar="ID", help="run only these mutants")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--threshold", type=float, default=0.9, help="required kill rate")
    p.add_argument("--timeout", type=int, default=900, help="seconds per command")
    a = p.parse_args(argv)
    chosen = [m for m in MUTANTS if not a.only or m[0] in a.only]
    if a.list:
        for mid, what, patches in chosen:
            print(f"{mid}  {what}  ({', '.join(sorted({f for f, _, _ in patches}))})")
        return 0
    stale = check_applies(chosen)
    if stale:
        sys.stderr.write(f"mutation: mutants {', '.join(stale)} no longer apply; update MUTANTS\n")
        return 2
    base = run_mutant(BASELINE, timeout=a.timeout)
    if base["killed"]:
        sys.stderr.write(f"mutation: the unmutated copy fails ({base['by']}): fix that first\n")
        return 2
    if not a.json:
        print(f"M00  baseline passes            {base['seconds']:7.1f} s  {BASELINE[1]}", flush=True)
    rows = []
    for m in chosen:
        row = run_mutant(m, timeout=a.timeout)
        rows.append(row)
        if not a.json:
            status = f"killed by {row['by']}" if row["killed"] else "SURVIVED"
            print(f"{row['id']}  {status:24} {row['seconds']:7.1f} s  {row['what']}"
                  + (f"  [{row['test']}]" if row.get("test") else ""), flush=True)
    killed = sum(r["killed"] for r in rows)
    rate = killed / len(rows) if rows else 1.0
    if a.json:
        print(json.dumps({"mutants": rows, "killed": killed, "total": len(rows), "rate": rate}))
    else:
        print(f"kill rate {killed}/{len(rows)} = {rate:.1%}")
    return 0 if rate >= a.threshold else 1


if __name__ == "__main__":
    sys.exit(main())
