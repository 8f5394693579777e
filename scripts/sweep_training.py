#!/usr/bin/env python3
"""Lesson 07's training sweeps.

A stored data set over a named seed set (seeds 1-12), so the lesson can state ranges "over
seeds 1-6" and "over seeds 7-12" and every claim holds whichever seed the lesson's SEED line picks.

Adam: 5 variants (the 4 scalings and the control "unscaled, W_q and W_k started
x d_k^(-1/4)") x 3 head sizes x 6 learning rates x 12 seeds.  SGD: 3 variants at d_k = 256
x 6 learning rates x 6 seeds.  Chaos: the Adam runs of 3 variants at d_k = 256, 3 rates, 6 seeds, with
W_q and W_k started x (1 + 1e-12), to show which settings a rounding-sized change of the start
moves.  Re-ranking: for unscaled and /sqrt(d_k) at d_k = 256, lr = 1e-3, the share of held-out
sequences whose most-weighted key is the correct one after 0, 100, 200, 300 steps.

    OPENBLAS_NUM_THREADS=1 python scripts/sweep_training.py   # writes notebooks/data/training_sweep.npz
    ... --jobs 2                        # two worker processes
    ... --reuse old.npz                 # copy the runs an earlier file made with the same settings

About 25 minutes on one core. The lesson loads the file and re-trains one slice live to
check that the file matches the code. Every setting lives in CONFIG below and is saved in
the file, so the notebook reads it from there rather than repeating it.
"""

from __future__ import annotations

import os

# The matrices here are tiny; OpenBLAS threads only fight over the cores (10x slower).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from attnlib.train import (  # noqa: E402
    CURVE_KEYS,
    VARIANTS,
    Adam,
    forward,
    init_params,
    loss_and_grads,
    make_recall_task,
    sweep,
    train,
)

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "training_sweep.npz"

CONFIG = {
    "task": {"n_keys": 32, "n_values": 16, "d_in": 32, "seed": 0},
    "variants": list(VARIANTS),
    "d_ks": [16, 64, 256],
    "lrs": [3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1],
    "seeds": list(range(1, 13)),
    "steps": 300,
    "window": 5,
    "train": {"batch": 32, "n_pairs": 8, "optimizer": "adam", "init_scale": 1.0},
    "sgd": {"variants": ["none", "sqrt", "none_init"], "d_ks": [256], "lrs": [0.01, 0.03, 0.1, 0.3, 1.0, 3.0],
            "seeds": [1, 2, 3, 4, 5, 6]},
    # the same Adam runs with the starting W_q, W_k multiplied by (1 + perturbation)
    "chaos": {"variants": ["none", "sqrt", "none_init"], "d_ks": [256], "lrs": [1e-3, 3e-3, 1e-2],
              "seeds": [1, 2, 3, 4, 5, 6], "perturbation": 1e-12},
    # top-key share on held-out sequences (drawn with heldout_seed) at these steps
    "rerank": {"variants": ["none", "sqrt"], "d_k": 256, "lr": 1e-3, "checkpoints": [0, 100, 200, 300],
               "seeds": list(range(1, 13)),
               "heldout": 1024, "heldout_seed": 1000},
}


def top_key_share(task, scaling, d_k, lr, seed, steps, checkpoints, heldout, batch, n_pairs):
    """`train` (Adam, init_scale 1) written out with checkpoints: at each, the share of the held-out
    sequences whose most-weighted key is the correct one.  Returns (shares, final params)."""
    xe_q, xe_kv, _, pos_e = heldout
    gen = np.random.default_rng(seed)                   # as in `train`: the weights, then one batch per step
    p = init_params(task.d_in, d_k, task.d_in, task.n_values, scaling, gen)
    opt, shares = Adam(lr), []
    for step in range(steps + 1):
        if step in checkpoints:
            _, c_e = forward(p, xe_q, xe_kv, scaling)
            shares.append((c_e["A"][:, 0].argmax(-1) == pos_e).mean())
        if step < steps:
            xb_q, xb_kv, tb = task.sample(batch, n_pairs, gen)
            opt.step(p, loss_and_grads(p, xb_q, xb_kv, tb, scaling)[1])
    return np.array(shares), p


def chaos_sweep(task, c):
    """The Adam sweep for c["chaos"]["variants"] x d_ks, with W_q, W_k started x (1 + perturbation)."""
    h = c["chaos"]
    shape = (len(h["variants"]), len(h["d_ks"]), len(h["lrs"]), len(c["seeds"]))
    curves = np.empty((*shape, len(CURVE_KEYS), c["steps"] // c["window"]))
    for idx in np.ndindex(shape):
        i, j, k, s = idx
        name, d_k = h["variants"][i], h["d_ks"][j]
        setting = {"scaling": "none" if name == "none_init" else name,
                   "qk_init": (d_k ** -0.25 if name == "none_init" else 1.0) * (1 + h["perturbation"])}
        run = train(task, d_k=d_k, lr=h["lrs"][k], steps=c["steps"], rng=c["seeds"][s], **setting, **c["train"])
        stacked = np.stack([run[key] for key in CURVE_KEYS])
        curves[idx] = stacked.reshape(len(CURVE_KEYS), -1, c["window"]).mean(-1)
    return curves


def _adam_seed(c, seed):
    task = make_recall_task(**{k: v for k, v in c["task"].items() if k != "seed"}, rng=c["task"]["seed"])
    out = sweep(task, c["variants"], c["d_ks"], c["lrs"], [seed], c["steps"], c["window"], **c["train"])
    return out["curves"][:, :, :, 0], out["first"][:, :, :, 0]


def _sgd_seed(c, seed):
    task = make_recall_task(**{k: v for k, v in c["task"].items() if k != "seed"}, rng=c["task"]["seed"])
    g = c["sgd"]
    out = sweep(task, g["variants"], g["d_ks"], g["lrs"], [seed], c["steps"], c["window"],
                **{**c["train"], "optimizer": "sgd"})
    return out["curves"][:, :, :, 0]


def _chaos_seed(c, seed):
    task = make_recall_task(**{k: v for k, v in c["task"].items() if k != "seed"}, rng=c["task"]["seed"])
    return chaos_sweep(task, {**c, "seeds": [seed]})[:, :, :, 0]


def _rerank_seed(c, seed):
    task = make_recall_task(**{k: v for k, v in c["task"].items() if k != "seed"}, rng=c["task"]["seed"])
    r = c["rerank"]
    heldout = task.sample(r["heldout"], c["train"]["n_pairs"], np.random.default_rng(r["heldout_seed"]),
                          return_positions=True)
    return np.array([top_key_share(task, name, r["d_k"], r["lr"], seed, c["steps"], r["checkpoints"], heldout,
                                   c["train"]["batch"], c["train"]["n_pairs"])[0] for name in r["variants"]])


def _reusable(old, c, kind):
    """The seeds of an earlier file whose runs of this kind were made with the same settings."""
    oc = json.loads(str(old["config"]))
    same = all(oc.get(k) == c[k] for k in ("task", "steps", "window", "train"))
    if kind == "adam" and same and all(oc.get(k) == c[k] for k in ("variants", "d_ks", "lrs")):
        return {s: i for i, s in enumerate(oc["seeds"])}
    if kind == "sgd" and same and {k: v for k, v in oc.get("sgd", {}).items() if k != "seeds"} == \
            {k: v for k, v in c["sgd"].items() if k != "seeds"}:
        return {s: i for i, s in enumerate(oc["sgd"]["seeds"])}
    return {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (one seed per task)")
    ap.add_argument("--reuse", type=Path, help="an earlier sweep file: its runs made with the same settings "
                    "are copied instead of trained again (the code is deterministic: same seed, same numbers)")
    args = ap.parse_args(argv)
    c = CONFIG
    start = time.perf_counter()
    old = np.load(args.reuse) if args.reuse else None
    reuse = {kind: _reusable(old, c, kind) if old is not None else {} for kind in ("adam", "sgd")}
    jobs = [("adam", s) for s in c["seeds"] if s not in reuse["adam"]]
    jobs += [("sgd", s) for s in c["sgd"]["seeds"] if s not in reuse["sgd"]]
    jobs += [("chaos", s) for s in c["chaos"]["seeds"]] + [("rerank", s) for s in c["rerank"]["seeds"]]
    work = {"adam": _adam_seed, "sgd": _sgd_seed, "chaos": _chaos_seed, "rerank": _rerank_seed}
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        futures = {job: pool.submit(work[job[0]], c, job[1]) for job in jobs}
        done = {}
        for job, f in futures.items():
            done[job] = f.result()
            print(f"{job[0]} seed {job[1]} done at {time.perf_counter() - start:.0f} s", flush=True)
    for s, i in reuse["adam"].items():
        if s in c["seeds"]:
            done["adam", s] = (old["curves"][:, :, :, i].astype(np.float64), old["first"][:, :, :, i])
    for s, i in reuse["sgd"].items():
        if s in c["sgd"]["seeds"]:
            done["sgd", s] = old["curves_sgd"][:, :, :, i].astype(np.float64)
    curves = np.stack([done["adam", s][0] for s in c["seeds"]], axis=3)
    first = np.stack([done["adam", s][1] for s in c["seeds"]], axis=3)
    curves_sgd = np.stack([done["sgd", s] for s in c["sgd"]["seeds"]], axis=3)
    curves_chaos = np.stack([done["chaos", s] for s in c["chaos"]["seeds"]], axis=3)
    rerank = np.stack([done["rerank", s] for s in c["rerank"]["seeds"]], axis=1)   # (variant, seed, checkpoint)
    elapsed = time.perf_counter() - start
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        OUT,
        curves=curves.astype(np.float32),
        first=first,
        curves_sgd=curves_sgd.astype(np.float32),
        curves_chaos=curves_chaos.astype(np.float32),
        rerank=rerank,
        curve_keys=np.array(CURVE_KEYS),
        config=np.array(json.dumps(c)),
    )
    print(f"wrote {OUT.name} ({OUT.stat().st_size / 1024:.0f} KiB) in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
