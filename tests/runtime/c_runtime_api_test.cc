#include "runtime/c_runtime_api.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

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

}  // namespace
