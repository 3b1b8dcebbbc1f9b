// ONNX backend conformance: runs every test directory (model.onnx +
// test_data_set_N/{input,output}_K.pb) of ONNX's node/, pytorch-converted/, pytorch-operator/ and
// simple/ suites through an engine and compares with the stored outputs (rtol 1e-3, atol 1e-7 as
// ONNX's runner; exact for ints/bools). Each test runs in a forked child so a crash (or a hang,
// past --timeout) fails that test only. Engines: "reference" (reference::run on the imported graph)
// and "compiled" (compile_graph, then run the JIT-compiled model); a model with an op that has no
// te lowering is unsupported on the compiled engine. Exits non-zero when a test not listed in the
// engine's expected list (expected_unsupported.txt, expected_unsupported_compiled.txt) fails or is
// unsupported.
//
// usage: onnx_conformance [--engine reference|compiled] [--filter SUBSTR] [--verbose]
//                         [--write-expected] [--expected FILE] [--timeout SECONDS] [--no-fork]
//                         [DATA_DIR]
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "driver/compile.h"
#include "frontend/onnx_importer.h"
#include "frontend/onnx_tensor.h"
#include "ir/op_table.h"
#include "reference/reference.h"

namespace {

namespace fs = std::filesystem;
using tessel::graph::Graph;
using tessel::graph::TensorData;
using Inputs = std::map<std::string, TensorData>;
// A way to execute an imported graph. It throws UnsupportedFeatureError for what it cannot run yet.
using Engine = std::function<std::vector<TensorData>(const Graph&, const Inputs&)>;

const std::vector<std::string> kFolders = {"node", "pytorch-converted", "pytorch-operator",
                                           "simple"};
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

// The op of the first "node 'name' (Op)" in an error message, or "?".
std::string op_in_message(const std::string& message) {
  size_t node = message.find("node '");
  size_t open = node == std::string::npos ? node : message.find("' (", node);
  if (open == std::string::npos) return "?";
  open += 3;
  return message.substr(open, message.find(')', open) - open);
}

// Why the compiled engine cannot run a model that failed to compile, or "" when the error is a
// failure: an op without a te lowering (lower_to_te's message), or a shape, axis or bound that
// the model gives as a runtime input (the compiler specializes on shapes only, not on values).
std::string compile_unsupported_reason(const std::string& message) {
  if (message.find("has no te lowering") != std::string::npos)
    return "no te lowering: " + op_in_message(message);
  if (message.find("training-mode Dropout is random") != std::string::npos)
    return "training-only (random)";
  if (message.find("must be a constant") != std::string::npos) {
    return "runtime value where a constant is needed: " + op_in_message(message);
  }
  return "";
}

// Compiles with the test's values bound for every input that a shape, axis or bound is computed
// from (as TVM's runner freezes params); the other inputs stay runtime inputs.
std::vector<TensorData> run_compiled(const Graph& g, const Inputs& inputs) {
  tessel::CompileOptions opt;
  tessel::CompiledModel model;
  for (;;) {
    try {
      model = tessel::compile_graph(g, opt);
      break;
    } catch (const tessel::graph::ConstantRequiredError& e) {
      size_t bound = opt.params.size();
      for (const std::string& name : e.inputs()) {
        if (inputs.count(name)) opt.params.emplace(name, inputs.at(name));
      }
      if (opt.params.size() == bound)
        throw tessel::frontend::UnsupportedFeatureError(compile_unsupported_reason(e.what()),
                                                        e.what());
    } catch (const tessel::Error& e) {
      std::string reason = compile_unsupported_reason(e.what());
      if (reason.empty()) throw;
      throw tessel::frontend::UnsupportedFeatureError(reason, e.what());
    }
  }
  for (const auto& [name, value] : inputs) {
    if (!opt.params.count(name)) model.set_input(name, tessel::to_ndarray(value));
  }
  model.run();
  std::vector<TensorData> out;
  for (int i = 0; i < model.num_outputs(); ++i)
    out.push_back(tessel::to_tensor_data(model.get_output(i)));
  return out;
}

std::map<std::string, Engine> engines() {
  return {{"reference", tessel::reference::run}, {"compiled", run_compiled}};
}

enum class Outcome : char { kPass = 'P', kFail = 'F', kUnsupported = 'U' };

struct TestResult {
  Outcome outcome = Outcome::kFail;
  std::string reason;   // short, for expected_unsupported.txt ("op Foo not implemented yet")
  std::string message;  // the first error or mismatch
};

// ---------------- comparison ----------------
double half_to_double(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

double element(const TensorData& t, int64_t i) {
  if (t.dtype() == tessel::DataType::f16()) return half_to_double(t.data<uint16_t>()[i]);
  if (t.dtype() == tessel::DataType::bf16())
    return std::bit_cast<float>(uint32_t{t.data<uint16_t>()[i]} << 16);
  return t.get_double(i);
}

// ONNX 1.12's test data stores bfloat16 tensors as uint16 (numpy has no bfloat16): the same bits,
// relabelled with the dtype the model declares.
TensorData as_declared(const TensorData& t, tessel::DataType declared) {
  if (declared != tessel::DataType::bf16() || t.dtype() != tessel::DataType::u16()) return t;
  TensorData out(declared, t.shape());
  if (t.nbytes()) std::memcpy(out.raw(), t.raw(), t.nbytes());
  return out;
}

std::string type_str(const TensorData& t) {
  return tessel::graph::TensorType{t.dtype(), t.shape(), {}}.str();
}

// The first mismatch of output k, or "" when it matches.
std::string compare_output(const TensorData& got, const TensorData& want, size_t k) {
  if (!got.defined()) return fmt::format("output {}: the engine returned no tensor", k);
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return fmt::format("output {}: got {}, expected {}", k, type_str(got), type_str(want));
  }
  bool is_float = want.dtype().is_float() || want.dtype().is_bfloat();
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    bool ok;
    if (is_float) {
      double a = element(got, i), e = element(want, i);
      ok = (std::isnan(a) && std::isnan(e)) || a == e ||
           std::fabs(a - e) <= kAtol + kRtol * std::fabs(e);
    } else {
      ok = got.get_int(i) == want.get_int(i);
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  return fmt::format("output {} ({}): element {} is {}, expected {} ({} of {} elements differ)", k,
                     type_str(want), first, is_float ? element(got, first) : got.get_int(first),
                     is_float ? element(want, first) : want.get_int(first), bad, want.numel());
}

// ---------------- one test ----------------
std::vector<fs::path> sorted_entries(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  }
  // input_10.pb after input_9.pb.
  auto index = [&](const fs::path& p) {
    return std::stoi(p.stem().string().substr(prefix.size()));
  };
  std::sort(out.begin(), out.end(),
            [&](const fs::path& a, const fs::path& b) { return index(a) < index(b); });
  return out;
}

std::vector<TensorData> read_tensors(const fs::path& set_dir, const std::string& prefix) {
  std::vector<TensorData> out;
  for (const auto& p : sorted_entries(set_dir, prefix))
    out.push_back(tessel::frontend::read_tensor_file(p.string()));
  return out;
}

// A model with string or sequence values is unsupported for that reason first: its ops
// (StringNormalizer, SequenceInsert, ...) are only the symptom.
std::string unsupported_reason(const tessel::frontend::UnsupportedOpsError& e,
                               const std::string& model) {
  try {
    tessel::frontend::import_onnx(model, {{}, [](const std::string&, int) { return true; }});
  } catch (const tessel::frontend::UnsupportedFeatureError& feature) {
    return feature.feature();
  } catch (const std::exception&) {
  }
  // Ops the table has whose semantics at the model's (older) opset are not implemented say so.
  std::vector<std::string> missing, too_old;
  bool training = false, ml = false;
  for (const auto& op : e.ops()) {
    const tessel::graph::OpDef* def =
        op.domain.empty() ? tessel::graph::find_op(op.op_type) : nullptr;
    if (def && op.opset < def->since_opset) {
      too_old.push_back(fmt::format("{} (since opset {})", op.op_type, def->since_opset));
    } else {
      missing.push_back(op.op_type);
    }
    training |= op.domain == "ai.onnx.preview.training";
    ml |= op.domain == "ai.onnx.ml";
  }
  if (training) return "training-only";
  if (ml) return "ai.onnx.ml ops";
  if (missing.empty()) {
    return fmt::format("op {} not implemented at ai.onnx opset {}", fmt::join(too_old, ", "),
                       e.ops()[0].opset);
  }
  return fmt::format("op {} not implemented yet", fmt::join(missing, ", "));
}

TestResult run_test_unisolated(const fs::path& dir, const Engine& engine) {
  using namespace tessel::frontend;
  std::string model = (dir / "model.onnx").string();
  try {
    Graph g = import_onnx(model);
    std::map<std::string, std::vector<int64_t>> imported_shapes;
    for (const fs::path& set : sorted_entries(dir, "test_data_set_")) {
      std::vector<TensorData> ins = read_tensors(set, "input_"),
                              want = read_tensors(set, "output_");
      if (ins.size() != g.inputs.size()) {
        return {Outcome::kFail, "",
                fmt::format("{} has {} inputs, the model {}", set.filename().string(), ins.size(),
                            g.inputs.size())};
      }
      // Dynamic dims take the test's shapes; import again when they change.
      std::map<std::string, std::vector<int64_t>> shapes;
      Inputs inputs;
      for (size_t k = 0; k < ins.size(); ++k) {
        const auto& in = g.value(g.inputs[k]);
        if (!in.type.is_static() || imported_shapes.count(in.name))
          shapes[in.name] = ins[k].shape();
        inputs[in.name] = as_declared(ins[k], in.type.dtype);
      }
      if (shapes != imported_shapes) {
        g = import_onnx(model, ImportOptions{shapes, {}});
        imported_shapes = shapes;
      }
      std::vector<TensorData> got = engine(g, inputs);
      if (got.size() != want.size()) {
        return {Outcome::kFail, "",
                fmt::format("{} outputs, expected {}", got.size(), want.size())};
      }
      for (size_t k = 0; k < want.size(); ++k) {
        std::string mismatch =
            compare_output(got[k], as_declared(want[k], g.value(g.outputs[k]).type.dtype), k);
        if (!mismatch.empty())
          return {Outcome::kFail, "", set.filename().string() + ": " + mismatch};
      }
    }
    return {Outcome::kPass, "", ""};
  } catch (const UnsupportedOpsError& e) {
    return {Outcome::kUnsupported, unsupported_reason(e, model), e.what()};
  } catch (const UnsupportedFeatureError& e) {
    return {Outcome::kUnsupported, e.feature(), e.what()};
  } catch (const std::exception& e) {
    return {Outcome::kFail, "", e.what()};
  }
}

// Reads the child's pipe to its end; false when `timeout_s` (> 0) passes first.
bool read_until_eof(int fd, std::string& data, int timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd pfd{fd, POLLIN, 0};
    int ready = poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return true;  // the caller reports the missing result
    if (ready == 0) return false;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    data.append(buf, static_cast<size_t>(n));
  }
}

// Runs the test in a child process; the result comes back through a pipe as
// outcome, reason, '\0', message. A child still running after `timeout_s` (0: none) is killed.
TestResult run_test_forked(const fs::path& dir, const Engine& engine, int timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) return {Outcome::kFail, "", "pipe() failed"};
  std::cout.flush();
  pid_t pid = fork();
  if (pid < 0) return {Outcome::kFail, "", "fork() failed"};
  if (pid == 0) {
    close(fds[0]);
    TestResult r = run_test_unisolated(dir, engine);
    std::string msg =
        std::string(1, static_cast<char>(r.outcome)) + r.reason + '\0' + r.message.substr(0, 4000);
    for (size_t done = 0; done < msg.size();) {
      ssize_t n = write(fds[1], msg.data() + done, msg.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string data;
  bool finished = read_until_eof(fds[0], data, timeout_s);
  close(fds[0]);
  if (!finished) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!finished) {
    return {Outcome::kFail, "",
            fmt::format("timed out after {} s (the test process was killed)", timeout_s)};
  }
  if (WIFSIGNALED(status)) {
    return {
        Outcome::kFail, "",
        fmt::format("crashed with signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))};
  }
  size_t nul = data.find('\0');
  if (data.empty() || nul == std::string::npos)
    return {Outcome::kFail, "", "the test process exited without a result"};
  return {static_cast<Outcome>(data[0]), data.substr(1, nul - 1), data.substr(nul + 1)};
}

// ---------------- expected-unsupported list ----------------
// "folder/test_name  # reason" per line; '#' starts a comment.
std::map<std::string, std::string> read_expected(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    size_t hash = line.find('#');
    std::string reason = hash == std::string::npos ? "" : line.substr(hash + 1);
    std::istringstream id_stream(line.substr(0, hash));
    std::string id;
    if (!(id_stream >> id)) continue;
    reason.erase(0, reason.find_first_not_of(" \t"));
    out[id] = reason;
  }
  return out;
}

void write_expected(const std::string& path, const std::map<std::string, std::string>& entries) {
  std::ofstream out(path, std::ios::trunc);
  out << "# ONNX conformance tests expected to fail or be unsupported, one per line: folder/test  "
         "# reason\n"
         "# Regenerate with `onnx_conformance --write-expected` (keeps the reasons already written "
         "here).\n";
  for (const auto& [id, reason] : entries) out << id << "  # " << reason << "\n";
  if (!out) throw tessel::Error(fmt::format("cannot write '{}'", path));
}

std::string first_line(const std::string& s, size_t max_len) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > max_len ? line.substr(0, max_len) + "..." : line;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kUnsupported:
      return "UNSUPPORTED";
  }
  return "?";
}

// One line: the reason for unsupported tests, the first error or mismatch for failures.
std::string summary(const TestResult& r) {
  return r.outcome == Outcome::kUnsupported ? r.reason : first_line(r.message, 300);
}

// ---------------- driver ----------------
// The engine's list of expected failures in this folder: expected_unsupported.txt for the
// reference engine, expected_unsupported_ENGINE.txt for the others.
std::string default_expected_path(const std::string& engine) {
  std::string name = engine == "reference" ? "expected_unsupported.txt"
                                           : "expected_unsupported_" + engine + ".txt";
  return (fs::path(TESSEL_CONFORMANCE_DIR) / name).string();
}

struct Options {
  std::string data_dir = TESSEL_ONNX_TESTDATA_DIR;
  std::string expected_path;  // default_expected_path(engine) when empty
  std::string engine = "reference";
  int timeout_s = 60;  // per test; 0: none
  std::string filter;
  bool verbose = false;
  bool write_expected = false;
  bool fork = true;
};

Options parse_args(int argc, char** argv) {
  Options o;
  auto value = [&](int& i) {
    if (i + 1 >= argc) throw tessel::Error(fmt::format("{} needs a value", argv[i]));
    return std::string(argv[++i]);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--engine")
      o.engine = value(i);
    else if (a == "--filter")
      o.filter = value(i);
    else if (a == "--expected")
      o.expected_path = value(i);
    else if (a == "--timeout")
      o.timeout_s = std::stoi(value(i));
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--write-expected")
      o.write_expected = true;
    else if (a == "--no-fork")
      o.fork = false;
    else if (a.rfind("--", 0) == 0)
      throw tessel::Error(fmt::format("unknown flag '{}'", a));
    else
      o.data_dir = a;
  }
  if (o.expected_path.empty()) o.expected_path = default_expected_path(o.engine);
  return o;
}

struct FolderCounts {
  int pass = 0, fail = 0, unsupported = 0, expected = 0;
};

int run(const Options& opt) {
  auto all_engines = engines();
  auto engine_it = all_engines.find(opt.engine);
  if (engine_it == all_engines.end())
    throw tessel::Error(fmt::format("unknown engine '{}'", opt.engine));
  const Engine& engine = engine_it->second;
  std::map<std::string, std::string> expected = read_expected(opt.expected_path);
  std::map<std::string, std::string> regenerated = expected;  // entries outside this run are kept
  std::vector<std::pair<std::string, TestResult>> failures;
  std::vector<std::string> now_passing;
  int passed = 0, failed = 0, skipped = 0;

  for (const std::string& folder : kFolders) {
    fs::path root = fs::path(opt.data_dir) / folder;
    if (!fs::is_directory(root))
      throw tessel::Error(fmt::format("no test folder '{}'", root.string()));
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root)) {
      std::string id = folder + "/" + e.path().filename().string();
      if (fs::exists(e.path() / "model.onnx") && id.find(opt.filter) != std::string::npos)
        dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    FolderCounts counts;
    for (const fs::path& dir : dirs) {
      std::string id = folder + "/" + dir.filename().string();
      TestResult r =
          opt.fork ? run_test_forked(dir, engine, opt.timeout_s) : run_test_unisolated(dir, engine);
      bool is_expected = expected.count(id) != 0;
      regenerated.erase(id);
      if (r.outcome == Outcome::kPass) {
        ++counts.pass, ++passed;
        if (is_expected) now_passing.push_back(id);
      } else {
        (r.outcome == Outcome::kFail ? counts.fail : counts.unsupported)++;
        std::string reason =
            r.outcome == Outcome::kFail ? "fails: " + first_line(r.message, 100) : r.reason;
        regenerated[id] = is_expected && !expected[id].empty() ? expected[id] : reason;
        if (is_expected) {
          ++counts.expected, ++skipped;
        } else {
          ++failed;
          failures.emplace_back(id, r);
        }
      }
      if (opt.verbose) {
        fmt::print("{:<12} {}{}\n", outcome_name(r.outcome), id,
                   r.outcome == Outcome::kPass ? "" : ": " + summary(r));
      }
    }
    fmt::print("{}: {} passed, {} failed, {} unsupported ({} of them expected)\n", folder,
               counts.pass, counts.fail, counts.unsupported, counts.expected);
  }

  for (const auto& [id, r] : failures) {
    fmt::print("{} {}: {}\n", outcome_name(r.outcome), id, summary(r));
  }
  if (!now_passing.empty()) {
    fmt::print("{} tests listed in {} now pass (run --write-expected to drop them): {}\n",
               now_passing.size(), opt.expected_path, fmt::join(now_passing, ", "));
  }
  if (opt.write_expected) {
    write_expected(opt.expected_path, regenerated);
    fmt::print("wrote {} entries to {}\n", regenerated.size(), opt.expected_path);
  }
  fmt::print("{} passed, {} failed{}\n", passed, failed,
             skipped ? fmt::format(", {} skipped", skipped) : "");
  return failed == 0 || opt.write_expected ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const std::exception& e) {
    fmt::print(stderr, "onnx_conformance: {}\n", e.what());
    return 2;
  }
}
