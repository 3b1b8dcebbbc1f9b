#include "runtime/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "ir/error.h"
#include "tests/common/expect_error.h"

namespace tessel::runtime {
namespace {

// Each test picks its pool size; the default is restored afterwards.
class ThreadPoolTest : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(0); }
};

TEST_F(ThreadPoolTest, EveryTaskRunsExactlyOnceAndCallerRunsTaskZero) {
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    for (int32_t num_tasks : {1, 2, 7, 64, 0}) {
      int32_t expected_tasks = num_tasks == 0 ? threads : num_tasks;
      std::vector<std::atomic<int>> runs(expected_tasks);
      std::atomic<int> wrong_num_tasks{0};
      std::thread::id task0_thread;
      int32_t rc = parallel_for(num_tasks, [&](int32_t task_id, int32_t n) {
        if (n != expected_tasks) ++wrong_num_tasks;
        ++runs[task_id];
        if (task_id == 0) task0_thread = std::this_thread::get_id();
        return 0;
      });
      EXPECT_EQ(rc, 0);
      EXPECT_EQ(wrong_num_tasks, 0);
      for (int32_t t = 0; t < expected_tasks; ++t) {
        EXPECT_EQ(runs[t], 1) << "task " << t << " of " << num_tasks << " on " << threads
                              << " threads";
      }
      EXPECT_EQ(task0_thread, std::this_thread::get_id());
    }
  }
}

// Each thread runs its contiguous share of the tasks (here 0-3 and 4-7) and then takes what is
// left of the others': the thread in task 4 waits for 5-7, which only the other thread can run.
// Within a share the tasks run in order.
TEST_F(ThreadPoolTest, AThreadDoneWithItsShareTakesTheTasksLeftInAnother) {
  set_num_threads(2);
  constexpr int32_t kTasks = 8;
  std::vector<std::atomic<int>> runs(kTasks);
  std::vector<std::atomic<std::thread::id>> ran_on(kTasks);
  std::atomic<int> out_of_order{0};
  std::atomic<bool> timed_out{false};
  std::mutex mutex;
  std::map<std::thread::id, int32_t> last_task;  // per thread, in this launch
  int32_t rc = parallel_for(kTasks, [&](int32_t task_id, int32_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto [it, first] = last_task.emplace(std::this_thread::get_id(), task_id);
      if (!first && task_id / 4 == it->second / 4 && task_id < it->second) ++out_of_order;
      it->second = task_id;
    }
    ran_on[task_id] = std::this_thread::get_id();
    if (task_id == 4) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (runs[5] + runs[6] + runs[7] < 3) {
        if (std::chrono::steady_clock::now() > deadline) {
          timed_out = true;
          break;
        }
        std::this_thread::yield();
      }
    }
    ++runs[task_id];
    return 0;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(timed_out) << "tasks 5-7 were left to the thread blocked in task 4";
  for (int32_t t = 0; t < kTasks; ++t) EXPECT_EQ(runs[t], 1) << "task " << t;
  for (int32_t t = 5; t < kTasks; ++t) EXPECT_NE(ran_on[t].load(), ran_on[4].load()) << t;
  EXPECT_EQ(out_of_order, 0);
}

// Sum of a large array split into contiguous chunks by task id.
int64_t parallel_sum(const std::vector<int32_t>& values, int32_t num_tasks) {
  std::vector<int64_t> partial(num_tasks == 0 ? num_threads() : num_tasks, 0);
  parallel_for(num_tasks, [&](int32_t task_id, int32_t n) {
    size_t begin = values.size() * task_id / n, end = values.size() * (task_id + 1) / n;
    partial[task_id] = std::accumulate(values.begin() + begin, values.begin() + end, int64_t{0});
    return 0;
  });
  return std::accumulate(partial.begin(), partial.end(), int64_t{0});
}

TEST_F(ThreadPoolTest, PartialSumsCombineToTheSerialSum) {
  set_num_threads(4);
  std::vector<int32_t> values(1 << 20);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i % 1000) - 300;
  int64_t expected = 0;
  for (int32_t v : values) expected += v;
  for (int32_t num_tasks : {1, 3, 4, 16, 0})
    EXPECT_EQ(parallel_sum(values, num_tasks), expected) << num_tasks;
}

TEST_F(ThreadPoolTest, NestedLaunchRunsSeriallyInTheCallingThread) {
  set_num_threads(4);
  std::atomic<int> inner_runs{0};
  std::atomic<int> foreign_thread{0};
  int32_t rc = parallel_for(4, [&](int32_t, int32_t) {
    std::thread::id outer = std::this_thread::get_id();
    return parallel_for(0, [&](int32_t, int32_t n) {
      if (std::this_thread::get_id() != outer) ++foreign_thread;
      inner_runs += n == 4 ? 1 : 100;
      return 0;
    });
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(inner_runs, 16);
  EXPECT_EQ(foreign_thread, 0);
}

TEST_F(ThreadPoolTest, SetNumThreadsResizes) {
  set_num_threads(3);
  EXPECT_EQ(num_threads(), 3);
  EXPECT_EQ(TesselBackendNumThreads(), 3);
  std::atomic<int> tasks{0};
  parallel_for(0, [&](int32_t, int32_t) { return ++tasks, 0; });
  EXPECT_EQ(tasks, 3);
  set_num_threads(1);
  EXPECT_EQ(num_threads(), 1);
  EXPECT_THROW(set_num_threads(100000), Error);
}

TEST_F(ThreadPoolTest, SetNumThreadsInsideATaskIsAnError) {
  set_num_threads(2);
  tessel::testing::expect_error(
      [] { parallel_for(2, [](int32_t, int32_t) { return set_num_threads(3), 0; }); },
      {"inside a parallel task"});
  EXPECT_EQ(num_threads(), 2);
}

TEST_F(ThreadPoolTest, DefaultComesFromTesselNumThreads) {
  ASSERT_EQ(setenv("TESSEL_NUM_THREADS", "5", 1), 0);
  set_num_threads(0);
  EXPECT_EQ(num_threads(), 5);
  ASSERT_EQ(setenv("TESSEL_NUM_THREADS", "many", 1), 0);
  set_num_threads(0);
  tessel::testing::expect_error([] { num_threads(); }, {"TESSEL_NUM_THREADS='many'"});
  // Through the C ABI the bad value becomes an error code and message.
  auto noop = [](int32_t, int32_t, void*) -> int32_t { return 0; };
  EXPECT_EQ(TesselBackendParallelLaunch(noop, nullptr, 0), -1);
  EXPECT_NE(std::string(TesselGetLastError()).find("TESSEL_NUM_THREADS"), std::string::npos);
  ASSERT_EQ(unsetenv("TESSEL_NUM_THREADS"), 0);
  set_num_threads(0);
  EXPECT_EQ(num_threads(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

// Every invalid TESSEL_NUM_THREADS is an error naming the value, from num_threads and from a launch
// through the C ABI alike; an empty one means unset.
TEST_F(ThreadPoolTest, InvalidTesselNumThreadsIsAnErrorNamingIt) {
  for (const char* bad : {"0", "-1", "-16", "abc", "16abc", " 8", "+8", "1e9", "2147483648"}) {
    ASSERT_EQ(setenv("TESSEL_NUM_THREADS", bad, 1), 0);
    set_num_threads(0);
    std::string quoted = std::string("TESSEL_NUM_THREADS='") + bad + "'";
    SCOPED_TRACE(quoted);
    tessel::testing::expect_error([] { num_threads(); }, {quoted});
    EXPECT_THROW(parallel_for(4, [](int32_t, int32_t) { return 0; }), Error) << quoted;
  }
  ASSERT_EQ(setenv("TESSEL_NUM_THREADS", "", 1), 0);
  set_num_threads(0);
  EXPECT_EQ(num_threads(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  ASSERT_EQ(unsetenv("TESSEL_NUM_THREADS"), 0);
}

// Far more pool threads than cores (this suite runs on two): every task still runs exactly once,
// results are right and launches finish, also from several user threads at once.
TEST_F(ThreadPoolTest, MoreThreadsThanCoresFromTesselNumThreads) {
  ASSERT_EQ(setenv("TESSEL_NUM_THREADS", "16", 1), 0);
  set_num_threads(0);
  EXPECT_EQ(num_threads(), 16);
  ASSERT_EQ(unsetenv("TESSEL_NUM_THREADS"), 0);
  std::vector<std::atomic<int>> runs(16);
  parallel_for(0, [&](int32_t task_id, int32_t n) { return n == 16 ? (++runs[task_id], 0) : -1; });
  for (auto& r : runs) EXPECT_EQ(r, 1);
  std::vector<int32_t> values(100000);
  std::iota(values.begin(), values.end(), -50000);
  const int64_t expected = -50000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> users;
  for (int u = 0; u < 3; ++u) {
    users.emplace_back([&, u] {
      for (int i = 0; i < 100; ++i) {
        if (parallel_sum(values, (u + i) % 3 == 0 ? 0 : 5 + (u + i) % 40) != expected) ++wrong;
      }
    });
  }
  for (auto& t : users) t.join();
  EXPECT_EQ(wrong, 0);
}

// One user thread resizes the pool while others launch on it.
TEST_F(ThreadPoolTest, ResizingWhileOtherThreadsLaunch) {
  std::vector<int32_t> values(20000, 2);
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> users;
  for (int u = 0; u < 2; ++u) {
    users.emplace_back([&, u] {
      for (int i = 0; i < 150; ++i) {
        // Explicit task counts: with 0, parallel_sum would size its partial sums before a resize.
        if (parallel_sum(values, 1 + (u + i) % 24) != 40000) ++wrong;
      }
    });
  }
  std::thread resizer([&] {
    for (int i = 0; !done.load(); ++i) {
      set_num_threads(1 + i % 16);
      std::this_thread::yield();
    }
  });
  for (auto& t : users) t.join();
  done = true;
  resizer.join();
  EXPECT_EQ(wrong, 0);
}

TEST(ParseNumThreadsTest, AcceptsOnlyPositiveIntegersInRange) {
  EXPECT_EQ(detail::parse_num_threads("4"), 4);
  EXPECT_EQ(detail::parse_num_threads("1024"), 1024);
  for (const char* bad : {"", "0", "-0", "-2", "4x", " 4", "4 ", "+4", "0x10", "1e3", "4.0", "1025",
                          "2147483648", "99999999999"}) {
    EXPECT_EQ(detail::parse_num_threads(bad), std::nullopt) << "'" << bad << "'";
  }
}

// Task `bad` sets an error message and returns `bad + 100`; task 5 also fails, later in id order.
int32_t failing_task(int32_t task_id, int32_t, void* closure) {
  int32_t bad = *static_cast<int32_t*>(closure);
  if (task_id == bad || task_id == 5) {
    std::string msg = "task " + std::to_string(task_id) + " failed";
    TesselSetLastError(msg.c_str());
    return task_id + 100;
  }
  return 0;
}

TEST_F(ThreadPoolTest, LowestFailingTaskResultAndMessageReachTheCaller) {
  set_num_threads(4);
  for (int32_t bad : {0, 1, 3}) {
    TesselSetLastError("stale");
    EXPECT_EQ(TesselBackendParallelLaunch(failing_task, &bad, 8), bad + 100);
    EXPECT_EQ(std::string(TesselGetLastError()), "task " + std::to_string(bad) + " failed");
  }
  int32_t none = -1;
  EXPECT_EQ(TesselBackendParallelLaunch(failing_task, &none, 4), 0);
  EXPECT_EQ(TesselBackendParallelLaunch(failing_task, &none, -1), -1);
  EXPECT_NE(std::string(TesselGetLastError()).find("num_tasks is -1"), std::string::npos);
}

TEST_F(ThreadPoolTest, ExceptionInATaskIsRethrownToTheCaller) {
  set_num_threads(4);
  std::atomic<int> runs{0};
  auto throw_in_task_2 = [&](int32_t task_id, int32_t) -> int32_t {
    ++runs;
    if (task_id == 2) throw Error("boom in task 2");
    return 0;
  };
  EXPECT_THROW(parallel_for(6, throw_in_task_2), Error);
  EXPECT_EQ(runs, 6);
}

TEST_F(ThreadPoolTest, SleepingWorkersAndCallerWakeUp) {
  set_num_threads(4);
  for (int round = 0; round < 3; ++round) {
    // Past the spin budget, so workers block on the condition variable.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    std::vector<std::atomic<int>> runs(4);
    parallel_for(4, [&](int32_t task_id, int32_t) {
      // A slow worker task makes the caller sleep while waiting.
      if (task_id == 3) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ++runs[task_id];
      return 0;
    });
    for (auto& r : runs) EXPECT_EQ(r, 1);
  }
}

TEST_F(ThreadPoolTest, LaunchesFromSeveralUserThreadsAreSafe) {
  set_num_threads(3);
  std::vector<int32_t> values(10000);
  std::iota(values.begin(), values.end(), 1);
  const int64_t expected = int64_t{10000} * 10001 / 2;
  std::atomic<int> wrong{0};
  std::vector<std::thread> users;
  for (int u = 0; u < 4; ++u) {
    users.emplace_back([&, u] {
      for (int i = 0; i < 200; ++i) {
        if (parallel_sum(values, 1 + (u + i) % 6) != expected) ++wrong;
      }
    });
  }
  for (auto& t : users) t.join();
  EXPECT_EQ(wrong, 0);
}

TEST_F(ThreadPoolTest, PoolWorksInAForkedChild) {
  set_num_threads(4);
  std::vector<int32_t> values(100000, 3);
  ASSERT_EQ(parallel_sum(values, 4), 300000);  // the parent's workers exist now
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a hang in the child shows up as SIGALRM in the parent
    _exit(parallel_sum(values, 8) == 300000 && parallel_sum(values, 0) == 300000 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(parallel_sum(values, 4), 300000);
}

}  // namespace
}  // namespace tessel::runtime
