#include "runtime/thread_pool.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ir/error.h"
#include "ir/whole_number.h"

namespace tessel::runtime {

namespace {

constexpr int kMaxThreads = 1024;
// Kernels launch the pool on every call, so waiting threads spin this long before they sleep on a
// condition variable: back-to-back launches then avoid a futex wake-up.
constexpr std::chrono::microseconds kSpinBudget(200);

// True in pool workers always, and in a launching thread while it runs its tasks: a launch made
// there runs serially.
thread_local bool in_task = false;

class InTaskScope {
 public:
  InTaskScope() : saved_(in_task) { in_task = true; }
  ~InTaskScope() { in_task = saved_; }
  InTaskScope(const InTaskScope&) = delete;
  InTaskScope& operator=(const InTaskScope&) = delete;

 private:
  bool saved_;
};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or the budget runs out; returns done(). After a short pure spin it yields,
// so that with more pool threads than cores the threads with work get the CPU.
template <class Pred>
bool spin_until(Pred done) {
  constexpr uint32_t kPureSpins = 256;
  auto deadline = std::chrono::steady_clock::now() + kSpinBudget;
  for (uint32_t i = 1;; ++i) {
    if (done()) return true;
    if (i < kPureSpins) {
      cpu_relax();
    } else {
      std::this_thread::yield();
      if (std::chrono::steady_clock::now() > deadline) return done();
    }
  }
}

int default_num_threads() {
  const char* env = std::getenv("TESSEL_NUM_THREADS");
  if (env != nullptr && *env != '\0') {
    if (std::optional<int> n = detail::parse_num_threads(env)) return *n;
    throw Error(
        fmt::format("TESSEL_NUM_THREADS='{}' is not an integer in [1, {}]", env, kMaxThreads));
  }
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
}

// The lowest failing task of one launch, with the error message of the thread that ran it.
class FailureRecord {
 public:
  void clear() {
    task_id_ = -1;
    code_ = 0;
    message_.clear();
  }
  void add(int32_t task_id, int32_t code) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (task_id_ < 0 || task_id < task_id_) {
      task_id_ = task_id;
      code_ = code;
      message_ = TesselGetLastError();
    }
    // A later failure on this thread without a message must not report this one.
    TesselSetLastError("");
  }
  // Called once all tasks are done: moves the message to the launching thread.
  int32_t finish() const {
    if (task_id_ < 0) return 0;
    TesselSetLastError(message_.c_str());
    return code_;
  }

 private:
  std::mutex mutex_;
  int32_t task_id_ = -1;
  int32_t code_ = 0;
  std::string message_;
};

// One launch. Its tasks are split into one contiguous range per participating thread, which that
// thread runs in order (the launcher's range begins with task 0); a thread done with its range
// takes the tasks left in the others'. So each thread runs the same part of every kernel's loop
// (the rows whose data the kernel before left in its caches), and a thread that runs slowly for a
// while (a VM's virtual CPU descheduled, a core shared with another process) holds the launch up
// by one task, not by its whole share.
class Job {
 public:
  explicit Job(int max_participants) : ranges_(new Range[max_participants]) {}

  void reset(TesselParallelLambda f, void* c, int32_t n, int participants) {
    fn_ = f;
    closure_ = c;
    num_tasks_ = n;
    participants_ = participants;
    for (int p = 0; p < participants; ++p) {
      ranges_[p].next.store(int64_t{n} * p / participants, std::memory_order_relaxed);
      ranges_[p].end = int64_t{n} * (p + 1) / participants;
    }
    // Task 0 is the launcher's own (run_task(0) before run(0)), out of every thread's reach.
    ranges_[0].next.store(1, std::memory_order_relaxed);
    pending_workers.store(participants - 1, std::memory_order_relaxed);
    failures.clear();
  }

  void run_task(int32_t task_id) {
    int32_t rc = fn_(task_id, num_tasks_, closure_);
    if (rc != 0) failures.add(task_id, rc);
  }

  // Runs participant `self`'s range, then what is left of the others'.
  void run(int self) {
    for (int k = 0; k < participants_; ++k) {
      Range& r = ranges_[(self + k) % participants_];
      while (r.next.load(std::memory_order_relaxed) < r.end) {
        int64_t t = r.next.fetch_add(1, std::memory_order_relaxed);
        if (t >= r.end) break;
        run_task(static_cast<int32_t>(t));
      }
    }
  }

  std::atomic<int32_t> pending_workers{0};
  FailureRecord failures;

 private:
  struct alignas(64) Range {  // one cache line each: the threads claim tasks concurrently
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };

  TesselParallelLambda fn_ = nullptr;
  void* closure_ = nullptr;
  int32_t num_tasks_ = 0;
  int participants_ = 0;
  std::unique_ptr<Range[]> ranges_;
};

int32_t run_serially(TesselParallelLambda fn, void* closure, int32_t num_tasks) {
  FailureRecord failures;
  InTaskScope scope;
  for (int32_t t = 0; t < num_tasks; ++t) {
    int32_t rc = fn(t, num_tasks, closure);
    if (rc != 0) failures.add(t, rc);
  }
  return failures.finish();
}

// A fixed set of worker threads and the state they share with the launching thread. Worker k has
// index k + 1; the launcher is index 0 and runs task 0.
class Workers {
 public:
  explicit Workers(int threads) : job_(threads) {
    try {
      for (int index = 1; index < threads; ++index) {
        threads_.emplace_back([this, index] { worker_loop(index, /*seen=*/0); });
      }
    } catch (...) {
      stop();
      throw;
    }
  }
  ~Workers() { stop(); }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  int size() const { return static_cast<int>(threads_.size()) + 1; }

  // One launch at a time (the caller holds the pool's launch mutex); 2 <= participants <= size().
  int32_t launch(TesselParallelLambda fn, void* closure, int32_t num_tasks, int participants) {
    job_.reset(fn, closure, num_tasks, participants);
    uint64_t generation = (job_word_.load(std::memory_order_relaxed) >> 32) + 1;
    job_word_.store(generation << 32 | static_cast<uint64_t>(participants));
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(wake_mutex_);
      wake_cv_.notify_all();
    }
    {
      InTaskScope scope;
      job_.run_task(0);
      job_.run(0);
    }
    wait_for_workers();
    return job_.failures.finish();
  }

 private:
  void stop() {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lock(wake_mutex_);
      wake_cv_.notify_all();
    }
    for (std::thread& t : threads_) t.join();
  }

  // Waits for a job word other than `seen`; returns it, or nullopt when told to stop.
  std::optional<uint64_t> wait_for_job(uint64_t seen) {
    // seq_cst loads pair with the launcher's store-then-load of sleepers_, so no wake-up is lost.
    auto changed = [&] { return job_word_.load() != seen || stop_.load(); };
    if (!spin_until(changed)) {
      std::unique_lock<std::mutex> lock(wake_mutex_);
      sleepers_.fetch_add(1);
      wake_cv_.wait(lock, changed);
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return std::nullopt;
    return job_word_.load();
  }

  void worker_loop(int index, uint64_t seen) {
    in_task = true;
    while (std::optional<uint64_t> word = wait_for_job(seen)) {
      seen = *word;
      if (index >= static_cast<int>(seen & 0xffffffffu)) continue;  // not needed for this launch
      job_.run(index);
      // After this decrement the launcher may return and reuse job_, so touch it no more.
      if (job_.pending_workers.fetch_sub(1) == 1 && caller_sleeping_.load()) {
        std::lock_guard<std::mutex> lock(done_mutex_);
        done_cv_.notify_one();
      }
    }
  }

  void wait_for_workers() {
    auto done = [&] { return job_.pending_workers.load() == 0; };
    if (spin_until(done)) return;
    std::unique_lock<std::mutex> lock(done_mutex_);
    caller_sleeping_.store(true);
    done_cv_.wait(lock, done);
    caller_sleeping_.store(false);
  }

  std::vector<std::thread> threads_;
  Job job_;
  std::atomic<uint64_t> job_word_{0};  // generation << 32 | number of participating threads
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};
  std::mutex wake_mutex_;
  std::condition_variable wake_cv_;
  std::atomic<bool> caller_sleeping_{false};
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
};

class ThreadPool;
ThreadPool& pool();

class ThreadPool {
 public:
  ThreadPool() { pthread_atfork(&before_fork, &after_fork_in_parent, &after_fork_in_child); }

  int size() {
    int n = size_.load(std::memory_order_acquire);
    if (n != 0) return n;
    int resolved = default_num_threads();
    // A concurrent resize wins over the default.
    return size_.compare_exchange_strong(n, resolved) ? resolved : n;
  }

  void resize(int n) {
    if (in_task) throw Error("set_num_threads cannot be called from inside a parallel task");
    if (n > kMaxThreads) {
      throw Error(fmt::format("set_num_threads({}) exceeds the maximum of {}", n, kMaxThreads));
    }
    std::lock_guard<std::mutex> lock(launch_mutex_);
    // Workers are replaced lazily by the next launch; 0 re-reads the default then.
    size_.store(std::max(n, 0), std::memory_order_release);
  }

  int32_t launch(TesselParallelLambda fn, void* closure, int32_t num_tasks) {
    if (num_tasks < 0) {
      throw Error(fmt::format("parallel launch: num_tasks is {}; it must be >= 0", num_tasks));
    }
    if (in_task) return run_serially(fn, closure, num_tasks == 0 ? size() : num_tasks);
    std::unique_lock<std::mutex> lock(launch_mutex_);
    int threads = size();
    if (num_tasks == 0) num_tasks = threads;
    int participants = std::min(num_tasks, threads);
    if (participants <= 1) {
      lock.unlock();  // a serial run needs no pool state
      return run_serially(fn, closure, num_tasks);
    }
    if (!workers_ || workers_->size() != threads) {
      workers_.reset();
      workers_ = std::make_unique<Workers>(threads);
    }
    return workers_->launch(fn, closure, num_tasks, participants);
  }

 private:
  // fork() copies only the forking thread, so the child must not wait on the parent's workers. The
  // parent lets a launch in flight finish first (forking from inside a task is not supported).
  static void before_fork() { pool().launch_mutex_.lock(); }
  static void after_fork_in_parent() { pool().launch_mutex_.unlock(); }
  static void after_fork_in_child() {
    ThreadPool& p = pool();
    // The worker threads do not exist here: leak their objects (joining would hang) and start
    // fresh workers on the next launch.
    static_cast<void>(p.workers_.release());
    p.launch_mutex_.unlock();
  }

  std::mutex launch_mutex_;           // serializes launches, resizes and worker replacement
  std::atomic<int> size_{0};          // 0 until the default is resolved
  std::unique_ptr<Workers> workers_;  // null until the first parallel launch
};

ThreadPool& pool() {
  static ThreadPool instance;
  return instance;
}

}  // namespace

std::optional<int> detail::parse_num_threads(const char* text) {
  std::optional<int> n = parse_whole_number<int>(text);
  if (!n || *n < 1 || *n > kMaxThreads) return std::nullopt;
  return n;
}

void set_num_threads(int n) { pool().resize(n); }

int num_threads() { return pool().size(); }

int32_t parallel_launch(TesselParallelLambda fn, void* closure, int32_t num_tasks) {
  return pool().launch(fn, closure, num_tasks);
}

int32_t parallel_for(int32_t num_tasks, const std::function<int32_t(int32_t, int32_t)>& fn) {
  // Exceptions must not cross threads: the trampoline keeps the first and the caller rethrows it.
  struct Closure {
    const std::function<int32_t(int32_t, int32_t)>* fn;
    std::mutex mutex;
    std::exception_ptr error;
  } closure{&fn, {}, nullptr};
  auto trampoline = [](int32_t task_id, int32_t n, void* data) -> int32_t {
    auto* c = static_cast<Closure*>(data);
    try {
      return (*c->fn)(task_id, n);
    } catch (...) {
      std::lock_guard<std::mutex> lock(c->mutex);
      if (!c->error) c->error = std::current_exception();
      return -1;
    }
  };
  int32_t rc = parallel_launch(trampoline, &closure, num_tasks);
  if (closure.error) std::rethrow_exception(closure.error);
  return rc;
}

}  // namespace tessel::runtime
