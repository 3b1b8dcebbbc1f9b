"""The te DSL from Python: compute with lambdas, schedules, lower, build, calls on numpy arrays."""
import numpy as np
import pytest

import tessel
from tessel import te


def matmul(n, m, k):
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return A, B, C


def test_matmul_default_schedule_matches_numpy():
    A, B, C = matmul(32, 24, 16)
    assert C.shape == (32, 24) and C.dtype == "float32" and A.name == "A"
    assert [iv.name for iv in C.op.axis] == ["i", "j"]  # the lambda's parameter names
    s = te.create_schedule(C)
    text = str(te.lower(s, [A, B, C], name="mm"))
    assert "mm" in text and "for" in text
    f = tessel.build(s, [A, B, C], name="mm")
    a = np.random.default_rng(0).standard_normal((32, 16), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((16, 24), dtype=np.float32)
    c = np.zeros((32, 24), np.float32)
    f(a, b, c)  # numpy arrays in, results written into c
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert "ret" in f.source("asm") and "define" in f.source("ll")
    lowered = tessel.build(te.lower(s, [A, B, C], name="mm2"))  # from a PrimFunc
    assert lowered.entry == "mm2"
    c2 = np.zeros_like(c)
    lowered["mm2"](a, b, c2)
    np.testing.assert_array_equal(c2, c)


def test_matmul_hand_schedule_with_tessel_arrays():
    n = 64
    A, B, C = matmul(n, n, n)
    s = te.create_schedule(C)
    (k,) = C.op.reduce_axis
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 16)
    s[C].reorder(io, jo, k, ii, ji)
    s[C].vectorize(ji)
    s[C].parallel(io)
    assert "split C" in s.trace and "vectorize C" in s.trace
    text = str(te.lower(s, [A, B, C], name="mm"))
    assert "parallel" in text
    f = tessel.build(s, [A, B, C], name="mm")
    a = tessel.array(np.random.default_rng(0).standard_normal((n, n), dtype=np.float32))
    b = tessel.array(np.random.default_rng(1).standard_normal((n, n), dtype=np.float32))
    c = tessel.empty((n, n))
    f(a, b, c)  # aligned Tessel arrays: no copies
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-4, atol=1e-4)


def test_split_fuse_unroll_compute_at_and_inline():
    A = te.placeholder((8, 30), name="A")
    B = te.compute((8, 30), lambda i, j: te.exp(A[i, j]) + 1.0, name="B")
    C = te.compute((8, 30), lambda i, j: B[i, j] * 2, name="C")
    D = te.compute((8, 30), lambda i, j: te.if_then_else(j > 0, C[i, j - 1], 0.0), name="D")
    s = te.create_schedule(D)
    s[B].compute_inline()
    fused = s[C].fuse(*C.op.axis)
    outer, inner = s[C].split(fused, factor=16)
    s[C].unroll(inner)
    jo, ji = s[D].split(D.op.axis[1], nparts=3)
    s[C].compute_root()
    f = tessel.build(s, [A, D])
    a = np.random.default_rng(3).standard_normal((8, 30), dtype=np.float32)
    d = np.empty((8, 30), np.float32)
    f(a, d)
    expect = np.zeros_like(a)
    expect[:, 1:] = (np.exp(a[:, :-1]) + 1) * 2
    np.testing.assert_allclose(d, expect, rtol=1e-5)


def check_matmul(s, A, B, C, n, seed):
    """Builds the n x n x n matmul schedule s and checks it against numpy."""
    f = tessel.build(s, [A, B, C])
    a, b = np.random.default_rng(seed).standard_normal((2, n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_cache_write_computed_at_each_tile():
    A, B, C = matmul(64, 64, 64)
    s = te.create_schedule(C)
    CC = s.cache_write(C, "local")
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 16)
    s[CC].compute_at(s[C], jo)
    assert [st.name for st in s.stages] == ["A", "B", "C.local", "C"]
    assert "allocate C.local" in str(te.lower(s, [A, B, C]))
    check_matmul(s, A, B, C, 64, seed=5)
    with pytest.raises(ValueError, match="scope"):
        s.cache_write(C, "registers")


def test_rfactor_vectorizes_a_row_sum():
    A = te.placeholder((8, 64), name="A")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((8,), lambda i: te.sum(A[i, k], axis=k), name="C")
    s = te.create_schedule(C)
    rf = s.rfactor(C, k, 16)
    assert rf.shape == (8, 16) and [st.name for st in s.stages] == ["A", "C.rf", "C"]
    i, lane, outer = s[rf].leaf_iter_vars
    s[rf].reorder(i, outer, lane)
    assert lane.name == "k.inner"  # the axes read before the reorder keep naming their axes
    s[rf].vectorize(lane)
    s[rf].compute_at(s[C], C.op.axis[0])
    assert "rfactor C [1:k] [16] []" in s.trace
    f = tessel.build(s, [A, C])
    a = np.random.default_rng(4).standard_normal((8, 64), dtype=np.float32)
    c = np.zeros(8, np.float32)
    f(a, c)
    np.testing.assert_allclose(c, a.sum(axis=1), rtol=1e-5, atol=1e-5)
    with pytest.raises(tessel.ScheduleError, match="rfactor on stage 'C'"):
        s.rfactor(C, k, 4)


def test_pragma_auto_unroll_unrolls_the_inner_loops():
    A, B, C = matmul(32, 32, 32)
    s = te.create_schedule(C)
    io, ii = s[C].split(C.op.axis[0], 4)
    s[C].parallel(io)
    s[C].pragma(io, "auto_unroll_max_step", 4)
    assert "pragma C [3:i.outer] [4] [auto_unroll_max_step]" in s.trace
    check_matmul(s, A, B, C, 32, seed=7)
    with pytest.raises(tessel.ScheduleError, match="pragma 'unroll' on axis 'i.outer' is unknown"):
        s[C].pragma(io, "unroll", 4)


def test_cache_read_stages_an_input_for_its_reader():
    A, B, C = matmul(32, 32, 32)
    s = te.create_schedule(C)
    AA = s.cache_read(A, "local", [C])
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 8)
    s[AA].compute_at(s[C], io)
    assert "A.local" in [st.name for st in s.stages]
    assert "allocate A.local" in str(te.lower(s, [A, B, C]))
    check_matmul(s, A, B, C, 32, seed=6)
    with pytest.raises(ValueError, match="cache_read's scope"):
        s.cache_read(B, "texture", [C])


def test_bind_names_the_thread_and_rejects_unknown_tags():
    A, B, C = matmul(16, 16, 16)
    s = te.create_schedule(C)
    bx, tx = s[C].split(C.op.axis[0], 4)
    s[C].bind(bx, "blockIdx.x")
    assert "blockIdx.x" in str(te.lower(s, [A, B, C]))
    with pytest.raises(tessel.Error):
        s[C].bind(tx, "no_such_thread")


def test_expressions_and_scalar_arguments():
    n = te.var("n")
    A = te.placeholder((n,), "int32", name="A")
    B = te.compute((n,), lambda i: (A[i] * 3 + 1) // 2 % 5 - te.maximum(A[i], 2), name="B")
    assert isinstance(n + 1, te.Expr) and (2 * A[0]).dtype == "int32"
    assert (A[0].astype("float32")).dtype == "float32"
    f = tessel.build(te.create_schedule(B), [A, B])
    a = np.arange(-5, 5, dtype=np.int32)
    b = np.zeros(10, np.int32)
    f(a, b)
    np.testing.assert_array_equal(b, (a * 3 + 1) // 2 % 5 - np.maximum(a, 2))
    with pytest.raises(TypeError, match="truth value"):
        bool(A[0] > 1)


def test_reductions_with_where():
    A = te.placeholder((6, 10), name="A")
    k = te.reduce_axis((0, 10), name="k")
    mx = te.compute((6,), lambda i: te.max(A[i, k], axis=k), name="mx")
    pos = te.compute((6,), lambda i: te.sum(A[i, k], axis=[k], where=A[i, k] > 0), name="pos")
    f = tessel.build(te.create_schedule([mx, pos]), [A, mx, pos])
    a = np.random.default_rng(4).standard_normal((6, 10), dtype=np.float32)
    out_max, out_pos = np.empty(6, np.float32), np.empty(6, np.float32)
    f(a, out_max, out_pos)
    np.testing.assert_allclose(out_max, a.max(axis=1))
    np.testing.assert_allclose(out_pos, np.where(a > 0, a, 0).sum(axis=1), rtol=1e-5)


def test_errors_surface_as_python_exceptions():
    A, B, C = matmul(16, 16, 16)
    s = te.create_schedule(C)
    with pytest.raises(tessel.ScheduleError, match="C") as info:
        s[C].vectorize(C.op.reduce_axis[0])  # not a data-parallel innermost loop
    assert isinstance(info.value, tessel.Error)
    with pytest.raises(ValueError, match="factor"):
        s[C].split(C.op.axis[0])
    f = tessel.build(te.create_schedule(C), [A, B, C])
    with pytest.raises(tessel.Error, match="shape|16"):
        f(np.zeros((8, 16), np.float32), np.zeros((16, 16), np.float32),
          np.zeros((16, 16), np.float32))

    def bad(i):
        raise ZeroDivisionError("from the lambda")

    with pytest.raises(ZeroDivisionError, match="from the lambda"):
        te.compute((4,), bad)
    with pytest.raises(tessel.Error, match="target|cuda"):
        tessel.build(te.create_schedule(C), [A, B, C], target="cuda")
