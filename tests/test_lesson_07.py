"""Lesson 07: the hand-written backward pass, the optimisers, the sweep file and the slider."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from notebook_calls import self_checks

from attnlib import scaled_dot_product_attention
from attnlib.train import (
    CURVE_KEYS,
    SCALINGS,
    SGD,
    VARIANTS,
    Adam,
    forward,
    init_params,
    logit_grads,
    loss_and_grads,
    make_recall_task,
    sweep,
    train,
    variant_settings,
    window_means,
)

matplotlib.use("Agg")

SWEEP_FILE = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "training_sweep.npz"


def small_batch(seed=1, batch=3, n_pairs=4, n_queries=2):
    """A batch with L = n_queries queries per sequence, d_in = 6."""
    task = make_recall_task(8, 5, 6, 0)
    gen = np.random.default_rng(seed)
    x_q, x_kv, t = task.sample(batch, n_pairs, gen)
    x_q2, _, _ = task.sample(batch, n_pairs, gen)
    x_q = np.concatenate([x_q, x_q2], axis=1)[:, :n_queries]
    t = gen.integers(0, 5, size=(batch, n_queries))
    return x_q, x_kv, t


def numeric_grad(params, name, f, h=1e-6):
    """Central finite differences of f(params) with respect to params[name]."""
    out = np.zeros_like(params[name])
    for idx in np.ndindex(params[name].shape):
        plus = {k: v.copy() for k, v in params.items()}
        minus = {k: v.copy() for k, v in params.items()}
        plus[name][idx] += h
        minus[name][idx] -= h
        out[idx] = (f(plus) - f(minus)) / (2 * h)
    return out


# ---------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("scaling", SCALINGS)
@pytest.mark.parametrize("init_scale", [0.5, 2.0])
def test_every_gradient_matches_central_differences(scaling, init_scale):
    # d_in = 6, d_k = 7, d_v = 5, n_out = 5: every width different, so a mixed-up axis fails.
    x_q, x_kv, t = small_batch()
    params = init_params(6, 7, 5, 5, scaling, 2, init_scale=init_scale)
    loss, grads, _ = loss_and_grads(params, x_q, x_kv, t, scaling)
    assert sorted(grads) == sorted(params)

    def f(p):
        return loss_and_grads(p, x_q, x_kv, t, scaling)[0]

    for name in params:
        assert grads[name].shape == params[name].shape
        num = numeric_grad(params, name, f)
        rel = np.abs(num - grads[name]).max() / np.abs(num).max()
        assert rel < 1e-6, f"{scaling} {name}: relative error {rel:.2e}"


def test_qknorm_gradient_with_a_large_gain_and_a_short_query():
    x_q, x_kv, t = small_batch(seed=5, n_queries=1)
    x_q = 1e-3 * x_q  # a short query vector: normalisation must still differentiate exactly
    params = init_params(6, 3, 4, 5, "qknorm", 3, qk_gain=12.0)
    _, grads, _ = loss_and_grads(params, x_q, x_kv, t, "qknorm")
    num = numeric_grad(params, "W_q", lambda p: loss_and_grads(p, x_q, x_kv, t, "qknorm")[0], h=1e-7)
    assert np.abs(num - grads["W_q"]).max() / np.abs(num).max() < 1e-6


# ---------------------------------------------------------------------------
# forward: the same numbers as attnlib's reference attention, d_k from the arrays
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("scaling, scale_of", [
    ("none", lambda d_k: 1.0),
    ("sqrt", lambda d_k: 1.0 / np.sqrt(d_k)),
    ("linear", lambda d_k: 1.0 / d_k),
])
def test_forward_matches_scaled_dot_product_attention(scaling, scale_of):
    x_q, x_kv, _ = small_batch()
    p = init_params(6, 7, 5, 5, scaling, 4)
    y, cache = forward(p, x_q, x_kv, scaling)
    q, k, v = x_q @ p["W_q"], x_kv @ p["W_k"], x_kv @ p["W_v"]
    out, weights = scaled_dot_product_attention(q, k, v, scale=scale_of(7))
    np.testing.assert_allclose(cache["A"], weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(y, out @ p["W_o"], rtol=1e-12, atol=1e-14)


def test_qknorm_forward_is_gain_times_cosine():
    x_q, x_kv, _ = small_batch()
    p = init_params(6, 7, 5, 5, "qknorm", 4, qk_gain=3.0)
    _, cache = forward(p, x_q, x_kv, "qknorm")
    q, k = x_q @ p["W_q"], x_kv @ p["W_k"]
    cos = (q @ np.swapaxes(k, -1, -2)) / (np.linalg.norm(q, axis=-1)[..., :, None]
                                          * np.linalg.norm(k, axis=-1)[..., None, :])
    np.testing.assert_allclose(cache["Z"], 3.0 * cos, rtol=1e-10)


@settings(max_examples=40, deadline=None)
@given(gain=st.floats(0.1, 50.0), scale=st.floats(1e-3, 1e3), seed=st.integers(0, 2**16))
def test_qknorm_logits_never_exceed_the_gain(gain, scale, seed):
    x_q, x_kv, _ = small_batch(seed=seed)
    p = init_params(6, 7, 5, 5, "qknorm", seed, init_scale=scale, qk_gain=gain)
    _, cache = forward(p, x_q, x_kv, "qknorm")
    assert np.abs(cache["Z"]).max() <= gain * (1 + 1e-12)
    np.testing.assert_allclose(cache["A"].sum(-1), 1.0, rtol=1e-12)


def test_unscaled_logit_spread_grows_like_sqrt_dk_at_init():
    # unit-variance q and k components: std(q·k) ≈ √d_k unscaled, ≈ 1 after ÷√d_k
    task = make_recall_task(32, 16, 32, 0)
    x_q, x_kv, _ = task.sample(256, 8, 1)
    for d_k in (16, 256):
        stds = {}
        for scaling in ("none", "sqrt"):
            _, cache = forward(init_params(32, d_k, 32, 16, scaling, 7), x_q, x_kv, scaling)
            stds[scaling] = cache["Z"].std()
        assert stds["none"] / stds["sqrt"] == pytest.approx(np.sqrt(d_k), rel=1e-9)
        assert 0.7 < stds["sqrt"] < 1.4


# ---------------------------------------------------------------------------
# optimisers and training
# ---------------------------------------------------------------------------


def test_sgd_step_is_exact():
    p = {"w": np.array([1.0, -2.0])}
    SGD(0.5).step(p, {"w": np.array([2.0, 4.0])})
    np.testing.assert_allclose(p["w"], [0.0, -4.0])


def test_first_adam_step_moves_each_weight_by_lr_against_its_gradient_sign():
    p = {"w": np.array([1.0, 1.0, 1.0])}
    Adam(0.1).step(p, {"w": np.array([3.0, -1e-3, 50.0])})
    np.testing.assert_allclose(p["w"], [0.9, 1.1, 0.9], rtol=1e-6)


def test_adam_matches_a_hand_computation_over_two_steps():
    p, opt = {"w": np.array(0.0)}, Adam(0.01, beta1=0.5, beta2=0.75, eps=1e-15)
    opt.step(p, {"w": np.array(1.0)})
    opt.step(p, {"w": np.array(-1.0)})
    m = (0.5 * 0.5 * 1.0 + 0.5 * -1.0) / (1 - 0.5**2)  # = -1/3
    v = (0.75 * 0.25 * 1.0 + 0.25 * 1.0) / (1 - 0.75**2)  # = 1
    np.testing.assert_allclose(p["w"], -0.01 - 0.01 * m / np.sqrt(v), rtol=1e-12)


def test_lr_scale_changes_only_the_named_parameters():
    p = {"a": np.array(1.0), "b": np.array(1.0)}
    Adam(0.1, lr_scale={"a": 0.25}).step(p, {"a": np.array(2.0), "b": np.array(2.0)})
    np.testing.assert_allclose([p["a"], p["b"]], [1 - 0.025, 1 - 0.1], rtol=1e-6)
    q = {"a": np.array(1.0), "b": np.array(1.0)}
    SGD(0.1, lr_scale={"b": 3.0}).step(q, {"a": np.array(2.0), "b": np.array(2.0)})
    np.testing.assert_allclose([q["a"], q["b"]], [0.8, 0.4])


@pytest.mark.parametrize("d_k", [4, 16])
def test_adam_sqrt_scaling_equals_unscaled_with_rescaled_start_and_qk_learning_rate(d_k):
    # W' = a·W with a = d_k^(-1/4) makes Q'K'ᵀ = QKᵀ/√d_k; the gradient of W' is g/a, Adam's
    # step ignores that factor, so W' must move a times as far: learning rate a·lr for W_q, W_k.
    task = make_recall_task(8, 5, 6, 0)
    a = d_k ** -0.25
    ref = train(task, "sqrt", d_k, 1e-2, 60, 4, batch=8, n_pairs=4)
    same = train(task, "none", d_k, 1e-2, 60, 4, batch=8, n_pairs=4, qk_init=a, qk_lr=a)
    init_only = train(task, "none", d_k, 1e-2, 60, 4, batch=8, n_pairs=4, qk_init=a)
    np.testing.assert_allclose(same["loss"], ref["loss"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(same["params"]["W_q"], a * ref["params"]["W_q"], rtol=1e-4, atol=1e-8)
    assert init_only["loss"][0] == pytest.approx(ref["loss"][0], rel=1e-12)  # same start …
    assert np.abs(init_only["loss"] - ref["loss"]).max() > 1e-3               # … different run


def test_variant_settings_and_unknown_variant():
    assert variant_settings("sqrt", 256) == {"scaling": "sqrt", "qk_init": 1.0}
    assert variant_settings("none_init", 256) == {"scaling": "none", "qk_init": 0.25}
    assert set(SCALINGS) < set(VARIANTS)
    with pytest.raises(ValueError, match="variant"):
        variant_settings("none_inti", 16)


@pytest.mark.parametrize("scaling", ["none", "sqrt", "linear"])
def test_logit_grads_match_central_differences(scaling):
    x_q, x_kv, t = small_batch()
    p = init_params(6, 7, 5, 5, scaling, 3)
    dz, ds = logit_grads(p, x_q, x_kv, t, scaling)
    c = {"none": 1.0, "sqrt": 7 ** -0.5, "linear": 1 / 7}[scaling]
    np.testing.assert_allclose(ds, c * dz, rtol=1e-12)
    # perturb one logit through W_q: dL/dW_q = Σ x_q ⊗ (dZ·K)·c must equal the full backward pass
    _, grads, _ = loss_and_grads(p, x_q, x_kv, t, scaling)
    k = x_kv @ p["W_k"]
    dq = ds @ k
    np.testing.assert_allclose(x_q.reshape(-1, 6).T @ dq.reshape(-1, 7), grads["W_q"], rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="qknorm"):
        logit_grads(init_params(6, 7, 5, 5, "qknorm", 3), x_q, x_kv, t, "qknorm")


@pytest.mark.parametrize("scaling", SCALINGS)
@pytest.mark.parametrize("optimizer, lr", [("adam", 1e-2), ("sgd", 0.5)])
def test_loss_falls_on_a_trivially_learnable_case(scaling, optimizer, lr):
    # two pairs only: even a blurry attention pattern gets the answer half right
    task = make_recall_task(4, 3, 8, 0)
    run = train(task, scaling, 8, lr, 150, 11, batch=16, n_pairs=2, optimizer=optimizer)
    first, last = run["loss"][:10].mean(), run["loss"][-10:].mean()
    assert last < 0.5 * first, f"{scaling}/{optimizer}: loss {first:.3f} -> {last:.3f}"


def test_same_seed_gives_same_weights_to_every_scaling_and_same_run_twice():
    inits = [init_params(6, 7, 5, 5, s, 9) for s in SCALINGS]
    for p in inits[1:]:
        for name in ("W_q", "W_k", "W_v", "W_o"):
            np.testing.assert_array_equal(p[name], inits[0][name])
    task = make_recall_task(8, 5, 6, 0)
    a, b = (train(task, "sqrt", 4, 1e-2, 20, 3, batch=4, n_pairs=3) for _ in range(2))
    for key in CURVE_KEYS:
        np.testing.assert_array_equal(a[key], b[key])


def test_a_diverging_run_stops_and_marks_the_rest_nan():
    task = make_recall_task(8, 5, 6, 0)
    ok = train(task, "sqrt", 4, 1e-2, 20, 3, batch=4, n_pairs=3)
    assert ok["diverged_at"] == -1 and np.isfinite(ok["loss"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bad = train(task, "none", 64, 1e12, 20, 3, batch=4, n_pairs=3, optimizer="sgd", init_scale=10.0)
    assert 0 <= bad["diverged_at"] < 19
    assert np.isnan(bad["loss"][bad["diverged_at"] + 1:]).all()


def test_sample_positions_point_at_the_answer():
    task = make_recall_task(10, 7, 6, 0)
    x_q, x_kv, t, pos = task.sample(50, 5, 2, return_positions=True)
    rows = np.arange(50)
    want = (x_q[:, 0] + task.value_emb[t[:, 0]]) / np.sqrt(2.0)
    np.testing.assert_allclose(x_kv[rows, pos], want, rtol=1e-12)


def test_sweep_shapes_and_window_means():
    task = make_recall_task(8, 5, 6, 0)
    out = sweep(task, ["none", "qknorm", "none_init"], [4, 8], [1e-2], [1, 2], steps=10, window=5, batch=4, n_pairs=3)
    assert out["curves"].shape == (3, 2, 1, 2, len(CURVE_KEYS), 2)
    assert out["first"].shape == (3, 2, 1, 2, len(CURVE_KEYS))
    # the control starts from the unscaled weights ×d_k^(-1/4): its first logits are those of ÷√d_k
    ctrl = train(task, **variant_settings("none_init", 8), d_k=8, lr=1e-2, steps=1, rng=1, batch=4, n_pairs=3)
    ref = train(task, "sqrt", 8, 1e-2, 1, 1, batch=4, n_pairs=3)
    assert ctrl["max_logit"][0] == pytest.approx(ref["max_logit"][0], rel=1e-12)
    assert out["first"][2, 1, 0, 0, 1] == pytest.approx(ref["max_logit"][0], rel=1e-12)  # the sweep applies it
    assert out["first"][0, 1, 0, 0, 1] == pytest.approx(np.sqrt(8) * ref["max_logit"][0], rel=1e-12)
    np.testing.assert_allclose(window_means(np.arange(6.0), 3), [1.0, 4.0])


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


def test_bad_inputs_raise_errors_that_name_the_argument():
    x_q, x_kv, t = small_batch()
    p = init_params(6, 7, 5, 5, "sqrt", 0)
    task = make_recall_task(8, 5, 6, 0)
    cases = [
        (lambda: loss_and_grads(p, x_q, x_kv, t, "sqrtt"), ValueError, "scaling"),
        (lambda: loss_and_grads(p, x_q, x_kv, t.astype(float), "sqrt"), TypeError, "targets"),
        (lambda: loss_and_grads(p, x_q, x_kv, t + 5, "sqrt"), ValueError, "targets"),
        (lambda: loss_and_grads(p, x_q, x_kv, t[:, :1], "sqrt"), ValueError, "targets"),
        (lambda: forward(p, x_q[..., :4], x_kv, "sqrt"), ValueError, "x_q"),
        (lambda: forward(p, x_q, x_kv[:2], "sqrt"), ValueError, "x_kv"),
        (lambda: forward(p, x_q, np.full_like(x_kv, np.nan), "sqrt"), ValueError, "NaN"),
        (lambda: forward(p, x_q, x_kv, "qknorm"), ValueError, "gain"),
        (lambda: forward([1, 2], x_q, x_kv, "sqrt"), TypeError, "params"),
        (lambda: forward({**p, "W_k": p["W_k"][:, :3]}, x_q, x_kv, "sqrt"), ValueError, "W_k"),
        (lambda: init_params(6, 0, 5, 5, "sqrt", 0), ValueError, "d_k"),
        (lambda: init_params(6, 7, 5, 5, "sqrt", 0, qk_gain=2.0), ValueError, "qk_gain"),
        (lambda: init_params(6, 7, 5, 5, "sqrt", "seed"), TypeError, "rng"),
        (lambda: Adam(-1e-3), ValueError, "lr"),
        (lambda: Adam(1e-3, beta1=1.0), ValueError, "beta1"),
        (lambda: SGD("fast"), TypeError, "lr"),
        (lambda: Adam(1e-3, lr_scale=[0.5]), TypeError, "lr_scale"),
        (lambda: Adam(1e-3, lr_scale={"W_q": 0.0}), ValueError, "lr_scale"),
        (lambda: train(task, "sqrt", 4, 1e-2, 5, 0, qk_init=-1.0), ValueError, "qk_init"),
        (lambda: train(task, "sqrt", 4, 1e-2, 5, 0, qk_lr=0.0), ValueError, "qk_lr"),
        (lambda: sweep(task, ["sqrt", "sqrtt"], [4], [1e-2], [0], 5), ValueError, "variant"),
        (lambda: task.sample(4, 9, 0), ValueError, "n_pairs"),
        (lambda: train("task", "sqrt", 4, 1e-2, 5, 0), TypeError, "task"),
        (lambda: train(task, "sqrt", 4, 1e-2, 5, 0, optimizer="lbfgs"), ValueError, "optimizer"),
        (lambda: window_means(np.arange(7.0), 3), ValueError, "window"),
    ]
    for call, exc, word in cases:
        with pytest.raises(exc, match=word):
            call()


# ---------------------------------------------------------------------------
# the committed sweep file and the slider
# ---------------------------------------------------------------------------


def load_sweep():
    data = np.load(SWEEP_FILE)
    return data, json.loads(str(data["config"]))


def test_sweep_file_matches_the_code_that_made_it():
    data, c = load_sweep()
    curves = data["curves"]
    assert curves.shape == (len(c["variants"]), len(c["d_ks"]), len(c["lrs"]), len(c["seeds"]),
                            len(CURVE_KEYS), c["steps"] // c["window"])
    assert list(data["curve_keys"]) == list(CURVE_KEYS)
    t = c["task"]
    task = make_recall_task(t["n_keys"], t["n_values"], t["d_in"], t["seed"])
    # the cheapest cell: d_k = 16, largest lr, first seed, ÷√d_k
    i, j, k = c["variants"].index("sqrt"), 0, len(c["lrs"]) - 1
    run = train(task, "sqrt", c["d_ks"][j], c["lrs"][k], c["steps"], c["seeds"][0], **c["train"])
    stacked = window_means(np.stack([run[key] for key in CURVE_KEYS]), c["window"])
    np.testing.assert_allclose(curves[i, j, k, 0], stacked, rtol=1e-5, atol=1e-6)


def test_training_browser_at_slider_extremes_without_warnings():
    from attnlib.widgets import training_browser

    data, c = load_sweep()
    curves = data["curves"].astype(float).mean(axis=3)
    steps = (np.arange(curves.shape[-1]) + 0.5) * c["window"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view = training_browser(steps, curves, c["variants"], c["d_ks"], c["lrs"], uniform_entropy=np.log(8))
        for d_k in (c["d_ks"][0], c["d_ks"][-1]):
            for lr in (c["lrs"][0], c["lrs"][-1]):
                view.set(d_k=d_k, lr=lr)
                fig = view.last_figure
                j, k = c["d_ks"].index(d_k), c["lrs"].index(lr)
                loss_lines = fig.axes[0].get_lines()
                assert len(loss_lines) == len(c["variants"])
                np.testing.assert_allclose(loss_lines[0].get_ydata(), curves[0, j, k, 0])
                assert f"d_k = {d_k}" in fig.get_suptitle()


def test_static_figures_have_one_panel_per_setting():
    from attnlib import plots

    data, c = load_sweep()
    curves = data["curves"].astype(float).mean(axis=3)
    steps = np.arange(curves.shape[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = plots.training_grid(steps, curves, c["variants"], c["d_ks"], c["lrs"])
        assert len([a for a in fig.axes if a.get_visible()]) == len(c["d_ks"]) * len(c["lrs"])
        fig2 = plots.best_final_loss(c["d_ks"], curves[:, :, 0, 0, -1], c["variants"])
        assert len(fig2.axes[0].get_lines()) == len(c["variants"])
        styles = {line.get_label(): line.get_linestyle() for line in fig2.axes[0].get_lines()}
        assert styles[plots.SCALING_LABELS["none_init"]] == "--" and styles[plots.SCALING_LABELS["sqrt"]] == "-"
        assert not fig2.axes[0].collections                     # no seed-range bars unless asked
        final = data["curves"].astype(float)[:, :, 0, :, 0, -1]  # (variant, d_k, seed)
        fig3 = plots.best_final_loss(c["d_ks"], final.mean(-1), c["variants"], lo=final.min(-1), hi=final.max(-1),
                                     range_label="range over seeds")
        bars = [b for b in fig3.axes[0].collections if len(b.get_segments())]
        assert len(bars) == len(c["variants"])
        for i, b in enumerate(bars):                            # one bar per d_k, from the seed minimum to maximum
            ys = np.array([seg[:, 1] for seg in b.get_segments()])
            np.testing.assert_allclose(np.sort(ys, axis=1), np.stack([final[i].min(-1), final[i].max(-1)], 1))
        assert "range over seeds" in [t.get_text() for t in fig3.axes[0].get_legend().get_texts()]


def test_self_check_answers_lesson_07():
    (k1, num), (k2, choice) = self_checks("07-tiny-training-run.ipynb")
    assert k1 == "numeric_check" and num["answer"] == pytest.approx(np.sqrt(64))
    assert k2 == "choice_check" and "d_k^(−1/4)" in choice["options"][choice["correct"]]
    # the answer the choice names is the identity: same run, up to Adam's eps
    task = make_recall_task(8, 5, 6, 0)
    a = 64 ** -0.25
    ref = train(task, "sqrt", 64, 1e-2, 30, 2, batch=8, n_pairs=4)
    twin = train(task, "none", 64, 1e-2, 30, 2, batch=8, n_pairs=4, qk_init=a, qk_lr=a)
    np.testing.assert_allclose(twin["loss"], ref["loss"], rtol=1e-5)
