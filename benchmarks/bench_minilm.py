#!/usr/bin/env python3
"""MiniLM forward pass (lesson 08's input) in numpy vs PyTorch/transformers eager on the same weights.

Runs ``attnlib.minilm`` (all-MiniLM-L6-v2) on lesson 08's six sentences, float64 (the lesson's
setting) and float32. Floors, measured in the same run and interleaved round by round:
  * transformers' BertModel (attn_implementation="eager") on the same safetensors file, in a worker
    process started with an interpreter that has torch + transformers (this one if it has them, else
    ``--torch-python``, default /tmp/bench-torch-venv/bin/python); its answer is checked against ours;
  * a matmul-bound estimate: the forward's FLOPs / numpy's measured GFLOP/s on its largest matmul.
Goal: median <= 1.5x transformers when it runs (the estimate is then shown for context only), else
<= 1.5x the estimate. Skips cleanly (one row) when attnlib.minilm or the model is missing.

    python benchmarks/bench_minilm.py [--json] [--repeats 15] [--torch-python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

GOAL = 1.5
SENTENCES = [  # lesson 08's input
    "The cat sat on the mat.",
    "Attention divides each query-key dot product by the square root of the key dimension.",
    "A bank can refuse a loan if the river floods the town.",
    "She played the violin beautifully at the concert last night.",
    "Transformers read every word of a sentence at once.",
    "Why is the sky blue on a clear day?",
]
TOLERANCE = {"float64": 1e-10, "float32": 1e-4}  # max |hidden-state difference| to transformers
DEFAULT_TORCH_PY = "/tmp/bench-torch-venv/bin/python"

WORKER = r"""
import sys, time, numpy as np, torch
from transformers import BertConfig, BertModel
from safetensors.torch import load_file
model_dir, inputs, output, dtype = sys.argv[1:5]
dtype = getattr(torch, dtype)
config = BertConfig.from_json_file(f"{model_dir}/config.json")
config._attn_implementation = "eager"
model = BertModel(config, add_pooling_layer=False).eval().to(dtype)
missing, unexpected = model.load_state_dict(load_file(f"{model_dir}/model.safetensors"), strict=False)
assert not missing, missing
data = np.load(inputs)
ids, mask = torch.from_numpy(data["ids"]), torch.from_numpy(data["mask"].astype(np.int64))
with torch.inference_mode():
    np.save(output, model(input_ids=ids, attention_mask=mask).last_hidden_state.double().numpy())
    print(f"ready torch {torch.__version__} threads {torch.get_num_threads()}", flush=True)
    for line in sys.stdin:
        time.sleep(0.05)  # let the other library's threads go quiet
        t0 = time.perf_counter(); model(input_ids=ids, attention_mask=mask); t1 = time.perf_counter()
        print(1e3 * (t1 - t0), flush=True)
"""


def forward_flops(b: int, t: int, layers: int, e: int, heads: int, ff: int) -> float:
    """Multiply-adds x2 of the encoder's matmuls (padded positions included, as both libraries compute them)."""
    n, dk = b * t, e // heads
    per_layer = 2 * n * e * 3 * e + 2 * 2 * b * heads * t * t * dk + 2 * n * e * e + 2 * 2 * n * e * ff
    return float(layers * per_layer)


def skip(reason: str, as_json: bool) -> int:
    print(f"skipped: {reason}")
    if as_json:
        print(json.dumps([{"benchmark": "minilm", "figure": reason, "met": None}]))
    return 0


def torch_python(explicit: str | None) -> str | None:
    """An interpreter that imports torch and transformers, or None."""
    for py in [explicit] if explicit else [sys.executable, DEFAULT_TORCH_PY]:
        if py and Path(py).exists() and subprocess.run([py, "-c", "import torch, transformers"],
                                                       capture_output=True).returncode == 0:
            return py
    return None


def start_worker(py: str, model_dir: Path, ids, mask, dtype: str, tmp: Path):
    """Start the transformers worker; return (process, its reference hidden state, its banner line)."""
    np.savez(tmp / "in.npz", ids=ids, mask=mask)
    out = tmp / f"out-{dtype}.npy"
    proc = subprocess.Popen([py, "-c", WORKER, str(model_dir), str(tmp / "in.npz"), str(out), dtype],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    banner = proc.stdout.readline().strip()
    if not banner.startswith("ready"):
        proc.kill()
        raise RuntimeError(f"transformers worker failed to start ({banner!r})")
    return proc, np.load(out), banner


def timed_ms(fn) -> float:
    time.sleep(0.05)
    t0 = time.perf_counter()
    fn()
    return 1e3 * (time.perf_counter() - t0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="also print the rows as one JSON line at the end")
    parser.add_argument("--repeats", type=int, default=15, help="timed rounds")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first")
    parser.add_argument("--torch-python", help=f"interpreter with torch + transformers (default: this one or "
                                               f"{DEFAULT_TORCH_PY})")
    args, _ = parser.parse_known_args(argv)
    try:
        from attnlib.minilm import find_model_dir, load_minilm
    except ImportError:
        return skip("attnlib.minilm not available", args.json)
    try:
        model_dir = find_model_dir()
    except FileNotFoundError as exc:
        return skip(f"MiniLM model package not installed ({exc})"[:120], args.json)
    py = torch_python(args.torch_python)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; numpy {np.__version__}; "
          f"torch floor: {py or 'not available (pip install torch==2.13.0 transformers in a throwaway venv)'}")
    rows, agrees = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in ("float64", "float32"):
            model = load_minilm(dtype=getattr(np, dtype))
            batch = model.tokenize(SENTENCES)
            ids, mask = batch.ids, batch.mask
            b, t = ids.shape
            e, ff = model.embed_dim, model.weights["encoder.layer.0.intermediate.dense.weight"].shape[0]
            flops = forward_flops(b, t, model.num_layers, e, model.num_heads, ff)
            x = np.random.default_rng(0).standard_normal((b * t, e)).astype(dtype)
            w = np.random.default_rng(1).standard_normal((e, ff)).astype(dtype)
            worker = start_worker(py, model_dir, ids, mask, dtype, Path(tmp)) if py else None

            def ours(model=model, ids=ids, mask=mask):
                return model.forward(ids, mask)

            def torch_once(worker=worker):
                worker[0].stdin.write("go\n")
                worker[0].stdin.flush()
                return float(worker[0].stdout.readline())

            times = {"numpy": [], "torch": [], "matmul": []}
            for r in range(args.warmup + args.repeats):
                got = {"numpy": timed_ms(ours), "matmul": timed_ms(lambda x=x, w=w: x @ w)}
                if worker:
                    got["torch"] = torch_once()
                if r >= args.warmup:
                    for k, v in got.items():
                        times[k].append(v)
            med = {k: statistics.median(v) for k, v in times.items() if v}
            gflops = 2 * x.shape[0] * e * ff / med["matmul"] / 1e6
            bound_ms = flops / gflops / 1e6
            print(f"{dtype}: input {b}x{t} tokens, {flops / 1e9:.2f} GFLOP; numpy matmul {gflops:.1f} GFLOP/s "
                  f"-> matmul-bound estimate {bound_ms:.1f} ms")
            label = f"MiniLM forward {dtype} ({b}x{t} tokens)"
            if worker:
                worker[0].stdin.close()
                worker[0].wait()
                err = float(np.abs(ours().hidden_states[-1] - worker[1]).max())
                ok = err <= TOLERANCE[dtype]
                agrees &= ok
                print(f"  {worker[2]}; max |hidden - transformers| = {err:.1e} ({'ok' if ok else 'WRONG'})")
                rows.append({"benchmark": "minilm", "figure": label, "median_ms": round(med["numpy"], 1),
                             "min_ms": round(min(times["numpy"]), 1), "max_abs_err": err,
                             "floor": f"transformers eager ({med['torch']:.0f} ms)",
                             "ratio": med["numpy"] / med["torch"],
                             "ratio_min": min(times["numpy"]) / min(times["torch"]),
                             "goal": f"<= {GOAL}x", "met": ok and med["numpy"] / med["torch"] <= GOAL})
            rows.append({"benchmark": "minilm", "figure": label, "median_ms": round(med["numpy"], 1),
                         "min_ms": round(min(times["numpy"]), 1), "floor": f"matmul-bound ({bound_ms:.0f} ms)",
                         "ratio": med["numpy"] / bound_ms,
                         # the floor is transformers when it runs; else this estimate is the goal's floor
                         "goal": "-" if worker else f"<= {GOAL}x",
                         "met": None if worker else med["numpy"] / bound_ms <= GOAL})
    print(f"{'figure':40} {'floor':32} {'median ms':>9} {'min ms':>7} {'ratio':>6}")
    for r in rows:
        print(f"{r['figure']:40} {r['floor']:32} {r['median_ms']:9.1f} {r['min_ms']:7.1f} {r['ratio']:6.2f}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        print(json.dumps(rows))
    return 0 if agrees else 1


if __name__ == "__main__":
    sys.exit(main())
