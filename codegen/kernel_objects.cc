#include "codegen/kernel_objects.h"

#include <fmt/format.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "codegen/llvm/compile_module.h"
#include "codegen/llvm/kernel_table.h"
#include "codegen/llvm/target_machine.h"
#include "codegen/parallel_jobs.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/structural_equal.h"

namespace tessel {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// For each function, the index of the first function equal to it up to names.
std::vector<size_t> first_equal(const std::vector<PrimFunc>& funcs) {
  std::unordered_map<size_t, std::vector<size_t>> by_hash;
  std::vector<size_t> first(funcs.size());
  for (size_t i = 0; i < funcs.size(); ++i) {
    std::vector<size_t>& candidates = by_hash[structural_hash(funcs[i]->body)];
    first[i] = i;
    for (size_t c : candidates) {
      if (structural_equal(funcs[c], funcs[i])) {
        first[i] = c;
        break;
      }
    }
    if (first[i] == i) candidates.push_back(i);
  }
  return first;
}

// The number of statements and expressions: a guess of the compile time (unrolled bodies are
// long).
size_t ir_size(const Stmt& body) {
  struct Counter : IRVisitor {
    size_t n = 0;
    void visit_expr(const PrimExpr& e) override {
      ++n;
      IRVisitor::visit_expr(e);
    }
    void visit_stmt(const Stmt& s) override {
      ++n;
      IRVisitor::visit_stmt(s);
    }
  } counter;
  counter.visit_stmt(body);
  return counter.n;
}

struct Job {
  PrimFunc func;  // named after its symbol
  std::string key;
  size_t cost = 0;  // a guess of the compile time
  std::string object;
  double optimize_ms = 0, machine_code_ms = 0;
  bool from_cache = false;
};

void compile_job(Job& job, const Target& target, const KernelCache* cache) {
  if (cache) {
    if (std::optional<std::string> hit = cache->get(job.key)) {
      job.object = std::move(*hit);
      job.from_cache = true;
      return;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  codegen::CompiledModule c = codegen::compile_module(
      {job.func}, target, codegen::RuntimeLinkage::kPointers, codegen::ArgNames::kPositional,
      [&](llvm::Module& module) {
        // Shared-library code reaches a kernel through the table only.
        module.getFunction(job.func->name)->setVisibility(llvm::GlobalValue::HiddenVisibility);
      });
  job.optimize_ms = ms_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  job.object = codegen::emit_machine_code(*c.module, *c.tm, llvm::CodeGenFileType::ObjectFile);
  job.machine_code_ms = ms_since(t1);
  if (cache) cache->put(job.key, job.object);
}

// Runs every job on up to `jobs` threads and returns how many ran; rethrows the first failure in
// job order.
unsigned run_jobs(std::vector<Job>& work, const Target& target, const KernelObjectOptions& opt) {
  unsigned threads = codegen::job_threads(opt.jobs, work.size());
  codegen::initialize_llvm();
  // Longest first, so that no long compile starts last while the other threads idle.
  std::vector<size_t> order(work.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return work[a].cost > work[b].cost; });
  codegen::run_jobs(order, threads, [&](size_t i) { compile_job(work[i], target, opt.cache); });
  return threads;
}

std::string table_object(const std::vector<std::pair<std::string, std::string>>& entries,
                         const Target& target) {
  std::unique_ptr<llvm::TargetMachine> tm = codegen::create_target_machine(target);
  llvm::LLVMContext context;
  llvm::Module module("tessel_kernel_table", context);
  module.setTargetTriple(target.triple);
  module.setDataLayout(tm->createDataLayout());
  codegen::add_kernel_table(module, entries);
  return codegen::emit_machine_code(module, *tm, llvm::CodeGenFileType::ObjectFile);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(fmt::format("cannot write {}", path));
}

// Runs argv (found on PATH) and waits; stdout and stderr go to *log. Returns the exit status.
int run_command(const std::vector<std::string>& argv, std::string* log) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw Error("run_command: pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (err != 0) {
    close(pipe_fds[0]);
    throw Error(fmt::format("cannot run '{}': {}", argv[0], std::strerror(err)));
  }
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;)
    log->append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

KernelObjects compile_kernel_objects(const std::vector<PrimFunc>& funcs, const Target& target,
                                     const KernelObjectOptions& opt) {
  if (funcs.empty()) throw Error("build: no functions to compile");
  std::unordered_set<std::string> names;
  for (const PrimFunc& f : funcs) {
    if (!names.insert(f->name).second)
      throw Error(fmt::format("build: two functions are named '{}'", f->name));
  }
  std::vector<size_t> first = first_equal(funcs);
  std::vector<Job> work;
  std::vector<size_t> job_of(funcs.size());
  for (size_t i = 0; i < funcs.size(); ++i) {
    if (first[i] != i) {
      job_of[i] = job_of[first[i]];
      continue;
    }
    job_of[i] = work.size();
    std::string key = kernel_key(funcs[i], target);
    Job& job = work.emplace_back();
    job.func =
        PrimFunc::make("tessel_k" + key, funcs[i]->params, funcs[i]->buffers, funcs[i]->body);
    job.key = std::move(key);
    job.cost = ir_size(funcs[i]->body);
  }
  KernelObjects out;
  out.jobs = static_cast<int>(run_jobs(work, target, opt));
  for (Job& job : work) {
    out.objects.push_back(std::move(job.object));
    out.symbols.push_back(job.func->name);
    out.cache_hits += job.from_cache;
    out.optimize_ms += job.optimize_ms;
    out.machine_code_ms += job.machine_code_ms;
  }
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < funcs.size(); ++i) {
    entries.emplace_back(funcs[i]->name, out.symbols[job_of[i]]);
  }
  out.objects.push_back(table_object(entries, target));
  return out;
}

void link_shared_library(const std::vector<std::string>& objects, const std::string& path) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      fmt::format("tessel-link-{}-{}", getpid(), reinterpret_cast<uintptr_t>(&objects));
  std::filesystem::create_directories(dir);
  std::vector<std::string> argv = {"cc", "-shared", "-o", path};
  try {
    for (size_t i = 0; i < objects.size(); ++i) {
      argv.push_back((dir / fmt::format("k{}.o", i)).string());
      write_file(argv.back(), objects[i]);
    }
    argv.push_back("-lm");
    std::string log;
    int rc = run_command(argv, &log);
    if (rc != 0) throw Error(fmt::format("linking {} failed (cc exit {}): {}", path, rc, log));
  } catch (...) {
    std::filesystem::remove_all(dir);
    throw;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace tessel
