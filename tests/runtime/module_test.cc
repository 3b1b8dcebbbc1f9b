#include "runtime/module.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ir/error.h"
#include "tests/common/expect_error.h"

namespace tessel::runtime {
namespace {

// A kernel with the backend signature: out[i] = in[i] * scale + bias for float32 1-d arrays,
// args (in, out, scale: float, bias: int).
extern "C" int32_t scale_bias_kernel(const TesselValue* args, const int32_t* codes,
                                     int32_t num_args) {
  if (num_args != 4 || codes[0] != kTesselArgDLTensor || codes[1] != kTesselArgDLTensor ||
      codes[2] != kTesselArgFloat || codes[3] != kTesselArgInt) {
    TesselSetLastError("scale_bias_kernel: bad arguments");
    return -1;
  }
  auto* in = static_cast<DLTensor*>(args[0].v_handle);
  auto* out = static_cast<DLTensor*>(args[1].v_handle);
  const float* x = static_cast<const float*>(in->data);
  float* y = static_cast<float*>(out->data);
  for (int64_t i = 0; i < in->shape[0]; ++i) {
    y[i] = x[i] * static_cast<float>(args[2].v_float64) + static_cast<float>(args[3].v_int64);
  }
  return 0;
}

extern "C" int32_t failing_kernel(const TesselValue*, const int32_t*, int32_t) {
  TesselSetLastError("Assert fail: shape[0] == 8");
  return -1;
}

TEST(FunctionTest, FromBackendPassesArraysAndScalars) {
  Function f = Function::from_backend("scale_bias", scale_bias_kernel, nullptr);
  EXPECT_EQ(f.name(), "scale_bias");
  NDArray in = NDArray::empty({5}, DataType::f32());
  NDArray out = NDArray::empty({5}, DataType::f32());
  for (int i = 0; i < 5; ++i) in.data<float>()[i] = static_cast<float>(i);
  f(in, out, 2.0f, 3);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out.data<float>()[i], 2.0f * i + 3) << i;
}

TEST(FunctionTest, ArgPacksTypeCodes) {
  NDArray a = NDArray::empty({1}, DataType::i8());
  EXPECT_EQ(Arg(a).type_code(), kTesselArgDLTensor);
  EXPECT_EQ(Arg(a).value().v_handle, a.dltensor());
  EXPECT_EQ(Arg(int64_t{-7}).type_code(), kTesselArgInt);
  EXPECT_EQ(Arg(int64_t{-7}).value().v_int64, -7);
  EXPECT_EQ(Arg(true).value().v_int64, 1);
  EXPECT_EQ(Arg(0.5).type_code(), kTesselArgFloat);
  EXPECT_EQ(Arg(0.25f).value().v_float64, 0.25);
}

TEST(FunctionTest, BackendErrorBecomesErrorWithFunctionName) {
  Function f = Function::from_backend("main_kernel", failing_kernel, nullptr);
  auto e = tessel::testing::expect_error([&] { f(); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "main_kernel: Assert fail: shape[0] == 8");
}

TEST(FunctionTest, KeepAliveLivesAsLongAsAnyCopy) {
  bool released = false;
  std::shared_ptr<void> owner(static_cast<void*>(&released),
                              [](void* p) { *static_cast<bool*>(p) = true; });
  Function copy;
  {
    Function f = Function::from_backend("k", scale_bias_kernel, std::move(owner));
    copy = f;
  }
  EXPECT_FALSE(released);
  copy = Function();
  EXPECT_TRUE(released);
}

TEST(FunctionTest, CallingUndefinedFunctionIsAnError) { EXPECT_THROW(Function().call({}), Error); }

// A module whose functions are hand-written backend entry points.
class TableModule : public ModuleNode {
 public:
  explicit TableModule(std::map<std::string, TesselBackendFunc> table) : table_(std::move(table)) {}
  Function get_function(const std::string& name) override {
    auto it = table_.find(name);
    if (it == table_.end()) return Function();
    return Function::from_backend(name, it->second, nullptr);
  }
  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, fn] : table_) names.push_back(name);
    return names;
  }
  std::string source(const std::string& format) const override { return "table:" + format; }

 private:
  std::map<std::string, TesselBackendFunc> table_;
};

TEST(ModuleTest, GetFunctionFindsAndReportsMissingWithAvailableNames) {
  Module m(std::make_shared<TableModule>(std::map<std::string, TesselBackendFunc>{
      {"scale_bias", scale_bias_kernel}, {"fail", failing_kernel}}));
  EXPECT_EQ(m.get_function("scale_bias").name(), "scale_bias");
  EXPECT_EQ(m.source("ll"), "table:ll");
  tessel::testing::expect_error([&] { m.get_function("conv2d"); },
                                {"'conv2d'", "fail, scale_bias"});
  EXPECT_THROW(Module().get_function("x"), Error);
}

}  // namespace
}  // namespace tessel::runtime
