// Index-driven ONNX operators as te computes: GatherND, EyeLike, ReverseSequence, and the
// scatters (ScatterElements, its deprecated alias Scatter, ScatterND). te compute is functional,
// so a scatter is written as a gather over the updates: each output element reduces the updates
// whose index lands on it (O(outputs x updates along the scattered dims)). Semantics follow
// reference/tensor.cc, including duplicate indices (applied in order: the last "none" update wins).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ir/error.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"
#include "topi/compute_util.h"
#include "topi/op_compute.h"

namespace tessel::topi {
namespace {

PrimExpr i32(int64_t v) { return PrimExpr(static_cast<int>(v)); }

PrimExpr all_of(const std::vector<PrimExpr>& conditions) {
  PrimExpr all;
  for (const PrimExpr& c : conditions) all = all.defined() ? (all && c) : c;
  return all.defined() ? all : make_const(DataType::boolean(), 1);
}

Outputs gather_nd(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> dshape = const_shape(in[0], call.describe()),
                       ishape = const_shape(in[1], call.describe());
  auto batch = static_cast<size_t>(call.attr_int("batch_dims", 0));
  size_t tuple_rank = ishape.size() - 1;
  auto m = static_cast<size_t>(ishape.back());
  return {te::compute(
      output_shape(call, 0),
      [&](const std::vector<Var>& ov) {
        std::vector<PrimExpr> o = exprs(ov);
        std::vector<PrimExpr> tuple(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(tuple_rank));
        std::vector<PrimExpr> idx(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(batch));
        for (size_t j = 0; j < m; ++j) {
          std::vector<PrimExpr> at = tuple;
          at.push_back(i32(static_cast<int64_t>(j)));
          idx.push_back(wrap_index(in[1](at), dshape[batch + j]));
        }
        idx.insert(idx.end(), o.begin() + static_cast<std::ptrdiff_t>(tuple_rank), o.end());
        return in[0](idx);
      },
      name)};
}

Outputs eye_like(const OpCall& call, const Inputs&, const std::string& name) {
  DataType dtype = call.output_type(0).dtype;
  int64_t k = call.attr_int("k", 0);
  return {te::compute(
      output_shape(call, 0),
      [&](const std::vector<Var>& o) {
        return select(o[1] - o[0] == i32(k), make_const(dtype, 1), make_zero(dtype));
      },
      name)};
}

// out[.., t, .., b, ..] = x[.., len[b] - 1 - t, .., b, ..] for t < len[b], else x unchanged.
Outputs reverse_sequence(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> shape = const_shape(in[0], call.describe());
  auto rank = static_cast<int64_t>(shape.size());
  int64_t batch_axis = graph::ops::normalize_axis(call.attr_int("batch_axis", 1), rank, call);
  int64_t time_axis = graph::ops::normalize_axis(call.attr_int("time_axis", 0), rank, call);
  const DataType i64 = DataType::i64();
  return {te::compute(
      in[0].shape(),
      [&](const std::vector<Var>& ov) {
        std::vector<PrimExpr> idx = exprs(ov);
        PrimExpr len = cast(i64, in[1](idx[batch_axis]));
        PrimExpr t = cast(i64, idx[time_axis]);
        // Never negative; wrap_index clamps a length beyond the time dim into range.
        idx[time_axis] =
            wrap_index(select(t < len, len - make_const(i64, 1) - t, t), shape[time_axis]);
        return in[0](idx);
      },
      name)};
}

// A scatter seen from the output: for output index `o` and a point `r` of the update space
// (`extents`), whether the update at r lands on o, and that update's value. `update` must load in
// range for any r inside the extents (the "none" path evaluates it at a computed position).
struct ScatterMap {
  std::vector<int64_t> extents;
  std::function<PrimExpr(const std::vector<PrimExpr>& o, const std::vector<PrimExpr>& r)> match,
      update;
};

struct ScatterReduction {
  std::function<PrimExpr(PrimExpr source, const std::vector<te::IterVar>& axes, PrimExpr where)>
      reduce;
  std::function<PrimExpr(PrimExpr data, PrimExpr acc)> combine;
};

ScatterReduction scatter_reduction(const OpCall& call, const std::string& reduction) {
  if (reduction == "add") {
    return {
        [](PrimExpr s, const std::vector<te::IterVar>& a, PrimExpr w) { return te::sum(s, a, w); },
        [](PrimExpr d, PrimExpr acc) { return d + acc; }};
  }
  if (reduction == "mul") {
    static const te::Reducer prod(
        "prod", [](PrimExpr a, PrimExpr b) { return a * b; },
        [](DataType t) { return make_const(t, 1); });
    return {[](PrimExpr s, const std::vector<te::IterVar>& a, PrimExpr w) { return prod(s, a, w); },
            [](PrimExpr d, PrimExpr acc) { return d * acc; }};
  }
  if (reduction == "max") {
    return {
        [](PrimExpr s, const std::vector<te::IterVar>& a, PrimExpr w) { return te::max(s, a, w); },
        [](PrimExpr d, PrimExpr acc) { return max(d, acc); }};
  }
  if (reduction == "min") {
    return {
        [](PrimExpr s, const std::vector<te::IterVar>& a, PrimExpr w) { return te::min(s, a, w); },
        [](PrimExpr d, PrimExpr acc) { return min(d, acc); }};
  }
  throw graph::ops::node_error(call, fmt::format("unsupported reduction '{}'", reduction));
}

std::vector<te::IterVar> update_axes(const std::vector<int64_t>& extents) {
  std::vector<te::IterVar> axes;
  for (size_t d = 0; d < extents.size(); ++d) {
    axes.push_back(te::reduce_axis(0, i32(extents[d]), fmt::format("u{}", d)));
  }
  return axes;
}

// The scattered output: data combined with the matching updates per `reduction`. For "none" the
// last matching update (in row-major update order, as the reference applies them) replaces data.
te::Tensor scatter(const OpCall& call, const te::Tensor& data, const ScatterMap& map,
                   const std::string& name) {
  std::string reduction = call.attr_string("reduction", "none");
  std::optional<ScatterReduction> red;
  if (reduction != "none") red = scatter_reduction(call, reduction);
  if (std::find(map.extents.begin(), map.extents.end(), 0) != map.extents.end()) {  // no updates
    return te::compute(
        data.shape(), [&](const std::vector<Var>& o) { return data(exprs(o)); }, name);
  }
  std::vector<te::IterVar> axes = update_axes(map.extents);
  if (!red) {
    te::Tensor last = te::compute(
        data.shape(),
        [&](const std::vector<Var>& o) {
          PrimExpr flat = PrimExpr(0);
          for (size_t d = 0; d < axes.size(); ++d) flat = flat * i32(map.extents[d]) + axes[d];
          return te::max(flat, axes,
                         map.match(exprs(o), std::vector<PrimExpr>(axes.begin(), axes.end())));
        },
        name + "_last");
    return te::compute(
        data.shape(),
        [&](const std::vector<Var>& ov) {
          std::vector<PrimExpr> o = exprs(ov);
          PrimExpr pos = last(o);
          PrimExpr value = map.update(o, unflatten(max(pos, PrimExpr(0)), map.extents));
          return select(pos >= 0, value, data(o));
        },
        name);
  }
  te::Tensor acc = te::compute(
      data.shape(),
      [&](const std::vector<Var>& ov) {
        std::vector<PrimExpr> o = exprs(ov), r(axes.begin(), axes.end());
        return red->reduce(map.update(o, r), axes, map.match(o, r));
      },
      name + "_acc");
  return te::compute(
      data.shape(),
      [&](const std::vector<Var>& ov) {
        std::vector<PrimExpr> o = exprs(ov);
        return red->combine(data(o), acc(o));
      },
      name);
}

// ScatterElements / Scatter: the update at u lands on u with u[axis] replaced by indices[u].
// Only updates in o's row along the axis can match, so the update space is that axis alone.
Outputs scatter_elements(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> dshape = const_shape(in[0], call.describe()),
                       ishape = const_shape(in[1], call.describe());
  if (ishape.size() != dshape.size()) {
    throw graph::ops::node_error(
        call, fmt::format("indices have rank {}, data {}", ishape.size(), dshape.size()));
  }
  int64_t axis = axis_attr(call, in[0].ndim(), 0);
  // The update in o's row at position k along the axis (clamped into the possibly smaller indices;
  // `match` rejects an o outside them).
  auto at = [&](const std::vector<PrimExpr>& o, const PrimExpr& k) {
    std::vector<PrimExpr> u = o;
    for (size_t d = 0; d < o.size(); ++d) {
      if (ishape[d] < dshape[d]) u[d] = clamp_index(o[d], ishape[d]);
    }
    u[axis] = k;
    return u;
  };
  ScatterMap map;
  map.extents = {ishape[axis]};
  map.match = [&](const std::vector<PrimExpr>& o, const std::vector<PrimExpr>& r) {
    std::vector<PrimExpr> conds;
    for (size_t d = 0; d < o.size(); ++d) {
      if (static_cast<int64_t>(d) != axis && ishape[d] < dshape[d])
        conds.push_back(o[d] < i32(ishape[d]));
    }
    conds.push_back(wrap_index(in[1](at(o, r[0])), dshape[axis]) == o[axis]);
    return all_of(conds);
  };
  map.update = [&](const std::vector<PrimExpr>& o, const std::vector<PrimExpr>& r) {
    return in[2](at(o, r[0]));
  };
  return {scatter(call, in[0], map, name)};
}

// ScatterND: indices [t..., m] address data[:m]; update t... replaces the slice data[idx, ...].
Outputs scatter_nd(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> dshape = const_shape(in[0], call.describe()),
                       ishape = const_shape(in[1], call.describe());
  if (ishape.empty() || static_cast<size_t>(ishape.back()) > dshape.size()) {
    throw graph::ops::node_error(
        call, fmt::format("indices of rank {} cannot address data of rank {}", ishape.size(),
                          dshape.size()));
  }
  auto m = static_cast<size_t>(ishape.back());
  size_t tuple_rank = ishape.size() - 1;
  ScatterMap map;
  map.extents.assign(ishape.begin(), ishape.end() - 1);
  if (map.extents.empty()) map.extents = {1};  // one tuple: a single (unused) update axis
  auto tuple = [&](const std::vector<PrimExpr>& r) {
    return std::vector<PrimExpr>(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(tuple_rank));
  };
  map.match = [&](const std::vector<PrimExpr>& o, const std::vector<PrimExpr>& r) {
    std::vector<PrimExpr> conds;
    for (size_t j = 0; j < m; ++j) {
      std::vector<PrimExpr> at = tuple(r);
      at.push_back(i32(static_cast<int64_t>(j)));
      conds.push_back(wrap_index(in[1](at), dshape[j]) == o[j]);
    }
    return all_of(conds);
  };
  map.update = [&](const std::vector<PrimExpr>& o, const std::vector<PrimExpr>& r) {
    std::vector<PrimExpr> at = tuple(r);
    at.insert(at.end(), o.begin() + static_cast<std::ptrdiff_t>(m), o.end());
    return in[2](at);
  };
  return {scatter(call, in[0], map, name)};
}

}  // namespace

std::vector<OpCompute> index_computes() {
  return {
      {OpKind::GatherND, gather_nd},
      {OpKind::EyeLike, eye_like},
      {OpKind::ReverseSequence, reverse_sequence},
      {OpKind::ScatterElements, scatter_elements},
      {OpKind::Scatter, scatter_elements},
      {OpKind::ScatterND, scatter_nd},
  };
}

}  // namespace tessel::topi
