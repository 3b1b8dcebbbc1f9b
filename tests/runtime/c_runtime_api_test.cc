#include "runtime/c_runtime_api.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(CRuntimeApiTest, LastErrorIsThreadLocal) {
  TesselSetLastError("main thread error");
  std::string seen_in_other;
  std::thread other([&] {
    seen_in_other = TesselGetLastError();
    TesselSetLastError("other thread error");
  });
  other.join();
  EXPECT_EQ(seen_in_other, "");
  EXPECT_STREQ(TesselGetLastError(), "main thread error");
  TesselSetLastError(nullptr);
  EXPECT_STREQ(TesselGetLastError(), "");
}

TEST(CRuntimeApiTest, WorkspaceIsAlignedAndWritable) {
  for (uint64_t nbytes : {0, 1, 63, 64, 65, 1 << 20}) {
    void* p = TesselBackendAllocWorkspace(nbytes);
    ASSERT_NE(p, nullptr) << nbytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << nbytes;
    std::memset(p, 0xab, nbytes);
    TesselBackendFreeWorkspace(p);
  }
  EXPECT_EQ(TesselBackendAllocWorkspace(UINT64_MAX), nullptr);
  EXPECT_NE(std::string(TesselGetLastError()).find("cannot allocate"), std::string::npos);
}

// A run's workspaces come back on the next run: no fresh pages to fault in and zero.
TEST(CRuntimeApiTest, FreedWorkspacesAreReusedBySize) {
  void* big = TesselBackendAllocWorkspace(600 << 10);
  void* small = TesselBackendAllocWorkspace(1000);
  ASSERT_TRUE(big && small);
  TesselBackendFreeWorkspace(big);
  TesselBackendFreeWorkspace(small);
  EXPECT_EQ(TesselBackendAllocWorkspace(1000), small);
  EXPECT_EQ(TesselBackendAllocWorkspace(600 << 10), big);
  void* other = TesselBackendAllocWorkspace(2000);  // no block of its size: a fresh one
  EXPECT_NE(other, small);
  EXPECT_NE(other, big);
  for (void* p : {big, small, other}) TesselBackendFreeWorkspace(p);
  TesselBackendFreeWorkspace(nullptr);
  // Another thread has its own blocks.
  void* seen = nullptr;
  std::thread t([&] {
    seen = TesselBackendAllocWorkspace(600 << 10);
    TesselBackendFreeWorkspace(seen);
  });
  t.join();
  EXPECT_NE(seen, big);
}

// More freed blocks than a thread keeps: every one stays usable and the oldest go back.
TEST(CRuntimeApiTest, WorkspaceCacheStaysBounded) {
  std::vector<void*> blocks;
  for (uint64_t i = 1; i <= 20; ++i) blocks.push_back(TesselBackendAllocWorkspace(i << 12));
  for (void* p : blocks) TesselBackendFreeWorkspace(p);
  void* newest = TesselBackendAllocWorkspace(uint64_t{20} << 12);
  EXPECT_EQ(newest, blocks.back());
  std::memset(newest, 1, uint64_t{20} << 12);
  TesselBackendFreeWorkspace(newest);
  void* huge = TesselBackendAllocWorkspace(uint64_t{100} << 20);  // beyond the cache: freed
  ASSERT_NE(huge, nullptr);
  TesselBackendFreeWorkspace(huge);
}

}  // namespace
