#include "tir/pipeline.h"

#include <gtest/gtest.h>

#include "ir/functor.h"
#include "tests/common/expect_error.h"
#include "transforms/test_util.h"

namespace tessel::tir {
namespace {

using tessel::testing::expect_error;
using testing::Interpreter;

// B[i, j] = tanh(A[i, j]) + 1 over a 3 x n tensor, j split by 8 (not dividing n in general) with
// the inner j loop vectorized, as schedule_to_tir produces it.
struct Workload {
  Var n{"n"};
  Buffer a = Buffer::make("A", DataType::f32(), {3, n});
  Buffer b = Buffer::make("B", DataType::f32(), {3, n});
  PrimFunc func() const {
    Var i("i"), jo("jo"), ji("ji");
    PrimExpr j = jo * 8 + ji;
    Stmt store = BufferStoreNode::make(b, tanh(BufferLoadNode::make(a, {i, j})) + 1.0f, {i, j});
    Stmt body =
        ForNode::make(i, 0, 3, ForKind::kSerial,
                      ForNode::make(jo, 0, ceildiv(n, 8), ForKind::kSerial,
                                    ForNode::make(ji, 0, 8, ForKind::kVectorized,
                                                  IfThenElseNode::make(likely(j < n), store))));
    return PrimFunc::make("tanh_plus_one", {a->data, b->data}, {a, b}, body);
  }
};

bool has_vectorized_loop(const Stmt& s) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit_For(const ForNode* op, const Stmt& self) override {
      found |= op->kind == ForKind::kVectorized;
      IRVisitor::visit_For(op, self);
    }
  } finder;
  finder.visit_stmt(s);
  return finder.found;
}

TEST(PipelineTest, CallbackSeesEveryPassInOrder) {
  Workload w;
  std::vector<std::string> seen;
  PipelineOptions opt;
  opt.verify = true;
  opt.dump_ir = "";
  opt.after_pass = [&](const std::string& pass, const PrimFunc&) { seen.push_back(pass); };
  lower_tir(w.func(), opt);
  EXPECT_EQ(seen, tir_pass_names());

  seen.clear();
  opt.loop_partition = false;
  // Without partitioning the guard stays inside the vectorized loop: a clear error.
  EXPECT_THROW(lower_tir(w.func(), opt), Error);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), "loop_partition"), 0);
}

TEST(PipelineTest, LoweredFunctionComputesTheSameValues) {
  Workload w;
  PipelineOptions opt;
  opt.verify = true;
  opt.dump_ir = "";
  PrimFunc lowered = lower_tir(w.func(), opt);
  EXPECT_FALSE(has_vectorized_loop(lowered->body)) << to_string(lowered);
  for (int64_t cols : {1, 8, 21}) {
    std::vector<double> a(3 * cols), ref(3 * cols, 0), got(3 * cols, 0);
    for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<double>(k % 11) * 0.37 - 2;
    Interpreter().run(w.func(), {&a, &ref}, {{w.n, cols}});
    Interpreter().run(lowered, {&a, &got}, {{w.n, cols}});
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(ref[k], got[k], 2e-6) << "n = " << cols;
  }
}

TEST(PipelineTest, DumpIrParsing) {
  EXPECT_TRUE(parse_dump_ir("").empty());
  std::vector<std::string> all = tir_pass_names();
  all.insert(all.begin(), "schedule_to_tir");  // te::lower's first stage dumps under the same name
  EXPECT_EQ(parse_dump_ir("all"), all);
  EXPECT_EQ(parse_dump_ir(" flatten_buffers, ,vectorize_loops "),
            (std::vector<std::string>{"flatten_buffers", "vectorize_loops"}));
  expect_error([] { parse_dump_ir("flatten,vectorize_loops"); },
               {"unknown tir pass 'flatten'", "flatten_buffers"});
}

TEST(PipelineTest, DumpsSelectedPassesToStderr) {
  Workload w;
  PipelineOptions opt;
  opt.dump_ir = "flatten_buffers";
  ::testing::internal::CaptureStderr();
  lower_tir(w.func(), opt);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("// after flatten_buffers\nprimfn tanh_plus_one("), std::string::npos) << err;
  EXPECT_EQ(err.find("// after vectorize_loops"), std::string::npos) << err;
}

TEST(PipelineTest, DumpSpecComesFromEnvironment) {
  Workload w;
  setenv("TESSEL_DUMP_IR", "remove_no_op", 1);
  ::testing::internal::CaptureStderr();
  lower_tir(w.func());
  std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("TESSEL_DUMP_IR");
  EXPECT_NE(err.find("// after remove_no_op\n"), std::string::npos) << err;
  EXPECT_EQ(err.find("// after simplify"), std::string::npos) << err;
}

}  // namespace
}  // namespace tessel::tir
