"""tessel.compile / load_package / Model from Python, against numpy."""
import copy
import threading

import numpy as np
import pytest

import tessel


def test_matmul_model_matches_numpy(onnx_node_model):
    m = tessel.compile(onnx_node_model("test_matmul_2d"))
    assert m.input_names == ["a", "b"] and m.output_names == ["c"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4), dtype=np.float32)
    b = rng.standard_normal((4, 3), dtype=np.float32)
    m.run(a=a, b=b)
    c = m.get_output("c")
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (3, 3)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_inputs_by_position_and_from_non_contiguous_arrays(onnx_node_model):
    m = tessel.compile(onnx_node_model("test_matmul_2d"))
    rng = np.random.default_rng(1)
    a_t = rng.standard_normal((4, 3), dtype=np.float32)
    b = rng.standard_normal((4, 3), dtype=np.float32)
    b.flags.writeable = False  # read-only and transposed views are copied in
    m.set_input(0, a_t.T)
    m.set_input(1, b)
    m.run()
    np.testing.assert_allclose(m.get_output(0), a_t.T @ b, rtol=1e-5, atol=1e-5)


def test_resnet_mini_package_round_trip(models_dir, tmp_path):
    m = tessel.compile(models_dir / "resnet_mini.onnx", input_shapes={"data": [1, 3, 32, 32]})
    assert isinstance(m, tessel.CompiledModel) and "Conv" in m.fusion_summary
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32), dtype=np.float32)
    m.run(data=x)
    prob = m.get_output("prob")
    assert prob.shape == (1, 10)
    np.testing.assert_allclose(prob.sum(), 1.0, rtol=1e-5)  # a softmax

    m.export_package(tmp_path / "resnet.tar")
    loaded = tessel.load_package(str(tmp_path / "resnet.tar"))
    assert type(loaded) is tessel.Model and loaded.input_names == ["data"]
    loaded.run(data=x)
    np.testing.assert_allclose(loaded.get_output(0), prob, rtol=1e-5, atol=1e-6)

    # Unfused (-O0) kernels compute the same.
    unfused = tessel.compile(models_dir / "resnet_mini.onnx", opt_level=0)
    unfused.run(data=x)
    np.testing.assert_allclose(unfused.get_output(0), prob, rtol=1e-4, atol=1e-6)


def test_outputs_without_a_copy_share_the_model_buffer(onnx_node_model):
    m = tessel.compile(onnx_node_model("test_matmul_2d"))
    a = np.eye(3, 4, dtype=np.float32)
    b = np.ones((4, 3), np.float32)
    m.run(a=a, b=b)
    out = m.get_output(0, copy=False)
    assert isinstance(out, tessel.NDArray) and out.shape == (3, 3) and out.dtype == "float32"
    view = np.from_dlpack(out)  # zero-copy: valid until the next run
    np.testing.assert_array_equal(view, a @ b)
    m.run(a=2 * a, b=b)
    np.testing.assert_array_equal(view, 2 * (a @ b))
    kept = m.get_output(0)  # a copy: later runs leave it alone
    m.run(a=a, b=b)
    np.testing.assert_array_equal(kept, 2 * (a @ b))


def test_copies_of_a_model_run_independently(onnx_node_model):
    m = tessel.compile(onnx_node_model("test_matmul_2d"))
    other = copy.copy(m)
    ones = np.ones((4, 3), np.float32)
    m.run(a=np.ones((3, 4), np.float32), b=ones)
    other.run(a=np.zeros((3, 4), np.float32), b=ones)
    assert m.get_output(0).sum() == 36 and other.get_output(0).sum() == 0


def test_copies_run_in_threads_at_once(models_dir):
    m = tessel.compile(models_dir / "resnet_mini.onnx")
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32), dtype=np.float32)
    m.run(data=x)
    want = m.get_output(0)
    results = []

    def worker(model):  # run() releases the GIL: the threads' runs overlap
        for _ in range(20):
            model.run(data=x)
        results.append(model.get_output(0))

    threads = [threading.Thread(target=worker, args=(copy.copy(m),)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_errors_carry_tessels_message(onnx_node_model, models_dir, tmp_path):
    m = tessel.compile(onnx_node_model("test_matmul_2d"))
    with pytest.raises(tessel.Error, match=r"input 'a' is float64\[3, 4\].*float32\[3, 4\]"):
        m.set_input("a", np.zeros((3, 4)))
    with pytest.raises(tessel.Error, match="'nope'.*a, b|'nope'"):
        m.set_input("nope", np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError, match="output index 5 is out of range; the model has 1 outputs"):
        m.get_output(5)
    with pytest.raises(tessel.Error, match="'x'"):
        m.get_output("x")
    with pytest.raises(tessel.Error, match="no_such_model.onnx"):
        tessel.compile(tmp_path / "no_such_model.onnx")
    with pytest.raises(tessel.Error, match="target"):
        tessel.compile(models_dir / "resnet_mini.onnx", target="cuda")
    (tmp_path / "bad.tar").write_bytes(b"not a tar")
    with pytest.raises(tessel.Error, match="bad.tar"):
        tessel.load_package(tmp_path / "bad.tar")
    assert issubclass(tessel.Error, RuntimeError)
