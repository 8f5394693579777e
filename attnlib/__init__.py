"""attnlib: the attention maths behind the "Why √d_k" lessons.

Pure numpy. Importing it changes no global state (no rcParams, no random seeds).
Plotting lives in ``attnlib.plots`` and slider wiring in ``attnlib.widgets``; import
them explicitly (``from attnlib import plots``).
"""

from .checker import DIAGNOSES, AttentionReport, check_attention
from .core import attention_entropy, scaled_dot_product_attention, softmax, softmax_jacobian
from .mha import INIT_SCHEMES, MultiHeadAttention, init_std, init_weight
from .recipes import (
    LOGIT_RECIPES,
    entropy_at_init,
    get_recipe,
    llama4_attn_temperature,
    logn_scale,
    qk_clip,
    recipe_attention,
    recipe_logits,
    recipe_table,
    rms_norm,
    softcap,
    softmax_with_sink,
    yarn_mscale,
)
from .stats import dot_product_moments, dot_product_variance, ratio_of_means, sample_dot_products

__version__ = "0.1.0"

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "softmax_jacobian",
    "attention_entropy",
    "dot_product_variance",
    "dot_product_moments",
    "sample_dot_products",
    "ratio_of_means",
    "INIT_SCHEMES",
    "init_std",
    "init_weight",
    "MultiHeadAttention",
    "check_attention",
    "AttentionReport",
    "DIAGNOSES",
]
__all__ += [
    "LOGIT_RECIPES",
    "entropy_at_init",
    "get_recipe",
    "llama4_attn_temperature",
    "logn_scale",
    "qk_clip",
    "recipe_attention",
    "recipe_logits",
    "recipe_table",
    "rms_norm",
    "softcap",
    "softmax_with_sink",
    "yarn_mscale",
]  # lesson 10
