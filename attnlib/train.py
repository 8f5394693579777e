"""A one-layer attention model trained with a hand-written backward pass (lesson 07).

Pure numpy. The task is associative recall: a sequence holds S (key, value) pairs and
one query key; the answer is the value stored with that key. Only attention can solve
it: the model must find the matching position by comparing the query with every key.

Model, for one batch (B sequences, L queries each, S context positions):

    Q = X_q W_q            (B, L, d_k)
    K = X_kv W_k           (B, S, d_k)
    V = X_kv W_v           (B, S, d_v)
    Z = scale(Q, K)        (B, L, S)   attention logits, see SCALINGS
    A = softmax(Z)         (B, L, S)
    O = A V                (B, L, d_v)
    Y = O W_o              (B, L, n_out) class logits
    loss = mean cross-entropy(Y, targets)

d_k is always read from the parameter arrays (``W_q.shape[1]``), never passed in.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._check import as_float_array, check_finite, positive_int, positive_scalar, real_scalar, rng_from
from .core import attention_entropy

__all__ = [
    "SCALINGS",
    "VARIANTS",
    "variant_settings",
    "RecallTask",
    "make_recall_task",
    "init_params",
    "forward",
    "loss_and_grads",
    "logit_grads",
    "Adam",
    "SGD",
    "train",
]

SCALINGS = ("none", "sqrt", "linear", "qknorm")
"""none: Z = Q Kᵀ.  sqrt: Z = Q Kᵀ/√d_k (Vaswani et al. 2017).  linear: Z = Q Kᵀ/d_k
(the muP choice, Yang et al. 2022).  qknorm: Z = g · Q̂ K̂ᵀ with unit-length rows Q̂, K̂
and a learned scalar gain g (Henry et al. 2020, "Query-Key Normalization")."""

VARIANTS = SCALINGS + ("none_init",)
"""What lesson 07's sweep trains: the four SCALINGS, plus the control ``none_init``: the
unscaled model (Z = Q Kᵀ) whose starting W_q and W_k are multiplied by d_k^(-1/4), so that
its starting logits equal those of ÷√d_k; everything else (learning rate included) as in
the unscaled model. See ``variant_settings``."""

_NORM_EPS = 1e-12  # inside the square root of a row norm, so a zero row cannot divide by 0


def variant_settings(variant, d_k) -> dict:
    """The ``train`` keywords of one of VARIANTS at head size d_k (lesson 07).

    Returns {"scaling": ..., "qk_init": ...}: ``none_init`` is scaling "none" with
    qk_init = d_k^(-1/4); every other variant is its own scaling with qk_init = 1.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}")
    d_k = positive_int(d_k, "d_k")
    if variant == "none_init":
        return {"scaling": "none", "qk_init": float(d_k) ** -0.25}
    return {"scaling": variant, "qk_init": 1.0}


def _check_scaling(scaling) -> str:
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}; got {scaling!r}")
    return scaling


# ---------------------------------------------------------------------------
# the task
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallTask:
    """Fixed random embeddings for an associative-recall task (lesson 07).

    key_emb : (n_keys, d_in), value_emb : (n_values, d_in); entries ~ N(0, 1), so each
    input vector has unit-variance components, like a LayerNorm-ed residual stream.
    """

    key_emb: np.ndarray
    value_emb: np.ndarray

    @property
    def d_in(self) -> int:
        return self.key_emb.shape[1]

    @property
    def n_values(self) -> int:
        return self.value_emb.shape[0]

    def sample(self, batch, n_pairs, rng, return_positions=False):
        """Draw a batch: x_q (B, 1, d_in), x_kv (B, S, d_in), targets (B, 1) ints.

        Each sequence has ``n_pairs`` = S distinct keys, each paired with a random value;
        a context vector is (key_emb + value_emb)/√2, the query is one of the keys' key_emb.
        With ``return_positions`` also returns positions (B,): where the answer sits.
        """
        b = positive_int(batch, "batch")
        s = positive_int(n_pairs, "n_pairs")
        n_keys = self.key_emb.shape[0]
        if s > n_keys:
            raise ValueError(f"n_pairs={s} needs at least that many distinct keys; the task has n_keys={n_keys}")
        gen = rng_from(rng)
        keys = np.argsort(gen.random((b, n_keys)), axis=1)[:, :s]  # S distinct keys per row
        values = gen.integers(0, self.n_values, size=(b, s))
        pick = gen.integers(0, s, size=b)
        x_kv = (self.key_emb[keys] + self.value_emb[values]) / np.sqrt(2.0)
        x_q = self.key_emb[keys[np.arange(b), pick]][:, None, :]
        targets = values[np.arange(b), pick][:, None]
        return (x_q, x_kv, targets, pick) if return_positions else (x_q, x_kv, targets)


def make_recall_task(n_keys, n_values, d_in, rng) -> RecallTask:
    """Random N(0, 1) key and value embeddings of width ``d_in`` (lesson 07)."""
    n_keys = positive_int(n_keys, "n_keys")
    n_values = positive_int(n_values, "n_values")
    d_in = positive_int(d_in, "d_in")
    gen = rng_from(rng)
    return RecallTask(gen.normal(size=(n_keys, d_in)), gen.normal(size=(n_values, d_in)))


# ---------------------------------------------------------------------------
# the model: parameters, forward, backward
# ---------------------------------------------------------------------------


def init_params(d_in, d_k, d_v, n_out, scaling, rng, init_scale=1.0, qk_gain=None) -> dict:
    """Weights W ~ N(0, init_scale²/fan_in) (lesson 07).

    Returns a dict: W_q (d_in, d_k), W_k (d_in, d_k), W_v (d_in, d_v), W_o (d_v, n_out),
    and for ``scaling="qknorm"`` also gain () (default √d_k: the same logit spread at
    init as the ÷√d_k model). With unit-variance inputs and init_scale=1, every component
    of q and k has variance ≈ 1, the regime the √d_k argument assumes.
    The four matrices are drawn in the same order for every scaling, so one seed gives
    the same starting weights to all four models.
    """
    d_in, d_k, d_v, n_out = (positive_int(v, n) for v, n in ((d_in, "d_in"), (d_k, "d_k"), (d_v, "d_v"),
                                                             (n_out, "n_out")))
    scaling = _check_scaling(scaling)
    init_scale = positive_scalar(init_scale, "init_scale")
    gen = rng_from(rng)
    params = {
        "W_q": gen.normal(0.0, init_scale / np.sqrt(d_in), size=(d_in, d_k)),
        "W_k": gen.normal(0.0, init_scale / np.sqrt(d_in), size=(d_in, d_k)),
        "W_v": gen.normal(0.0, init_scale / np.sqrt(d_in), size=(d_in, d_v)),
        "W_o": gen.normal(0.0, 1.0 / np.sqrt(d_v), size=(d_v, n_out)),
    }
    if scaling == "qknorm":
        g = np.sqrt(d_k) if qk_gain is None else positive_scalar(qk_gain, "qk_gain")
        params["gain"] = np.array(float(g))
    elif qk_gain is not None:
        raise ValueError(f"qk_gain only applies to scaling='qknorm'; got scaling={scaling!r}")
    return params


def _check_params(params, scaling) -> dict:
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of arrays (from init_params); got {type(params).__name__}")
    need = ["W_q", "W_k", "W_v", "W_o"] + (["gain"] if scaling == "qknorm" else [])
    missing = [n for n in need if n not in params]
    if missing:
        raise ValueError(f"params is missing {missing} for scaling={scaling!r}")
    out = {}
    for n in need:
        arr = as_float_array(params[n], f"params[{n!r}]")
        check_finite(arr, f"params[{n!r}]")
        out[n] = arr
    wq, wk, wv, wo = out["W_q"], out["W_k"], out["W_v"], out["W_o"]
    if wq.ndim != 2 or wq.shape != wk.shape:
        raise ValueError(f"W_q and W_k must both be (d_in, d_k); got {wq.shape} and {wk.shape}")
    if wv.ndim != 2 or wv.shape[0] != wq.shape[0]:
        raise ValueError(f"W_v must be (d_in, d_v) with d_in={wq.shape[0]}; got {wv.shape}")
    if wo.ndim != 2 or wo.shape[0] != wv.shape[1]:
        raise ValueError(f"W_o must be (d_v, n_out) with d_v={wv.shape[1]}; got {wo.shape}")
    if scaling == "qknorm" and out["gain"].shape != ():
        raise ValueError(f"params['gain'] must be a scalar array of shape (); got {out['gain'].shape}")
    return out


def _check_batch(x_q, x_kv, d_in):
    x_q = as_float_array(x_q, "x_q")
    x_kv = as_float_array(x_kv, "x_kv")
    if x_q.ndim != 3 or x_q.shape[-1] != d_in:
        raise ValueError(f"x_q must have shape (B, L, d_in) with d_in={d_in}; got {x_q.shape}")
    if x_kv.ndim != 3 or x_kv.shape[-1] != d_in or x_kv.shape[0] != x_q.shape[0]:
        raise ValueError(f"x_kv must have shape (B, S, d_in) with B={x_q.shape[0]}, d_in={d_in}; got {x_kv.shape}")
    if x_kv.shape[1] == 0 or x_q.shape[1] == 0:
        raise ValueError("x_q and x_kv need at least one position each")
    check_finite(x_q, "x_q")
    check_finite(x_kv, "x_kv")
    return x_q, x_kv


def _row_normalise(x: np.ndarray):
    """x / ‖x‖ along the last axis; returns (x̂, ‖x‖) with ‖x‖ = √(Σx² + ε), shape (..., 1)."""
    norm = np.sqrt((x * x).sum(axis=-1, keepdims=True) + _NORM_EPS)
    return x / norm, norm


def _row_normalise_backward(dxh: np.ndarray, xh: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """Gradient through x̂ = x/n, n = √(Σx² + ε): dx = dx̂/n − x (x·dx̂)/n³ (exact, ε included)."""
    x = xh * norm
    return dxh / norm - x * (dxh * x).sum(axis=-1, keepdims=True) / norm**3


def forward(params, x_q, x_kv, scaling) -> tuple[np.ndarray, dict]:
    """Class logits Y (B, L, n_out) and a cache for ``loss_and_grads`` (lesson 07).

    x_q : (B, L, d_in) query inputs.   x_kv : (B, S, d_in) context inputs.
    The cache holds the logits ``Z`` (B, L, S) after scaling and the weights ``A``.
    """
    scaling = _check_scaling(scaling)
    p = _check_params(params, scaling)
    x_q, x_kv = _check_batch(x_q, x_kv, p["W_q"].shape[0])
    q, k, v = x_q @ p["W_q"], x_kv @ p["W_k"], x_kv @ p["W_v"]
    d_k = q.shape[-1]
    cache = {"p": p, "x_q": x_q, "x_kv": x_kv, "q": q, "k": k, "v": v}
    if scaling == "qknorm":
        qh, qn = _row_normalise(q)
        kh, kn = _row_normalise(k)
        cos = qh @ np.swapaxes(kh, -1, -2)
        cache.update(qh=qh, qn=qn, kh=kh, kn=kn, cos=cos)
        z = p["gain"] * cos
    else:
        c = {"none": 1.0, "sqrt": 1.0 / np.sqrt(d_k), "linear": 1.0 / d_k}[scaling]
        cache["c"] = c
        z = c * (q @ np.swapaxes(k, -1, -2))
    z_shift = z - z.max(axis=-1, keepdims=True)
    a = np.exp(z_shift)
    a /= a.sum(axis=-1, keepdims=True)
    o = a @ v
    cache.update(Z=z, A=a, O=o, scaling=scaling)
    return o @ p["W_o"], cache


def _cross_entropy(y: np.ndarray, targets: np.ndarray):
    """Mean cross-entropy of logits y (B, L, n) against int targets (B, L); returns (loss, dy)."""
    y_shift = y - y.max(axis=-1, keepdims=True)
    log_p = y_shift - np.log(np.exp(y_shift).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0]
    n = targets.size
    dy = np.exp(log_p)
    np.put_along_axis(dy, targets[..., None], np.take_along_axis(dy, targets[..., None], axis=-1) - 1.0, axis=-1)
    return float(-picked.mean()), dy / n


def _check_targets(targets, shape, n_out) -> np.ndarray:
    t = np.asarray(targets)
    if t.dtype.kind not in "iu":
        raise TypeError(f"targets must be an integer array of class indices; got dtype {t.dtype}")
    if t.shape != shape:
        raise ValueError(f"targets must have shape (B, L) = {shape}; got {t.shape}")
    if t.size and (t.min() < 0 or t.max() >= n_out):
        raise ValueError(f"targets must lie in 0..{n_out - 1} (n_out = W_o.shape[1]); got range {t.min()}..{t.max()}")
    return t


def _flat(x: np.ndarray) -> np.ndarray:
    """(B, T, n) -> (B·T, n), so a sum over batch and positions becomes one matmul."""
    return x.reshape(-1, x.shape[-1])


def _backward_to_logits(params, x_q, x_kv, targets, scaling):
    """Forward, loss, and the backward pass down to the logits Z (shared by the two below)."""
    y, c = forward(params, x_q, x_kv, scaling)
    t = _check_targets(targets, y.shape[:-1], y.shape[-1])
    loss, dy = _cross_entropy(y, t)
    a, v = c["A"], c["v"]
    do = dy @ c["p"]["W_o"].T                                 # (B, L, d_v)
    da = do @ np.swapaxes(v, -1, -2)                          # (B, L, S)
    dv = np.swapaxes(a, -1, -2) @ do                          # (B, S, d_v)
    dz = a * (da - (a * da).sum(axis=-1, keepdims=True))      # softmax backward
    return y, c, t, loss, dy, dv, dz


def logit_grads(params, x_q, x_kv, targets, scaling) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of the mean loss with respect to the logits Z and to the raw scores q·k (lesson 07).

    x_q : (B, L, d_in), x_kv : (B, S, d_in), targets : (B, L).  Returns (dZ, dS), both
    (B, L, S): dZ = ∂loss/∂Z and dS = ∂loss/∂(q·k) = c·dZ (c = 1, 1/√d_k or 1/d_k).
    Not defined for QK-norm, whose logits are not a multiple of q·k.
    """
    if scaling == "qknorm":
        raise ValueError("scaling='qknorm' has no single factor c between q·k and the logits")
    _, cache, _, _, _, _, dz = _backward_to_logits(params, x_q, x_kv, targets, scaling)
    return dz, cache["c"] * dz


def loss_and_grads(params, x_q, x_kv, targets, scaling) -> tuple[float, dict, dict]:
    """Loss, gradients of every parameter, and attention statistics (lesson 07).

    x_q : (B, L, d_in), x_kv : (B, S, d_in), targets : (B, L) ints in 0..n_out-1.
    Returns (loss, grads, stats): grads has the keys and shapes of the parameters used by
    ``scaling``; stats has ``max_logit`` (largest |Z| fed to softmax), ``entropy`` (mean
    attention entropy in nats), ``accuracy`` (fraction of argmax Y equal to targets).
    """
    y, c, t, loss, dy, dv, dz = _backward_to_logits(params, x_q, x_kv, targets, scaling)
    p, a, o = c["p"], c["A"], c["O"]
    grads = {"W_o": _flat(o).T @ _flat(dy)}
    if scaling == "qknorm":
        grads["gain"] = np.array((dz * c["cos"]).sum())
        dqh = p["gain"] * (dz @ c["kh"])
        dkh = p["gain"] * (np.swapaxes(dz, -1, -2) @ c["qh"])
        dq = _row_normalise_backward(dqh, c["qh"], c["qn"])
        dk = _row_normalise_backward(dkh, c["kh"], c["kn"])
    else:
        dq = c["c"] * (dz @ c["k"])
        dk = c["c"] * (np.swapaxes(dz, -1, -2) @ c["q"])
    grads["W_q"] = _flat(c["x_q"]).T @ _flat(dq)
    grads["W_k"] = _flat(c["x_kv"]).T @ _flat(dk)
    grads["W_v"] = _flat(c["x_kv"]).T @ _flat(dv)
    stats = {
        "max_logit": float(np.abs(c["Z"]).max()),
        "entropy": float(attention_entropy(a).mean()),
        "accuracy": float((y.argmax(axis=-1) == t).mean()),
    }
    return loss, grads, stats


# ---------------------------------------------------------------------------
# optimisers
# ---------------------------------------------------------------------------


def _check_lr_scale(lr_scale) -> dict:
    if lr_scale is None:
        return {}
    if not isinstance(lr_scale, dict):
        raise TypeError(f"lr_scale must be a dict {{parameter name: factor}} or None; got {type(lr_scale).__name__}")
    return {name: positive_scalar(f, f"lr_scale[{name!r}]") for name, f in lr_scale.items()}


class SGD:
    """Plain gradient descent: θ ← θ − lr·f·g, f = lr_scale.get(name, 1) (lesson 07)."""

    def __init__(self, lr, lr_scale=None):
        self.lr = positive_scalar(lr, "lr")
        self.lr_scale = _check_lr_scale(lr_scale)

    def step(self, params: dict, grads: dict) -> None:
        """Update ``params`` in place."""
        for name, g in grads.items():
            params[name] = params[name] - self.lr * self.lr_scale.get(name, 1.0) * g


class Adam:
    """Adam (Kingma & Ba 2015) with bias correction; updates params in place (lesson 07).

    lr_scale : optional {parameter name: factor}; that parameter's learning rate is lr·factor.
    """

    def __init__(self, lr, beta1=0.9, beta2=0.999, eps=1e-8, lr_scale=None):
        self.lr = positive_scalar(lr, "lr")
        self.lr_scale = _check_lr_scale(lr_scale)
        for name, b in (("beta1", beta1), ("beta2", beta2)):
            if not 0 <= real_scalar(b, name) < 1:
                raise ValueError(f"{name} must lie in [0, 1); got {b}")
        self.beta1, self.beta2 = float(beta1), float(beta2)
        self.eps = positive_scalar(eps, "eps")
        self.m, self.v, self.t = {}, {}, 0

    def step(self, params: dict, grads: dict) -> None:
        """Update ``params`` in place."""
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        for name, g in grads.items():
            m = self.m[name] = b1 * self.m.get(name, 0.0) + (1 - b1) * g
            v = self.v[name] = b2 * self.v.get(name, 0.0) + (1 - b2) * g * g
            m_hat = m / (1 - b1**self.t)
            v_hat = v / (1 - b2**self.t)
            lr = self.lr * self.lr_scale.get(name, 1.0)
            params[name] = params[name] - lr * m_hat / (np.sqrt(v_hat) + self.eps)


# ---------------------------------------------------------------------------
# a training run
# ---------------------------------------------------------------------------


def train(task, scaling, d_k, lr, steps, rng, batch=32, n_pairs=16, d_v=None, optimizer="adam",
          init_scale=1.0, qk_gain=None, qk_init=1.0, qk_lr=1.0) -> dict:
    """Train one model on ``task`` and record curves (lesson 07).

    rng : Generator or int seed; it draws the initial weights first, then one fresh batch
        per step, so the same seed gives every scaling the same weights and data.
    d_k : the head size to build (the model itself reads d_k from W_q afterwards).
    qk_init : multiplies the starting W_q and W_k (after they are drawn, so the same seed
        gives the same directions).  qk_lr : multiplies the learning rate of W_q and W_k only.
        With Adam, scaling "sqrt" equals scaling "none" with qk_init = qk_lr = d_k^(-1/4)
        (up to Adam's eps): lesson 07 checks it.
    Returns a dict of float arrays of shape (steps,): loss, max_logit, entropy, accuracy,
    each measured on the step's batch before the update; plus ``params`` and ``diverged_at``:
    -1, or the first step whose update made a weight infinite or NaN, or whose logits overflowed
    the softmax (training stops there and the later entries of every curve are NaN).
    """
    if not isinstance(task, RecallTask):
        raise TypeError(f"task must be a RecallTask (from make_recall_task); got {type(task).__name__}")
    steps = positive_int(steps, "steps")
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd'; got {optimizer!r}")
    if d_v is not None and not isinstance(d_v, numbers.Integral):
        raise TypeError(f"d_v must be an integer or None; got {type(d_v).__name__}")
    gen = rng_from(rng)
    qk_init = positive_scalar(qk_init, "qk_init")
    qk_lr = positive_scalar(qk_lr, "qk_lr")
    params = init_params(task.d_in, d_k, d_v or task.d_in, task.n_values, scaling, gen, init_scale, qk_gain)
    params["W_q"], params["W_k"] = qk_init * params["W_q"], qk_init * params["W_k"]
    lr_scale = {"W_q": qk_lr, "W_k": qk_lr}
    opt = Adam(lr, lr_scale=lr_scale) if optimizer == "adam" else SGD(lr, lr_scale=lr_scale)
    keys = ("loss", "max_logit", "entropy", "accuracy")
    curves = {k: np.full(steps, np.nan) for k in keys}
    diverged_at = -1
    for i in range(steps):
        x_q, x_kv, t = task.sample(batch, n_pairs, gen)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                loss, grads, stats = loss_and_grads(params, x_q, x_kv, t, scaling)
        except ValueError:  # finite weights, but logits so large that the softmax overflowed
            if i == 0:
                raise
            diverged_at = i
            break
        curves["loss"][i] = loss
        for k in keys[1:]:
            curves[k][i] = stats[k]
        with np.errstate(over="ignore", invalid="ignore"):
            opt.step(params, grads)
        if not all(np.isfinite(w).all() for w in params.values()):
            diverged_at = i
            break
    curves["params"] = params
    curves["diverged_at"] = diverged_at
    return curves


CURVE_KEYS = ("loss", "max_logit", "entropy", "accuracy")
"""The quantities ``train`` records at every step, in the order ``sweep`` stacks them."""


def window_means(x, window) -> np.ndarray:
    """Means of consecutive blocks of ``window`` steps along the last axis (lesson 07).

    x : (..., T) with T a multiple of ``window``.  Returns (..., T // window).
    """
    arr = as_float_array(x, "x")
    w = positive_int(window, "window")
    if arr.ndim == 0 or arr.shape[-1] % w:
        raise ValueError(f"the last axis of x (length {arr.shape[-1:]}) must be a multiple of window={w}")
    return arr.reshape(*arr.shape[:-1], arr.shape[-1] // w, w).mean(axis=-1)


def sweep(task, variants, d_ks, lrs, seeds, steps, window=1, **train_kwargs) -> dict:
    """Train every (variant, d_k, lr, seed) combination with the same seeds (lesson 07).

    variants : names from VARIANTS (the four SCALINGS and the control ``none_init``).
    Returns a dict with
      curves : (n_variants, n_d_k, n_lr, n_seeds, 4, steps // window) float64, the
               CURVE_KEYS averaged over blocks of ``window`` steps;
      first  : (n_variants, n_d_k, n_lr, n_seeds, 4), the same quantities at step 0 (init).
    """
    variants = list(variants)
    for v in variants:
        variant_settings(v, 1)  # a clear error for an unknown name before any training
    shape = (len(variants), len(d_ks), len(lrs), len(seeds))
    steps = positive_int(steps, "steps")
    curves = np.empty((*shape, len(CURVE_KEYS), steps // positive_int(window, "window")))
    first = np.empty((*shape, len(CURVE_KEYS)))
    for idx in np.ndindex(shape):
        i, j, k, s = idx
        run = train(task, d_k=d_ks[j], lr=lrs[k], steps=steps, rng=seeds[s], **variant_settings(variants[i], d_ks[j]),
                    **train_kwargs)
        stacked = np.stack([run[key] for key in CURVE_KEYS])
        curves[idx] = window_means(stacked, window)
        first[idx] = stacked[:, 0]
    return {"curves": curves, "first": first}
