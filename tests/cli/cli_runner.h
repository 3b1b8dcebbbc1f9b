// Drives the tessel command (and other executables) as a user would, for the CLI test suites.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>

namespace tessel::testing {

struct Result {
  bool exited;         // false: killed by a signal
  int code;            // the exit code; -1 for a signal
  std::string output;  // stdout and stderr, or stderr alone
};

enum class Capture { kStdoutAndStderr, kStderr };

inline Result run(const std::string& command, Capture capture = Capture::kStdoutAndStderr) {
  std::string out;
  std::string redirect = capture == Capture::kStderr ? " 2>&1 >/dev/null" : " 2>&1";
  FILE* p = popen((command + redirect).c_str(), "r");
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status), WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline std::string tessel(const std::string& args) { return std::string(TESSEL_CLI) + " " + args; }
inline const std::string kModel = std::string(TESSEL_MODELS_DIR) + "/resnet_mini.onnx";

inline std::string contents(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write(const std::filesystem::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// Exit 1 and a single line: "tessel: error: ..." containing every part (no signal, no internal
// error).
inline void expect_user_error(const Result& r, std::initializer_list<std::string> parts) {
  EXPECT_TRUE(r.exited) << "killed by a signal: " << r.output;
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(r.output.rfind("tessel: error: ", 0), 0u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  for (const std::string& part : parts)
    EXPECT_NE(r.output.find(part), std::string::npos) << part << " in:\n" << r.output;
}

}  // namespace tessel::testing
