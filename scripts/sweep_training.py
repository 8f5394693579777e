#!/usr/bin/env python3
"""Lesson 07's training sweeps.

Adam: 5 variants (the 4 scalings and the control "unscaled, W_q and W_k started
x d_k^(-1/4)") x 3 head sizes x 6 learning rates x 6 seeds.  SGD: 3 variants at d_k = 256
x 6 learning rates x 3 seeds.

    OPENBLAS_NUM_THREADS=1 python scripts/sweep_training.py   # writes notebooks/data/training_sweep.npz

About 3-6 minutes on one core. The lesson loads the file and re-trains one slice live to
check that the file matches the code. Every setting lives in CONFIG below and is saved in
the file, so the notebook reads it from there rather than repeating it.
"""

from __future__ import annotations

import os

# The matrices here are tiny; OpenBLAS threads only fight over the cores (10x slower).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from attnlib.train import CURVE_KEYS, VARIANTS, make_recall_task, sweep  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "training_sweep.npz"

CONFIG = {
    "task": {"n_keys": 32, "n_values": 16, "d_in": 32, "seed": 0},
    "variants": list(VARIANTS),
    "d_ks": [16, 64, 256],
    "lrs": [3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1],
    "seeds": [1, 2, 3, 4, 5, 6],
    "steps": 300,
    "window": 5,
    "train": {"batch": 32, "n_pairs": 8, "optimizer": "adam", "init_scale": 1.0},
    "sgd": {"variants": ["none", "sqrt", "none_init"], "d_ks": [256], "lrs": [0.01, 0.03, 0.1, 0.3, 1.0, 3.0],
            "seeds": [1, 2, 3]},
}


def main() -> int:
    c = CONFIG
    t = c["task"]
    task = make_recall_task(t["n_keys"], t["n_values"], t["d_in"], t["seed"])
    start = time.perf_counter()
    g = c["sgd"]
    sgd = sweep(task, g["variants"], g["d_ks"], g["lrs"], g["seeds"], c["steps"], c["window"],
                **{**c["train"], "optimizer": "sgd"})
    out = sweep(task, c["variants"], c["d_ks"], c["lrs"], c["seeds"], c["steps"], c["window"], **c["train"])
    elapsed = time.perf_counter() - start
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        OUT,
        curves=out["curves"].astype(np.float32),
        first=out["first"],
        curves_sgd=sgd["curves"].astype(np.float32),
        curve_keys=np.array(CURVE_KEYS),
        config=np.array(json.dumps(c)),
    )
    print(f"wrote {OUT.name} ({OUT.stat().st_size / 1024:.0f} KiB) in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
