"""tessel.NDArray and DLPack exchange with numpy, both ways."""
import numpy as np
import pytest

import tessel


def test_numpy_views_a_tessel_array_without_a_copy():
    a = tessel.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a.shape == (3, 4) and a.dtype == "float32" and a.nbytes == 48
    assert a.__dlpack_device__() == (1, 0)  # kDLCPU
    view = np.from_dlpack(a)  # read-only in numpy < 2
    writable = np.asarray(a)  # through __array__: a writeable view
    writable[1, 2] = -1
    assert view[1, 2] == -1 and a.numpy()[1, 2] == -1  # numpy() copies
    assert view.ctypes.data == writable.ctypes.data
    assert view.ctypes.data % 64 == 0  # tessel arrays are aligned for kernels


def test_tessel_shares_a_numpy_array_through_dlpack():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tessel.from_dlpack(x)
    assert t.shape == (2, 3) and t.dtype == "int32"
    x[0, 0] = 42
    assert np.from_dlpack(t)[0, 0] == 42
    t2 = tessel.from_dlpack(x.__dlpack__())  # a capsule works too
    assert t2.numpy()[0, 0] == 42
    del x  # t keeps numpy's memory alive
    assert t.numpy()[0, 0] == 42


def test_capsules_are_consumed_once():
    cap = np.zeros(3, np.float32).__dlpack__()
    tessel.from_dlpack(cap)
    with pytest.raises(ValueError, match="DLPack capsule"):
        tessel.from_dlpack(cap)


def test_strided_arrays_are_rejected_over_dlpack_and_copied_by_array():
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    with pytest.raises(tessel.Error):
        tessel.from_dlpack(x[:, ::2])
    np.testing.assert_array_equal(tessel.array(x[:, ::2]).numpy(), x[:, ::2])


def test_empty_and_copyfrom():
    e = tessel.empty((2, 2), "float64")
    e.copyfrom(np.ones((2, 2)))
    np.testing.assert_array_equal(e.numpy(), np.ones((2, 2)))
    with pytest.raises(tessel.Error, match="dtype|float|type"):
        tessel.empty((2,), "complex128")
