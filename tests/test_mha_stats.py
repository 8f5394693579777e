"""attnlib.mha and attnlib.stats: multi-head attention vs a loop reference, theory vs Monte Carlo."""

import math

import numpy as np
import pytest
from reference import mha_ref, sdpa_ref

import attnlib as al


def random_mha(rng, e=12, h=3):
    return al.MultiHeadAttention(
        num_heads=h,
        in_proj_weight=rng.standard_normal((3 * e, e)) / math.sqrt(e),
        in_proj_bias=rng.standard_normal(3 * e) * 0.1,
        out_proj_weight=rng.standard_normal((e, e)) / math.sqrt(e),
        out_proj_bias=rng.standard_normal(e) * 0.1,
    )


def test_mha_matches_loop_reference_per_head():
    rng = np.random.default_rng(10)
    mha = random_mha(rng)
    xq, xk = rng.standard_normal((4, 12)), rng.standard_normal((6, 12))
    out, w = mha(xq, xk, xk)
    ref_out, ref_w = mha_ref(xq, xk, xk, 3, mha.in_proj_weight, mha.in_proj_bias, mha.out_proj_weight,
                             mha.out_proj_bias)
    assert out.shape == (4, 12) and w.shape == (3, 4, 6)
    np.testing.assert_allclose(out, ref_out, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, rtol=1e-11, atol=1e-14)


def test_mha_scales_by_head_dim_not_embed_dim():
    rng = np.random.default_rng(11)
    mha = random_mha(rng, e=32, h=4)  # d_k = 8, d_model = 32
    x = rng.standard_normal((5, 32))
    q, k = mha.project(x, x)
    assert q.shape == (4, 5, 8) and k.shape == (4, 5, 8)
    _, w = mha(x, x, x)
    np.testing.assert_allclose(w, al.softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(8)), rtol=1e-12)
    _, w_bug = mha(x, x, x, scale=1 / math.sqrt(32))
    assert not np.allclose(w, w_bug)


def test_mha_batched_with_shared_mask_matches_unbatched():
    rng = np.random.default_rng(12)
    mha = random_mha(rng)
    x = rng.standard_normal((2, 5, 12))
    causal = np.tril(np.ones((5, 5), dtype=bool))
    out, w = mha(x, x, x, mask=causal)
    assert out.shape == (2, 5, 12) and w.shape == (2, 3, 5, 5)
    for b in range(2):
        ob, wb = mha(x[b], x[b], x[b], mask=causal)
        np.testing.assert_allclose(out[b], ob, rtol=1e-12)
        np.testing.assert_allclose(w[b], wb, rtol=1e-12)
    assert np.all(w[..., ~causal] == 0)
    per_batch = np.ones((2, 5, 5), dtype=bool)
    per_batch[1, :, 3:] = False
    _, w2 = mha(x, x, x, mask=per_batch)
    assert np.all(w2[1, :, :, 3:] == 0) and np.all(w2[0, :, :, 3:] > 0)


def test_mha_value_projection_used():
    rng = np.random.default_rng(13)
    mha = random_mha(rng)
    q, k, v = mha.project(rng.standard_normal((2, 12)), rng.standard_normal((3, 12)), rng.standard_normal((3, 12)))
    assert v.shape == (3, 3, 4)
    out, _ = sdpa_ref(q, k, v)
    assert out.shape == (3, 2, 4)


@pytest.mark.parametrize("scheme", al.INIT_SCHEMES)
def test_init_weight_std_matches_theory(scheme):
    w = al.init_weight((256, 384), scheme, rng=14)
    assert w.shape == (256, 384)
    n = w.size  # 98,304 draws: relative s.e. of a sample std is about 1/sqrt(2n) = 0.23 %
    assert w.std() == pytest.approx(al.init_std((256, 384), scheme), rel=5 / math.sqrt(2 * n))
    assert abs(w.mean()) < 5 * al.init_std((256, 384), scheme) / math.sqrt(n)


def test_init_std_formulas():
    assert al.init_std((10, 64), "pytorch") == pytest.approx(1 / math.sqrt(3 * 64))
    assert al.init_std((10, 64), "gpt2") == 0.02
    assert al.init_std((64, 64), "xavier_uniform") == pytest.approx(1 / 8)
    w = al.init_weight((64, 64), "pytorch", rng=0)
    assert np.abs(w).max() <= 1 / 8


def test_mha_init_is_seeded_and_uses_scheme():
    a = al.MultiHeadAttention.init(64, 8, scheme="gpt2", rng=3)
    b = al.MultiHeadAttention.init(64, 8, scheme="gpt2", rng=3)
    np.testing.assert_array_equal(a.in_proj_weight, b.in_proj_weight)
    assert a.in_proj_weight.std() == pytest.approx(0.02, rel=0.02)
    assert a.head_dim == 8 and np.all(a.in_proj_bias == 0)


# ---------------------------------------------------------------- stats: theory vs Monte Carlo


def test_dot_product_variance_formula():
    assert al.dot_product_variance(64) == 64
    assert al.dot_product_variance(64, 2.0, 0.5) == pytest.approx(64.0)
    assert al.dot_product_variance(10, 3.0, 3.0) == pytest.approx(10 * 81)  # d_k sigma^4, not d_k sigma^2


def _check_mc(d_k, n, **kw):
    """Sample mean/variance within 5 standard errors of theory (Gaussian model)."""
    x = al.sample_dot_products(d_k, n, rng=123, **kw)
    mean, var = al.dot_product_moments(d_k, **kw)
    # s.e. of the mean = sqrt(var/n); of the variance ≈ var*sqrt((kurtosis-1)/n), kurtosis from the sample
    kurt = np.mean((x - x.mean()) ** 4) / x.var() ** 2
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n) + 1e-12
    assert abs(x.var() - var) < 5 * var * math.sqrt((kurt - 1) / n)
    return x


@pytest.mark.parametrize("d_k", [1, 4, 64, 512])
@pytest.mark.parametrize("sigma_q,sigma_k", [(1.0, 1.0), (2.0, 0.5), (0.3, 3.0)])
def test_mc_independent_zero_mean(d_k, sigma_q, sigma_k):
    x = _check_mc(d_k, 40_000, sigma_q=sigma_q, sigma_k=sigma_k)
    assert al.dot_product_variance(d_k, sigma_q, sigma_k) == al.dot_product_moments(d_k, sigma_q, sigma_k)[1]
    scaled_var = np.var(x / math.sqrt(d_k))
    assert scaled_var == pytest.approx(sigma_q**2 * sigma_k**2, rel=0.05)  # n=40k: s.e. about 0.7-1.6 %


@pytest.mark.parametrize("kw", [
    dict(mean_q=0.5, mean_k=-0.3),
    dict(rho=0.6),
    dict(rho=-0.8, sigma_q=2.0),
    dict(mean_q=0.4, mean_k=0.7, rho=0.5, sigma_q=1.5, sigma_k=0.5),
    dict(rho=1.0),
])
@pytest.mark.parametrize("d_k", [8, 128])
def test_mc_means_and_correlation(kw, d_k):
    _check_mc(d_k, 40_000, **kw)


def test_correlated_mean_grows_linearly_in_d_k():
    m16, _ = al.dot_product_moments(16, rho=0.5)
    m256, _ = al.dot_product_moments(256, rho=0.5)
    assert m256 / m16 == pytest.approx(16.0)
    assert (m256 / math.sqrt(256)) / (m16 / math.sqrt(16)) == pytest.approx(4.0)  # 1/sqrt(d) leaves sqrt(d) growth
    assert (m256 / 256) == pytest.approx(m16 / 16)  # 1/d keeps it constant


def test_sampler_is_seeded_and_chunks_consistently():
    a = al.sample_dot_products(1000, 5000, rng=np.random.default_rng(9))
    b = al.sample_dot_products(1000, 5000, rng=np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (5000,) and a.dtype == np.float64
