// The parts of the tessel Python module (module.cc puts them together).
#pragma once

#include <pybind11/pybind11.h>

namespace tessel::python {

namespace py = pybind11;

void init_ndarray(py::module_& m);
void init_model(py::module_& m);
void init_te(py::module_& m);

}  // namespace tessel::python
