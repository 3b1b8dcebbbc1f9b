// The tessel Python module (_tessel; python/tessel/__init__.py re-exports it): models (compile,
// load_package), arrays with DLPack, and the te DSL with build. Tessel's errors become
// tessel.Error (tessel.ScheduleError for a schedule primitive) with Tessel's message.
#include "bindings.h"
#include "ir/error.h"
#include "runtime/thread_pool.h"

PYBIND11_MODULE(_tessel, m) {
  namespace py = pybind11;
  using namespace tessel::python;
  py::object error = py::register_exception<tessel::Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<tessel::ScheduleError>(m, "ScheduleError", error.ptr());
  m.def("set_num_threads", &tessel::runtime::set_num_threads, py::arg("n"),
        "Threads that kernels run on (default: one per core).");
  m.def("num_threads", &tessel::runtime::num_threads);
  init_ndarray(m);
  init_model(m);
  init_te(m);
}
