// Data-movement ONNX operators as te computes: each output element reads one input element
// through an index map (reshapes, transposes, concat/split, slicing, gathers, padding, tiling,
// depth/space moves). Shape-steering inputs (shapes, axes, pads, starts) are graph constants,
// decoded by ir/ops/op_params.h exactly as type inference decodes them.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "ir/error.h"
#include "ir/ops/op_params.h"
#include "ir/ops/shape_util.h"
#include "topi/broadcast.h"
#include "topi/compute_util.h"
#include "topi/op_compute.h"

namespace tessel::topi {
namespace {

using graph::ops::constant_params;

PrimExpr i32(int64_t v) { return PrimExpr(static_cast<int>(v)); }

// Output 0, of the graph's type, computed from its indices.
Outputs one(const OpCall& call, const std::string& name,
            const std::function<PrimExpr(const std::vector<PrimExpr>&)>& f) {
  return {te::compute(
      output_shape(call, 0), [&](const std::vector<Var>& o) { return f(exprs(o)); }, name)};
}

// Indices into `in` for output indices `out` of a row-major reshape. When the two shapes differ
// only by unit dims (Squeeze, Unsqueeze, most Flattens) the map is direct; otherwise it goes
// through the flat offset.
std::vector<PrimExpr> reshape_index(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                    const std::vector<PrimExpr>& o) {
  std::vector<size_t> in_dims, out_dims;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1) in_dims.push_back(d);
  }
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] != 1) out_dims.push_back(d);
  }
  bool direct = in_dims.size() == out_dims.size();
  for (size_t k = 0; direct && k < in_dims.size(); ++k) direct = in[in_dims[k]] == out[out_dims[k]];
  if (direct) {
    std::vector<PrimExpr> idx(in.size(), PrimExpr(0));
    for (size_t k = 0; k < in_dims.size(); ++k) idx[in_dims[k]] = o[out_dims[k]];
    return idx;
  }
  PrimExpr flat = PrimExpr(0);
  int64_t stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    if (out[d] != 1) flat = flat + o[d] * i32(stride);
    stride *= out[d];
  }
  return unflatten(flat, in);
}

Outputs reshape_like(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> in_shape = const_shape(in[0], call.describe());
  std::vector<int64_t> out_shape = call.output_type(0).shape;
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    return in[0](reshape_index(in_shape, out_shape, o));
  });
}

Outputs transpose(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> perm = graph::ops::transpose_perm(call, in[0].ndim());
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx(o.size());
    for (size_t d = 0; d < o.size(); ++d) idx[perm[d]] = o[d];
    return in[0](idx);
  });
}

// `o` with the index along `axis` replaced.
std::vector<PrimExpr> with_axis(std::vector<PrimExpr> o, int64_t axis, PrimExpr v) {
  o[axis] = std::move(v);
  return o;
}

Outputs concat(const OpCall& call, const Inputs& in, const std::string& name) {
  int64_t axis = axis_attr(call, in[0].ndim(), 0);
  struct Part {
    te::Tensor t;
    int64_t begin, size;
  };
  std::vector<Part> parts;
  int64_t offset = 0;
  for (const te::Tensor& t : in) {
    int64_t size = const_shape(t, call.describe())[axis];
    if (size > 0) parts.push_back({t, offset, size});  // an empty input contributes nothing
    offset += size;
  }
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    // Later parts first, so the select chain tests `o < end` from the first part outward.
    PrimExpr result;
    for (size_t k = parts.size(); k-- > 0;) {
      const Part& p = parts[k];
      PrimExpr load = p.t(with_axis(o, axis, clamp_index(o[axis] - i32(p.begin), p.size)));
      result = result.defined() ? select(o[axis] < i32(p.begin + p.size), load, result) : load;
    }
    return result;
  });
}

Outputs split(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> shape = const_shape(in[0], call.describe());
  int64_t axis = axis_attr(call, in[0].ndim(), 0);
  std::vector<int64_t> sizes =
      graph::ops::split_sizes(call, shape[axis], call.outputs.size(), call.params());
  Outputs out;
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<PrimExpr> out_shape;
    for (size_t d = 0; d < shape.size(); ++d)
      out_shape.push_back(i32(static_cast<int64_t>(d) == axis ? sizes[k] : shape[d]));
    out.push_back(te::compute(
        out_shape,
        [&](const std::vector<Var>& o) {
          return in[0](with_axis(exprs(o), axis, o[axis] + i32(offset)));
        },
        fmt::format("{}_{}", name, k)));
    offset += sizes[k];
  }
  return out;
}

Outputs slice(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> shape = const_shape(in[0], call.describe());
  graph::ops::SliceSpec spec = graph::ops::slice_spec(call, shape, call.params());
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < o.size(); ++d) {
      idx.push_back(spec.steps[d] == 1 ? o[d] + i32(spec.starts[d])
                                       : i32(spec.starts[d]) + o[d] * i32(spec.steps[d]));
    }
    return in[0](idx);
  });
}

Outputs gather(const OpCall& call, const Inputs& in, const std::string& name) {
  int64_t axis = axis_attr(call, in[0].ndim(), 0);
  int64_t dim = const_shape(in[0], call.describe())[axis];
  size_t q = static_cast<size_t>(in[1].ndim());
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> at(o.begin() + axis, o.begin() + axis + q);
    std::vector<PrimExpr> idx(o.begin(), o.begin() + axis);
    idx.push_back(wrap_index(in[1](at), dim));
    idx.insert(idx.end(), o.begin() + axis + q, o.end());
    return in[0](idx);
  });
}

Outputs gather_elements(const OpCall& call, const Inputs& in, const std::string& name) {
  int64_t axis = axis_attr(call, in[0].ndim(), 0);
  std::vector<int64_t> shape = const_shape(in[0], call.describe());
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    // Indices may be smaller than the data in every dim but never larger; clamp the others too.
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < o.size(); ++d) {
      idx.push_back(static_cast<int64_t>(d) == axis ? wrap_index(in[1](o), shape[d]) : o[d]);
    }
    return in[0](idx);
  });
}

Outputs expand(const OpCall& call, const Inputs& in, const std::string& name) {
  return {te::compute(
      output_shape(call, 0),
      [&](const std::vector<Var>& o) { return in[0](broadcast_index(in[0], o)); }, name)};
}

Outputs tile(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> shape = const_shape(in[0], call.describe());
  std::vector<int64_t> out_shape = call.output_type(0).shape;
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < o.size(); ++d)
      idx.push_back(out_shape[d] == shape[d] ? o[d] : floormod(o[d], i32(shape[d])));
    return in[0](idx);
  });
}

// The source index along a dim of `dim` for padded position `s` (reflect or edge mode).
PrimExpr pad_source(const PrimExpr& s, int64_t dim, const std::string& mode) {
  if (mode == "edge" || dim == 1) return clamp_index(s, dim);
  int64_t period = 2 * (dim - 1);  // reflect: mirror without repeating the edge
  PrimExpr m = floormod(s, i32(period));
  return select(m < i32(dim), m, i32(period) - m);
}

Outputs pad(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> shape = const_shape(in[0], call.describe());
  graph::ops::PadSpec spec = graph::ops::pad_spec(call, in[0].ndim(), call.params());
  DataType dtype = in[0].dtype();
  PrimExpr fill = make_zero(dtype);  // unless constant_value is given
  if (in.size() > 2 && in[2].defined()) {
    std::vector<int64_t> vshape = const_shape(in[2], call.describe());
    if (std::accumulate(vshape.begin(), vshape.end(), int64_t{1}, std::multiplies<>()) > 0) {
      fill = cast(dtype, in[2](std::vector<PrimExpr>(vshape.size(), PrimExpr(0))));
    }
  }
  bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();
  if (empty && spec.mode != "constant")
    throw Error(fmt::format("{}: cannot {}-pad an empty input", call.describe(), spec.mode));
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    if (empty) return fill;
    std::vector<PrimExpr> idx;
    PrimExpr inside;
    for (size_t d = 0; d < o.size(); ++d) {
      PrimExpr s = spec.begins[d] == 0 ? o[d] : o[d] - i32(spec.begins[d]);
      if (spec.mode != "constant") {
        idx.push_back(pad_source(s, shape[d], spec.mode));
        continue;
      }
      idx.push_back(clamp_index(s, shape[d]));
      if (spec.begins[d] <= 0 && spec.ends[d] <= 0)
        continue;  // cropped or untouched: always inside
      PrimExpr ok = s >= 0 && s < i32(shape[d]);
      inside = inside.defined() ? (inside && ok) : ok;
    }
    return inside.defined() ? select(inside, in[0](idx), fill) : in[0](idx);
  });
}

// DepthToSpace (to_space) and SpaceToDepth on NCHW, as the index maps of ONNX's
// reshape-transpose-reshape definitions (same as reference/tensor.cc).
ComputeFn depth_space(bool to_space) {
  return [to_space](const OpCall& call, const Inputs& in, const std::string& name) {
    int64_t b = call.attr_int("blocksize", 0);
    int64_t c = const_shape(in[0], call.describe())[1];
    bool crd = call.attr_string("mode", "DCR") == "CRD";
    return one(call, name, [&](const std::vector<PrimExpr>& o) {
      if (to_space) {
        int64_t oc = c / (b * b);
        PrimExpr i = floormod(o[2], i32(b)), j = floormod(o[3], i32(b));
        PrimExpr ic = crd ? (o[1] * i32(b) + i) * i32(b) + j : (i * i32(b) + j) * i32(oc) + o[1];
        return in[0](o[0], ic, floordiv(o[2], i32(b)), floordiv(o[3], i32(b)));
      }
      PrimExpr i = floordiv(o[1], i32(b * c)), j = floormod(floordiv(o[1], i32(c)), i32(b));
      return in[0](o[0], floormod(o[1], i32(c)), o[2] * i32(b) + i, o[3] * i32(b) + j);
    });
  };
}

Outputs one_hot(const OpCall& call, const Inputs& in, const std::string& name) {
  const graph::TensorData* depth_t = call.params()(1);
  auto depth = static_cast<int64_t>(depth_t->get_double(0));
  int64_t axis = axis_attr(call, in[0].ndim() + 1, -1);
  const DataType i64 = DataType::i64();
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> at = o;
    at.erase(at.begin() + axis);
    PrimExpr v = cast(i64, in[0](at));  // float indices truncate, as in the reference
    v = select(v < make_zero(i64), v + make_const(i64, static_cast<double>(depth)), v);
    return select(v == cast(i64, o[axis]), in[2](PrimExpr(1)),
                  in[2](PrimExpr(0)));  // values = [off, on]
  });
}

// Inference-mode Dropout: the data passes through; the optional mask is all true.
Outputs dropout(const OpCall& call, const Inputs& in, const std::string& name) {
  // Training mode with a nonzero ratio is random; with ratio 0 it drops nothing.
  const graph::TensorData* training = call.constant(2, "training_mode");
  const graph::TensorData* ratio =
      training && training->get_int(0) != 0 ? call.constant(1, "ratio") : nullptr;
  if (training && training->get_int(0) != 0 && !(ratio && ratio->get_double(0) == 0.0)) {
    throw Error(
        fmt::format("{}: training-mode Dropout is random; Tessel compiles inference graphs (give "
                    "training_mode as a constant false)",
                    call.describe()));
  }
  Outputs out = {unary(in[0], [](PrimExpr x) { return x; }, name)};
  if (call.wants_output(1)) {
    out.push_back(te::compute(
        in[0].shape(), [](const std::vector<Var>&) { return make_const(DataType::boolean(), 1); },
        name + "_mask"));
  }
  return out;
}

// A run of consecutive kept positions: output position out + j reads source position src + j.
struct KeptRun {
  int64_t out, src;
};

// The source position for output position `o` over `runs` (sorted by out), as a balanced tree of
// selects: index arithmetic only, so evaluating both branches is safe.
PrimExpr run_source(const std::vector<KeptRun>& runs, size_t lo, size_t hi, const PrimExpr& o) {
  if (hi - lo == 1) return runs[lo].src == runs[lo].out ? o : o + i32(runs[lo].src - runs[lo].out);
  size_t mid = (lo + hi) / 2;
  return select(o < i32(runs[mid].out), run_source(runs, lo, mid, o), run_source(runs, mid, hi, o));
}

// Compress with its (required) constant condition: the kept positions are known at compile time,
// so each output reads its source through a constant piecewise-linear index map. Without an axis
// the input is read flattened.
Outputs compress(const OpCall& call, const Inputs& in, const std::string& name) {
  const graph::TensorData& cond = call.required_constant(1, "the condition");
  std::vector<int64_t> shape = const_shape(in[0], call.describe());
  bool flat = !call.has_attr("axis");
  int64_t axis = flat ? 0 : axis_attr(call, in[0].ndim(), 0);
  int64_t dim = flat ? std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>())
                     : shape[axis];
  if (cond.numel() > dim) {
    throw Error(fmt::format("{}: the condition has {} entries, more than the {} positions",
                            call.describe(), cond.numel(), dim));
  }
  std::vector<KeptRun> runs;
  int64_t kept = 0;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (!cond.get_int(i)) continue;
    if (runs.empty() || runs.back().src + (kept - runs.back().out) != i) runs.push_back({kept, i});
    ++kept;
  }
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    if (runs.empty()) return make_zero(in[0].dtype());  // an empty output: never evaluated
    PrimExpr src = run_source(runs, 0, runs.size(), o[axis]);
    return in[0](flat ? unflatten(src, shape) : with_axis(o, axis, src));
  });
}

// Shape and Size of a static input are constants; they normally fold away before lowering.
Outputs shape_of(const OpCall& call, const Inputs& in, const std::string& name) {
  std::vector<int64_t> shape = const_shape(in[0], call.describe());
  const DataType i64 = DataType::i64();
  if (call.op == graph::OpKind::Size) {
    double n = static_cast<double>(
        std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>()));
    return {te::compute({}, [&](const std::vector<Var>&) { return make_const(i64, n); }, name)};
  }
  auto [start, end] = graph::ops::shape_range(call, in[0].ndim());
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    PrimExpr v = make_zero(i64);
    for (int64_t d = end; d-- > start;)
      v = select(o[0] == i32(d - start), make_const(i64, static_cast<double>(shape[d])), v);
    return v;
  });
}

// Trilu: keeps the upper (or lower) triangle of the last two dims, shifted by the constant k.
Outputs trilu(const OpCall& call, const Inputs& in, const std::string& name) {
  const graph::TensorData* k_t = call.params()(1);
  int64_t k = k_t ? k_t->get_int(0) : 0;
  bool upper = call.attr_int("upper", 1) != 0;
  return one(call, name, [&](const std::vector<PrimExpr>& o) {
    PrimExpr diag = o[o.size() - 1] - o[o.size() - 2];  // column - row
    return select(upper ? diag >= i32(k) : diag <= i32(k), in[0](o), make_zero(in[0].dtype()));
  });
}

}  // namespace

std::vector<OpCompute> tensor_computes() {
  return {
      {OpKind::Reshape, reshape_like},
      {OpKind::Flatten, reshape_like},
      {OpKind::Squeeze, reshape_like},
      {OpKind::Unsqueeze, reshape_like},
      {OpKind::Transpose, transpose},
      {OpKind::Concat, concat},
      {OpKind::Split, split},
      {OpKind::Slice, slice},
      {OpKind::Gather, gather},
      {OpKind::GatherElements, gather_elements},
      {OpKind::Expand, expand},
      {OpKind::Tile, tile},
      {OpKind::Pad, pad},
      {OpKind::DepthToSpace, depth_space(true)},
      {OpKind::SpaceToDepth, depth_space(false)},
      {OpKind::OneHot, one_hot},
      {OpKind::Dropout, dropout},
      {OpKind::Shape, shape_of},
      {OpKind::Size, shape_of},
      {OpKind::Trilu, trilu},
      {OpKind::Compress, compress},
  };
}

}  // namespace tessel::topi
