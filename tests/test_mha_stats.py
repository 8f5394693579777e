"""attnlib.mha and attnlib.stats: multi-head attention vs a loop reference, theory vs Monte Carlo."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


# ---------------------------------------------------------------- stats: ratio of two means (delta method)

N_DRAWS, N_REP = 64, 4000  # draws behind one ratio; independent replications of it


def _paired(rng, rho, shape):
    """Paired draws a ~ N(10, 2²), b ~ N(5, 1²) with correlation rho: means far from 0 (CV 0.2)."""
    z1, z2 = rng.standard_normal((2, *shape))
    return 10 + 2 * z1, 5 + (rho * z1 + math.sqrt(1 - rho**2) * z2)


def _population_se(rho, n=N_DRAWS):
    """Delta-method SE from the population moments: r = 2, CVs 0.2 and 0.2, correlation rho."""
    return 2 * math.sqrt((0.04 + 0.04 - 2 * rho * 0.2 * 0.2) / n)


@pytest.mark.parametrize("rho", [0.0, 0.9, -0.6])
def test_ratio_se_matches_monte_carlo_spread(rho):
    # N_REP independent replications of a ratio of means of N_DRAWS pairs (the replications on axis 1).
    # The SD of the N_REP ratios has a relative sampling SE of 1/sqrt(2 N_REP) = 1.1 %, and the delta
    # method's own error at n = 64 with CVs of 0.2/8 per mean is below 0.5 %: 5 % is over 4 of those SEs.
    a, b = _paired(np.random.default_rng(2024), rho, (N_DRAWS, N_REP))
    ratio, se = al.ratio_of_means(a, b)
    assert ratio.shape == se.shape == (N_REP,)
    spread = ratio.std(ddof=1)
    assert spread == pytest.approx(_population_se(rho), rel=0.05)
    assert np.sqrt(np.mean(se**2)) == pytest.approx(spread, rel=0.05)  # the estimated SE, replication by replication
    assert abs(ratio.mean() - 2) < 5 * spread / math.sqrt(N_REP) + 2 * _population_se(rho) ** 2  # bias O(1/n)
    # ~95 % of the replications land within 1.96 estimated SEs of the true ratio 2 (binomial SE 0.35 %)
    assert abs(np.mean(np.abs(ratio - 2) < 1.96 * se) - 0.95) < 0.02


def test_ratio_se_without_the_covariance_term_would_fail_the_monte_carlo():
    # the check above has power: the hand-written SE without the covariance term (lessons 07 and 10 had
    # it) is sqrt(10) = 3.2 times too large at rho = 0.9, far outside the 5 % tolerance
    a, b = _paired(np.random.default_rng(7), 0.9, (N_DRAWS, N_REP))
    ratio, se = al.ratio_of_means(a, b)
    no_cov = ratio * np.hypot(a.std(0, ddof=1) / a.mean(0), b.std(0, ddof=1) / b.mean(0)) / math.sqrt(N_DRAWS)
    spread = ratio.std(ddof=1)
    assert np.sqrt(np.mean(no_cov**2)) / spread > 2.5
    assert np.sqrt(np.mean(se**2)) == pytest.approx(spread, rel=0.05)


def test_ratio_of_means_equals_the_covariance_formula_and_handles_axes():
    rng = np.random.default_rng(3)
    a, b = _paired(rng, 0.5, (40,))
    c = np.cov(a, b)  # ddof = 1
    r = a.mean() / b.mean()
    formula = r * math.sqrt(c[0, 0] / a.mean() ** 2 + c[1, 1] / b.mean() ** 2
                            - 2 * c[0, 1] / (a.mean() * b.mean())) / math.sqrt(40)
    ratio, se = al.ratio_of_means(a, b)
    assert isinstance(ratio, float) and isinstance(se, float)
    assert ratio == pytest.approx(r, rel=1e-14) and se == pytest.approx(formula, rel=1e-12)
    a3, b3 = _paired(rng, -0.3, (5, 30, 4))
    r_mid, se_mid = al.ratio_of_means(a3, b3, axis=1)
    r_first, se_first = al.ratio_of_means(np.moveaxis(a3, 1, 0), np.moveaxis(b3, 1, 0))
    r_last, se_last = al.ratio_of_means(np.moveaxis(a3, 1, -1), np.moveaxis(b3, 1, -1), axis=-1)
    assert r_mid.shape == se_mid.shape == (5, 4)
    np.testing.assert_allclose(r_mid, r_first, rtol=1e-14)
    np.testing.assert_allclose(se_mid, se_first, rtol=1e-12)
    np.testing.assert_allclose(se_mid, se_last, rtol=1e-12)


def test_ratio_of_means_is_exact_when_a_is_proportional_to_b():
    b = np.random.default_rng(4).normal(5.0, 1.0, 50)
    ratio, se = al.ratio_of_means(3 * b, b)
    assert ratio == pytest.approx(3.0, rel=1e-14) and se < 1e-14
    assert al.ratio_of_means([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]) == (0.0, 0.0)  # mean(a) = 0 is fine


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 50), rho=st.floats(-0.95, 0.95),
       c=st.floats(0.01, 100.0), d=st.floats(-100.0, -0.01) | st.floats(0.01, 100.0))
def test_ratio_of_means_properties(seed, n, rho, c, d):
    a, b = _paired(np.random.default_rng(seed), rho, (n,))
    r, se = al.ratio_of_means(a, b)
    assert se >= 0
    # units: rescaling a by c and b by d rescales the ratio by c/d and its SE by |c/d|
    r2, se2 = al.ratio_of_means(c * a, d * b)
    assert r2 == pytest.approx(c / d * r, rel=1e-9) and se2 == pytest.approx(abs(c / d) * se, rel=1e-9, abs=1e-300)
    # swapping a and b: the ratio inverts and, by the delta method, se(b/a) = se(a/b) / r²
    r3, se3 = al.ratio_of_means(b, a)
    assert r3 == pytest.approx(1 / r, rel=1e-9) and se3 == pytest.approx(se / r**2, rel=1e-9)
    # the order of the draws does not matter
    perm = np.random.default_rng(seed + 1).permutation(n)
    assert al.ratio_of_means(a[perm], b[perm]) == pytest.approx((r, se), rel=1e-9)


@pytest.mark.parametrize("call,exc,pattern", [
    (lambda: al.ratio_of_means(np.ones(5), np.ones(6)), ValueError,
     r"a and b must have the same shape \(paired draws\); got \(5,\) and \(6,\)"),
    (lambda: al.ratio_of_means([1.0], [2.0]), ValueError, r"at least 2 draws along axis=0 .*; got 1"),
    (lambda: al.ratio_of_means(np.ones((4, 1)), np.ones((4, 1)), axis=1), ValueError, r"at least 2 draws along axis=1"),
    (lambda: al.ratio_of_means(1.0, 2.0), ValueError, r"a and b must have at least one dimension"),
    (lambda: al.ratio_of_means(np.ones(4), np.ones(4), axis=2), ValueError, r"axis=2 is out of range .* 1 dimension"),
    (lambda: al.ratio_of_means(np.ones(4), np.ones(4), axis=0.5), TypeError, r"axis must be an integer"),
    (lambda: al.ratio_of_means([1.0, 2.0], [1.0, -1.0]), ValueError, r"mean\(b\) is 0 .*undefined"),
    (lambda: al.ratio_of_means([1.0, np.nan], [1.0, 2.0]), ValueError, r"a contains NaN or inf"),
    (lambda: al.ratio_of_means([1.0, 2.0], [1.0, np.inf]), ValueError, r"b contains NaN or inf"),
    (lambda: al.ratio_of_means(["x", "y"], [1.0, 2.0]), TypeError, r"a must be a numeric array"),
    (lambda: al.ratio_of_means([1.0, 2.0], [True, False]), TypeError, r"b must be a real-valued float array"),
])
def test_ratio_of_means_bad_input_is_named(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
