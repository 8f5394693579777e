"""Multi-head layers with nn.MultiheadAttention's parameter layout (in_proj_weight (3E, E), in_proj_bias,
out_proj, num_heads, batch_first), hand-written in numpy and torch, and nn.MultiheadAttention itself. A class is
handed over where the verdict needs the head size or head count to vary (√d_model vs a fixed width), an instance
where one size shows it. torch layers are built by factories, so this module imports without torch.

The per-head q, k inside each layer are the projections split into heads of d_k = E / H; every layer below
differs from correct multi-head attention only in the line its docstring names.

Cannot be told apart, so left out: a layer that scales by the per-head value width (d_v = E/H) is the same function
as the correct one, because nn.MultiheadAttention's layout gives d_v = d_k; a layer instance with a hard-coded
1/√(its own head size) is the same function as the correct instance (only its class, built at other sizes, shows
the difference).
"""

from __future__ import annotations

import functools

import numpy as np

from ._common import Entry, kt, softmax

# ------------------------------------------------------------------ numpy


class NumpyMHA:
    """Hand-written multi-head attention in numpy, batch first, returns (out, per-head weights (B, H, L, S))."""

    batch_first = True

    def __init__(self, embed_dim, num_heads):
        rng = np.random.default_rng(0)
        E = embed_dim
        self.embed_dim, self.num_heads, self.head_dim = E, num_heads, E // num_heads
        self.in_proj_weight = rng.normal(0.0, E**-0.5, (3 * E, E))
        self.in_proj_bias = np.zeros(3 * E)
        self.out_proj_weight = rng.normal(0.0, E**-0.5, (E, E))
        self.out_proj_bias = np.zeros(E)

    def scale(self):
        return self.head_dim**-0.5

    def _heads(self, x):
        B, T, _ = x.shape
        return x.reshape(B, T, self.num_heads, self.head_dim).transpose(0, 2, 1, 3)

    def __call__(self, query, key, value):
        E = self.embed_dim
        W, b = self.in_proj_weight, self.in_proj_bias
        q = self._heads(query @ W[:E].T + b[:E])
        k = self._heads(key @ W[E:2 * E].T + b[E:2 * E])
        v = self._heads(value @ W[2 * E:].T + b[2 * E:])
        w = softmax(q @ kt(k) * self.scale())
        B, H, L, d = q.shape
        out = (w @ v).transpose(0, 2, 1, 3).reshape(B, L, E)
        return out @ self.out_proj_weight.T + self.out_proj_bias, w


class NumpyMHADModel(NumpyMHA):
    """Scales by the model width: embed_dim ** -0.5."""

    def scale(self):
        return self.embed_dim**-0.5


# ------------------------------------------------------------------ torch


@functools.cache
def torch_layers():
    import torch
    import torch.nn.functional as F
    from torch import nn

    class TorchMHA(nn.Module):
        """Hand-written multi-head attention with nn.MultiheadAttention's parameters."""

        def __init__(self, embed_dim, num_heads, batch_first=True):
            super().__init__()
            E = embed_dim
            self.embed_dim, self.num_heads, self.head_dim, self.batch_first = E, num_heads, E // num_heads, batch_first
            self.in_proj_weight = nn.Parameter(torch.empty(3 * E, E))
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * E))
            self.out_proj = nn.Linear(E, E)
            nn.init.xavier_uniform_(self.in_proj_weight)

        def normalise(self, q, k):  # q, k: (B, H, T, d_k)
            return q, k

        def scale(self, query):
            return self.head_dim**-0.5

        def forward(self, query, key, value):
            if not self.batch_first:
                query, key, value = (x.transpose(0, 1) for x in (query, key, value))
            B, L, E = query.shape
            S = key.shape[1]
            q, k, v = self._project(query, key, value)
            q, k = self.normalise_full(q, k)
            q = q.view(B, L, self.num_heads, self.head_dim).transpose(1, 2)
            k = k.view(B, S, self.num_heads, self.head_dim).transpose(1, 2)
            v = v.view(B, S, self.num_heads, self.head_dim).transpose(1, 2)
            q, k = self.normalise(q, k)
            w = torch.softmax(q @ k.transpose(-2, -1) * self.scale(query), dim=-1)
            out = self.out_proj((w @ v).transpose(1, 2).reshape(B, L, E))
            if not self.batch_first:
                out = out.transpose(0, 1)
            return out, w

        def _project(self, query, key, value):
            Wq, Wk, Wv = self.in_proj_weight.chunk(3)
            bq, bk, bv = self.in_proj_bias.chunk(3)
            return F.linear(query, Wq, bq), F.linear(key, Wk, bk), F.linear(value, Wv, bv)

        def normalise_full(self, q, k):  # q, k: (B, T, E), before the heads are split
            return q, k

    class DModelScale(TorchMHA):
        """self.scale = embed_dim ** -0.5 (the ViT / ng-video-lecture bug)."""

        def scale(self, query):
            return self.embed_dim**-0.5

    class NoScale(TorchMHA):
        """No scale at all."""

        def scale(self, query):
            return 1.0

    class TimesSqrtDk(TorchMHA):
        """self.scale = head_dim ** 0.5 (the exponent's sign flipped)."""

        def scale(self, query):
            return self.head_dim**0.5

    class MuP(TorchMHA):
        """muP's 1 / head_dim."""

        def scale(self, query):
            return 1.0 / self.head_dim

    class OutOnly(TorchMHA):
        """Correct, and returns the output only (no weights)."""

        def forward(self, query, key, value):
            return super().forward(query, key, value)[0]

    class SeqLenScale(TorchMHA):
        """d read as query.shape[1]: the sequence length of a batch-first input."""

        def scale(self, query):
            return query.shape[1] ** -0.5

    class Fixed64(TorchMHA):
        """self.scale = 64 ** -0.5 hard-coded (a head size copied from a config)."""

        def scale(self, query):
            return 64**-0.5

    class Qwen3QKNorm(TorchMHA):
        """RMSNorm (weight 1) on each head's q and k over d_k, then 1/√d_k."""

        def normalise(self, q, k):
            return F.rms_norm(q, (self.head_dim,), eps=1e-6), F.rms_norm(k, (self.head_dim,), eps=1e-6)

    class OLMo2QKNorm(TorchMHA):
        """OLMo 2: RMSNorm (weight 1) over the whole q and k projections (width E), before the heads are split."""

        def normalise_full(self, q, k):
            return F.rms_norm(q, (self.embed_dim,), eps=1e-6), F.rms_norm(k, (self.embed_dim,), eps=1e-6)

    return {c.__name__: c for c in (TorchMHA, DModelScale, NoScale, TimesSqrtDk, MuP, OutOnly, SeqLenScale, Fixed64, Qwen3QKNorm, OLMo2QKNorm)}


def _layer(name, *args, dtype=None):
    cls = torch_layers()[name]
    if not args:
        return cls
    torch_seed()
    layer = cls(*args)
    return layer if dtype is None else layer.to(dtype)


def torch_seed():
    import torch

    torch.manual_seed(0)


def _nn_mha(batch_first, dtype=None):
    import torch

    torch.manual_seed(0)
    layer = torch.nn.MultiheadAttention(96, 8, batch_first=batch_first)
    return layer if dtype is None else layer.to(getattr(torch, dtype))


def _nn_mha_class():
    import torch

    return torch.nn.MultiheadAttention


def _half(name):
    import torch

    return _layer(name, 96, 8, dtype=torch.float16)


F = "layers"


def L_(name, obj, code, torch=False, **kw):
    return Entry(name, obj, code, F, torch=torch, make=torch, **kw)


ENTRIES = [
    # proof: q, k, v = the projections split into H heads of d_k = E/H, softmax(q·kᵀ·d_k^-½) per head: ok.
    L_("np_layer_instance", NumpyMHA(96, 8), "ok", full=True),
    L_("np_layer_class", NumpyMHA, "ok"),
    # proof: the same with embed_dim^-½ = 1/√(H·d_k): the model width.
    L_("np_layer_d_model_class", NumpyMHADModel, "sqrt_d_model", full=True),
    # proof: hand-written torch layer, per head d_k^-½: ok (instance, class, float16 instance).
    L_("torch_layer_instance", functools.partial(_layer, "TorchMHA", 96, 8), "ok", torch=True, full=True),
    L_("torch_layer_class", functools.partial(_layer, "TorchMHA"), "ok", torch=True),
    L_("torch_layer_out_only", functools.partial(_layer, "OutOnly"), "ok", torch=True),  # weights not returned
    L_("torch_layer_half_instance", functools.partial(_half, "TorchMHA"), "ok", torch=True),
    # proof: nn.MultiheadAttention computes softmax(q·kᵀ/√d_k) per head, both layouts, and in bfloat16.
    L_("torch_nn_mha_batch_first", functools.partial(_nn_mha, True), "ok", torch=True, full=True),
    L_("torch_nn_mha_seq_first", functools.partial(_nn_mha, False), "ok", torch=True),
    L_("torch_nn_mha_bf16", functools.partial(_nn_mha, True, "bfloat16"), "ok", torch=True),
    L_("torch_nn_mha_class", _nn_mha_class, "ok", torch=True),
    # proof: embed_dim^-½ = 1/√(H·d_k) at every size (class) and at the instance's size.
    L_("torch_layer_d_model_class", functools.partial(_layer, "DModelScale"), "sqrt_d_model", torch=True, full=True),
    L_("torch_layer_d_model_instance", functools.partial(_layer, "DModelScale", 96, 8), "sqrt_d_model", torch=True),
    # proof: factor 1 per head.
    L_("torch_layer_no_scale_class", functools.partial(_layer, "NoScale"), "no_scale", torch=True),
    # proof: head_dim^+½ per head.
    L_("torch_layer_times_sqrt_dk_class", functools.partial(_layer, "TimesSqrtDk"), "times_sqrt_dk", torch=True),
    # proof: 1/head_dim per head (muP).
    L_("torch_layer_mup_class", functools.partial(_layer, "MuP"), "one_over_dk", torch=True),
    # proof: query.shape[1] of a batch-first input is L: factor L^-½.
    L_("torch_layer_seq_len_class", functools.partial(_layer, "SeqLenScale"), "wrong_axis", torch=True),
    # proof: 64^-½ at every size of the class, whatever d_k = E/H: a fixed head size.
    L_("torch_layer_fixed_64_class", functools.partial(_layer, "Fixed64"), "fixed_scale", torch=True,
       measure=(("head size or factor", (64.0, 0.125), 1e-2),)),
    # proof: per-head RMS-normalised q, k over d_k, then d_k^-½: qk_norm (Qwen3 / Gemma 3).
    L_("torch_layer_qwen3_qk_norm", functools.partial(_layer, "Qwen3QKNorm"), "qk_norm", torch=True, full=True),
    # proof: q, k RMS-normalised over the whole projection (E) before the head split, then d_k^-½: QK-norm as
    # OLMo 2 does it, which the issue asks to recognise (qk_norm is the only ok code for a normalised q, k).
    L_("torch_layer_olmo2_qk_norm", functools.partial(_layer, "OLMo2QKNorm"), "qk_norm", torch=True),
]
