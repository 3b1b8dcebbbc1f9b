#include "codegen/parallel_jobs.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace tessel::codegen {

unsigned job_threads(int jobs, size_t work) {
  unsigned threads =
      jobs > 0 ? static_cast<unsigned>(jobs) : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<size_t>(work, 1, threads));
}

void run_jobs(const std::vector<size_t>& order, unsigned threads,
              const std::function<void(size_t)>& fn) {
  size_t size = order.empty() ? 0 : *std::max_element(order.begin(), order.end()) + 1;
  std::vector<std::exception_ptr> errors(size);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t n; (n = next++) < order.size();) {
      try {
        fn(order[n]);
      } catch (...) {
        errors[order[n]] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, order.size()); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace tessel::codegen
