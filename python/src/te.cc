// The te DSL in Python, TVM-style: te.placeholder, te.compute with a Python function, reductions,
// te.create_schedule and the primitives, te.lower (prints the loop IR), tessel.build, and calling
// the built kernel on numpy arrays.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <sstream>

#include "bindings.h"
#include "codegen/build.h"
#include "ir/printer.h"
#include "ndarray.h"
#include "te/lower.h"
#include "te/printer.h"

namespace tessel::python {

namespace {

// A memory scope by name ("local", "shared", "global"); a ValueError naming `primitive` otherwise.
MemScope parse_scope(const std::string& scope, const char* primitive) {
  for (MemScope m : {MemScope::kLocal, MemScope::kShared, MemScope::kGlobal}) {
    if (scope == mem_scope_name(m)) return m;
  }
  throw py::value_error(std::string(primitive) + "'s scope is one of local, shared, global; not '" +
                        scope + "'");
}

using te::IterVar;
using te::Stage;
using te::Tensor;

// A Python int as an int32 constant where it fits, else int64.
PrimExpr int_const(int64_t v) {
  if (v >= INT32_MIN && v <= INT32_MAX) return PrimExpr(static_cast<int>(v));
  return PrimExpr(v);
}

std::vector<PrimExpr> to_exprs(const py::handle& idx) {
  if (py::isinstance<py::tuple>(idx) || py::isinstance<py::list>(idx)) {
    return idx.cast<std::vector<PrimExpr>>();
  }
  return {idx.cast<PrimExpr>()};
}

std::vector<IterVar> to_axes(const py::handle& axis) {
  if (py::isinstance<IterVar>(axis)) return {axis.cast<IterVar>()};
  return axis.cast<std::vector<IterVar>>();
}

// An int for a constant dim, else the expression.
py::tuple shape_tuple(const std::vector<PrimExpr>& shape) {
  py::list out;
  for (const PrimExpr& d : shape) {
    if (const auto* imm = d.as<IntImmNode>()) {
      out.append(imm->value);
    } else {
      out.append(d);
    }
  }
  return py::tuple(out);
}

template <class T>
std::string to_text(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

// Arithmetic and comparisons for expressions and for axes (which stand for their loop variable);
// Python numbers convert to constants, so `2 * x` and `k + 1` work.
template <class T, class... Opts>
void def_operators(py::class_<T, Opts...>& cls) {
  using Binary = PrimExpr (*)(PrimExpr, PrimExpr);
  struct Op {
    const char* name;
    const char* reflected;  // nullptr: Python reflects comparisons by itself
    Binary fn;
  };
  static const Op ops[] = {
      {"__add__", "__radd__", [](PrimExpr a, PrimExpr b) { return a + b; }},
      {"__sub__", "__rsub__", [](PrimExpr a, PrimExpr b) { return a - b; }},
      {"__mul__", "__rmul__", [](PrimExpr a, PrimExpr b) { return a * b; }},
      {"__truediv__", "__rtruediv__", [](PrimExpr a, PrimExpr b) { return a / b; }},
      {"__floordiv__", "__rfloordiv__", [](PrimExpr a, PrimExpr b) { return floordiv(a, b); }},
      {"__mod__", "__rmod__", [](PrimExpr a, PrimExpr b) { return floormod(a, b); }},
      {"__and__", "__rand__", [](PrimExpr a, PrimExpr b) { return a && b; }},
      {"__or__", "__ror__", [](PrimExpr a, PrimExpr b) { return a || b; }},
      {"__lt__", nullptr, [](PrimExpr a, PrimExpr b) { return a < b; }},
      {"__le__", nullptr, [](PrimExpr a, PrimExpr b) { return a <= b; }},
      {"__gt__", nullptr, [](PrimExpr a, PrimExpr b) { return a > b; }},
      {"__ge__", nullptr, [](PrimExpr a, PrimExpr b) { return a >= b; }},
      {"__eq__", nullptr, [](PrimExpr a, PrimExpr b) { return a == b; }},
      {"__ne__", nullptr, [](PrimExpr a, PrimExpr b) { return a != b; }},
  };
  for (const Op& op : ops) {
    Binary fn = op.fn;
    cls.def(
        op.name, [fn](const T& a, const PrimExpr& b) { return fn(PrimExpr(a), b); },
        py::is_operator());
    if (op.reflected) {
      cls.def(
          op.reflected, [fn](const T& a, const PrimExpr& b) { return fn(b, PrimExpr(a)); },
          py::is_operator());
    }
  }
  cls.def("__neg__", [](const T& a) { return -PrimExpr(a); })
      .def("__invert__", [](const T& a) { return !PrimExpr(a); })
      .def("__abs__", [](const T& a) { return abs(PrimExpr(a)); })
      .def("__hash__", [](const T& a) { return reinterpret_cast<uintptr_t>(a.get()); })
      .def("__bool__",
           [](const T&) -> bool {
             throw py::type_error(
                 "a te expression has no truth value; build conditions with te.if_then_else or "
                 "te.select, and combine them with & and |");
           })
      .def("astype", [](const T& a, const std::string& dtype) {
        return cast(DataType::parse(dtype), PrimExpr(a));
      });
}

// A Python function of one index per dim, as te::compute calls it. The axes take the
// function's parameter names (lambda i, j: ... gives axes i and j), as in TVM.
Tensor compute(const py::sequence& shape, const py::function& fcompute, const std::string& name) {
  auto dims = shape.cast<std::vector<PrimExpr>>();
  std::vector<std::string> axis_names;
  try {
    py::object signature = py::module_::import("inspect").attr("signature")(fcompute);
    for (const py::handle& p : signature.attr("parameters")) axis_names.push_back(py::str(p));
  } catch (const py::error_already_set&) {
    // A callable without a signature (a builtin): default names.
  }
  if (axis_names.size() != dims.size()) axis_names.clear();
  auto body = [&](const std::vector<Var>& vars) {
    py::tuple args(vars.size());
    for (size_t i = 0; i < vars.size(); ++i) args[i] = py::cast(vars[i]);
    return fcompute(*args).cast<PrimExpr>();
  };
  return te::compute_impl(dims, body, name, axis_names);
}

using Reduction = PrimExpr (*)(PrimExpr, std::vector<IterVar>, PrimExpr);

void def_reduction(py::module_& te, const char* name, Reduction fn) {
  te.def(
      name,
      [fn](const PrimExpr& source, const py::handle& axis, std::optional<PrimExpr> where) {
        return fn(source, to_axes(axis), where.value_or(PrimExpr()));
      },
      py::arg("expr"), py::arg("axis"), py::arg("where") = py::none());
}

// A built kernel module: callable as its entry function, like TVM's built functions.
struct BuiltModule {
  runtime::Module module;
  std::string entry;
};

void call_function(const runtime::Function& f, const py::args& args) {
  std::vector<ArrayArg> arrays;
  arrays.reserve(args.size());
  std::vector<runtime::Arg> packed;
  for (const py::handle& a : args) {
    if (py::isinstance<py::int_>(a)) {
      packed.emplace_back(a.cast<int64_t>());
    } else if (py::isinstance<py::float_>(a)) {
      packed.emplace_back(a.cast<double>());
    } else {
      arrays.push_back(to_ndarray(a, /*aligned=*/true));
      packed.emplace_back(arrays.back().array);
    }
  }
  {
    py::gil_scoped_release release;
    f.call(packed);
  }
  for (const ArrayArg& a : arrays) write_back(a);
}

void init_expressions(py::module_& te) {
  py::class_<PrimExpr> expr(te, "Expr", "A scalar expression (te and tir).");
  expr.def(py::init(&int_const))
      .def(py::init([](double v) { return PrimExpr(v); }))
      .def(py::init([](const IterVar& iv) { return PrimExpr(iv); }))
      .def_property_readonly("dtype", [](const PrimExpr& e) { return e.dtype().str(); })
      .def("__repr__", [](const PrimExpr& e) { return te::body_to_string(e); });
  def_operators(expr);
  py::class_<Var, PrimExpr>(te, "Var", "A scalar variable (compute's indices).")
      .def_property_readonly("name", [](const Var& v) { return v->name_hint; });
  py::class_<IterVar> iter_var(te, "IterVar", "An axis of a stage; in expressions, its variable.");
  iter_var.def_property_readonly("name", &IterVar::name)
      .def_property_readonly("var", [](const IterVar& iv) { return iv->var; })
      .def("__repr__", [](const IterVar& iv) { return "IterVar(" + iv.name() + ")"; });
  def_operators(iter_var);
  py::implicitly_convertible<int64_t, PrimExpr>();
  py::implicitly_convertible<double, PrimExpr>();
  py::implicitly_convertible<IterVar, PrimExpr>();

  te.def(
      "var",
      [](std::string name, const std::string& dtype) {
        return te::var(std::move(name), DataType::parse(dtype));
      },
      py::arg("name"), py::arg("dtype") = "int32");
  te.def("if_then_else", &tessel::if_then_else,
         "Evaluates only the side `cond` picks (guards loads).");
  te.def("select", &tessel::select, "Evaluates both sides.");
  te.def("cast", [](const std::string& dtype, const PrimExpr& v) {
    return cast(DataType::parse(dtype), v);
  });
  te.def("floordiv", &tessel::floordiv);
  te.def("floormod", &tessel::floormod);
  te.def("maximum", [](const PrimExpr& a, const PrimExpr& b) { return max(a, b); });
  te.def("minimum", [](const PrimExpr& a, const PrimExpr& b) { return min(a, b); });
  using Unary = PrimExpr (*)(PrimExpr);
  const std::pair<const char*, Unary> unary[] = {
      {"exp", &tessel::exp},     {"log", &tessel::log},     {"sqrt", &tessel::sqrt},
      {"rsqrt", &tessel::rsqrt}, {"tanh", &tessel::tanh},   {"sigmoid", &tessel::sigmoid},
      {"erf", &tessel::erf},     {"abs", &tessel::abs},     {"floor", &tessel::floor},
      {"ceil", &tessel::ceil},   {"round", &tessel::round}, {"sin", &tessel::sin},
      {"cos", &tessel::cos}};
  for (auto [name, fn] : unary) te.def(name, fn, py::arg("x"));
  te.def("power", &tessel::pow);
}

void init_tensors(py::module_& te) {
  py::class_<te::Operation>(te, "Operation")
      .def_property_readonly("name", [](const te::Operation& op) { return op->name; })
      .def_property_readonly("axis",
                             [](const te::Operation& op) {
                               const auto* c = op.as<te::ComputeOpNode>();
                               return c ? c->axis : std::vector<IterVar>{};
                             })
      .def_property_readonly("reduce_axis", [](const te::Operation& op) {
        const auto* c = op.as<te::ComputeOpNode>();
        return c ? c->reduce_axis : std::vector<IterVar>{};
      });
  py::class_<Tensor>(te, "Tensor", "A placeholder or computed tensor; t[i, j] reads it.")
      .def_property_readonly("name", &Tensor::name)
      .def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
      .def_property_readonly("dtype", [](const Tensor& t) { return t.dtype().str(); })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def_property_readonly("op", [](const Tensor& t) { return t.op(); })
      .def("__getitem__", [](const Tensor& t, const py::handle& idx) { return t(to_exprs(idx)); })
      .def("__call__", [](const Tensor& t, const py::args& idx) { return t(to_exprs(idx)); })
      .def("__repr__", [](const Tensor& t) { return "Tensor(" + t.name() + ")"; });

  te.def(
      "placeholder",
      [](const py::sequence& shape, const std::string& dtype, std::string name) {
        return te::placeholder(shape.cast<std::vector<PrimExpr>>(), DataType::parse(dtype),
                               std::move(name));
      },
      py::arg("shape"), py::arg("dtype") = "float32", py::arg("name") = "placeholder");
  te.def("compute", &compute, py::arg("shape"), py::arg("fcompute"), py::arg("name") = "compute",
         "A tensor of `shape` whose element at (i, j, ...) is fcompute(i, j, ...).");
  te.def(
      "reduce_axis",
      [](const py::tuple& dom, std::string name) {
        if (dom.size() != 2) throw py::value_error("reduce_axis takes a (begin, end) range");
        return te::reduce_axis(dom[0].cast<PrimExpr>(), dom[1].cast<PrimExpr>(), std::move(name));
      },
      py::arg("dom"), py::arg("name") = "rv", "A reduction axis over [begin, end).");
  def_reduction(te, "sum", &te::sum);
  def_reduction(te, "max", static_cast<Reduction>(&te::max));
  def_reduction(te, "min", static_cast<Reduction>(&te::min));
}

void init_schedules(py::module_& te) {
  py::class_<Stage>(te, "Stage", "One operation's loops in a schedule.")
      .def_property_readonly("name", &Stage::name)
      .def_property_readonly("op", [](const Stage& s) { return s->op; })
      // A copy: elements referring into the stage's list would change under a later reorder.
      .def_property_readonly(
          "leaf_iter_vars", [](const Stage& s) { return std::vector<IterVar>(s.leaf_iter_vars()); })
      .def(
          "split",
          [](Stage& s, const IterVar& parent, std::optional<int64_t> factor,
             std::optional<int64_t> nparts) {
            if (factor.has_value() == nparts.has_value()) {
              throw py::value_error("split takes one of factor= and nparts=");
            }
            return factor ? s.split(parent, *factor) : s.split_nparts(parent, *nparts);
          },
          py::arg("parent"), py::arg("factor") = py::none(), py::arg("nparts") = py::none())
      .def("tile", &Stage::tile, py::arg("x"), py::arg("y"), py::arg("x_factor"),
           py::arg("y_factor"))
      .def("fuse",
           [](Stage& s, const py::args& axes) {
             auto ivs = axes.cast<std::vector<IterVar>>();
             if (ivs.size() < 2) throw py::value_error("fuse takes at least two axes");
             IterVar fused = ivs[0];
             for (size_t i = 1; i < ivs.size(); ++i) fused = s.fuse(fused, ivs[i]);
             return fused;
           })
      .def("reorder",
           [](Stage& s, const py::args& axes) { s.reorder(axes.cast<std::vector<IterVar>>()); })
      .def("vectorize", &Stage::vectorize)
      .def("parallel", &Stage::parallel)
      .def("unroll", &Stage::unroll)
      .def("pragma", &Stage::pragma, py::arg("axis"), py::arg("key"), py::arg("value"))
      .def("compute_at", &Stage::compute_at, py::arg("parent"), py::arg("scope"))
      .def("compute_inline", &Stage::compute_inline)
      .def("compute_root", &Stage::compute_root)
      .def("bind", &Stage::bind, py::arg("iv"), py::arg("thread_tag"));

  py::class_<te::Schedule>(te, "Schedule")
      .def("__getitem__", [](const te::Schedule& s, const Tensor& t) { return s[t]; })
      .def("__getitem__", [](const te::Schedule& s, const std::string& n) { return s[n]; })
      .def_property_readonly("stages",
                             [](const te::Schedule& s) { return std::vector<Stage>(s.stages()); })
      .def_property_readonly("trace", [](const te::Schedule& s) { return s.trace().str(); })
      .def(
          "cache_write",
          [](te::Schedule& s, const Tensor& t, const std::string& scope) {
            return s.cache_write(t, parse_scope(scope, "cache_write"));
          },
          py::arg("tensor"), py::arg("scope") = "local")
      .def("rfactor", &te::Schedule::rfactor, py::arg("tensor"), py::arg("axis"), py::arg("factor"))
      .def(
          "cache_read",
          [](te::Schedule& s, const Tensor& t, const std::string& scope,
             const std::vector<Tensor>& readers) {
            return s.cache_read(t, parse_scope(scope, "cache_read"), readers);
          },
          py::arg("tensor"), py::arg("scope"), py::arg("readers"));
  te.def("create_schedule", [](const py::handle& outputs) {
    if (py::isinstance<Tensor>(outputs)) return te::create_schedule({outputs.cast<Tensor>()});
    return te::create_schedule(outputs.cast<std::vector<Tensor>>());
  });

  py::class_<PrimFunc>(te, "PrimFunc", "A lowered function; print() shows its loop IR.")
      .def_property_readonly("name", [](const PrimFunc& f) { return f->name; })
      .def("__str__", &to_text<PrimFunc>);
  te.def(
      "lower",
      [](const te::Schedule& s, const std::vector<Tensor>& args, const std::string& name) {
        return te::lower(s, args, name);
      },
      py::arg("schedule"), py::arg("args"), py::arg("name") = "main");
}

void init_build(py::module_& m) {
  py::class_<runtime::Function>(m, "Function", "A compiled function; call it on arrays.")
      .def_property_readonly("name", &runtime::Function::name)
      .def("__call__", &call_function);
  py::class_<BuiltModule>(m, "Module", "Compiled kernels; calling it calls its entry function.")
      .def_readonly("entry", &BuiltModule::entry)
      .def("__call__",
           [](const BuiltModule& b, const py::args& args) {
             call_function(b.module.get_function(b.entry), args);
           })
      .def("__getitem__", [](const BuiltModule& b,
                             const std::string& name) { return b.module.get_function(name); })
      .def(
          "source",
          [](const BuiltModule& b, const std::string& fmt) { return b.module.source(fmt); },
          py::arg("fmt") = "asm", "The generated code: \"asm\" or \"ll\" (LLVM IR).");
  m.def(
      "build",
      [](const te::Schedule& s, const std::vector<Tensor>& args, const std::string& target,
         const std::string& name) {
        Target t = Target::parse(target);
        py::gil_scoped_release release;
        return BuiltModule{build(s, args, t, name), name};
      },
      py::arg("schedule"), py::arg("args"), py::arg("target") = "llvm -mcpu=native",
      py::arg("name") = "main", "Lowers and JIT-compiles a schedule into a Module.");
  m.def(
      "build",
      [](const PrimFunc& f, const std::string& target) {
        Target t = Target::parse(target);
        py::gil_scoped_release release;
        return BuiltModule{build(f, t), f->name};
      },
      py::arg("func"), py::arg("target") = "llvm -mcpu=native");
}

}  // namespace

void init_te(py::module_& m) {
  py::module_ te = m.def_submodule("te", "Tensor expressions and schedules.");
  init_expressions(te);
  init_tensors(te);
  init_schedules(te);
  init_build(m);
}

}  // namespace tessel::python
