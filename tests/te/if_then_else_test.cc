// The padding idiom with te::if_then_else reads nothing outside its input. ASan does not see into
// JIT-compiled code, so the input is placed against a PROT_NONE page instead: its last byte just
// before one, or its first byte just after one. Any read past either end is a SIGSEGV. (With
// te::select in place of if_then_else, every schedule below dies that way.)
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/ndarray.h"
#include "te_test_util.h"

namespace tessel::te {
namespace {

constexpr int kWidth = 64;  // 256 bytes: whole multiples of the 64-byte alignment kernels check
constexpr int kPad = 4;

enum class Guard { kAfterEnd, kBeforeStart };

// A float32 vector of kWidth elements 1, 2, ... whose memory touches a PROT_NONE page.
runtime::NDArray guarded_input(Guard guard) {
  struct Storage {
    DLManagedTensor managed{};
    int64_t shape[1] = {kWidth};
    void* mapping = nullptr;
    size_t mapping_bytes = 0;
  };
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = kWidth * sizeof(float);
  auto* s = new Storage;
  s->mapping_bytes = 2 * page;
  s->mapping =
      mmap(nullptr, s->mapping_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(s->mapping, MAP_FAILED);
  char* first = static_cast<char*>(s->mapping);
  char* data;
  if (guard == Guard::kAfterEnd) {
    EXPECT_EQ(mprotect(first + page, page, PROT_NONE), 0);
    data = first + page - bytes;
  } else {
    EXPECT_EQ(mprotect(first, page, PROT_NONE), 0);
    data = first + page;
  }
  for (int k = 0; k < kWidth; ++k) reinterpret_cast<float*>(data)[k] = static_cast<float>(k + 1);
  DLTensor& t = s->managed.dl_tensor;
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = runtime::to_dl(DataType::f32());
  t.shape = s->shape;
  s->managed.manager_ctx = s;
  s->managed.deleter = [](DLManagedTensor* self) {
    auto* storage = static_cast<Storage*>(self->manager_ctx);
    munmap(storage->mapping, storage->mapping_bytes);
    delete storage;
  };
  return runtime::NDArray::from_dlpack(&s->managed);
}

// P[i] = A[i - kPad] inside, 0 in the kPad elements on each side; B[i] = P[i] + P[i+1] + P[i+2].
struct Padding {
  Tensor A = placeholder({kWidth}, DataType::f32(), "A");
  Tensor P = compute(
      {kWidth + 2 * kPad},
      [&](Expr i) { return if_then_else(i >= kPad && i < kWidth + kPad, A(i - kPad), 0.0f); }, "P");
  Tensor B =
      compute({kWidth + 2 * kPad - 2}, [&](Expr i) { return P(i) + P(i + 1) + P(i + 2); }, "B");

  static std::vector<float> padded() {
    std::vector<float> p(kWidth + 2 * kPad, 0.0f);
    for (int k = 0; k < kWidth; ++k) p[k + kPad] = static_cast<float>(k + 1);
    return p;
  }
  static std::vector<float> stencil() {
    std::vector<float> p = padded(), b(p.size() - 2);
    for (size_t k = 0; k < b.size(); ++k) b[k] = p[k] + p[k + 1] + p[k + 2];
    return b;
  }
  // Runs `s` (whose output is `out`) on both guarded placements of A.
  static void check(const Schedule& s, const Tensor& in, const Tensor& out,
                    const std::vector<float>& want, bool expect_masked_load) {
    runtime::Module m = build(s, {in, out}, Target::parse("llvm -mcpu=native"), "pad");
    if (expect_masked_load) {
      EXPECT_NE(m.source("ll").find("llvm.masked.load"), std::string::npos) << m.source("ll");
    }
    for (Guard guard : {Guard::kAfterEnd, Guard::kBeforeStart}) {
      runtime::NDArray a = guarded_input(guard);
      runtime::NDArray result = testing::zeros({static_cast<int64_t>(want.size())});
      m.get_function("pad")(a, result);
      testing::expect_near(result, want, 0.0f);
    }
  }
};

TEST(IfThenElseTeTest, ScalarPaddingStaysInsideTheInput) {
  Padding p;
  Padding::check(create_schedule({p.P}), p.A, p.P, Padding::padded(), false);
}

TEST(IfThenElseTeTest, VectorizedPaddingMasksItsLoads) {
  for (int64_t factor :
       {8, 16}) {  // 72 elements: 16 leaves a tail that loop partitioning splits off
    Padding p;
    Schedule s = create_schedule({p.P});
    auto [outer, inner] = s[p.P].split(p.P.axis(0), factor);
    s[p.P].vectorize(inner);
    Padding::check(s, p.A, p.P, Padding::padded(), true);
  }
}

TEST(IfThenElseTeTest, InlinedPaddingInAVectorizedStencil) {
  Padding p;
  Schedule s = create_schedule({p.B});
  s[p.P].compute_inline();
  auto [outer, inner] = s[p.B].split(p.B.axis(0), 10);
  s[p.B].vectorize(inner);
  Padding::check(s, p.A, p.B, Padding::stencil(), true);
}

TEST(IfThenElseTeTest, PaddingComputedAtEachStencilTile) {
  Padding p;
  Schedule s = create_schedule({p.B});
  auto [outer, inner] = s[p.B].split(p.B.axis(0), 10);
  s[p.P].compute_at(s[p.B], outer);
  Padding::check(s, p.A, p.B, Padding::stencil(), false);
}

}  // namespace
}  // namespace tessel::te
