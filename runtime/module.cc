#include "runtime/module.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/error.h"

namespace tessel::runtime {

TesselValue Arg::value() const {
  if (!array_.defined()) return value_;
  TesselValue v;
  v.v_handle = array_.dltensor();
  return v;
}

void Function::call(const std::vector<Arg>& args) const {
  if (!fn_) throw Error("call of an undefined Function '" + name_ + "'");
  std::vector<TesselValue> values(args.size());
  std::vector<int32_t> codes(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    values[i] = args[i].value();
    codes[i] = args[i].type_code();
  }
  fn_(values.data(), codes.data(), static_cast<int32_t>(args.size()));
}

Function Function::from_backend(std::string name, TesselBackendFunc fn,
                                std::shared_ptr<void> keep_alive) {
  TESSEL_ICHECK(fn != nullptr) << "null backend entry point for " << name;
  // The lambda holds keep_alive, so the code behind fn lives as long as any copy of the Function.
  auto packed = [name, fn, keep_alive = std::move(keep_alive)](
                    const TesselValue* values, const int32_t* codes, int32_t num_args) {
    if (fn(values, codes, num_args) != 0) throw Error(name + ": " + TesselGetLastError());
  };
  return Function(std::move(name), std::move(packed));
}

Function Module::get_function(const std::string& name) const {
  if (!node_) throw Error("get_function('" + name + "') on an undefined Module");
  Function f = node_->get_function(name);
  if (!f.defined()) {
    throw Error(fmt::format("Module has no function '{}'; available: [{}]", name,
                            fmt::join(node_->function_names(), ", ")));
  }
  return f;
}

}  // namespace tessel::runtime
