"""The blocked, cache-friendly scaled_dot_product_attention equals the textbook formula.

attnlib.core computes attention in cache-sized blocks (see ``_blocks``) for speed. These
tests check it against a straightforward float64 reference written here, on random inputs
with broadcasting, every kind of mask, fully masked rows, temperature and scale, and with
the block size shrunk so that every way of cutting the work into blocks is exercised.
The same holds for ``need_weights=False``, which never forms the weights array and works
in one reused scratch block instead. No timing is asserted here: benchmarks/bench_sdpa.py
measures speed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import sdpa_ref

from attnlib import core, scaled_dot_product_attention

TOL = {np.float32: 1e-6, np.float64: 1e-12}


def reference_sdpa(q, k, v, mask=None, scale=None, temperature=1.0):
    """Textbook attention in float64, one query row at a time; fully masked rows give 0."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    L, S, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    qb = np.broadcast_to(q, (*batch, L, q.shape[-1]))
    kb = np.broadcast_to(k, (*batch, S, k.shape[-1]))
    vb = np.broadcast_to(v, (*batch, S, d_v))
    mb = None if mask is None else np.broadcast_to(np.asarray(mask), (*batch, L, S))
    weights = np.zeros((*batch, L, S))
    out = np.zeros((*batch, L, d_v))
    for b in np.ndindex(*batch):
        for i in range(L):
            z = np.array([qb[b][i] @ kb[b][j] for j in range(S)]) * scale
            if mb is not None and mb.dtype == bool:
                z = np.where(mb[b][i], z, -np.inf)
            elif mb is not None:
                z = z + mb[b][i].astype(np.float64)
            z = z / temperature
            if np.all(np.isneginf(z)):
                continue  # a fully masked query: weights 0, output 0
            e = np.exp(z - z.max())
            weights[b][i] = e / e.sum()
            out[b][i] = weights[b][i] @ vb[b]
    return out, weights


def _inputs(rng, q_shape, k_shape, v_shape, dtype):
    return tuple(rng.standard_normal(s).astype(dtype) for s in (q_shape, k_shape, v_shape))


def _mask(rng, kind, shape):
    """A mask of ``kind`` (None, 'bool' or 'float') of ``shape`` with one fully masked row."""
    if kind is None:
        return None
    if kind == "bool":
        m = rng.random(shape) < 0.6
        m[..., 0, :] = False
        return m
    m = rng.standard_normal(shape)
    m[rng.random(shape) < 0.3] = -np.inf
    m[..., 0, :] = -np.inf
    return m


CASES = [
    # q shape, k shape, v shape, mask shape
    ((5, 4), (7, 4), (7, 3), (5, 7)),
    ((2, 3, 6, 8), (2, 3, 9, 8), (2, 3, 9, 5), (6, 9)),
    ((2, 1, 6, 8), (1, 3, 9, 8), (3, 9, 2), (2, 1, 6, 9)),  # leading dims broadcast
    ((40, 1, 3, 2), (3, 5, 2), (5, 4), (1, 3, 5)),  # many tiny problems
    ((1, 2, 33, 16), (1, 2, 17, 16), (1, 2, 17, 16), (33, 17)),
]


@pytest.mark.parametrize("block", [None, 1, 10, 60, 300])
@pytest.mark.parametrize("mask_kind", [None, "bool", "float"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "q" + "x".join(map(str, c[0])) + "-k" + "x".join(map(str, c[1])))
def test_matches_reference(case, dtype, mask_kind, block, monkeypatch):
    """Every block size (rows split, batch split, all at once) gives the reference answer."""
    if block is not None:
        monkeypatch.setattr(core, "_BLOCK_ELEMENTS", block)
    rng = np.random.default_rng([CASES.index(case), [None, "bool", "float"].index(mask_kind)])
    q, k, v = _inputs(rng, *case[:3], dtype)
    mask = _mask(rng, mask_kind, case[3])
    for kw in ({}, {"temperature": 0.6}, {"scale": 0.3, "temperature": 2.5}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out, w = scaled_dot_product_attention(q, k, v, mask=mask, **kw)
        ref_out, ref_w = reference_sdpa(q, k, v, mask=mask, **kw)
        assert out.dtype == w.dtype == dtype
        assert out.shape == ref_out.shape and w.shape == ref_w.shape
        np.testing.assert_allclose(w, ref_w, rtol=0, atol=TOL[dtype])
        np.testing.assert_allclose(out, ref_out, rtol=0, atol=TOL[dtype])
        if mask_kind is not None:  # row 0 is fully masked in every case
            assert not w[..., 0, :].any() and not out[..., 0, :].any()


def test_benchmark_shape_float32_matches_reference():
    """The benchmark's own shape, float32, against a vectorised float64 version of the formula."""
    rng = np.random.default_rng(7)
    q, k, v = _inputs(rng, (4, 8, 512, 64), (4, 8, 512, 64), (4, 8, 512, 64), np.float32)
    out, w = scaled_dot_product_attention(q, k, v)
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    z = q64 @ np.swapaxes(k64, -1, -2) / 8.0
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    ref_w = e / e.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(w, ref_w, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out, ref_w @ v64, rtol=0, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    lead=st.lists(st.integers(0, 5), min_size=0, max_size=3),
    rows=st.integers(0, 7),
    row=st.integers(1, 9),
    block=st.integers(1, 200),
)
def test_blocks_cover_every_element_once(lead, rows, row, block):
    """_blocks cuts (*lead, rows, row) into pieces that cover each element exactly once."""
    shape = (*lead, rows)
    count = np.zeros((*shape, row), dtype=int)
    old = core._BLOCK_ELEMENTS
    core._BLOCK_ELEMENTS = block
    try:
        for idx in core._blocks(shape, row):
            count[idx] += 1
    finally:
        core._BLOCK_ELEMENTS = old
    assert (count == 1).all()


@pytest.mark.parametrize("block", [None, 1, 4])
def test_overflow_still_raises(block, monkeypatch):
    """Logits that overflow to +inf raise ValueError, whichever block they fall in."""
    if block is not None:
        monkeypatch.setattr(core, "_BLOCK_ELEMENTS", block)
    q = np.ones((2, 3, 4), dtype=np.float32)
    q[1, 2] = 1e30
    with np.errstate(over="ignore"), pytest.raises(ValueError, match="overflowed to ±inf"):
        scaled_dot_product_attention(q, q, q)


def test_overflow_hidden_behind_nan_in_the_same_row_raises():
    """A row holding both NaN (+inf logit + -inf mask) and +inf has a NaN maximum; the +inf is still found."""
    q = np.full((1, 2), 1e30, dtype=np.float32)
    k = np.full((2, 2), 1e30, dtype=np.float32)  # both logits overflow to +inf
    mask = np.array([[-np.inf, 0.0]])  # row: [+inf - inf = nan, +inf]
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(ValueError, match="overflowed to ±inf"):
        scaled_dot_product_attention(q, k, k, mask=mask)


def test_masked_overflow_is_not_an_error():
    """+inf logits at positions a boolean mask blocks are discarded, as before the blocking."""
    q = np.full((2, 2), 1e30, dtype=np.float32)
    k = np.array([[1.0, 1.0], [1e30, 1e30]], dtype=np.float32)  # logits column 1 is +inf
    v = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    mask = np.array([True, False])  # the huge key is never attended
    with np.errstate(over="ignore"):
        out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_array_equal(w, [[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(out, [[1.0, 2.0], [1.0, 2.0]])


def test_nan_and_inf_inputs_rejected():
    """Validation of q, k, v happens before any block is computed."""
    q = np.ones((3, 2))
    bad = q.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="k contains NaN"):
        scaled_dot_product_attention(q, bad, q)
    bad[1, 1] = np.inf
    with pytest.raises(ValueError, match="v contains inf"):
        scaled_dot_product_attention(q, q, bad)


def test_empty_query_axis():
    """L = 0 queries give empty outputs of the right shapes and dtype."""
    q = np.ones((2, 0, 4), dtype=np.float32)
    k = np.ones((2, 5, 4), dtype=np.float32)
    v = np.ones((2, 5, 3), dtype=np.float32)
    out, w = scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 0, 3) and w.shape == (2, 0, 5)
    assert out.dtype == w.dtype == np.float32


# ---------------------------------------------------------------- need_weights=False

LOOP_CASES = [  # small enough for the plain-loop reference in tests/reference.py
    # q shape, k shape, v shape, mask shape
    ((5, 4), (7, 4), (7, 3), (5, 7)),
    ((2, 1, 4, 3), (1, 2, 6, 3), (6, 2), (2, 1, 4, 6)),  # leading dims broadcast
]


@pytest.mark.parametrize("block", [None, 1, 10, 30])
@pytest.mark.parametrize("mask_kind", [None, "bool", "float"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", LOOP_CASES, ids=["2d", "broadcast"])
def test_no_weights_matches_loop_reference(case, dtype, mask_kind, block, monkeypatch):
    """need_weights=False: output equal to the loop reference, weights None, every block size."""
    if block is not None:
        monkeypatch.setattr(core, "_BLOCK_ELEMENTS", block)
    rng = np.random.default_rng([10 + LOOP_CASES.index(case), [None, "bool", "float"].index(mask_kind)])
    q, k, v = _inputs(rng, *case[:3], dtype)
    mask = _mask(rng, mask_kind, case[3])
    for kw in ({}, {"temperature": 0.6}, {"scale": 0.3, "temperature": 2.5}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out, w = scaled_dot_product_attention(q, k, v, mask=mask, need_weights=False, **kw)
        ref_out, _ = sdpa_ref(q, k, v, mask=mask, **kw)
        assert w is None
        assert out.dtype == dtype and out.shape == ref_out.shape
        np.testing.assert_allclose(out, ref_out, rtol=0, atol=TOL[dtype])
        if mask_kind is not None:  # row 0 is fully masked: output exactly 0, not NaN
            assert not out[..., 0, :].any()
        # the two paths differ only in whether the normalised block is kept
        out_w, _ = scaled_dot_product_attention(q, k, v, mask=mask, need_weights=True, **kw)
        np.testing.assert_allclose(out, out_w, rtol=0, atol=TOL[dtype] / 10)


def test_no_weights_benchmark_shape_float32():
    """The benchmark's shape, float32, need_weights=False: the same output as with weights."""
    rng = np.random.default_rng(8)
    q, k, v = _inputs(rng, (4, 8, 512, 64), (4, 8, 512, 64), (4, 8, 512, 64), np.float32)
    out, w = scaled_dot_product_attention(q, k, v, need_weights=False)
    assert w is None and out.dtype == np.float32
    ref_out, _ = reference_sdpa(q[0, :2], k[0, :2], v[0, :2])  # two heads: the rest use the same code
    np.testing.assert_allclose(out[0, :2], ref_out, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v)[0], rtol=0, atol=1e-7)


@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_masked_everything(need_weights):
    """Every query fully masked: output all 0 (no NaN, no warning); weights all 0 or None."""
    q, k, v = (np.ones((2, 3, 4)) for _ in range(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, w = scaled_dot_product_attention(q, k, v, mask=np.zeros((3, 3), bool), need_weights=need_weights)
    np.testing.assert_array_equal(out, 0.0)
    assert w is None if not need_weights else not w.any()


@pytest.mark.parametrize("block", [None, 1, 4])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_no_weights_overflow_raises(sign, block, monkeypatch):
    """Logits overflowing to +inf or -inf raise without weights too, in whichever block."""
    if block is not None:
        monkeypatch.setattr(core, "_BLOCK_ELEMENTS", block)
    q = np.ones((2, 3, 4), dtype=np.float32)
    q[1, 2] = 1e30
    k = q.copy()
    k[1, 2] *= sign
    with np.errstate(over="ignore"), pytest.raises(ValueError, match="overflowed to ±inf"):
        scaled_dot_product_attention(q, k, q, need_weights=False)


@pytest.mark.parametrize("need_weights", [True, False])
def test_overflow_turned_nan_by_a_float_mask_raises(need_weights):
    """Row [finite, +inf] plus float mask [0, -inf] is [finite, NaN]: an error, not a NaN output."""
    q = np.full((1, 2), 1e30, dtype=np.float32)
    k = np.array([[1.0, 1.0], [1e30, 1e30]], dtype=np.float32)  # logits: [2e30 / sqrt 2, +inf]
    mask = np.array([0.0, -np.inf])
    with np.errstate(over="ignore"), pytest.raises(ValueError, match="overflowed to ±inf"):
        scaled_dot_product_attention(q, k, k, mask=mask, need_weights=need_weights)


@pytest.mark.parametrize("bad", [None, 0, 1, "no", [False]])
def test_need_weights_must_be_bool(bad):
    q = np.ones((3, 4))
    with pytest.raises(TypeError, match=r"need_weights must be True or False; got " + type(bad).__name__):
        scaled_dot_product_attention(q, q, q, need_weights=bad)


def test_need_weights_numpy_bool_accepted():
    q = np.eye(3)
    out, w = scaled_dot_product_attention(q, q, q, need_weights=np.bool_(False))
    assert w is None
    np.testing.assert_array_equal(out, scaled_dot_product_attention(q, q, q)[0])


def test_no_weights_empty_query_axis():
    q = np.ones((2, 0, 4), dtype=np.float32)
    k = np.ones((2, 5, 4), dtype=np.float32)
    out, w = scaled_dot_product_attention(q, k, k[..., :3], need_weights=False)
    assert w is None and out.shape == (2, 0, 3) and out.dtype == np.float32
