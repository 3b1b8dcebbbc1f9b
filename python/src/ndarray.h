// Arrays between Python and Tessel: tessel.NDArray (a runtime::NDArray with DLPack both ways) and
// the conversion of any array argument (numpy's included) into an NDArray, sharing its memory
// where Tessel can use it as it is.
#pragma once

#include <pybind11/pybind11.h>

#include "runtime/ndarray.h"

namespace tessel::python {

namespace py = pybind11;

// An array argument as Tessel takes it. When `array` had to be a copy (the original was strided,
// read-only or, where `aligned` was asked for, not 64-byte aligned), `original` is the array to
// write results back into; otherwise None.
struct ArrayArg {
  runtime::NDArray array;
  py::object original;
};

// A tessel.NDArray as it is; anything else through numpy: its memory shared over DLPack when it is
// compact, writeable and (if `aligned`, as kernels need) 64-byte aligned, else a compact copy.
ArrayArg to_ndarray(py::handle obj, bool aligned);
// Copies a kernel's results back into an argument that went in as a copy.
void write_back(const ArrayArg& arg);
// A numpy array over `a`'s memory (keeping `a` alive), and a copy of it.
py::object numpy_view(const runtime::NDArray& a);
py::object numpy_copy(const runtime::NDArray& a);

}  // namespace tessel::python
