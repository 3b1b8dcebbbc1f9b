// codegen::run_jobs: every item runs once whatever the thread count, and the error a caller sees is
// the lowest failing item's.
#include "codegen/parallel_jobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tessel::codegen {
namespace {

std::vector<size_t> iota(size_t n) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(ParallelJobsTest, EveryItemRunsOnce) {
  for (unsigned threads : {1u, 2u, 7u}) {
    std::vector<std::atomic<int>> runs(50);
    run_jobs(iota(50), threads, [&](size_t i) { ++runs[i]; });
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << i << ", " << threads;
  }
  run_jobs({}, 4, [](size_t) { FAIL() << "no items"; });
}

TEST(ParallelJobsTest, TheLowestFailingItemsErrorIsRethrownAfterAllRan) {
  for (unsigned threads : {1u, 2u, 4u}) {
    std::atomic<int> ran{0};
    // Items taken in reverse: 30 fails before 3 does on one thread.
    std::vector<size_t> order = iota(40);
    std::reverse(order.begin(), order.end());
    try {
      run_jobs(order, threads, [&](size_t i) {
        ++ran;
        if (i == 3 || i == 30) throw std::runtime_error("item " + std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "item 3");
    }
    EXPECT_EQ(ran.load(), 40) << threads;
  }
}

TEST(ParallelJobsTest, ThreadsAreBetweenOneAndTheWork) {
  EXPECT_EQ(job_threads(4, 2), 2u);
  EXPECT_EQ(job_threads(3, 100), 3u);
  EXPECT_EQ(job_threads(5, 0), 1u);
  EXPECT_GE(job_threads(0, 100), 1u);
}

}  // namespace
}  // namespace tessel::codegen
