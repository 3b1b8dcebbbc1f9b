// Intrusive, atomically refcounted nodes and the Ref<T> handle (one word, no RTTI).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "ir/node_kinds.h"

namespace tessel {

// The ir kinds are the enumerators. te's nodes carry the values from kNumIrNodeKinds up
// (te/node_kinds.h): a switch that lists every enumerator leaves them to the code after it.
enum class NodeKind : uint8_t {
#define TESSEL_KIND_ENUM(Name) Name,
  TESSEL_EXPR_KINDS(TESSEL_KIND_ENUM) TESSEL_STMT_KINDS(TESSEL_KIND_ENUM)
      TESSEL_OTHER_KINDS(TESSEL_KIND_ENUM)
#undef TESSEL_KIND_ENUM
};

#define TESSEL_KIND_COUNT(Name) +1
inline constexpr uint8_t kNumIrNodeKinds = 0 TESSEL_EXPR_KINDS(TESSEL_KIND_COUNT)
    TESSEL_STMT_KINDS(TESSEL_KIND_COUNT) TESSEL_OTHER_KINDS(TESSEL_KIND_COUNT);
#undef TESSEL_KIND_COUNT

// A case label per kind, for switches that list kinds with the X-macros of ir/node_kinds.h.
#define TESSEL_KIND_CASE(Name) case NodeKind::Name:

// The kind's name; "non-ir node" for te's kinds.
const char* node_kind_name(NodeKind kind);

// Throws InternalError for a node of a kind ir does not know (a te node) that reached `where`, an
// ir function: schedule_to_tir lowers every te node, so only a Tessel bug gets here.
[[noreturn]] void fail_non_ir_node(NodeKind kind, const char* where);

class Node {
 public:
  explicit Node(NodeKind kind) : kind_(kind) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual ~Node() = default;

  NodeKind kind() const { return kind_; }

  void inc_ref() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void dec_ref() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int32_t use_count() const { return ref_count_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int32_t> ref_count_{0};
  NodeKind kind_;
};

// Handle to an immutable node. Nodes are read through `const T*`; identity is the pointer.
template <class T>
class Ref {
 public:
  using NodeType = T;
  Ref() = default;
  Ref(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  explicit Ref(const T* ptr) : ptr_(const_cast<T*>(ptr)) {
    if (ptr_) ptr_->inc_ref();
  }
  Ref(const Ref& other) : Ref(other.ptr_) {}
  Ref(Ref&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <class U, class = std::enable_if_t<std::is_base_of_v<T, U>>>
  Ref(const Ref<U>& other) : Ref(static_cast<const T*>(other.get())) {}  // NOLINT
  template <class U, class = std::enable_if_t<std::is_base_of_v<T, U>>>
  Ref(Ref<U>&& other) noexcept : ptr_(other.release()) {}  // NOLINT
  ~Ref() {
    if (ptr_) ptr_->dec_ref();
  }
  Ref& operator=(Ref other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  const T* get() const { return ptr_; }
  const T* operator->() const { return ptr_; }
  const T& operator*() const { return *ptr_; }
  bool defined() const { return ptr_ != nullptr; }
  explicit operator bool() const { return ptr_ != nullptr; }
  NodeKind kind() const { return ptr_->kind(); }

  template <class U>
  bool same_as(const Ref<U>& other) const {
    return static_cast<const Node*>(ptr_) == static_cast<const Node*>(other.get());
  }
  // Downcast by kind tag; nullptr when the node is of another kind.
  template <class U>
  const U* as() const {
    return ptr_ && ptr_->kind() == U::kKind ? static_cast<const U*>(static_cast<const Node*>(ptr_))
                                            : nullptr;
  }
  template <class U>
  bool is() const {
    return as<U>() != nullptr;
  }

  T* release() { return std::exchange(ptr_, nullptr); }

 private:
  T* ptr_ = nullptr;
};

template <class T, class... Args>
Ref<T> make_node(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

// Hash/equality by pointer identity, for unordered containers keyed on nodes.
struct RefHash {
  template <class T>
  size_t operator()(const Ref<T>& r) const {
    return std::hash<const void*>()(r.get());
  }
};
struct RefEq {
  template <class T>
  bool operator()(const Ref<T>& a, const Ref<T>& b) const {
    return a.get() == b.get();
  }
};

}  // namespace tessel
