#include "codegen/target.h"

#include <fmt/format.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "codegen/llvm/target_machine.h"
#include "ir/error.h"
#include "ir/whole_number.h"

namespace tessel {
namespace {

// "+a,-b" → {+a, -b}; an empty item (",", "+a,,-b", a trailing comma) is an Error naming `spec`.
std::vector<std::string> split_features(const std::string& s, const std::string& spec) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t comma = s.find(',', pos);
    out.push_back(s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (out.back().empty())
      throw Error(fmt::format("empty CPU feature in -mattr={} of target '{}'", s, spec));
    if (comma == std::string::npos) return out;
    pos = comma + 1;
  }
}

bool is_known_feature(const llvm::MCSubtargetInfo& sti, const std::string& name) {
  for (const auto& kv : sti.getAllProcessorFeatures()) {
    if (name == kv.Key) return true;
  }
  return false;
}

// The host's enabled features, sorted so that str() is deterministic; names this LLVM does not
// know are dropped (LLVM would only warn about them).
std::string host_features(const llvm::MCSubtargetInfo& sti) {
  std::vector<std::string> enabled;
  for (const auto& [name, on] : llvm::sys::getHostCPUFeatures()) {
    if (on && is_known_feature(sti, name.str())) enabled.push_back("+" + name.str());
  }
  std::sort(enabled.begin(), enabled.end());
  return fmt::format("{}", fmt::join(enabled, ","));
}

bool is_host_triple(const std::string& triple) {
  llvm::Triple t(triple), host(llvm::sys::getProcessTriple());
  return t.getArch() == host.getArch() && t.getOS() == host.getOS();
}

// More cores than any machine has: a typo, or a hostile string.
constexpr int kMaxNumCores = 1 << 16;

int parse_num_cores(const std::string& value, const std::string& spec) {
  std::optional<int> n = parse_whole_number<int>(value);
  if (!n || *n > kMaxNumCores) {
    throw Error(
        fmt::format("invalid -num-cores '{}' in target '{}': expected an integer from 0 to {}",
                    value, spec, kMaxNumCores));
  }
  return *n;
}

}  // namespace

Target Target::parse(const std::string& s) {
  std::istringstream in(s);
  Target t;
  if (!(in >> t.kind) || t.kind != "llvm") {
    throw Error(fmt::format("unknown target kind in '{}': expected it to start with 'llvm'", s));
  }
  std::string user_features;
  std::set<std::string> given;
  for (std::string tok; in >> tok;) {
    size_t eq = tok.find('=');
    std::string key = tok.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : tok.substr(eq + 1);
    if (key != "-mtriple" && key != "-mcpu" && key != "-mattr" && key != "-num-cores") {
      throw Error(fmt::format(
          "unknown target option '{}' in '{}' (known: -mtriple, -mcpu, -mattr, -num-cores)", tok,
          s));
    }
    // An empty value would silently mean the default (the host), a second one override the first.
    if (value.empty() || value.find('=') != std::string::npos) {
      throw Error(
          fmt::format("target option '{}' in '{}' is malformed: expected {}=VALUE", tok, s, key));
    }
    if (!given.insert(key).second) throw Error(fmt::format("target '{}' gives {} twice", s, key));
    if (key == "-mtriple") {
      t.triple = value;
    } else if (key == "-mcpu") {
      t.cpu = value;
    } else if (key == "-mattr") {
      user_features = value;
    } else {
      t.num_cores = parse_num_cores(value, s);
    }
  }
  if (t.triple.empty()) t.triple = llvm::sys::getProcessTriple();
  t.triple = llvm::Triple::normalize(t.triple);
  // A generic subtarget answers which CPUs and features exist.
  Target generic = t;
  generic.cpu = "";
  generic.features = "";
  auto sti = codegen::create_subtarget_info(generic);

  bool host = is_host_triple(t.triple);
  if (t.cpu.empty() || t.cpu == "native") {
    if (!host && t.cpu == "native") {
      throw Error(fmt::format("-mcpu=native in '{}' needs the host triple {}, not {}", s,
                              llvm::sys::getProcessTriple(), t.triple));
    }
    if (host) {
      t.cpu = llvm::sys::getHostCPUName().str();
      t.features = host_features(*sti);
    } else {
      t.cpu = "generic";
    }
  } else if (!sti->isCPUStringValid(t.cpu)) {
    throw Error(fmt::format("unknown CPU '{}' for triple {} in target '{}'", t.cpu, t.triple, s));
  }
  for (const std::string& f :
       user_features.empty() ? std::vector<std::string>{} : split_features(user_features, s)) {
    if ((f[0] != '+' && f[0] != '-') || !is_known_feature(*sti, f.substr(1))) {
      throw Error(fmt::format(
          "unknown CPU feature '{}' in target '{}' (write -mattr=+name or -name with LLVM names)",
          f, s));
    }
    t.features += (t.features.empty() ? "" : ",") + f;
  }
  return t;
}

Target Target::host() { return parse("llvm"); }

std::string Target::str() const {
  std::string s = fmt::format("{} -mtriple={} -mcpu={}", kind, triple, cpu);
  if (!features.empty()) s += " -mattr=" + features;
  if (num_cores != 0) s += fmt::format(" -num-cores={}", num_cores);
  return s;
}

bool Target::runs_on_host() const { return is_host_triple(triple); }

void Target::check_runs_on_host(const std::string& what) const {
  if (!runs_on_host()) {
    throw Error(fmt::format("{}: cannot run code for {} on this {} host; use emit_object", what,
                            triple, llvm::sys::getProcessTriple()));
  }
}

bool Target::is_host_cpu() const {
  return is_host_triple(triple) && cpu == llvm::sys::getHostCPUName();
}

bool Target::has_feature(const std::string& feature) const {
  return codegen::create_subtarget_info(*this)->checkFeatures("+" + feature);
}

int Target::vector_bits() const {
  if (!llvm::Triple(triple).isX86()) return 128;
  if (has_feature("avx512f")) return 512;
  if (has_feature("avx")) return 256;
  return 128;
}

}  // namespace tessel
