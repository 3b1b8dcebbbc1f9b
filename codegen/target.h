// A compilation target: "llvm -mtriple=... -mcpu=... -mattr=+a,-b -num-cores=N". parse() resolves
// -mcpu=native (or no -mcpu on the host triple) to the host CPU name and its enabled features, and
// throws tessel::Error naming an unknown option, CPU or feature. str() round-trips through parse().
#pragma once

#include <string>

namespace tessel {

struct Target {
  std::string kind = "llvm";
  std::string triple;    // LLVM target triple, e.g. "x86_64-unknown-linux-gnu"
  std::string cpu;       // LLVM CPU name, e.g. "skylake-avx512"; never "native" after parse()
  std::string features;  // comma-separated "+feat,-feat" on top of what the CPU implies
  int num_cores = 0;     // 0: let the runtime choose (its thread pool size)

  static Target parse(const std::string& s);
  // The machine this process runs on.
  static Target host();
  std::string str() const;
  // Width of the widest native SIMD register in bits (512 with AVX-512F, 256 with AVX, else 128).
  int vector_bits() const;
  // True when the CPU or the features enable `feature` (an LLVM name such as "avx2").
  bool has_feature(const std::string& feature) const;
  // True when the target is the machine this process runs on: its arch, OS and CPU.
  bool is_host_cpu() const;
  // True when the target's arch and OS are this machine's: its code can be linked and run here.
  bool runs_on_host() const;
  // Error "WHAT: cannot run code for TRIPLE on this HOST host; use emit_object" unless it does.
  void check_runs_on_host(const std::string& what) const;
};

}  // namespace tessel
