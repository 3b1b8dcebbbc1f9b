// Compiles an ONNX model with Tessel's C++ API, runs it on random inputs, and prints the
// outputs, the compile time of each stage and the inference latency.
//   run_model MODEL.onnx [--input-shape name:1,3,224,224] [-O 0..3] [--repeat N]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>

#include "driver/compile.h"
#include "ir/error.h"

using namespace tessel;

namespace {

std::vector<int64_t> parse_dims(const std::string& s) {
  std::vector<int64_t> dims;
  std::istringstream is(s);
  for (std::string d; std::getline(is, d, ',');) dims.push_back(std::stoll(d));
  return dims;
}

void fill_random(runtime::NDArray& a, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  if (a.dtype() == DataType::f32()) {
    std::generate(a.data<float>(), a.data<float>() + a.numel(), [&] { return dist(rng); });
  } else {
    std::memset(a.raw_data(), 0, a.nbytes());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr
        << "usage: run_model MODEL.onnx [--input-shape name:d0,d1,...] [-O 0..3] [--repeat N]\n";
    return 2;
  }
  std::string path = argv[1];
  CompileOptions opt;
  int repeat = 20;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input-shape" && i + 1 < argc) {
      std::string spec = argv[++i];
      auto colon = spec.find(':');
      opt.input_shapes[spec.substr(0, colon)] = parse_dims(spec.substr(colon + 1));
    } else if (a == "-O" && i + 1 < argc) {
      opt.opt_level = std::atoi(argv[++i]);
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      std::cerr << "run_model: unknown argument '" << a << "'\n";
      return 2;
    }
  }
  try {
    CompiledModel m = compile(path, opt);
    std::cout << "== " << path << "\n" << m.fusion_summary() << "\ncompile stages (ms):";
    double total = 0;
    for (const auto& t : m.timings()) {
      std::cout << fmt::format(" {} {:.2f}", t.stage, t.ms);
      total += t.ms;
    }
    std::cout << fmt::format("\ncompile total: {:.1f} ms\n{}\n", total, m.memory_plan().summary());
    for (int i = 0; i < m.num_inputs(); ++i) {
      runtime::NDArray in = m.executor().get_input(i).copy();
      fill_random(in, 42 + i);
      m.set_input(i, in);
    }
    m.run();  // warm-up
    std::vector<double> ms;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      m.run();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    for (int o = 0; o < m.num_outputs(); ++o) {
      runtime::NDArray out = m.get_output(o);
      std::cout << fmt::format("output '{}' {}[{}]:", m.output_name(o), out.dtype().str(),
                               fmt::join(out.shape(), ", "));
      for (int64_t k = 0; k < std::min<int64_t>(out.numel(), 10); ++k)
        std::cout << fmt::format(" {:.5f}", out.data<float>()[k]);
      std::cout << (out.numel() > 10 ? " ...\n" : "\n");
    }
    std::cout << fmt::format("latency over {} runs: median {:.3f} ms, min {:.3f} ms\n", repeat,
                             ms[ms.size() / 2], ms[0]);
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
