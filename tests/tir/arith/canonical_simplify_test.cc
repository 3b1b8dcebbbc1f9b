// Randomized differential test of the simplifier: random index expressions over bounded vars are
// simplified and then evaluated, before and after, by an independent evaluator with Python-style
// floor division at random points. Wrong div/mod or bound rules show up as value mismatches.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "tir/arith/analyzer.h"

namespace tessel::arith {
namespace {

using Env = std::unordered_map<const VarNode*, int64_t>;

int64_t floordiv_ref(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Reference semantics, written independently of the simplifier.
int64_t eval(const PrimExpr& e, const Env& env) {
  auto bin = [&](const auto* op) { return std::pair(eval(op->a, env), eval(op->b, env)); };
  switch (e->kind()) {
    case NodeKind::IntImm:
      return e.as<IntImmNode>()->value;
    case NodeKind::Var:
      return env.at(e.as<VarNode>());
    case NodeKind::Add: {
      auto [a, b] = bin(e.as<AddNode>());
      return a + b;
    }
    case NodeKind::Sub: {
      auto [a, b] = bin(e.as<SubNode>());
      return a - b;
    }
    case NodeKind::Mul: {
      auto [a, b] = bin(e.as<MulNode>());
      return a * b;
    }
    case NodeKind::FloorDiv: {
      auto [a, b] = bin(e.as<FloorDivNode>());
      return floordiv_ref(a, b);
    }
    case NodeKind::FloorMod: {
      auto [a, b] = bin(e.as<FloorModNode>());
      return a - floordiv_ref(a, b) * b;
    }
    case NodeKind::Min: {
      auto [a, b] = bin(e.as<MinNode>());
      return std::min(a, b);
    }
    case NodeKind::Max: {
      auto [a, b] = bin(e.as<MaxNode>());
      return std::max(a, b);
    }
    case NodeKind::LT: {
      auto [a, b] = bin(e.as<LTNode>());
      return a < b;
    }
    case NodeKind::LE: {
      auto [a, b] = bin(e.as<LENode>());
      return a <= b;
    }
    case NodeKind::GT: {
      auto [a, b] = bin(e.as<GTNode>());
      return a > b;
    }
    case NodeKind::GE: {
      auto [a, b] = bin(e.as<GENode>());
      return a >= b;
    }
    case NodeKind::EQ: {
      auto [a, b] = bin(e.as<EQNode>());
      return a == b;
    }
    case NodeKind::NE: {
      auto [a, b] = bin(e.as<NENode>());
      return a != b;
    }
    case NodeKind::And: {
      auto [a, b] = bin(e.as<AndNode>());
      return a && b;
    }
    case NodeKind::Or: {
      auto [a, b] = bin(e.as<OrNode>());
      return a || b;
    }
    case NodeKind::Not:
      return !eval(e.as<NotNode>()->a, env);
    case NodeKind::Select: {
      const auto* op = e.as<SelectNode>();
      return eval(op->condition, env) ? eval(op->true_value, env) : eval(op->false_value, env);
    }
    default:
      ADD_FAILURE() << "unexpected node in " << e;
      return 0;
  }
}

// var in [lo + offset, lo + offset + extent), where offset and extent may be earlier vars.
struct BoundVar {
  Var var;
  int64_t lo, extent;
  Var offset = Var(), extent_var = Var();
  Range range() const {
    PrimExpr min = offset.defined() ? offset + lo : PrimExpr(lo);
    return Range(min, extent_var.defined() ? PrimExpr(extent_var) : PrimExpr(extent));
  }
};

class ExprGen {
 public:
  ExprGen(std::vector<BoundVar> vars, uint32_t seed) : vars_(std::move(vars)), rng_(seed) {}

  PrimExpr index(int depth) {
    if (depth <= 0 || pick(5) == 0) return leaf();
    switch (pick(10)) {
      case 0:
      case 1:
        return AddNode::make(index(depth - 1), index(depth - 1));
      case 2:
        return SubNode::make(index(depth - 1), index(depth - 1));
      case 3:
        return MulNode::make(index(depth - 1), cst(pick(11) - 3));
      case 4:
        return MulNode::make(index(depth - 1), pick(3) == 0 ? index(depth - 2) : var());
      case 5:
        return FloorDivNode::make(index(depth - 1), cst(divisor()));
      case 6:
        return FloorModNode::make(index(depth - 1), cst(divisor()));
      case 7:
        return MinNode::make(index(depth - 1), index(depth - 1));
      case 8:
        return MaxNode::make(index(depth - 1), index(depth - 1));
      default:
        return SelectNode::make(cond(depth - 1), index(depth - 1), index(depth - 1));
    }
  }

  PrimExpr cond(int depth) {
    PrimExpr a = index(depth), b = index(depth);
    switch (pick(9)) {
      case 0:
        return LTNode::make(a, b);
      case 1:
        return LENode::make(a, b);
      case 2:
        return GTNode::make(a, b);
      case 3:
        return GENode::make(a, b);
      case 4:
        return EQNode::make(a, b);
      case 5:
        return NENode::make(a, b);
      case 6:
        return AndNode::make(LTNode::make(a, b), cond(depth - 1));
      case 7:
        return OrNode::make(GENode::make(a, b), cond(depth - 1));
      default:
        return NotNode::make(LTNode::make(a, b));
    }
  }

  Env point() {
    Env env;
    for (const auto& v : vars_) {
      int64_t lo = v.lo + (v.offset.defined() ? env.at(v.offset.get()) : 0);
      int64_t extent = v.extent_var.defined() ? env.at(v.extent_var.get()) : v.extent;
      env[v.var.get()] = lo + static_cast<int64_t>(rng_() % extent);
    }
    return env;
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % n); }
  PrimExpr cst(int64_t v) { return IntImmNode::make(DataType::i64(), v); }
  PrimExpr var() { return vars_[pick(static_cast<int>(vars_.size()))].var; }
  PrimExpr leaf() { return pick(3) == 0 ? cst(pick(49) - 8) : var(); }
  int64_t divisor() {
    static constexpr int64_t kDivisors[] = {1, 2, 3, 4, 5, 7, 8, 16, 32, 64};
    return kDivisors[pick(10)];
  }

  std::vector<BoundVar> vars_;
  std::mt19937 rng_;
};

// int64 so that products of several vars cannot leave the type's range.
std::vector<BoundVar> test_vars() {
  DataType t = DataType::i64();
  return {{Var("x", t), 0, 16}, {Var("y", t), 0, 8}, {Var("z", t), -8, 32}, {Var("w", t), 0, 512}};
}

// i in [0, n) and j in [n, n + 8): proofs go through the symbolic ranges.
std::vector<BoundVar> symbolic_vars() {
  DataType t = DataType::i64();
  Var n("n", t), i("i", t), j("j", t);
  return {{n, 1, 63}, {i, 0, 0, Var(), n}, {j, 0, 8, n}};
}

// Simplifies random expressions over `vars` and compares values at random points.
void run_differential(bool bind_ranges, bool conditions, uint32_t seed,
                      const std::vector<BoundVar>& vars = test_vars()) {
  ExprGen gen(vars, seed);
  Analyzer a;
  if (bind_ranges) {
    for (const auto& v : vars) a.bind(v.var, v.range());
  }
  int failures = 0;
  for (int n = 0; n < 3000 && failures < 5; ++n) {
    PrimExpr e = conditions ? gen.cond(3) : gen.index(4);
    PrimExpr s = a.simplify(e);
    PrimExpr again = a.simplify(s);
    ConstIntBound bound = a.const_int_bound(e);
    if (!structural_equal(s, again)) {
      ++failures;
      ADD_FAILURE() << "not idempotent: " << e << "\n  once: " << s << "\n twice: " << again;
    }
    for (int p = 0; p < 20; ++p) {
      Env env = gen.point();
      int64_t want = eval(e, env), got = eval(s, env), got2 = eval(again, env);
      bool in_bound = !bind_ranges || (bound.min_value <= want && want <= bound.max_value);
      if (want != got || want != got2 || !in_bound) {
        ++failures;
        ADD_FAILURE() << "expr: " << e << "\nsimplified: " << s << "\nagain: " << again << "\nwant "
                      << want << " got " << got << " / " << got2 << ", bound [" << bound.min_value
                      << ", " << bound.max_value << "]";
        break;
      }
    }
  }
}

TEST(CanonicalSimplifyRandomTest, IndexExpressionsKeepTheirValuesUnderBounds) {
  run_differential(/*bind_ranges=*/true, /*conditions=*/false, 1);
}

TEST(CanonicalSimplifyRandomTest, IndexExpressionsKeepTheirValuesWithoutBounds) {
  run_differential(/*bind_ranges=*/false, /*conditions=*/false, 2);
}

TEST(CanonicalSimplifyRandomTest, SymbolicRangesKeepValues) {
  run_differential(/*bind_ranges=*/true, /*conditions=*/false, 5, symbolic_vars());
  run_differential(/*bind_ranges=*/true, /*conditions=*/true, 6, symbolic_vars());
}

TEST(CanonicalSimplifyRandomTest, ConditionsKeepTheirValues) {
  run_differential(/*bind_ranges=*/true, /*conditions=*/true, 3);
  run_differential(/*bind_ranges=*/false, /*conditions=*/true, 4);
}

}  // namespace
}  // namespace tessel::arith
