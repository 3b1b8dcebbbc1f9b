// mod.json (ExecutorPlan::from_json) and mod.params (load_params) on the corrupt files the package
// fuzzer found (tests/fuzz, docs/fuzzing.md); each reproducer is also kept in
// tests/fuzz/corpus/package as regression-*.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "runtime/model.h"
#include "runtime/ndarray.h"
#include "tests/common/expect_error.h"

namespace tessel::runtime {
namespace {

using tessel::testing::expect_error;

// save_params of one float32[2] array 'w', with its dim replaced by `dim`.
std::string params_with_dim(int64_t dim) {
  std::string bytes = save_params({{"w", NDArray::empty({2}, DataType::f32())}});
  size_t at = bytes.find("float32") + 7 + 4;  // after the dtype and the rank
  bytes.replace(at, 8, std::string(reinterpret_cast<const char*>(&dim), 8));
  return bytes;
}

// The reader allocated the array of the declared shape before comparing its size with the byte
// count: a dim of 2^40 asked for 4 TiB (under ASan an abort, "allocation-size-too-big").
TEST(LoadParamsTest, AShapeDisagreeingWithTheByteCountIsRefusedBeforeAllocating) {
  expect_error([&] { load_params(params_with_dim(int64_t{1} << 40), "p:mod.params"); },
               {"p:mod.params is corrupt: array 'w' has 8 bytes for float32[1099511627776]"});
}

TEST(LoadParamsTest, BadDimsNameTheFileAndTheArray) {
  expect_error([&] { load_params(params_with_dim(-1), "p:mod.params"); },
               {"p:mod.params is corrupt: array 'w'", "dim 0 of shape [-1] is negative"});
  expect_error([&] { load_params(params_with_dim(int64_t{1} << 62), "p:mod.params"); },
               {"p:mod.params is corrupt: array 'w'", "is too large"});
}

// Tar members and npz entries of the same name are refused; so are two params arrays.
TEST(LoadParamsTest, TwoArraysOfOneNameAreRefused) {
  std::string one = save_params({{"w", NDArray::empty({2}, DataType::f32())}});
  constexpr size_t kCountAt = 8 + 4;  // after the magic and the version
  uint64_t two = 2;
  std::string array = one.substr(kCountAt + 8);
  std::string twice =
      one.substr(0, kCountAt) + std::string(reinterpret_cast<const char*>(&two), 8) + array + array;
  expect_error([&] { load_params(twice, "p:mod.params"); },
               {"p:mod.params is corrupt: two arrays named 'w'"});
}

TEST(LoadParamsTest, ReadsWhatSaveParamsWrites) {
  NDArray w = NDArray::empty({2}, DataType::f32());
  w.data<float>()[0] = 1.5f;
  w.data<float>()[1] = -2.0f;
  std::map<std::string, NDArray> loaded = load_params(save_params({{"w", w}}), "p:mod.params");
  ASSERT_EQ(loaded.count("w"), 1u);
  EXPECT_EQ(loaded["w"].shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(loaded["w"].data<float>()[1], -2.0f);
}

// A plan of one kernel from x (storage 0) to y (storage 1), as JSON, with `from` replaced by `to`.
std::string plan_json(const std::string& from = "", const std::string& to = "") {
  ExecutorPlan plan;
  plan.arch = "x86_64";
  StorageEntry array;
  array.shape = {1};
  array.dtype = DataType::f32();
  plan.storage = {array, array};
  KernelEntry kernel;
  kernel.name = "k";
  kernel.args = {0, 1};
  plan.kernels = {kernel};
  plan.inputs = {{"x", 0}};
  plan.outputs = {{"y", 1}};
  std::string text = plan.to_json();
  if (from.empty()) return text;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from << " not in " << text;
  return text.replace(at, from.size(), to);
}

// nlohmann's get<int64_t>() of a float beyond int64's range is undefined behaviour (UBSan aborted
// on a shape of [7.7e128]); an integer past int's range read as another storage index.
TEST(ExecutorPlanJsonTest, NumbersThatAreNotIntegersOfTheFieldsRangeAreRefused) {
  ExecutorPlan::from_json(plan_json(), "p:mod.json");
  const std::string storage0 = R"("storage": 0)", shape = "\"shape\": [\n    1\n   ]";
  struct Case {
    std::string json, message;
  };
  const Case cases[] = {
      {plan_json(shape, R"("shape": [7.7e128])"), "'shape' holds 7.7e+128, not an integer"},
      {plan_json(shape, R"("shape": [1.5])"), "'shape' holds 1.5"},
      {plan_json(storage0, R"("storage": 4294967296)"),
       "'storage' holds 4294967296, not an integer from -2147483648"},
      {plan_json(R"("buffers": [])", R"("buffers": [18446744073709551615])"),
       "'buffers' holds 18446744073709551615"},
      {plan_json(R"("version": 1)", R"("version": "1")"), "'version' holds a string"},
      {plan_json(R"("buffers": [])", R"("buffers": 3)"), "'buffers' is a number, not an array"},
  };
  for (const Case& c : cases) {
    expect_error([&] { ExecutorPlan::from_json(c.json, "p:mod.json"); },
                 {"p:mod.json is corrupt", c.message});
  }
}

}  // namespace
}  // namespace tessel::runtime
