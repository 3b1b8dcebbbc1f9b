#include "ndarray.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "bindings.h"

namespace tessel::python {

namespace {

// A foreign DLPack tensor whose deleter may need the GIL (numpy's does): the last NDArray holding
// it can die in a thread that released the GIL (a model run, a kernel call).
struct ForeignTensor {
  DLManagedTensor self;
  DLManagedTensor* inner;
};

void delete_foreign(DLManagedTensor* t) {
  auto* f = static_cast<ForeignTensor*>(t->manager_ctx);
  {
    py::gil_scoped_acquire gil;
    if (f->inner->deleter) f->inner->deleter(f->inner);
  }
  delete f;
}

// Takes a "dltensor" capsule (renaming it "used_dltensor", as the protocol asks).
runtime::NDArray from_capsule(const py::object& capsule) {
  PyObject* c = capsule.ptr();
  if (!PyCapsule_IsValid(c, "dltensor")) {
    throw py::value_error("expected a DLPack capsule named 'dltensor' that was not consumed yet");
  }
  auto* inner = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
  PyCapsule_SetName(c, "used_dltensor");
  auto* f = new ForeignTensor{{inner->dl_tensor, nullptr, &delete_foreign}, inner};
  f->self.manager_ctx = f;
  return runtime::NDArray::from_dlpack(&f->self);  // runs the deleter if Tessel rejects it
}

// A "dltensor" capsule sharing `a`; its destructor frees the tensor unless a consumer took it.
py::capsule to_capsule(const runtime::NDArray& a) {
  DLManagedTensor* t = a.to_dlpack();
  PyObject* c = PyCapsule_New(t, "dltensor", [](PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (t->deleter) t->deleter(t);
  });
  if (!c) {
    t->deleter(t);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(c);
}

py::object numpy() { return py::module_::import("numpy"); }

runtime::NDArray empty(const py::sequence& shape, const std::string& dtype) {
  return runtime::NDArray::empty(shape.cast<std::vector<int64_t>>(), DataType::parse(dtype));
}

// A compact, aligned copy of any array-like.
runtime::NDArray copy_of(const py::object& arr) {
  py::array compact = numpy().attr("ascontiguousarray")(arr);
  auto shape = compact.attr("shape").cast<std::vector<int64_t>>();
  runtime::NDArray nd =
      runtime::NDArray::empty(shape, DataType::parse(py::str(compact.attr("dtype"))));
  nd.copy_from(compact.data(), static_cast<size_t>(compact.nbytes()));
  return nd;
}

bool is_aligned(const runtime::NDArray& a) {
  return reinterpret_cast<uintptr_t>(a.raw_data()) % runtime::kArrayAlignment == 0;
}

}  // namespace

ArrayArg to_ndarray(py::handle obj, bool aligned) {
  if (py::isinstance<runtime::NDArray>(obj)) {
    auto a = obj.cast<runtime::NDArray>();
    if (aligned && !is_aligned(a)) return {a.copy(), py::reinterpret_borrow<py::object>(obj)};
    return {a, py::none()};
  }
  py::object arr = numpy().attr("asarray")(obj);
  py::object flags = arr.attr("flags");
  bool writeable = flags.attr("writeable").cast<bool>();
  // numpy (1.24) shares only writeable arrays over DLPack; Tessel takes compact row-major ones.
  if (writeable && flags.attr("c_contiguous").cast<bool>()) {
    runtime::NDArray shared;
    try {
      shared = from_capsule(arr.attr("__dlpack__")());
    } catch (const py::error_already_set&) {
      // A dtype numpy does not export (bool in older versions): copy instead.
    }
    if (shared.defined() && (!aligned || is_aligned(shared))) return {shared, py::none()};
  }
  return {copy_of(arr), writeable ? arr : py::none()};
}

void write_back(const ArrayArg& arg) {
  if (arg.original.is_none()) return;
  if (py::isinstance<runtime::NDArray>(arg.original)) {
    arg.original.cast<runtime::NDArray>().copy_from(arg.array.raw_data(), arg.array.nbytes());
  } else {
    numpy().attr("copyto")(arg.original, numpy_view(arg.array));
  }
}

py::object numpy_view(const runtime::NDArray& a) {
  auto* keep = new runtime::NDArray(a);
  py::capsule owner(keep, [](void* p) { delete static_cast<runtime::NDArray*>(p); });
  return py::array(py::dtype(a.dtype().str()), a.shape(), {}, a.raw_data(), owner);
}

py::object numpy_copy(const runtime::NDArray& a) { return numpy_view(a).attr("copy")(); }

void init_ndarray(py::module_& m) {
  py::class_<runtime::NDArray>(m, "NDArray", R"(A Tessel array: compact, row-major, 64-byte aligned
(what kernels take without a copy). numpy.from_dlpack(a) and tessel.from_dlpack(x) share memory.)")
      .def_property_readonly(
          "shape", [](const runtime::NDArray& a) { return py::tuple(py::cast(a.shape())); })
      .def_property_readonly("dtype", [](const runtime::NDArray& a) { return a.dtype().str(); })
      .def_property_readonly("nbytes", &runtime::NDArray::nbytes)
      .def("numpy", &numpy_copy, "A numpy copy of the array.")
      .def(
          "__array__",
          [](const runtime::NDArray& a, py::object dtype, py::object copy) {
            py::object view = numpy_view(a);
            return dtype.is_none() ? view : view.attr("astype")(dtype);
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def(
          "copyfrom",
          [](runtime::NDArray& a, py::handle src) {
            py::array c = numpy().attr("ascontiguousarray")(src, a.dtype().str());
            a.copy_from(c.data(), static_cast<size_t>(c.nbytes()));
          },
          "Copies an array of the same shape and size into this one.")
      .def(
          "__dlpack__",
          [](const runtime::NDArray& a, py::args, py::kwargs) { return to_capsule(a); },
          "A DLPack capsule sharing this array's memory.")
      .def("__dlpack_device__",
           [](const runtime::NDArray&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); })
      .def("__repr__", [](const runtime::NDArray& a) {
        return py::str("tessel.NDArray(shape={}, dtype={})")
            .format(py::tuple(py::cast(a.shape())), a.dtype().str());
      });

  m.def("empty", &empty, py::arg("shape"), py::arg("dtype") = "float32",
        "An uninitialized, aligned array.");
  m.def(
      "array", [](py::handle obj) { return copy_of(numpy().attr("asarray")(obj)); }, py::arg("obj"),
      "An aligned copy of any array (kernels then use it without a copy).");
  m.def(
      "from_dlpack",
      [](py::object obj) {
        return from_capsule(py::hasattr(obj, "__dlpack__") ? obj.attr("__dlpack__")() : obj);
      },
      py::arg("obj"), "Shares the memory of an object with __dlpack__ (or a DLPack capsule).");
}

}  // namespace tessel::python
