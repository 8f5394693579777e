"""Time attnlib.scaled_dot_product_attention against its floor, PyTorch's CPU SDPA.

Shape: float32, B=4 heads H=8, T=512 queries and keys, d=64 (issue 2 and issue 7).
Goal: attnlib's median time at most 2.0x its like-for-like torch floor, measured in the same run:
- ``need_weights=False`` (output only) against torch's fused CPU SDPA;
- with the weights returned (as the lessons call it) against torch's eager matmul -> softmax -> matmul,
  which forms the same (B, H, T, T) weights array (issue 14).
Every run prints the CPU model and its vector extensions: the figures move with the machine.

    python benchmarks/bench_sdpa.py              # prints machine facts and a table
    python benchmarks/bench_sdpa.py --json       # also prints the rows as one JSON line (for run_all.py)

attnlib is timed twice: as the course calls it (returning the (B, H, T, T) weights too) and
with ``need_weights=False`` (output only, like torch's SDPA, which never forms the weights).
Each is compared with the torch path that does the same work; both rows carry the goal.

Torch is optional (never a dependency of the project). Without it the script still times
attnlib and the naive numpy version and says that the torch ratio is missing.

The candidates are timed in interleaved rounds (each round runs every candidate once, in a
rotating order), so a burst of load from other processes on a shared machine hits all of
them alike, with a short pause before each timed call so that one library's spinning
worker threads do not slow the next candidate. Median and min over the rounds are both reported. Timing never fails the
script; a wrong answer (attnlib disagreeing with the float64 reference) exits with 1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

import attnlib

SHAPE = (4, 8, 512, 64)  # (B, H, T, d)
GOAL = 2.0  # attnlib / torch, median time
SEED = 0
# float32 attention against a float64 reference: the logits carry ~1e-7 relative error
# through a 64-term dot product and a 512-term softmax sum; 1e-5 absolute is ample.
ATOL = 1e-5
ATTNLIB = "attnlib (weights too)"
ATTNLIB_NO_WEIGHTS = "attnlib need_weights=False"
TORCH_SDPA = "torch SDPA (fused, no weights)"
TORCH_EAGER = "torch eager matmul-softmax-matmul (weights too)"
# SIMD flags worth naming (x86 /proc/cpuinfo names; aarch64 ones too): the kernels numpy's BLAS and torch pick
VECTOR_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
                "avx512_fp16", "amx_tile", "amx_bf16", "asimd", "sve", "sve2")


def naive_sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Textbook attention in numpy: q kᵀ/√d, softmax with max-subtraction, then @ v.

    q : (..., T, d), k : (..., T, d), v : (..., T, d). Returns (..., T, d).
    """
    logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]).astype(q.dtype)
    logits = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(logits)
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v


def _torch():
    """Return the torch module, or None when it is not importable."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def _one_blas_thread():
    """threadpoolctl's ``threadpool_limits`` (a context manager), or None without it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits


def blas_summary() -> str:
    """One line naming numpy's BLAS, its version, kernel and thread count."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        threadpool_info = None
    if threadpool_info is not None:
        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            parts = [
                f"{i.get('internal_api')} {i.get('version')} (kernel {i.get('architecture')}, "
                f"{i.get('num_threads')} threads)"
                for i in infos
            ]
            return "; ".join(parts) + " [threadpoolctl]"
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')} [np.show_config; threads unknown]"
    except Exception as err:  # older numpy or an unusual build: say so rather than fail
        return f"unknown ({type(err).__name__}: {err})"


def cpu_summary() -> tuple[str, str]:
    """(CPU model, its vector extensions) from /proc/cpuinfo, with numpy's own SIMD dispatch targets."""
    generic = (platform.processor(), platform.machine(), "")
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8", errors="replace"):
            key, _, value = line.partition(":")
            key = key.strip()
            if key in ("model name", "Hardware", "CPU part") and model in generic:
                model = value.strip()
            elif key in ("flags", "Features") and not flags:
                flags = set(value.split())
    except OSError:
        pass
    vector = " ".join(f for f in VECTOR_FLAGS if f in flags) or "(unknown: no /proc/cpuinfo flags)"
    try:
        simd = np.show_config(mode="dicts")["SIMD Extensions"]
        found = simd.get("found") or []
        vector += f"; numpy dispatches to {' '.join(found) if found else 'baseline only'}"
    except Exception:  # older numpy: no SIMD section
        pass
    return model, vector


def machine_facts(torch) -> list[tuple[str, str]]:
    """Facts that decide these timings, as (name, value) pairs."""
    facts = [
        ("python", platform.python_version()),
        ("numpy", np.__version__),
        ("BLAS", blas_summary()),
        ("cpu", f"{platform.machine()}, os.cpu_count()={os.cpu_count()}, usable={len(os.sched_getaffinity(0))}"),
        ("cpu model", cpu_summary()[0]),
        ("vector extensions", cpu_summary()[1]),
    ]
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        facts.append((var, os.environ.get(var, "(unset)")))
    if torch is not None:
        facts.append(("torch", f"{torch.__version__}, {torch.get_num_threads()} intra-op threads"))
    else:
        facts.append(("torch", "not importable: no ratio to torch (see benchmarks/README.md)"))
    facts.append(("load average", " ".join(f"{x:.2f}" for x in os.getloadavg())))
    return facts


def time_interleaved(candidates: dict, repeats: int, warmup: int, pause: float) -> dict[str, list[float]]:
    """Run every candidate once per round, rotating the order; return seconds per candidate.

    Sleeps ``pause`` seconds before each timed call: OpenBLAS's worker threads keep spinning
    for up to ~0.1 s after a matmul (and OpenMP's after torch's call), and a spinning pool
    left behind by one candidate would steal a core from the next one.
    """
    names = list(candidates)
    for _ in range(warmup):
        for name in names:
            candidates[name]()
    times = {name: [] for name in names}
    for r in range(repeats):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            time.sleep(pause)
            t0 = time.perf_counter()
            candidates[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def run(repeats: int = 15, warmup: int = 2, pause: float = 0.25) -> tuple[list[dict], list[tuple[str, str]], bool]:
    """Measure; return (rows, machine facts, whether every answer agreed with the reference)."""
    torch = _torch()
    rng = np.random.default_rng(SEED)
    q, k, v = (rng.standard_normal(SHAPE).astype(np.float32) for _ in range(3))

    reference = naive_sdpa(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    sdpa_np = attnlib.scaled_dot_product_attention
    attnlib_calls = {  # name: keyword arguments
        ATTNLIB: {},
        ATTNLIB_NO_WEIGHTS: {"need_weights": False},
    }
    candidates = {name: (lambda kw=kw: sdpa_np(q, k, v, **kw)) for name, kw in attnlib_calls.items()}
    candidates["naive numpy"] = lambda: naive_sdpa(q, k, v)
    answers = {name: sdpa_np(q, k, v, **kw)[0] for name, kw in attnlib_calls.items()}
    answers["naive numpy"] = naive_sdpa(q, k, v)
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        scale = 1.0 / float(np.sqrt(SHAPE[-1]))

        def torch_call():
            with torch.no_grad():
                return sdpa(tq, tk, tv)

        def torch_eager():  # the same work as attnlib with weights: forms and returns the (B, H, T, T) weights
            with torch.no_grad():
                weights = torch.softmax((tq @ tk.transpose(-1, -2)) * scale, dim=-1)
                return weights @ tv, weights

        answers[TORCH_SDPA] = torch_call().numpy()
        answers[TORCH_EAGER] = torch_eager()[0].numpy()
        candidates[TORCH_SDPA] = torch_call
        candidates[TORCH_EAGER] = torch_eager

    limiter = _one_blas_thread()
    if limiter is not None:  # diagnostic: how much of attnlib's time is lost to BLAS threads fighting for cores

        def one_thread(kw):
            with limiter(limits=1, user_api="blas"):
                return sdpa_np(q, k, v, **kw)[0]

        for name, kw in attnlib_calls.items():
            candidates[f"{name}, BLAS on 1 thread"] = lambda kw=kw: one_thread(kw)
            answers[f"{name}, BLAS on 1 thread"] = one_thread(kw)

    errors = {name: float(np.abs(out - reference).max()) for name, out in answers.items()}
    agrees = all(err <= ATOL for err in errors.values())
    times = time_interleaved(candidates, repeats, warmup, pause)
    med = {name: float(np.median(t)) for name, t in times.items()}
    low = {name: float(np.min(t)) for name, t in times.items()}

    def floor_of(name):  # the torch path doing the same work as ``name``
        if torch is None or name in (TORCH_SDPA, TORCH_EAGER):
            return None
        return TORCH_SDPA if name.startswith(ATTNLIB_NO_WEIGHTS) else TORCH_EAGER

    rows = []
    shape = "x".join(map(str, SHAPE))
    for name in candidates:
        floor = floor_of(name)
        row = {
            "benchmark": "sdpa",
            "figure": f"{name}: SDPA f32 {shape}",
            "median_ms": med[name] * 1e3,
            "min_ms": low[name] * 1e3,
            "floor": floor or ("(torch missing)" if torch is None else "-"),
            "ratio": med[name] / med[floor] if floor else None,
            "ratio_min": low[name] / low[floor] if floor else None,
            "goal": f"<= {GOAL}x" if name in attnlib_calls else "",
            "met": None,
            "max_abs_err": errors[name],
        }
        if name in attnlib_calls and row["ratio"] is not None:
            row["met"] = row["ratio"] <= GOAL
        rows.append(row)
    return rows, machine_facts(torch), agrees


def _fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def print_table(rows: list[dict]) -> None:
    """Print rows as an aligned text table."""
    head = ["figure", "median ms", "min ms", "floor", "ratio (median)", "ratio (min)", "goal", "met", "max |err|"]
    body = [
        [
            r["figure"],
            _fmt(r["median_ms"], ".1f"),
            _fmt(r["min_ms"], ".1f"),
            "eager" if r["floor"] == TORCH_EAGER else "SDPA" if r["floor"] == TORCH_SDPA else "-",
            _fmt(r["ratio"], ".2f") + ("x" if r["ratio"] is not None else ""),
            _fmt(r["ratio_min"], ".2f") + ("x" if r["ratio_min"] is not None else ""),
            r["goal"] or "-",
            {True: "yes", False: "NO", None: "-"}[r["met"]],
            _fmt(r["max_abs_err"], ".1e"),
        ]
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in [head, *body]) for i in range(len(head))]
    for i, line in enumerate([head, *body]):
        pairs = enumerate(zip(line, widths, strict=True))
        cells = [str(c).ljust(w) if j == 0 else str(c).rjust(w) for j, (c, w) in pairs]
        print("  ".join(cells))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="timed rounds (default 15)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first (default 2)")
    parser.add_argument("--pause", type=float, default=0.25, help="seconds idle before each timed call (0.25)")
    parser.add_argument("--json", action="store_true", help="also print the rows as one JSON line at the end")
    args = parser.parse_args(argv)

    rows, facts, agrees = run(args.repeats, args.warmup, args.pause)
    print(f"SDPA, float32, (B, H, T, d) = {SHAPE}: {args.repeats} rounds, {args.warmup} warm-up, {args.pause} s pauses")
    width = max(len(name) for name, _ in facts)
    for name, value in facts:
        print(f"  {name.ljust(width)} : {value}")
    print()
    print_table(rows)
    print()
    print(f"ratio = time / its floor's time in the same run; goal: attnlib <= {GOAL}x the floor (median).")
    print(f"'{ATTNLIB}' also returns the (B, H, T, T) attention weights (32 MiB here): its floor is torch's")
    print(f"eager matmul -> softmax -> matmul, which forms them too. '{ATTNLIB_NO_WEIGHTS}' returns the output")
    print("only: its floor is torch's fused SDPA, which never forms them.")
    print(f"max |err| = largest difference from a float64 reference (tolerance {ATOL:g}).")
    if _one_blas_thread() is not None:
        print("'BLAS on 1 thread' is a diagnostic (threadpoolctl limit inside this script only): when it beats")
        print("plain attnlib, other processes are contending for the cores and the median ratio is inflated.")
    if not agrees:
        print("WRONG ANSWER: a candidate disagrees with the float64 reference beyond the tolerance.")
    if args.json:
        print(json.dumps(rows))
    return 0 if agrees else 1


if __name__ == "__main__":
    sys.exit(main())
