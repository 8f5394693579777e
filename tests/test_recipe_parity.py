"""Parity of attnlib.recipes with the models' own attention code in ``transformers``.

Each test builds a one-layer model with random weights from a tiny config (no download),
runs it with ``attn_implementation="eager"`` and ``output_attentions=True``, captures the
q and k projections the attention layer used (forward hooks) and the model's own RoPE
cos/sin (a pre-hook on the attention module), and checks that ``recipe_attention`` with the
named recipe from LOGIT_RECIPES gives the model's weights to 1e-5 in float32.

Each test also checks that a recipe with the studied ingredient removed (no cap, no norm,
per-head instead of full-width, no YaRN factor, sink at -inf) does NOT match, so a test
cannot pass by accident. torch and transformers are optional (course.py setup --with-torch);
without them these tests skip with the reason printed.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch is not installed: the recipe parity tests need it (course.py setup --with-torch)"
)
transformers = pytest.importorskip(
    "transformers",
    reason="transformers is not installed: the recipe parity tests need it (course.py setup --with-torch)",
)

from attnlib.recipes import LOGIT_RECIPES, recipe_attention  # noqa: E402

L = 12  # tokens
ATOL = 1e-5
WRONG = 1e-3  # a recipe missing its ingredient must miss the model's weights by more than this


def _np(t):
    return t.detach().to(torch.float32).cpu().numpy()


def _heads(x, n_heads):
    """(1, L, H·d) projection output -> (1, H, L, d)."""
    b, length, width = x.shape
    return x.reshape(b, length, n_heads, width // n_heads).transpose(0, 2, 1, 3)


def _rope(cos, sin, halves=False):
    """RoPE as transformers applies it (rotate_half) to the last r entries of q and k.

    cos, sin : (1, L, r) from the model (gpt-oss passes (1, L, r/2): ``halves=True``), divided
    by their magnitude (YaRN's factor is the recipe's business, not the rotation's).
    Returns (rotate, magnitude at position 0).
    """
    if halves:
        cos, sin = np.concatenate([cos, cos], axis=-1), np.concatenate([sin, sin], axis=-1)
    mag = np.sqrt(cos**2 + sin**2)
    cos, sin = (cos / mag)[:, None], (sin / mag)[:, None]

    def rot(x):
        r = cos.shape[-1]
        keep, y = x[..., : x.shape[-1] - r], x[..., x.shape[-1] - r :]
        half = r // 2
        turned = np.concatenate([-y[..., half:], y[..., :half]], axis=-1)
        return np.concatenate([keep, y * cos + turned * sin], axis=-1)

    def rotate(q, k):
        return rot(q), rot(k)

    return rotate, float(mag[0, 0, 0])


def _run(config, setup=None, hooks=("q_proj", "k_proj")):
    """Build the model, capture projections and cos/sin; return (captured, weights (1, H, L, L), attention module)."""
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(config, attn_implementation="eager").float().eval()
    attn = model.layers[0].self_attn
    if setup is not None:
        with torch.no_grad():
            setup(attn)
    got = {}
    handles = [
        getattr(attn, name).register_forward_hook(lambda m, i, o, name=name: got.__setitem__(name, _np(o)))
        for name in hooks
    ]

    def pre(module, args, kwargs):
        cos, sin = kwargs["position_embeddings"]
        got["cos"], got["sin"] = _np(cos), _np(sin)

    handles.append(attn.register_forward_pre_hook(pre, with_kwargs=True))
    ids = torch.randint(0, config.vocab_size, (1, L), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = model(input_ids=ids, output_attentions=True)
    for h in handles:
        h.remove()
    return got, _np(out.attentions[0]), attn


CAUSAL = np.tril(np.ones((L, L), dtype=bool))
HEADS, D = 4, 16
TINY = dict(
    hidden_size=HEADS * D, num_attention_heads=HEADS, num_key_value_heads=HEADS, num_hidden_layers=1, vocab_size=100
)


def _spread(attn, *names, std=3.0):
    """Give projections large random weights so logits reach the cap / the norms matter."""
    for name in names:
        w = getattr(attn, name).weight
        w.copy_(torch.randn(w.shape) * std / w.shape[1] ** 0.5)


def _check(ours, theirs, wrong):
    assert ours.shape == theirs.shape
    err = np.abs(ours - theirs).max()
    assert err < ATOL, f"attnlib's recipe differs from the model's eager attention by {err:.2e}"
    miss = np.abs(wrong - theirs).max()
    assert miss > WRONG, f"a recipe without the ingredient also matched (max diff {miss:.2e}): the test cannot fail"
    return err, miss


def test_gemma2_softcap_and_query_pre_attn_scalar():
    r = LOGIT_RECIPES["gemma-2-27b"]
    cfg = transformers.Gemma2Config(
        **TINY,
        head_dim=D,
        intermediate_size=128,
        query_pre_attn_scalar=r.query_pre_attn_scalar,
        attn_logit_softcapping=r.cap,
        sliding_window=4096,
    )
    got, theirs, _ = _run(cfg, setup=lambda a: _spread(a, "q_proj", "k_proj", std=12.0))
    q, k = _heads(got["q_proj"], HEADS), _heads(got["k_proj"], HEADS)
    rotate, _ = _rope(got["cos"], got["sin"])
    ours = recipe_attention(q, k, r, rotate=rotate, mask=CAUSAL)
    logits = np.abs(np.matmul(rotate(q, k)[0], np.swapaxes(rotate(q, k)[1], -1, -2))) * r.softmax_scale
    assert logits.max() > 2 * r.cap, "the logits never reach the cap: the test would not see it"
    wrong = recipe_attention(q, k, dataclasses.replace(r, cap=None), rotate=rotate, mask=CAUSAL)
    _check(ours, theirs, wrong)
    # 1/√head_dim instead of 1/√query_pre_attn_scalar is caught too
    wrong_scale = recipe_attention(q, k, dataclasses.replace(r, query_pre_attn_scalar=None), rotate=rotate, mask=CAUSAL)
    assert np.abs(wrong_scale - theirs).max() > WRONG


def _qk_norm_parity(r, cfg, norm_width, wrong):
    """Model with random QK-norm gains (one head made loud) against recipe r and a wrong recipe."""

    def setup(a):
        _spread(a, "q_proj", "k_proj")
        a.q_proj.weight[:D] *= 4.0  # one head much larger than the others: full width ≠ per head
        a.q_norm.weight.copy_(1 + 0.5 * torch.randn(norm_width))
        a.k_norm.weight.copy_(1 + 0.5 * torch.randn(norm_width))

    got, theirs, attn = _run(cfg, setup=setup)
    q, k = _heads(got["q_proj"], HEADS), _heads(got["k_proj"], HEADS)
    rotate, _ = _rope(got["cos"], got["sin"])
    gq, gk = _np(attn.q_norm.weight), _np(attn.k_norm.weight)
    kw = dict(rotate=rotate, mask=CAUSAL, norm_eps=cfg.rms_norm_eps)
    ours = recipe_attention(q, k, r, q_gain=gq, k_gain=gk, **kw)
    _check(ours, theirs, wrong(q, k, gq, gk, kw))


def test_qwen3_per_head_qk_norm():
    r = LOGIT_RECIPES["qwen3"]
    cfg = transformers.Qwen3Config(**TINY, head_dim=D, intermediate_size=128)

    def no_norm(q, k, gq, gk, kw):
        return recipe_attention(q, k, dataclasses.replace(r, qk_norm="none"), **kw)

    _qk_norm_parity(r, cfg, D, no_norm)


def test_olmo2_full_width_qk_norm():
    r = LOGIT_RECIPES["olmo-2"]
    cfg = transformers.Olmo2Config(**TINY, intermediate_size=128)

    def per_head(q, k, gq, gk, kw):
        return recipe_attention(
            q, k, dataclasses.replace(r, qk_norm="per_head_rms"), q_gain=gq[:D], k_gain=gk[:D], **kw
        )

    _qk_norm_parity(r, cfg, HEADS * D, per_head)


def test_gpt_oss_sinks_and_yarn_factor():
    r = LOGIT_RECIPES["gpt-oss"]
    cfg = transformers.GptOssConfig(
        **TINY,
        head_dim=D,
        intermediate_size=64,
        num_local_experts=2,
        num_experts_per_tok=1,
    )
    assert cfg.rope_parameters["factor"] == r.yarn_factor

    def setup(a):
        _spread(a, "q_proj", "k_proj", std=1.0)
        a.sinks.copy_(torch.tensor([-1.0, 0.5, 1.5, 3.0]))

    got, theirs, attn = _run(cfg, setup=setup)
    sinks = _np(attn.sinks)
    q, k = _heads(got["q_proj"], HEADS), _heads(got["k_proj"], HEADS)
    rotate, mag = _rope(got["cos"], got["sin"], halves=True)
    assert got["cos"].shape[-1] == 8, "gpt-oss's cos/sin cover half a head (16 / 2)"
    ours = recipe_attention(q, k, r, sink=sinks, rotate=rotate, mask=CAUSAL)
    assert theirs.sum(-1).max() < 1.0, "the model's rows should sum below 1 with sinks"
    wrong_sink = recipe_attention(q, k, r, sink=np.full(4, -1e4), rotate=rotate, mask=CAUSAL)
    _check(ours, theirs, wrong_sink)
    no_yarn = recipe_attention(q, k, dataclasses.replace(r, yarn_factor=None), sink=sinks, rotate=rotate, mask=CAUSAL)
    assert np.abs(no_yarn - theirs).max() > WRONG


def test_deepseek_v3_mla_with_yarn_mscale():
    r = LOGIT_RECIPES["deepseek-v3"]
    nope, rope, heads = 16, 8, HEADS
    cfg = transformers.DeepseekV3Config(
        **TINY,
        intermediate_size=128,
        moe_intermediate_size=32,
        n_routed_experts=4,
        num_experts_per_tok=2,
        n_group=1,
        topk_group=1,
        first_k_dense_replace=1,
        q_lora_rank=None,
        kv_lora_rank=32,
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
        v_head_dim=16,
        rope_interleave=False,
        max_position_embeddings=4096 * int(r.yarn_factor),
        rope_parameters={
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": r.yarn_factor,
            "mscale": r.yarn_mscale,
            "mscale_all_dim": r.yarn_mscale,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32,
            "beta_slow": 1,
        },
    )
    spread = lambda a: _spread(a, "q_proj", "kv_a_proj_with_mqa", "kv_b_proj", std=1.5)  # noqa: E731
    got, theirs, _ = _run(cfg, setup=spread, hooks=("q_proj", "kv_a_proj_with_mqa", "kv_b_proj"))
    q = _heads(got["q_proj"], heads)  # (1, H, L, nope + rope)
    kv = _heads(got["kv_b_proj"].reshape(1, L, -1), heads)  # (1, H, L, nope + v); the model feeds it (1, 1, L, rank)
    k_rot = got["kv_a_proj_with_mqa"][..., -rope:][:, None]  # (1, 1, L, rope), shared by the heads
    k = np.concatenate([kv[..., :nope], np.broadcast_to(k_rot, (1, heads, L, rope))], axis=-1)
    rotate, mag = _rope(got["cos"], got["sin"])
    assert abs(mag - 1.0) < 1e-6, "with mscale = mscale_all_dim, YaRN leaves cos/sin unscaled in DeepSeek-V3"
    ours = recipe_attention(q, k, r, rotate=rotate, mask=CAUSAL)
    wrong = recipe_attention(q, k, dataclasses.replace(r, yarn_factor=None), rotate=rotate, mask=CAUSAL)
    _check(ours, theirs, wrong)
