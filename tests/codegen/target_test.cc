#include "codegen/target.h"

#include <gtest/gtest.h>

#include "tests/common/expect_error.h"

namespace tessel {
namespace {

using tessel::testing::expect_error;

TEST(TargetTest, ParsesEveryOption) {
  Target t = Target::parse(
      "llvm -mcpu=skylake-avx512 -mattr=+avx2,+fma -mtriple=x86_64-linux-gnu -num-cores=2");
  EXPECT_EQ(t.kind, "llvm");
  EXPECT_EQ(t.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(t.cpu, "skylake-avx512");
  EXPECT_EQ(t.features, "+avx2,+fma");
  EXPECT_EQ(t.num_cores, 2);
  EXPECT_EQ(t.vector_bits(), 512);
  EXPECT_TRUE(t.has_feature("avx512f"));
  EXPECT_EQ(
      t.str(),
      "llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=skylake-avx512 -mattr=+avx2,+fma -num-cores=2");
}

TEST(TargetTest, NativeResolvesToTheHostAndRoundTrips) {
  Target native = Target::parse("llvm -mcpu=native -num-cores=2");
  Target host = Target::host();
  EXPECT_NE(native.cpu, "native");
  EXPECT_FALSE(native.cpu.empty());
  EXPECT_EQ(native.cpu, host.cpu);
  EXPECT_EQ(native.features, host.features);
  Target again = Target::parse(native.str());
  EXPECT_EQ(again.str(), native.str());
  EXPECT_EQ(again.num_cores, 2);
  EXPECT_GE(host.vector_bits(), 128);
}

TEST(TargetTest, OnlyTheHostsArchOsAndCpuIsTheHostCpu) {
  Target host = Target::host();
  EXPECT_TRUE(host.is_host_cpu());
  EXPECT_FALSE(Target::parse("llvm -mtriple=aarch64-linux-gnu").is_host_cpu());
  Target other_cpu = host;
  other_cpu.cpu = host.cpu == "haswell" ? "znver4" : "haswell";
  EXPECT_FALSE(other_cpu.is_host_cpu());
}

TEST(TargetTest, VectorBitsFollowFeatures) {
  EXPECT_EQ(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell").vector_bits(), 256);
  EXPECT_EQ(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64").vector_bits(), 128);
  EXPECT_EQ(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell -mattr=-avx").vector_bits(),
            128);
  Target arm = Target::parse("llvm -mtriple=aarch64-linux-gnu");
  EXPECT_EQ(arm.cpu, "generic");
  EXPECT_EQ(arm.vector_bits(), 128);
}

TEST(TargetTest, RejectsBadStringsNamingTheCulprit) {
  expect_error([] { Target::parse("llvm -mcpu=native -foo=1"); },
               {"unknown target option", "-foo=1"});
  expect_error([] { Target::parse("llvm -mcpu=notacpu"); }, {"unknown CPU", "notacpu"});
  expect_error([] { Target::parse("llvm -mattr=+avx2,+nosuchfeature"); }, {"+nosuchfeature"});
  expect_error([] { Target::parse("llvm -mattr=avx2"); }, {"'avx2'"});
  expect_error([] { Target::parse("cuda"); }, {"llvm"});
  expect_error([] { Target::parse(""); }, {"llvm"});
  expect_error([] { Target::parse("llvm -num-cores=two"); }, {"-num-cores", "two"});
  expect_error([] { Target::parse("llvm -mtriple=nonsense-arch-none"); }, {"nonsense"});
  expect_error([] { Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=native"); }, {"native"});
}

// Each of these was accepted: an empty value meant the host, a second value overrode the first,
// empty features were dropped, and any core count went through.
TEST(TargetTest, RejectsEmptyDuplicatedAndHugeValues) {
  for (const char* empty :
       {"llvm -mcpu=", "llvm -mcpu", "llvm -mtriple=", "llvm -mattr=", "llvm -num-cores"}) {
    SCOPED_TRACE(empty);
    expect_error([&] { Target::parse(empty); }, {"is malformed", "=VALUE"});
  }
  expect_error([] { Target::parse("llvm -mtriple=x86_64-pc-linux-gnu="); },
               {"'-mtriple=x86_64-pc-linux-gnu='"});
  expect_error([] { Target::parse("llvm -mcpu=skylake -mcpu=znver4"); }, {"gives -mcpu twice"});
  expect_error(
      [] {
        Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake -mtriple=aarch64-linux-gnu");
      },
      {"gives -mtriple twice"});
  for (const char* features :
       {"llvm -mattr=,,,", "llvm -mattr=+avx2,,+fma", "llvm -mattr=+avx2,"}) {
    SCOPED_TRACE(features);
    expect_error([&] { Target::parse(features); }, {"empty CPU feature", features + 5});
  }
  for (const char* cores :
       {"llvm -num-cores=99999999999", "llvm -num-cores=65537", "llvm -num-cores=-1",
        "llvm -num-cores=-0", "llvm -num-cores=+2", "llvm -num-cores=2x"}) {
    SCOPED_TRACE(cores);
    expect_error([&] { Target::parse(cores); }, {"-num-cores", "from 0 to 65536"});
  }
  EXPECT_EQ(
      Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell -num-cores=65536").num_cores,
      65536);
}

}  // namespace
}  // namespace tessel
