"""The P2 approximate-oracle bound: parameter error ≤ C · (answer error), with the model- and
query-dependent constant C computed (docs/design.md §4.4).

P2 states that the multi-head learner tolerates answers with error ≤ τ, its parameter error
being at most C·τ for a constant C that depends on the model and the random queries; its
value is not published.  Here C is *computed* for one run of our learner
(:mod:`exactattn.learners.multi_head`):

    C = max over parameters p (every entry of every W_h and v_h) of Σ_k |∂p/∂a_k|,

the ∞→∞ norm of the Jacobian of the recovery map (answers a_1…a_n ↦ parameters) — the
largest first-order parameter change when every answer moves by at most τ.  The recovery
map is the learner's own ``_recover`` run on the recorded transcript with the bases fixed
(imported, not copied).

**Computing the Jacobian (certified finite differences).**  The recovery is re-run in mpmath
at ``dps`` ≥ 2 × the working precision on the transcript with one answer moved by a step
h = 10^(−dps/2); J[:, k] = (p(a + h e_k) − p(a))/h.  The truncation error is h·|∂²p|/2
and the rounding error ~10^(−dps)·cond/h, both ~10^(−dps/2) relative to C for the well-posed
instances covered here.  The result is then checked: all answers are moved at once by
h·sign(J[r*, k]) for the row r* that attains C, which must change p_{r*} by C·h to first
order; the relative discrepancy is reported as ``fd_check``.

**When C is finite.**  The recovery is differentiable where every copy-count family has simple
poles z_h = e^{uᵀW_h x} (pole separation min |z_a − z_b| > 0), nonzero residues
c_h = −v_h·u, and the bases U, X are nonsingular (finite condition numbers).  These are
reported for every family of the schedule.  They also say when the first-order bound
applies at a given τ (:meth:`Sensitivity.conditions`): the first-order perturbation of each
pole and residue, computed per family from the family's own samples, must stay below a
quarter of the pole separation and of the smallest residue, and the learner's matching
tolerance must cover the noise-induced mismatches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...arith import get_backend
from ...errors import ConditionsNotMet, LearningFailure
from ...arith.fields import RealField
from .interpolation import solve_family
from .jacobian import flat, jacobian, labels, perturbed, row_norms
from .engines import make_engine
from .matching import Close, key_label
from .recovery import _recover
from .schedule import Schedule

__all__ = ["recover", "approximate_constant", "constant_for", "Sensitivity",
           "FamilyConditions", "family_samples"]


# ---------------------------------------------------------------------- recovery hook
def recover(schedule: Schedule, answers, be, H0: int, tolerance=None):
    """Re-run the P2 learner's recovery (steps 3–5 of :mod:`~exactattn.learners.multi_head`)
    on recorded answers with the bases fixed; ``tolerance`` (relative) replaces the
    learner's default matching tolerance 10^(−dps/3).  Returns (heads, v)."""
    close = Close(be)
    if tolerance is not None:
        close.tol = be.scalar(tolerance)
    engine = make_engine(be, answers, None)
    return _recover(schedule, answers, engine, be, H0, close)


def _lift(be, schedule: Schedule, answers):
    """The schedule and answers as numbers of backend ``be`` (exact conversion of mpf)."""
    U = [[be.scalar(x) for x in row] for row in schedule.U]
    X = [[be.scalar(x) for x in row] for row in schedule.X]
    return Schedule(U, X, schedule.H0), [be.scalar(a) for a in answers]


# ---------------------------------------------------------------------- parameter Jacobian
_labels, _flat, _row_norms = labels, flat, row_norms


def _bound(schedule, be, H0, tol):
    return lambda answers: recover(schedule, answers, be, H0, tol)


def _perturbed(schedule, answers, be, H0, tol, delta, reference):
    """The parameter vector recovered from ``answers + delta``."""
    return perturbed(_bound(schedule, be, H0, tol), answers, delta, reference)


def _jacobian(schedule, answers, be, H0, tol, step, reference, p0):
    """Columns ∂p/∂a_k by one-sided differences with step ``step``; returned as rows."""
    return jacobian(_bound(schedule, be, H0, tol), answers, step, reference, p0, be.scalar(0))


# ---------------------------------------------------------------------- family conditions
def family_samples(schedule: Schedule, answers, v):
    """Each family's samples G(0), …, G(2H₀) in the schedule's order (``Schedule.queries``:
    q₀ = F([x₁]), then every family's m = 1…2H₀); G(0) is q₀ for the families ending in x₁
    and v·x (computed, docs/design.md §4.3 step 3) for the others."""
    per = 2 * schedule.H0
    zero = answers[0] * 0
    out = []
    for idx, fam in enumerate(schedule.families):
        g0 = answers[0] if fam.ends_in_x1 else sum((a * b for a, b in zip(v, fam.x)), zero)
        out.append((fam, [g0] + list(answers[1 + idx * per: 1 + (idx + 1) * per])))
    return out


@dataclass
class FamilyConditions:
    """One copy-count family I(u, x): its poles z_h, residues c_h, the quantities that keep
    the recovery differentiable (pole separation, smallest |residue|) and the first-order
    sensitivities (per unit of answer error) of its poles, scores log z_h and residues."""

    label: str
    poles: list
    residues: list
    min_pole_separation: object
    min_residue: object
    pole_sensitivity: object
    score_sensitivity: object
    residue_sensitivity: object


def _solve(field, ys, H0, hint):
    K, heads = solve_family(field, ys, H0, hint)
    return sorted(heads, key=lambda zc: zc[0])


def _nearest(heads, reference):
    """Pair each reference pole with the nearest pole of `heads` (simple, separated poles)."""
    return [min(heads, key=lambda zc: abs(zc[0] - z)) for z, _ in reference]


def _family(be, fam, ys, H0, hint, step, g0_gradient, own_index, n_answers):
    """Conditions and sensitivities of one family; ``g0_gradient[k]`` = ∂G(0)/∂a_k and
    ``own_index[m]`` = the answer index of the sample G(m), m ≥ 1."""
    field = RealField(be, be.ctx.mpf(10) ** (-(be.dps // 2)))
    base = _solve(field, ys, H0, hint)
    dq = []  # dq[m] = [(dz_h, ds_h, dc_h) for h] per unit change of sample m
    for m in range(len(ys)):
        moved = list(ys)
        moved[m] = moved[m] + step
        got = _nearest(_solve(field, moved, H0, hint), base)
        dq.append([((z1 - z0) / step, (be.ctx.log(z1) - be.ctx.log(z0)) / step, (c1 - c0) / step)
                   for (z0, c0), (z1, c1) in zip(base, got)])
    sens = [[be.scalar(0)] * 3 for _ in base]
    for k in range(n_answers):
        for h in range(len(base)):
            for q in range(3):
                g = dq[0][h][q] * g0_gradient[k]
                if k in own_index:
                    g += dq[own_index[k]][h][q]
                sens[h][q] += abs(g)
    zs, cs = [z for z, _ in base], [c for _, c in base]
    gaps = [abs(a - b) for i, a in enumerate(zs) for b in zs[i + 1:]]
    label = f"I(u{key_label(fam.u_key)}, x{key_label(fam.x_key)})"
    return FamilyConditions(label, zs, cs, min(gaps) if gaps else be.ctx.inf,
                            min((abs(c) for c in cs), default=be.ctx.inf),
                            *(max((s[q] for s in sens), default=be.scalar(0)) for q in range(3)))


def _families(be, schedule, answers, v, H0, hint, step, J_total_v):
    """FamilyConditions for every family of the schedule."""
    n, per = len(answers), 2 * schedule.H0
    out = []
    for idx, (fam, ys) in enumerate(family_samples(schedule, answers, v)):
        if fam.ends_in_x1:
            g0 = [be.scalar(int(k == 0)) for k in range(n)]
        else:
            g0 = [sum((x * J_total_v[i][k] for i, x in enumerate(fam.x)), be.scalar(0))
                  for k in range(n)]
        own = {1 + idx * per + m: m + 1 for m in range(per)}
        out.append(_family(be, fam, ys, H0, hint, step, g0, own, n))
    return out


def _condition_number(be, M):
    """‖M‖_∞ ‖M⁻¹‖_∞ (infinite for a singular M)."""
    from ...errors import SingularSystem
    norm = lambda A: max(sum(abs(x) for x in row) for row in A)  # noqa: E731
    try:
        return norm(M) * norm(be.inv(M))
    except SingularSystem:
        return be.ctx.inf


# ---------------------------------------------------------------------- result
@dataclass
class Sensitivity:
    """The P2 approximate-oracle constant of one learner run and its conditions.

    ``C`` = max over parameters of Σ_k |∂p/∂a_k| (``C_W``, ``C_v``: the same over the W and
    the v entries only); ``worst`` names the parameter attaining C; ``jacobian`` has one row
    per parameter (``labels``) and one column per answer."""

    C: object
    C_W: object
    C_v: object
    worst: str
    labels: list
    jacobian: list = field(repr=False)
    worst_signs: list = field(repr=False)
    fd_check: object = None
    cond_U: object = None
    cond_X: object = None
    families: list = field(default_factory=list, repr=False)
    dps: int = 0
    step: object = None
    tolerance: object = None

    def predicted_error(self, tau):
        """C·τ: the first-order bound on max |Δparameter| for answers within ±τ (P2)."""
        return self.C * tau

    @property
    def min_pole_separation(self):
        return min(f.min_pole_separation for f in self.families)

    @property
    def min_residue(self):
        return min(f.min_residue for f in self.families)

    def required_tolerance(self, tau):
        """3τ × the largest first-order score or residue perturbation of any family: the
        smallest relative matching tolerance that surely (to first order) covers the
        mismatch of a matched triple, which compares three noisy quantities."""
        worst = max((max(f.score_sensitivity, f.residue_sensitivity) for f in self.families),
                    default=0)
        return 3 * tau * worst

    def conditions(self, tau, tolerance=None):
        """(met, reasons): whether the first-order bound C·τ applies at noise level τ (P2
        approximate-oracle bound; module docstring): C and the basis condition numbers are
        finite; in every family the first-order pole and residue perturbations stay below a
        quarter of the pole separation and of the smallest |residue|; and the matching
        tolerance (relative, if given) is at least :meth:`required_tolerance`."""
        inf = float("inf")
        reasons = []
        for name, val in (("C", self.C), ("cond(U)", self.cond_U), ("cond(X)", self.cond_X)):
            if val is None or val == inf:
                reasons.append(f"{name} is infinite")
        for f in self.families:
            if 4 * tau * f.pole_sensitivity >= f.min_pole_separation:
                reasons.append(f"{f.label}: pole perturbation τ·{_s(f.pole_sensitivity)} is not "
                               f"below a quarter of the pole separation {_s(f.min_pole_separation)}")
            if 4 * tau * f.residue_sensitivity >= f.min_residue:
                reasons.append(f"{f.label}: residue perturbation τ·{_s(f.residue_sensitivity)} is "
                               f"not below a quarter of the smallest |residue| {_s(f.min_residue)}")
        need = self.required_tolerance(tau)
        if tolerance is not None and need > tolerance:
            reasons.append(f"the matching tolerance {_s(tolerance)} is below the {_s(need)} "
                           f"that the noise needs (3τ × the largest score/residue sensitivity)")
        return not reasons, reasons

    def summary(self) -> dict:
        """JSON-friendly figures (numbers as short strings)."""
        return {"C": _s(self.C), "C_W": _s(self.C_W), "C_v": _s(self.C_v), "worst": self.worst,
                "fd_check": _s(self.fd_check), "cond_U": _s(self.cond_U),
                "cond_X": _s(self.cond_X), "min_pole_separation": _s(self.min_pole_separation),
                "min_residue": _s(self.min_residue), "dps": self.dps,
                "families": {f.label: {"min_pole_separation": _s(f.min_pole_separation),
                                       "min_residue": _s(f.min_residue),
                                       "pole_sensitivity": _s(f.pole_sensitivity)}
                             for f in self.families}}


def _s(x, n=6):
    import mpmath
    return None if x is None else mpmath.nstr(x, n)


# ---------------------------------------------------------------------- public API
def approximate_constant(schedule: Schedule, answers, H0: int, tolerance=None, dps=None):
    """The P2 approximate-oracle constant C of the multi-head learner for one transcript
    (module docstring): the Jacobian of the recovery map by finite differences in mpmath at
    ``dps`` digits (default and minimum: twice the working precision of the answers), the
    worst-row check, and the conditions under which C is finite, per family.

    ``schedule`` holds the bases and H₀ of the run, ``answers`` the oracle's answers in
    schedule order, ``tolerance`` the relative matching tolerance the run used.  Raises
    :class:`ConditionsNotMet` when the recovery fails on these answers."""
    working = max(getattr(getattr(a, "context", None), "dps", 15) for a in answers)
    dps = max(2 * working, dps or 0)
    be = get_backend("mp", dps)
    schedule, answers = _lift(be, schedule, answers)
    step = be.ctx.mpf(10) ** (-(dps // 2))
    try:
        heads, v = recover(schedule, answers, be, H0, tolerance)
        p0 = _flat(heads, v)
        J = _jacobian(schedule, answers, be, H0, tolerance, step, heads, p0)
    except LearningFailure as e:
        raise ConditionsNotMet(f"the recovery fails on these answers ({e.reason}: {e}); the "
                               f"approximate-oracle constant is not defined here",
                               cause=e.reason) from e
    d, H = schedule.d, len(heads)
    n_params = H * (d * d + d)
    labels = _labels(H, d)
    norms = _row_norms(J[:n_params])
    r = max(range(n_params), key=lambda i: norms[i])
    C = norms[r]
    signs = [1 if x >= 0 else -1 for x in J[r]]
    moved = _perturbed(schedule, answers, be, H0, tolerance, [s * step for s in signs], heads)
    fd_check = abs((moved[r] - p0[r]) / step - C) / C if C else be.scalar(0)
    is_W = [lab.startswith("W") for lab in labels]
    fams = _families(be, schedule, answers, v, H0, H, step, J[n_params:])
    return Sensitivity(
        C=C, C_W=max(n for n, w in zip(norms, is_W) if w),
        C_v=max(n for n, w in zip(norms, is_W) if not w), worst=labels[r], labels=labels,
        jacobian=J[:n_params], worst_signs=signs, fd_check=fd_check,
        cond_U=_condition_number(be, schedule.U), cond_X=_condition_number(be, schedule.X),
        families=fams, dps=dps, step=step, tolerance=tolerance)


def constant_for(result, dps=None):
    """C for a finished mp run of :func:`~exactattn.learners.multi_head.learn_multi_head`
    (P2 approximate-oracle bound): rebuilds its schedule from ``result.extra`` (bases U, X and
    H₀) and reads the answers from its transcript."""
    if result.backend != "mp":
        raise ValueError("the approximate-oracle constant is computed for mp runs")
    if not result.transcript:
        raise ValueError("the result has no transcript (the oracle must record)")
    extra = result.extra
    schedule = Schedule(extra["U"], extra["X"], extra["H0"])
    answers = [a for _, a in result.transcript]
    return approximate_constant(schedule, answers, extra["H0"], extra.get("matching_tolerance"),
                                dps)
