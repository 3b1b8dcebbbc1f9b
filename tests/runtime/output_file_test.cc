// Atomic output writers replace only regular files: a FIFO, a directory or a link to one (and a
// device such as /dev/full, only stat'ed here) is refused and left as it was (issue 22, item 6).
#include "runtime/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "runtime/model.h"
#include "runtime/npz.h"
#include "tests/common/expect_error.h"
#include "tests/runtime/temp_dir_fixture.h"

namespace tessel::runtime {
namespace {

namespace fs = std::filesystem;
using tessel::testing::expect_error;

class OutputFileTest : public tessel::testing::TempDirTest {
 protected:
  std::string fifo(const std::string& name) const {
    EXPECT_EQ(mkfifo(path(name).c_str(), 0600), 0);
    return path(name);
  }
  size_t entries() const {
    return std::distance(fs::directory_iterator(dir_), fs::directory_iterator());
  }
};

std::string contents(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(int fd, const std::string& text) {
  ASSERT_EQ(write(fd, text.data(), text.size()), ssize_t(text.size()));
}

TEST_F(OutputFileTest, RefusesEverythingButARegularFile) {
  std::string pipe = fifo("pipe");
  std::string dir = path("dir");
  fs::create_directory(dir);
  fs::create_symlink(pipe, path("link-to-pipe"));
  expect_error([&] { check_replaceable(pipe, "the package"); },
               {"the package '" + pipe + "'", "FIFO"});
  expect_error([&] { check_replaceable(dir, "the .npz"); },
               {"the .npz '" + dir + "'", "directory"});
  expect_error([&] { check_replaceable(path("link-to-pipe"), "the .npz"); },
               {"link-to-pipe", "FIFO"});
  // stat only: the device is not touched.
  expect_error([&] { check_replaceable("/dev/full", "the package"); },
               {"'/dev/full'", "character device"});
  check_replaceable(path("new"), "the package");
  std::ofstream(path("regular")) << "x";
  check_replaceable(path("regular"), "the package");
}

TEST_F(OutputFileTest, WriteAtomicallyReplacesARegularFileAndLeavesNoTemporary) {
  std::string file = path("out");
  write_atomically(file, "the output", [](int fd) { write_text(fd, "first"); });
  EXPECT_EQ(contents(file), "first");
  write_atomically(file, "the output", [](int fd) { write_text(fd, "second"); });
  EXPECT_EQ(contents(file), "second");
  // A failing writer leaves the old file and no temporary.
  EXPECT_THROW(write_atomically(file, "the output",
                                [](int fd) {
                                  write_text(fd, "partial");
                                  throw Error("disk on fire");
                                }),
               Error);
  EXPECT_EQ(contents(file), "second");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, WritersLeaveAFifoAndADirectoryAlone) {
  std::string pipe = fifo("out.pipe");
  std::string dir = path("out.dir");
  fs::create_directory(dir);
  std::ofstream(path("mod.so")) << "not a library; write_package only copies it";
  ExecutorPlan plan;
  NDArray a = NDArray::empty({2}, DataType::f32());
  for (const std::string& target : {pipe, dir}) {
    expect_error([&] { save_npz(target, {{"a", a}}); },
                 {"the .npz '" + target + "'", "not a regular file"});
    expect_error([&] { write_package(target, path("mod.so"), plan, {}); },
                 {"the package '" + target + "'", "not a regular file"});
    expect_error([&] { write_atomically(target, "the output", [](int) {}); }, {"'" + target + "'"});
  }
  struct stat st;
  ASSERT_EQ(stat(pipe.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_EQ(entries(), 3u);  // the FIFO, the directory and mod.so: no temporaries
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

}  // namespace
}  // namespace tessel::runtime
