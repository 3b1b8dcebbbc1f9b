// Statement nodes of the loop IR, and PrimFunc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace tessel {

class StmtNode : public Node {
 public:
  explicit StmtNode(NodeKind kind) : Node(kind) {}
};
using Stmt = Ref<StmtNode>;

class LetStmtNode : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::LetStmt;
  LetStmtNode(Var v, PrimExpr val, Stmt b)
      : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  Var var;
  PrimExpr value;
  Stmt body;
  static Stmt make(Var var, PrimExpr value, Stmt body);
};

class AssertStmtNode : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::AssertStmt;
  AssertStmtNode(PrimExpr c, std::string m, Stmt b)
      : StmtNode(kKind), condition(std::move(c)), message(std::move(m)), body(std::move(b)) {}
  PrimExpr condition;
  std::string message;
  Stmt body;
  static Stmt make(PrimExpr condition, std::string message, Stmt body);
};

class EvaluateNode : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Evaluate;
  explicit EvaluateNode(PrimExpr v) : StmtNode(kKind), value(std::move(v)) {}
  PrimExpr value;
  static Stmt make(PrimExpr value);
};

class SeqStmtNode : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::SeqStmt;
  explicit SeqStmtNode(std::vector<Stmt> s) : StmtNode(kKind), seq(std::move(s)) {}
  std::vector<Stmt> seq;
  // Flattens nested sequences and drops undefined entries; one statement stays itself.
  static Stmt make(std::vector<Stmt> seq);
};

class IfThenElseNode : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::IfThenElse;
  IfThenElseNode(PrimExpr c, Stmt t, Stmt e)
      : StmtNode(kKind),
        condition(std::move(c)),
        then_case(std::move(t)),
        else_case(std::move(e)) {}
  PrimExpr condition;
  Stmt then_case;
  Stmt else_case;  // may be undefined
  static Stmt make(PrimExpr condition, Stmt then_case, Stmt else_case = Stmt());
};

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };
const char* for_kind_name(ForKind kind);

class ForNode : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::For;
  ForNode(Var v, PrimExpr mn, PrimExpr ext, ForKind k, Stmt b, std::string tag)
      : StmtNode(kKind),
        loop_var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        kind(k),
        body(std::move(b)),
        thread_tag(std::move(tag)) {}
  Var loop_var;
  PrimExpr min, extent;
  ForKind kind;
  Stmt body;
  std::string thread_tag;  // for kThreadBinding: "blockIdx.x", "threadIdx.y", ...
  static Stmt make(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
                   std::string thread_tag = "");
};

class BufferStoreNode : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::BufferStore;
  BufferStoreNode(Buffer b, PrimExpr v, std::vector<PrimExpr> idx)
      : StmtNode(kKind), buffer(std::move(b)), value(std::move(v)), indices(std::move(idx)) {}
  Buffer buffer;
  PrimExpr value;
  std::vector<PrimExpr> indices;
  static Stmt make(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices);
};

// Allocates `buffer` (its shape and scope) for the duration of `body`.
class AllocateNode : public StmtNode {
 public:
  static constexpr NodeKind kKind = NodeKind::Allocate;
  AllocateNode(Buffer b, Stmt bd) : StmtNode(kKind), buffer(std::move(b)), body(std::move(bd)) {}
  Buffer buffer;
  Stmt body;
  static Stmt make(Buffer buffer, Stmt body);
};

// A lowered function. Tensor parameters are handle vars bound to buffers in buffer_map; scalar
// parameters (symbolic sizes) are plain vars.
class PrimFuncNode : public Node {
 public:
  static constexpr NodeKind kKind = NodeKind::PrimFunc;
  PrimFuncNode(std::string n, std::vector<Var> p, std::vector<Buffer> b, Stmt bd)
      : Node(kKind),
        name(std::move(n)),
        params(std::move(p)),
        buffers(std::move(b)),
        body(std::move(bd)) {}
  std::string name;
  std::vector<Var> params;      // one handle var per tensor argument, in call order
  std::vector<Buffer> buffers;  // buffers[i] is the tensor behind params[i]
  Stmt body;
};

class PrimFunc : public Ref<PrimFuncNode> {
 public:
  using Ref<PrimFuncNode>::Ref;
  PrimFunc() = default;
  PrimFunc(const Ref<PrimFuncNode>& r) : Ref<PrimFuncNode>(r) {}  // NOLINT
  static PrimFunc make(std::string name, std::vector<Var> params, std::vector<Buffer> buffers,
                       Stmt body);
  PrimFunc with_body(Stmt body) const;
};

}  // namespace tessel
