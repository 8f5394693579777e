"""attnlib.core: softmax and scaled dot-product attention against plain-loop references."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from reference import sdpa_ref, softmax_ref

import attnlib as al


def rand(rng, *shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- softmax


def test_softmax_worked_example_matches_reference():
    for logits in ([16, 8, 4], [2, 1, 0.5]):
        np.testing.assert_allclose(al.softmax(logits), softmax_ref(logits), rtol=1e-14, atol=0)
    assert al.softmax([16, 8, 4])[0] == pytest.approx(0.9996585, abs=1e-7)


def test_softmax_lists_and_ints_become_float64_and_float32_stays():
    assert al.softmax([1, 2, 3]).dtype == np.float64
    assert al.softmax(np.array([1, 2, 3], dtype=np.int32)).dtype == np.float64
    assert al.softmax(np.array([1, 2, 3], dtype=np.float32)).dtype == np.float32
    assert al.softmax(np.array([1, 2, 3], dtype=np.float16)).dtype == np.float16


def test_softmax_exact_at_huge_logits():
    p = al.softmax([1e300, 1e300 - 1e285, -1e300])
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p, [1.0, 0.0, 0.0], atol=0)
    p = al.softmax([1e300, 1e300])
    np.testing.assert_array_equal(p, [0.5, 0.5])
    np.testing.assert_array_equal(al.softmax([1e300, -1e300]), [1.0, 0.0])  # difference overflows to -inf: fine
    np.testing.assert_array_equal(al.softmax([-1e300, -1e300]), [0.5, 0.5])
    # a tiny temperature must not overflow either
    np.testing.assert_array_equal(al.softmax([1e300, 0.0], temperature=1e-300), [1.0, 0.0])


def test_softmax_neg_inf_gets_zero_and_all_neg_inf_row_is_zeros():
    p = al.softmax([0.0, -np.inf, 0.0])
    np.testing.assert_array_equal(p, [0.5, 0.0, 0.5])
    p = al.softmax([[-np.inf, -np.inf], [1.0, 1.0]])
    np.testing.assert_array_equal(p, [[0.0, 0.0], [0.5, 0.5]])


def test_softmax_axis_and_temperature_match_reference():
    rng = np.random.default_rng(0)
    x = rand(rng, 3, 5, 4)
    p = al.softmax(x, axis=1, temperature=2.5)
    for i in range(3):
        for j in range(4):
            np.testing.assert_allclose(p[i, :, j], softmax_ref(list(x[i, :, j]), 2.5), rtol=1e-12)


def test_softmax_does_not_modify_input():
    x = np.array([3.0, 1.0, 2.0])
    al.softmax(x, temperature=0.5)
    np.testing.assert_array_equal(x, [3.0, 1.0, 2.0])


finite_rows = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 8)),
                     elements=st.floats(-1e6, 1e6, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(finite_rows)
def test_prop_rows_sum_to_one_and_nonnegative(x):
    p = al.softmax(x)
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(finite_rows, st.floats(-1e3, 1e3))
def test_prop_shift_invariance(x, c):
    np.testing.assert_allclose(al.softmax(x + c), al.softmax(x), atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(2, 8), elements=st.floats(-10, 10), unique=True))
def test_prop_temperature_limits(x):
    cold = al.softmax(x, temperature=1e-6)
    one_hot = np.zeros_like(x)
    one_hot[np.argmax(x)] = 1.0
    gap = np.sort(x)[-1] - np.sort(x)[-2]
    if gap > 1e-3:  # distinct maximum: cold softmax is one-hot
        np.testing.assert_allclose(cold, one_hot, atol=1e-12)
    hot = al.softmax(x, temperature=1e9)
    np.testing.assert_allclose(hot, np.full_like(x, 1 / len(x)), rtol=1e-7)


# ---------------------------------------------------------------- attention


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-6)])
def test_sdpa_matches_loop_reference(dtype, tol):
    rng = np.random.default_rng(1)
    q, k, v = rand(rng, 2, 3, 4, 8, dtype=dtype), rand(rng, 2, 3, 5, 8, dtype=dtype), rand(rng, 2, 3, 5, 6, dtype=dtype)
    out, w = al.scaled_dot_product_attention(q, k, v)
    assert out.dtype == dtype and w.dtype == dtype
    assert out.shape == (2, 3, 4, 6) and w.shape == (2, 3, 4, 5)
    ref_out, ref_w = sdpa_ref(q, k, v)
    np.testing.assert_allclose(w, ref_w, rtol=tol, atol=tol)
    np.testing.assert_allclose(out, ref_out, rtol=tol, atol=tol)


def test_sdpa_default_scale_is_head_dim_not_anything_else():
    rng = np.random.default_rng(2)
    q, k, v = rand(rng, 3, 16), rand(rng, 4, 16), rand(rng, 4, 32)  # d_v != d_k on purpose
    _, w = al.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(w, al.softmax(q @ k.T / 4.0), rtol=1e-13)
    _, w2 = al.scaled_dot_product_attention(q, k, v, scale=1 / 32)
    np.testing.assert_allclose(w2, al.softmax(q @ k.T / 32.0), rtol=1e-13)


def test_sdpa_temperature_divides_scaled_logits():
    rng = np.random.default_rng(3)
    q, k, v = rand(rng, 3, 8), rand(rng, 5, 8), rand(rng, 5, 2)
    _, w = al.scaled_dot_product_attention(q, k, v, temperature=3.0)
    ref = sdpa_ref(q, k, v, temperature=3.0)[1]
    np.testing.assert_allclose(w, ref, rtol=1e-12)
    # dividing by sqrt(d_k) == unscaled softmax at temperature sqrt(d_k)
    _, w_unscaled_t = al.scaled_dot_product_attention(q, k, v, scale=1.0, temperature=math.sqrt(8))
    np.testing.assert_allclose(w_unscaled_t, al.scaled_dot_product_attention(q, k, v)[1], rtol=1e-12)


@pytest.mark.parametrize("kind", ["bool", "float", "bool-broadcast", "float-broadcast", "causal"])
def test_sdpa_masks_match_reference(kind):
    rng = np.random.default_rng(4)
    q, k, v = rand(rng, 2, 4, 8), rand(rng, 2, 4, 8), rand(rng, 2, 4, 3)
    if kind == "bool":
        mask = rng.random((2, 4, 4)) > 0.3
        mask[..., 0] = True
    elif kind == "float":
        mask = rng.standard_normal((2, 4, 4))
        mask[0, 1, 2] = -np.inf
    elif kind == "bool-broadcast":
        mask = np.array([True, False, True, True])  # (S,) broadcast over batch and queries
    elif kind == "float-broadcast":
        mask = np.array([[0.0], [-1.0], [-np.inf], [2.0]]) * np.ones((4, 4))
        mask[2] = [0.0, -np.inf, -np.inf, -np.inf]
    else:
        mask = np.tril(np.ones((4, 4), dtype=bool))
    out, w = al.scaled_dot_product_attention(q, k, v, mask=mask, temperature=1.5)
    ref_out, ref_w = sdpa_ref(q, k, v, mask=mask, temperature=1.5)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-15)
    if mask.dtype == bool:
        assert np.all(w[..., ~np.broadcast_to(mask, w.shape)] == 0) if mask.ndim == w.ndim else True


@pytest.mark.parametrize("mask", [np.zeros((3, 4), dtype=bool), np.full((3, 4), -np.inf)])
def test_sdpa_fully_masked_rows_give_zeros_not_nan(mask):
    rng = np.random.default_rng(5)
    q, k, v = rand(rng, 3, 8), rand(rng, 4, 8), rand(rng, 4, 2)
    mask = mask.copy()
    if mask.dtype == bool:
        mask[0] = True  # row 0 may attend everywhere; rows 1, 2 nowhere
    else:
        mask[0] = 0.0
    out, w = al.scaled_dot_product_attention(q, k, v, mask=mask)
    assert not np.isnan(out).any() and not np.isnan(w).any()
    np.testing.assert_array_equal(w[1:], 0.0)
    np.testing.assert_array_equal(out[1:], 0.0)
    np.testing.assert_allclose(w[0].sum(), 1.0)


def test_sdpa_broadcasts_leading_dims():
    rng = np.random.default_rng(6)
    q = rand(rng, 2, 1, 3, 8)  # (B, 1, L, d)
    k = rand(rng, 1, 4, 5, 8)  # (1, H, S, d)
    v = rand(rng, 5, 2)  # (S, dv), no leading dims
    out, w = al.scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 4, 3, 2) and w.shape == (2, 4, 3, 5)
    ref_out, ref_w = sdpa_ref(q, k, v)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12)
    out2, w2 = al.scaled_dot_product_attention(q[0, 0], k[0, 0], rand(rng, 3, 5, 2))  # only v batched
    assert w2.shape == (3, 3, 5) and out2.shape == (3, 3, 2)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 6))
def test_prop_permutation_equivariance(seed, L, S):
    rng = np.random.default_rng(seed)
    q, k, v = rand(rng, L, 4), rand(rng, S, 4), rand(rng, S, 3)
    pq, pk = rng.permutation(L), rng.permutation(S)
    out, w = al.scaled_dot_product_attention(q, k, v)
    out_p, w_p = al.scaled_dot_product_attention(q[pq], k[pk], v[pk])
    np.testing.assert_allclose(out_p, out[pq], atol=1e-12)  # permuting queries permutes outputs
    np.testing.assert_allclose(w_p, w[pq][:, pk], atol=1e-12)  # permuting keys+values permutes weights only


# ---------------------------------------------------------------- jacobian and entropy


def test_softmax_jacobian_matches_finite_differences():
    z = np.array([2.0, 1.0, 0.5, -1.0])
    p = al.softmax(z)
    jac = al.softmax_jacobian(p)
    h = 1e-6
    fd = np.stack([(al.softmax(z + h * e) - al.softmax(z - h * e)) / (2 * h) for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(jac, fd, atol=1e-9)
    assert jac.shape == (4, 4)
    np.testing.assert_allclose(jac.sum(axis=0), 0.0, atol=1e-15)  # rows of p sum to 1 => columns of J sum to 0


def test_softmax_jacobian_batched():
    p = al.softmax(np.random.default_rng(7).standard_normal((2, 3, 5)))
    jac = al.softmax_jacobian(p)
    assert jac.shape == (2, 3, 5, 5)
    np.testing.assert_allclose(jac[1, 2], np.diag(p[1, 2]) - np.outer(p[1, 2], p[1, 2]), rtol=1e-14)


def test_attention_entropy_known_values():
    assert al.attention_entropy([0.25] * 4) == pytest.approx(math.log(4), rel=1e-15)
    assert al.attention_entropy([1.0, 0.0, 0.0]) == 0.0
    assert al.attention_entropy([0.0, 0.0]) == 0.0  # fully masked row
    p = np.array([[0.5, 0.5], [0.9, 0.1]])
    np.testing.assert_allclose(al.attention_entropy(p.T, axis=0), al.attention_entropy(p), rtol=1e-15)
    assert al.attention_entropy([0.9, 0.1]) == pytest.approx(-(0.9 * math.log(0.9) + 0.1 * math.log(0.1)))
