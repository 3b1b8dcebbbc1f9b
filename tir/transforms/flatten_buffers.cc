#include "tir/transforms/flatten_buffers.h"

#include <unordered_map>

#include "ir/functor.h"

namespace tessel::tir {
namespace {

// Number of elements the buffer's storage spans.
PrimExpr flat_extent(const BufferNode* b) {
  PrimExpr size = 1;
  if (b->strides.empty()) {
    for (const auto& dim : b->shape) size = size * dim;
    return size;
  }
  // Strided: the last element sits at sum((shape_k - 1) * stride_k).
  PrimExpr last = 0;
  for (size_t k = 0; k < b->shape.size(); ++k) last = last + (b->shape[k] - 1) * b->strides[k];
  return last + 1;
}

bool is_flat(const BufferNode* b) { return b->shape.size() == 1 && b->strides.empty(); }

class BufferFlattener : public IRMutator {
 protected:
  PrimExpr mutate_BufferLoad(const BufferLoadNode* op, const PrimExpr& self) override {
    std::vector<PrimExpr> idx;
    bool changed = mutate_exprs(op->indices, &idx);
    if (is_flat(op->buffer.get()) && !changed) return self;
    return BufferLoadNode::make(flat(op->buffer), {flat_index(op->buffer.get(), idx)});
  }
  Stmt mutate_BufferStore(const BufferStoreNode* op, const Stmt& self) override {
    std::vector<PrimExpr> idx;
    bool changed = mutate_exprs(op->indices, &idx);
    PrimExpr value = mutate_expr(op->value);
    if (is_flat(op->buffer.get()) && !changed && value.same_as(op->value)) return self;
    return BufferStoreNode::make(flat(op->buffer), value, {flat_index(op->buffer.get(), idx)});
  }
  Stmt mutate_Allocate(const AllocateNode* op, const Stmt& self) override {
    Buffer b = flat(op->buffer);
    Stmt body = mutate_stmt(op->body);
    if (b.same_as(op->buffer) && body.same_as(op->body)) return self;
    return AllocateNode::make(b, body);
  }

 private:
  PrimExpr flat_index(const BufferNode* b, const std::vector<PrimExpr>& idx) {
    TESSEL_ICHECK(idx.size() == b->shape.size())
        << "buffer " << b->name << " has " << b->shape.size() << " dims but is indexed with "
        << idx.size();
    if (idx.empty()) return make_zero(DataType::i32());  // a 0-d buffer holds one element
    PrimExpr flat;
    if (!b->strides.empty()) {
      for (size_t k = 0; k < idx.size(); ++k) {
        PrimExpr term = idx[k] * b->strides[k];
        flat = flat.defined() ? flat + term : term;
      }
      return flat;
    }
    flat = idx[0];
    for (size_t k = 1; k < idx.size(); ++k) flat = flat * b->shape[k] + idx[k];
    return flat;
  }

  // One flat buffer per original buffer, sharing its data var.
  Buffer flat(const Buffer& b) {
    if (is_flat(b.get())) return b;
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    Buffer out =
        make_node<BufferNode>(b->data, b->dtype, std::vector<PrimExpr>{flat_extent(b.get())},
                              std::vector<PrimExpr>{}, b->name, b->scope);
    flat_.emplace(b.get(), out);
    return out;
  }

  std::unordered_map<const BufferNode*, Buffer> flat_;
};

}  // namespace

PrimFunc flatten_buffers(const PrimFunc& f) {
  Stmt body = BufferFlattener().mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir
