"""A default PyTorch ``nn.MultiheadAttention(E, H)`` learned from its forward pass
(docs/models.md, "Default initialisation and the input scale"; docs/design.md §8, §9).

For each torch seed the layer is built with torch's defaults (Xavier-uniform weights, zero
biases), copied to float64 and read out by r = e0.  Its exact heads come from the weights
(``eat.heads``); the float learner then learns X ↦ F(cX) from torch's own forward pass
(``eat.oracle(layer, r, input_scale=c)``, η = 256 float64 ulps), with ``resample=True``,
and the heads are mapped back (``eat.unscale``).  Printed per (seed, c): the outcome — the
true error against the exact weights beside the certified error bar (ball enclosure), or the
named failure — and the attempts used; then per c the certified count, and the largest
relative error of torch's answers against the exact heads on the learner's queries (in
float64 ulps of max(1, |y|)).

    python benchmarks/bench_torch_layer.py [--dim 4] [--heads 2] [--seeds 10] [--scales 1,2,4,8] [--attempts 10] [--oracle-precision ETA] [--float32]
"""

from __future__ import annotations

import argparse
import time

import mpmath

import exactattn as ea
from exactattn.adapters import torch as eat


def layer(E, H, seed, float32=False):
    import torch
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(E, H).eval()
    return mha if float32 else mha.double()


def answer_error_ulps(transcript, truth, c, bits=52):
    """max |ŷ − F(cX)| / max(1, |F(cX)|) over the transcript, in units of 2^−bits (the
    dtype's last place; exact heads evaluated at 40 digits)."""
    worst = mpmath.mpf(0)
    with mpmath.workdps(40):
        for tokens, answer in transcript:
            exact = truth([[c * mpmath.mpf(x) for x in t] for t in tokens], "mp")
            worst = max(worst, abs(mpmath.mpf(answer) - exact) / max(1, abs(exact)))
        return float(worst * 2 ** bits)


def run(E, H, seed, c, attempts, float32, eta=None):
    mha = layer(E, H, seed, float32)
    r = [1] + [0] * (E - 1)
    truth = eat.heads(mha, r)
    oracle = eat.oracle(mha, r, input_scale=c)
    start = time.perf_counter()
    try:
        res = ea.learn_multi_head(oracle, E, heads=len(truth.heads), seed=0, resample=True,
                                  max_attempts=attempts, oracle_precision=eta)
    except ea.LearningFailure as e:
        return {"outcome": e.reason, "attempts": len(e.details.get("attempts", [])),
                "seconds": time.perf_counter() - start,
                "ulps": answer_error_ulps(oracle.transcript, truth, c, 23 if float32 else 52)}
    model, bar = eat.unscale(res, c)
    err = ea.parameter_error(truth, model.heads)
    return {"outcome": "within" if err <= bar else "OUTSIDE", "error": err, "bar": bar,
            "rigorous": res.error_bar.rigorous, "attempts": len(res.extra["attempts"]),
            "seconds": time.perf_counter() - start,
            "ulps": answer_error_ulps(oracle.transcript, truth, c, 23 if float32 else 52)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dim", type=int, default=4)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--scales", default="1,2,4,8")
    p.add_argument("--attempts", type=int, default=10)
    p.add_argument("--oracle-precision", default=None, metavar="ETA",
                   help="state η (relative) instead of the declared 256 ulps of the dtype")
    p.add_argument("--float32", action="store_true",
                   help="keep torch's float32 (declared η = 256 float32 ulps)")
    a = p.parse_args()
    scales = [int(x) for x in a.scales.split(",")]
    E, H = a.dim, a.heads
    print(f"nn.MultiheadAttention({E}, {H}), torch default init, "
          f"{'float32' if a.float32 else 'float64'} forward pass, read-out e0; float learner "
          f"on X ↦ F(cX), resample=True, max_attempts={a.attempts}"
          + (f", stated η = {a.oracle_precision}" if a.oracle_precision else ""))
    print("suggested input scale (eat.suggested_scale) and typical score per seed:")
    for seed in range(a.seeds):
        mha = layer(E, H, seed, a.float32)
        print(f"  seed {seed}: typical score {eat.typical_score(mha):.3f}, suggested c = "
              f"{eat.suggested_scale(mha)}")
    tally = {c: [0, 0.0] for c in scales}
    for seed in range(a.seeds):
        cells = []
        for c in scales:
            o = run(E, H, seed, c, a.attempts, a.float32, a.oracle_precision)
            tally[c][0] += o["outcome"] == "within" and o["rigorous"]
            tally[c][1] = max(tally[c][1], o["ulps"])
            if "error" in o:
                kind = "certified" if o["rigorous"] else "first-order"
                cells.append(f"c={c}: error {mpmath.nstr(o['error'], 2)} {o['outcome']} "
                             f"{kind} bar {mpmath.nstr(o['bar'], 2)} ({o['attempts']} att.)")
            else:
                cells.append(f"c={c}: {o['outcome']} ({o['attempts']} att.)")
        print(f"seed {seed}: " + " | ".join(cells), flush=True)
    for c in scales:
        unit = "float32" if a.float32 else "float64"
        print(f"c = {c}: certified within the bar for {tally[c][0]} of {a.seeds} seeds; "
              f"torch's answers within {tally[c][1]:.2f} {unit} ulps of the exact heads")


if __name__ == "__main__":
    main()
