"""Bad input: every public function names the argument and what it expected."""

import numpy as np
import pytest

import attnlib as al

rng = np.random.default_rng(0)
Q, K, V = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 4))


def sdpa(**kw):
    args = dict(q=Q, k=K, v=V)
    args.update(kw)
    return al.scaled_dot_product_attention(**args)


@pytest.mark.parametrize("call,exc,pattern", [
    # mismatched d_k between q and k
    (lambda: sdpa(k=np.ones((2, 5, 7))), ValueError, r"q and k must share d_k.*\(2, 3, 8\).*\(2, 5, 7\)"),
    # mismatched S between k and v
    (lambda: sdpa(v=np.ones((2, 6, 4))), ValueError, r"k and v must have the same number of keys S.*S=5.*S=6"),
    # wrong mask shape
    (lambda: sdpa(mask=np.ones((3, 4), dtype=bool)), ValueError, r"mask of shape \(3, 4\) does not broadcast.*\(2, 3, 5\)"),
    # wrong mask dtype
    (lambda: sdpa(mask=np.ones((3, 5), dtype=int)), TypeError, r"mask must be boolean .* or float .*int64"),
    (lambda: sdpa(mask=np.full((3, 5), np.nan)), ValueError, r"mask .* contains NaN"),
    (lambda: sdpa(mask=np.full((3, 5), np.inf)), ValueError, r"mask .* contains \+inf"),
    # non-positive scale / temperature
    (lambda: sdpa(scale=0.0), ValueError, r"scale must be a finite number > 0; got 0.0"),
    (lambda: sdpa(scale=-1), ValueError, r"scale must be a finite number > 0"),
    (lambda: sdpa(temperature=0), ValueError, r"temperature must be a finite number > 0; got 0"),
    (lambda: sdpa(temperature="hot"), TypeError, r"temperature must be a real number > 0; got str"),
    (lambda: al.softmax([1, 2], temperature=-2), ValueError, r"temperature must be a finite number > 0; got -2"),
    (lambda: al.softmax([1, 2], temperature=np.inf), ValueError, r"temperature must be a finite number > 0; got inf"),
    # NaN or +inf logits
    (lambda: al.softmax([1.0, np.nan]), ValueError, r"x \(logits\) contains NaN"),
    (lambda: al.softmax([1.0, np.inf]), ValueError, r"x \(logits\) contains \+inf"),
    (lambda: sdpa(q=np.full((3, 8), np.nan)), ValueError, r"q contains NaN"),
    (lambda: sdpa(v=np.full((5, 4), np.inf)), ValueError, r"v contains inf"),
    (lambda: sdpa(q=np.full((3, 8), 1e200), k=np.full((5, 8), 1e200)), ValueError, r"overflowed to ±inf"),
    (lambda: sdpa(q=np.full((3, 8), 1e200), k=np.full((5, 8), -1e200)), ValueError, r"overflowed to ±inf"),
    # complex / str / object input
    (lambda: al.softmax([1 + 2j, 3]), TypeError, r"x must be real-valued; got complex"),
    (lambda: al.softmax(["a", "b"]), TypeError, r"x must be a numeric array of real numbers; got dtype <U1"),
    (lambda: al.softmax(np.array([1, None], dtype=object)), TypeError, r"x must be a numeric array .* object"),
    (lambda: al.softmax([[1, 2], [3]]), TypeError, r"x must be a numeric array-like"),
    (lambda: al.softmax([True, False]), TypeError, r"x must be a real-valued float array; got boolean"),
    (lambda: sdpa(q=Q.astype(complex)), TypeError, r"q must be real-valued"),
    (lambda: sdpa(k="keys"), TypeError, r"k must be a numeric array of real numbers"),
    # shapes and axes
    (lambda: al.softmax(3.0), ValueError, r"x must have at least one dimension"),
    (lambda: al.softmax([]), ValueError, r"x has length 0 along axis -1"),
    (lambda: al.softmax([1, 2], axis=1), ValueError, r"axis=1 is out of range for an array with 1 dimension"),
    (lambda: sdpa(q=np.ones(8)), ValueError, r"q must have shape \(\.\.\., L, d_k\); got shape \(8,\)"),
    (lambda: sdpa(q=np.ones((4, 3, 8))), ValueError, r"leading .* dimensions of q \(4,\), k \(2,\) and v \(2,\) do not broadcast"),
    # jacobian / entropy
    (lambda: al.softmax_jacobian([0.5, 0.6]), ValueError, r"p must sum to 1 along its last axis; found a row summing to 1.1"),
    (lambda: al.softmax_jacobian([1.5, -0.5]), ValueError, r"p must be non-negative"),
    (lambda: al.attention_entropy([0.2, 0.2]), ValueError, r"p must sum to 1"),
    # statistics: non-positive d_k / sigma, |rho| > 1
    (lambda: al.dot_product_variance(0), ValueError, r"d_k must be a positive integer \(>= 1\); got 0"),
    (lambda: al.dot_product_variance(64.0), TypeError, r"d_k must be a positive integer; got float"),
    (lambda: al.dot_product_variance(64, sigma_q=0), ValueError, r"sigma_q must be a finite number > 0; got 0"),
    (lambda: al.dot_product_variance(64, sigma_k=-1.0), ValueError, r"sigma_k must be a finite number > 0"),
    (lambda: al.sample_dot_products(64, 10, rho=1.5, rng=0), ValueError, r"rho is a correlation and must lie in \[-1, 1\]; got 1.5"),
    (lambda: al.dot_product_moments(64, rho=-1.01), ValueError, r"rho .* \[-1, 1\]"),
    (lambda: al.sample_dot_products(64, 0, rng=0), ValueError, r"n must be a positive integer"),
    (lambda: al.sample_dot_products(64, 10, rng="seed"), TypeError, r"rng must be a numpy.random.Generator"),
    (lambda: al.sample_dot_products(8, 10, mean_q=np.nan, rng=0), ValueError, r"mean_q must be finite"),
    # multi-head: E not divisible by heads, wrong shapes, init schemes
    (lambda: al.MultiHeadAttention.init(10, 3, rng=0), ValueError, r"embed_dim=10 must be divisible by num_heads=3"),
    (lambda: al.MultiHeadAttention(3, np.ones((30, 10)), np.zeros(30), np.eye(10), np.zeros(10)), ValueError,
     r"embed_dim E=10 must be divisible by num_heads=3"),
    (lambda: al.MultiHeadAttention(2, np.ones((30, 11)), np.zeros(30), np.eye(10), np.zeros(10)), ValueError,
     r"in_proj_weight must have shape \(3E, E\); got \(30, 11\)"),
    (lambda: al.MultiHeadAttention(2, np.ones((30, 10)), np.zeros(29), np.eye(10), np.zeros(10)), ValueError,
     r"in_proj_bias must have shape \(30,\) for E=10; got \(29,\)"),
    (lambda: al.MultiHeadAttention(0, np.ones((30, 10)), np.zeros(30), np.eye(10), np.zeros(10)), ValueError,
     r"num_heads must be a positive integer"),
    (lambda: al.MultiHeadAttention.init(8, 2, rng=0)(np.ones((3, 6)), np.ones((3, 8)), np.ones((3, 8))), ValueError,
     r"query must have shape \(\.\.\., L, E\) with E=8; got \(3, 6\)"),
    (lambda: al.MultiHeadAttention.init(8, 2, rng=0)(np.ones((3, 8)), np.ones((3, 8)), np.ones((4, 8))), ValueError,
     r"key and value must have the same length S"),
    (lambda: al.MultiHeadAttention.init(8, 2, rng=0)(np.ones((3, 8)), np.ones((4, 8)), np.ones((4, 8)),
                                                     mask=np.ones((3, 3), dtype=bool)), ValueError,
     r"mask of shape"),
    (lambda: al.init_weight((4, 4), "he", rng=0), ValueError, r"scheme must be one of .*'pytorch'.*got 'he'"),
    (lambda: al.init_weight((4,), "gpt2", rng=0), ValueError, r"shape must be a 2-tuple \(fan_out, fan_in\)"),
])
def test_bad_input_is_named(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
