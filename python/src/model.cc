// tessel.compile, tessel.load_package and the models they return.
#include "runtime/model.h"

#include <fmt/format.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <optional>

#include "bindings.h"
#include "driver/compile.h"
#include "ndarray.h"

namespace tessel::python {

namespace {

using runtime::Model;

// An input or output by name (str) or position (int).
template <class Fn>
auto by_key(const py::handle& key, Fn&& fn) {
  if (py::isinstance<py::int_>(key)) return fn(key.cast<int>());
  return fn(key.cast<std::string>());
}

std::vector<std::string> names(int n, const std::function<const std::string&(int)>& name) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(name(i));
  return out;
}

void set_input(Model& m, const py::handle& key, const py::handle& value) {
  ArrayArg arg = to_ndarray(value, /*aligned=*/false);  // set_input copies into the model
  by_key(key, [&](auto k) { m.set_input(k, arg.array); });
}

CompiledModel compile_model(const std::filesystem::path& path, const std::string& target,
                            const std::map<std::string, std::vector<int64_t>>& input_shapes,
                            const std::optional<std::filesystem::path>& tuning_records,
                            int opt_level, const std::vector<std::string>& disabled_passes) {
  CompileOptions opt;
  opt.target = target;
  opt.input_shapes = input_shapes;
  if (tuning_records) opt.tuning_records = tuning_records->string();
  opt.opt_level = opt_level;
  opt.disabled_passes = disabled_passes;
  py::gil_scoped_release release;
  return compile(path.string(), opt);
}

}  // namespace

void init_model(py::module_& m) {
  py::class_<Model>(m, "Model", R"(A runnable model (tessel.compile or tessel.load_package).
One model per thread: copy.copy(model) gives a thread its own, sharing code and weights.)")
      .def_property_readonly("input_names",
                             [](const Model& self) {
                               return names(self.num_inputs(), [&](int i) -> const std::string& {
                                 return self.input_name(i);
                               });
                             })
      .def_property_readonly("output_names",
                             [](const Model& self) {
                               return names(self.num_outputs(), [&](int i) -> const std::string& {
                                 return self.output_name(i);
                               });
                             })
      .def("set_input", &set_input, py::arg("key"), py::arg("value"),
           "Copies an array (numpy, tessel.NDArray, anything with __dlpack__) into input `key` "
           "(a name or a position); its shape and dtype must be the model's.")
      .def(
          "run",
          [](Model& self, py::kwargs inputs) {
            for (auto [name, value] : inputs) set_input(self, name, value);
            py::gil_scoped_release release;
            self.run();
          },
          "Runs the model, after setting the inputs given by name.")
      .def(
          "get_output",
          [](const Model& self, const py::handle& key, bool copy) -> py::object {
            if (py::isinstance<py::int_>(key)) {
              int i = key.cast<int>();
              if (i < 0 || i >= self.num_outputs()) {
                throw py::index_error(
                    fmt::format("output index {} is out of range; the model has {} outputs", i,
                                self.num_outputs()));
              }
            }
            runtime::NDArray out = by_key(key, [&](auto k) { return self.get_output(k); });
            return copy ? numpy_copy(out) : py::cast(out);
          },
          py::arg("key") = 0, py::arg("copy") = true,
          "Output `key` (a name or a position) as a numpy array; copy=False gives a "
          "tessel.NDArray sharing the model's buffer (numpy.from_dlpack views it), valid until "
          "the next run.")
      .def("__copy__", [](const Model& self) { return Model(self); });

  py::class_<CompiledModel, Model>(m, "CompiledModel", "A model compiled by tessel.compile.")
      .def(
          "export_package",
          [](const CompiledModel& self, const std::filesystem::path& path) {
            py::gil_scoped_release release;
            self.export_package(path.string());
          },
          py::arg("path"), "Writes a package that tessel.load_package (or C++) loads without LLVM.")
      .def_property_readonly("fusion_summary", &CompiledModel::fusion_summary)
      .def_property_readonly("target",
                             [](const CompiledModel& self) { return self.target().str(); })
      .def("__copy__", [](const CompiledModel& self) { return CompiledModel(self); });

  m.def("compile", &compile_model, py::arg("path"), py::kw_only(),
        py::arg("target") = "llvm -mcpu=native",
        py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{},
        py::arg("tuning_records") = py::none(), py::arg("opt_level") = 3,
        py::arg("disabled_passes") = std::vector<std::string>{},
        R"(Compiles an ONNX model for `target` ("llvm -mcpu=native", "llvm -mcpu=znver4", ...).
input_shapes: {"data": [1, 3, 224, 224]} for inputs with symbolic or unknown dims.
tuning_records: a file written by `tessel tune`.)");
  m.def(
      "load_package",
      [](const std::filesystem::path& path) {
        py::gil_scoped_release release;
        return runtime::load_package(path.string());
      },
      py::arg("path"), "Loads a package written by `tessel compile` or export_package.");
}

}  // namespace tessel::python
