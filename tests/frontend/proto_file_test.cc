// The frontend reads only regular files, and none over protobuf's 2 GiB limit: /dev/zero made
// `tessel compile` read forever, and a FIFO would block.
#include "frontend/proto_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "frontend/onnx_importer.h"
#include "frontend/onnx_tensor.h"
#include "tests/common/expect_error.h"

namespace tessel::frontend {
namespace {

using tessel::testing::expect_error;

TEST(ProtoFileTest, DevicesDirectoriesAndFifosAreRefused) {
  std::string fifo = ::testing::TempDir() + "/proto_file_test.fifo";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), ::testing::TempDir(), fifo}) {
    SCOPED_TRACE(path);
    expect_error([&] { import_onnx(path); }, {"ONNX model '" + path + "' is not a regular file"});
    expect_error([&] { read_tensor_file(path); },
                 {"tensor file '" + path + "' is not a regular file"});
    expect_error([&] { overview_onnx(path); }, {"is not a regular file"});
  }
  std::filesystem::remove(fifo);
}

TEST(ProtoFileTest, FilesOverTwoGibibytesAreRefusedUnread) {
  std::string big = ::testing::TempDir() + "/proto_file_test_big.onnx";
  {
    std::ofstream create(big);
  }
  std::filesystem::resize_file(big, uintmax_t{1} << 31);  // sparse: no disk space used
  expect_error([&] { import_onnx(big); },
               {big, "has 2147483648 bytes, over protobuf's 2 GiB message limit"});
  std::filesystem::remove(big);
}

TEST(ProtoFileTest, MissingFilesSayWhy) {
  expect_error([] { detail::read_protobuf_file("/no/such/model.onnx", "ONNX model"); },
               {"cannot open ONNX model '/no/such/model.onnx': No such file or directory"});
}

}  // namespace
}  // namespace tessel::frontend
