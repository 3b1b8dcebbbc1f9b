#include "frontend/onnx_tensor.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "ir/error.h"
#include "tests/common/expect_error.h"

namespace tessel::frontend {
namespace {

const std::string kData = TESSEL_ONNX_TESTDATA_DIR;

bool same_tensor(const graph::TensorData& a, const graph::TensorData& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(OnnxTensorTest, ReadsStoredTestData) {
  // test_abs: y = |x| with x float32[3, 4, 5].
  graph::TensorData x = read_tensor_file(kData + "/node/test_abs/test_data_set_0/input_0.pb");
  graph::TensorData y = read_tensor_file(kData + "/node/test_abs/test_data_set_0/output_0.pb");
  ASSERT_EQ(x.dtype(), DataType::f32());
  ASSERT_EQ(x.shape(), (std::vector<int64_t>{3, 4, 5}));
  ASSERT_EQ(y.shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_EQ(y.data<float>()[i], std::fabs(x.data<float>()[i])) << i;
}

TEST(OnnxTensorTest, RoundTripsStoredTestData) {
  for (const char* file :
       {"/node/test_abs/test_data_set_0/input_0.pb", "/node/test_and2d/test_data_set_0/output_0.pb",
        "/node/test_argmax_default_axis_example/test_data_set_0/output_0.pb"}) {
    graph::TensorData stored = read_tensor_file(kData + file);
    std::string copy = ::testing::TempDir() + "/round_trip.pb";
    write_tensor_file(copy, stored, "t");
    EXPECT_TRUE(same_tensor(read_tensor_file(copy), stored)) << file;
  }
}

TEST(OnnxTensorTest, RoundTripsEveryDtype) {
  for (DataType dtype :
       {DataType::f16(), DataType::f32(), DataType::f64(), DataType::i8(), DataType::i16(),
        DataType::i32(), DataType::i64(), DataType::u8(), DataType::u16(), DataType::u32(),
        DataType::u64(), DataType::boolean(), DataType::bf16()}) {
    graph::TensorData t(dtype, {2, 3});
    auto* bytes = static_cast<unsigned char*>(t.raw());
    for (size_t i = 0; i < t.nbytes(); ++i)
      bytes[i] = static_cast<unsigned char>(dtype.is_bool() ? i % 2 : i * 7 + 1);
    std::string path = ::testing::TempDir() + "/dtype.pb";
    write_tensor_file(path, t);
    EXPECT_TRUE(same_tensor(read_tensor_file(path), t)) << dtype.str();
  }
}

TEST(OnnxTensorTest, ReadsBfloat16BitsFromInt32Data) {
  // A TensorProto (as initializers are stored) encoded by hand: dims [2], data_type BFLOAT16 (16),
  // int32_data packed {0x3F80, 0xC020} as varints (1.0 and -2.5).
  const std::string proto("\x08\x02\x10\x10\x2a\x05\x80\x7f\xa0\x80\x03", 11);
  std::string path = ::testing::TempDir() + "/bfloat16_int32_data.pb";
  std::ofstream(path, std::ios::binary) << proto;
  graph::TensorData t = read_tensor_file(path);
  ASSERT_EQ(t.dtype(), DataType::bf16());
  ASSERT_EQ(t.shape(), std::vector<int64_t>{2});
  EXPECT_EQ(t.data<uint16_t>()[0], 0x3F80);
  EXPECT_EQ(t.data<uint16_t>()[1], 0xC020);
}

TEST(OnnxTensorTest, ErrorsNameTheFile) {
  std::string missing = ::testing::TempDir() + "/missing_tensor.pb";
  tessel::testing::expect_error([&] { read_tensor_file(missing); }, {missing});
  std::string corrupt = ::testing::TempDir() + "/corrupt_tensor.pb";
  std::ofstream(corrupt, std::ios::binary) << "\xff\xff\xff\xff";
  tessel::testing::expect_error([&] { read_tensor_file(corrupt); }, {corrupt});
}

// Issue 22: 2^40 declared elements with 32 bytes of data was a std::bad_alloc (an internal error),
// as the tensor was allocated before its size was checked.
TEST(OnnxTensorTest, SizesAreCheckedBeforeAllocating) {
  onnx::TensorProto huge;
  huge.set_data_type(onnx::TensorProto::FLOAT);
  huge.add_dims(int64_t{1} << 40);
  huge.set_raw_data(std::string(32, '\0'));
  std::string path = ::testing::TempDir() + "/huge_tensor.pb";
  {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(huge.SerializeToOstream(&out));
  }
  tessel::testing::expect_error(
      [&] { read_tensor_file(path); },
      {"tensor in '" + path +
       "': raw_data has 32 bytes but float [1099511627776] needs 4398046511104"});
}

// Typed fields are wider than their tensors (int8 in int32_data): a value out of the tensor's range
// is an error naming the field and index, never wrapped into another number.
TEST(OnnxTensorTest, TypedFieldValuesOutOfRangeAreErrors) {
  std::string path = ::testing::TempDir() + "/typed_field.pb";
  auto read = [&](const onnx::TensorProto& p) {
    {
      std::ofstream out(path, std::ios::binary);
      EXPECT_TRUE(p.SerializeToOstream(&out));
    }
    return read_tensor_file(path);
  };
  auto tensor = [](onnx::TensorProto::DataType type) {
    onnx::TensorProto p;
    p.set_data_type(type);
    p.add_dims(2);
    return p;
  };
  onnx::TensorProto ok = tensor(onnx::TensorProto::INT8);
  ok.add_int32_data(-128);
  ok.add_int32_data(127);
  graph::TensorData t = read(ok);
  EXPECT_EQ(t.data<int8_t>()[0], -128);
  EXPECT_EQ(t.data<int8_t>()[1], 127);

  onnx::TensorProto int8 = tensor(onnx::TensorProto::INT8);
  int8.add_int32_data(1);
  int8.add_int32_data(200);
  tessel::testing::expect_error([&] { read(int8); },
                                {"int32_data[1] is 200, out of range for int8"});
  onnx::TensorProto uint32 = tensor(onnx::TensorProto::UINT32);
  uint32.add_uint64_data((uint64_t{1} << 32) + 1);
  uint32.add_uint64_data(0);
  tessel::testing::expect_error([&] { read(uint32); },
                                {"uint64_data[0] is 4294967297, out of range for uint32"});
  onnx::TensorProto half = tensor(onnx::TensorProto::FLOAT16);
  half.add_int32_data(0x3C00);
  half.add_int32_data(0x10000);
  tessel::testing::expect_error([&] { read(half); }, {"int32_data[1]", "float16"});
  onnx::TensorProto flag = tensor(onnx::TensorProto::BOOL);
  flag.add_int32_data(1);
  flag.add_int32_data(2);
  tessel::testing::expect_error([&] { read(flag); }, {"int32_data[1] is 2, out of range for bool"});
  onnx::TensorProto raw_flag = tensor(onnx::TensorProto::BOOL);
  raw_flag.set_raw_data(std::string("\x01\x02", 2));
  tessel::testing::expect_error([&] { read(raw_flag); }, {path, "raw_data byte 1 is 2"});
}

}  // namespace
}  // namespace tessel::frontend
