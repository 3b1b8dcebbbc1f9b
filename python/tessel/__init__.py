"""Tessel from Python: compile ONNX models and te kernels, and run them on numpy arrays.

    import numpy as np, tessel
    m = tessel.compile("models/resnet_mini.onnx", input_shapes={"data": [1, 3, 32, 32]})
    m.run(data=np.zeros((1, 3, 32, 32), np.float32))
    prob = m.get_output(0)                    # a numpy array

    from tessel import te
    A = te.placeholder((64, 64), name="A")
    B = te.compute((64, 64), lambda i, j: A[i, j] * 2, name="B")
    s = te.create_schedule(B)
    print(te.lower(s, [A, B]))
    f = tessel.build(s, [A, B])
    f(a, b)                                   # numpy arrays; b is written

Tessel's errors raise tessel.Error (tessel.ScheduleError for schedule primitives).
"""
import sys

from ._tessel import (
    CompiledModel,
    Error,
    Function,
    Model,
    Module,
    NDArray,
    ScheduleError,
    array,
    build,
    compile,
    empty,
    from_dlpack,
    load_package,
    num_threads,
    set_num_threads,
    te,
)

# `import tessel.te` and `from tessel.te import compute` work as for a package module.
sys.modules[__name__ + ".te"] = te

__all__ = [
    "CompiledModel", "Error", "Function", "Model", "Module", "NDArray", "ScheduleError", "array",
    "build", "compile", "empty", "from_dlpack", "load_package", "num_threads", "set_num_threads",
    "te",
]
__version__ = "0.1.0"
