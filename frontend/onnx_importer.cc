#include "frontend/onnx_importer.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/defs/parser.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "frontend/canonicalize_ops.h"
#include "frontend/onnx_proto_convert.h"
#include "frontend/onnx_shape_inference.h"
#include "frontend/proto_file.h"
#include "frontend/validate_model.h"
#include "ir/op_table.h"

namespace tessel::frontend {

namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TypeProto;
using onnx::ValueInfoProto;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

using detail::node_name;

std::vector<const GraphProto*> node_subgraphs(const NodeProto& node) {
  std::vector<const GraphProto*> out;
  for (const auto& a : node.attribute()) {
    if (a.has_g()) out.push_back(&a.g());
    for (const auto& g : a.graphs()) out.push_back(&g);
  }
  return out;
}

[[noreturn]] void throw_not_a_model(const std::string& source) {
  throw Error(fmt::format("'{}' is not a valid ONNX model (protobuf parsing failed)", source));
}

ModelProto parse_model_file(const std::string& path) {
  ModelProto model;
  if (!detail::parse_protobuf_file(path, "ONNX model", model)) throw_not_a_model(path);
  return model;
}

ModelProto parse_model_bytes(const std::string& bytes, const std::string& source) {
  ModelProto model;
  if (!model.ParseFromString(bytes)) throw_not_a_model(source);
  return model;
}

// The checker's message on one line: its lines joined with "; ", each trimmed.
std::string one_line(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t begin = line.find_first_not_of(" \t\r"), end = line.find_last_not_of(" \t\r");
    if (begin != std::string::npos) lines.push_back(line.substr(begin, end - begin + 1));
  }
  return fmt::format("{}", fmt::join(lines, "; "));
}

struct LoadedModel {
  ModelProto model;
  std::string source;
  int opset = kMaxOpset;                     // ai.onnx
  std::map<std::string, int> domain_opsets;  // "" for ai.onnx
};

// The opset range (before the checker, whose message for a too-new opset is obscure), then
// validate_model (libonnx, the checker included, trusts tensor sizes), then the checker.
LoadedModel load_model(ModelProto model, const std::string& source) {
  LoadedModel m;
  m.model = std::move(model);
  m.source = source;
  std::map<std::string, int> default_imports;  // ai.onnx's versions, by spelling ("", "ai.onnx")
  for (const auto& imp : m.model.opset_import()) {
    std::string domain = is_default_domain(imp.domain()) ? "" : imp.domain();
    if (!std::in_range<int>(imp.version()) || imp.version() < 0) {
      throw Error(fmt::format("'{}' imports opset {} of domain '{}', which is not an opset version",
                              source, imp.version(), domain.empty() ? "ai.onnx" : domain));
    }
    // The same domain twice: the last counts, as for the checker.
    m.domain_opsets[domain] = static_cast<int>(imp.version());
    if (domain.empty()) default_imports[imp.domain()] = static_cast<int>(imp.version());
  }
  // The checker reads "" and "ai.onnx" as two domains, the importer as one: they must agree.
  if (default_imports.size() == 2 && default_imports[""] != default_imports["ai.onnx"]) {
    throw Error(fmt::format(
        "'{}' imports ai.onnx twice, as domain \"\" opset {} and domain \"ai.onnx\" opset {}",
        source, default_imports[""], default_imports["ai.onnx"]));
  }
  // Before IR version 3 a model imports no opsets: it is ai.onnx opset 1 (the checker's reading).
  if (m.model.ir_version() < 3 && m.model.opset_import_size() == 0) m.domain_opsets[""] = 1;
  if (auto it = m.domain_opsets.find(""); it != m.domain_opsets.end()) {
    m.opset = it->second;
    if (m.opset < kMinOpset || m.opset > kMaxOpset) {
      throw UnsupportedFeatureError(
          fmt::format("ai.onnx opset {}", m.opset),
          fmt::format("'{}' uses ai.onnx opset {}; Tessel supports opsets {} to {}", source,
                      m.opset, kMinOpset, kMaxOpset));
    }
  }
  detail::validate_model(m.model, source);
  try {
    onnx::checker::check_model(m.model);
  } catch (const std::exception& e) {
    throw Error(fmt::format("'{}' failed the ONNX checker: {}", source, one_line(e.what())));
  }
  return m;
}

// Counts every node's op (subgraphs included) and reports those the importer does not keep.
class OpCollector {
 public:
  OpCollector(const LoadedModel& m, const ImportOptions& opt) : model_(m), opt_(opt) {}

  void collect(ModelOverview& out) {
    visit(model_.model.graph(), out.op_counts, "");
    out.unsupported = std::move(ops_);
  }

 private:
  bool supported(const std::string& op_type, int opset) const {
    return op_in_table(op_type, opset) && (!opt_.op_supported || opt_.op_supported(op_type, opset));
  }

  // `path`: where `g` sits, "" for the main graph, "cond/then_branch/" for a branch of node 'cond',
  // so that a node in a branch is named by the nodes and attributes that hold it.
  void visit(const GraphProto& g, std::map<std::string, int>& counts, const std::string& path) {
    for (int i = 0; i < g.node_size(); ++i) {
      const NodeProto& node = g.node(i);
      bool default_domain = is_default_domain(node.domain());
      std::string domain = default_domain ? "" : node.domain();
      ++counts[default_domain ? node.op_type() : domain + "." + node.op_type()];
      auto opset_it = model_.domain_opsets.find(domain);
      int opset = opset_it == model_.domain_opsets.end() ? 0 : opset_it->second;
      std::string name = path + node_name(node, i);
      if (!default_domain || !supported(node.op_type(), opset))
        add(node.op_type(), domain, opset, name);
      for (const auto& a : node.attribute()) {
        std::string inner = fmt::format("{}/{}", name, a.name());
        if (a.has_g()) visit(a.g(), counts, inner + "/");
        for (int k = 0; k < a.graphs_size(); ++k)
          visit(a.graphs(k), counts, fmt::format("{}/{}/", inner, k));
      }
    }
  }

  void add(const std::string& op_type, const std::string& domain, int opset,
           const std::string& name) {
    auto it = std::find_if(ops_.begin(), ops_.end(), [&](const UnsupportedOp& op) {
      return op.op_type == op_type && op.domain == domain;
    });
    if (it == ops_.end())
      it = ops_.insert(ops_.end(), UnsupportedOp{op_type, domain, opset, 0, {}});
    ++it->count;
    if (it->node_names.size() < 5) it->node_names.push_back(name);
  }

  const LoadedModel& model_;
  const ImportOptions& opt_;
  std::vector<UnsupportedOp> ops_;
};

std::vector<UnsupportedOp> collect_unsupported(const LoadedModel& m, const ImportOptions& opt) {
  ModelOverview overview;
  OpCollector(m, opt).collect(overview);
  return std::move(overview.unsupported);
}

[[noreturn]] void throw_non_tensor(const TypeProto& type, const std::string& what) {
  std::string kind = type.has_sequence_type()        ? "sequence"
                     : type.has_map_type()           ? "map"
                     : type.has_optional_type()      ? "optional"
                     : type.has_sparse_tensor_type() ? "sparse tensor"
                                                     : "undefined";
  throw UnsupportedFeatureError(
      kind + " types", fmt::format("{} has a {} type; Tessel supports only tensors", what, kind));
}

// A value with no type at all (allowed in subgraphs) is not an error; one of another kind is.
bool has_non_tensor_type(const TypeProto& type) {
  return type.value_case() != TypeProto::VALUE_NOT_SET && !type.has_tensor_type();
}

// The type when ONNX knows its element type and rank; nullopt otherwise.
std::optional<graph::TensorType> known_tensor_type(const TypeProto& type, const std::string& what) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape() ||
      type.tensor_type().elem_type() == 0) {
    return std::nullopt;
  }
  graph::TensorType out{detail::dtype_from_onnx(type.tensor_type().elem_type(), what), {}, {}};
  bool any_param = false;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    out.shape.push_back(dim.has_dim_value() ? dim.dim_value() : graph::kUnknownDim);
    out.dim_params.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    any_param |= dim.has_dim_param();
  }
  if (!any_param) out.dim_params.clear();
  return out;
}

graph::TensorType unknown_type() { return graph::TensorType{DataType::void_type(), {}, {}}; }

ValueInfoProto* find_runtime_input(GraphProto& g, const std::string& name) {
  for (const auto& init : g.initializer()) {
    if (init.name() == name) return nullptr;
  }
  for (auto& in : *g.mutable_input()) {
    if (in.name() == name) return &in;
  }
  return nullptr;
}

std::string runtime_input_names(const GraphProto& g) {
  std::unordered_set<std::string> inits;
  for (const auto& init : g.initializer()) inits.insert(init.name());
  std::vector<std::string> names;
  for (const auto& in : g.input()) {
    if (!inits.count(in.name())) names.push_back("'" + in.name() + "'");
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// Written into the model before shape inference, so ONNX propagates the overridden dims.
void apply_input_shapes(GraphProto& g, const std::map<std::string, std::vector<int64_t>>& shapes,
                        const std::string& source) {
  for (const auto& [name, dims] : shapes) {
    ValueInfoProto* in = find_runtime_input(g, name);
    if (!in) {
      throw Error(
          fmt::format("input_shapes names '{}', which is not an input of '{}' (its inputs: {})",
                      name, source, runtime_input_names(g)));
    }
    std::string what = fmt::format("graph input '{}'", name);
    if (!in->type().has_tensor_type()) throw_non_tensor(in->type(), what);
    auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (in->type().tensor_type().has_shape() &&
        shape->dim_size() != static_cast<int>(dims.size())) {
      throw Error(fmt::format("input_shapes gives {} rank {} ([{}]) but '{}' declares rank {}",
                              what, dims.size(), fmt::join(dims, ", "), source, shape->dim_size()));
    }
    shape->clear_dim();
    for (int64_t d : dims) {
      if (d < 0) throw Error(fmt::format("input_shapes gives {} a negative dim {}", what, d));
      shape->add_dim()->set_dim_value(d);
    }
  }
}

// Names a graph reads from enclosing scopes, in first-use order, nested subgraphs included.
std::vector<std::string> free_names(const GraphProto& g) {
  std::unordered_set<std::string> defined;
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& init : g.initializer()) defined.insert(init.name());
  std::vector<std::string> out;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) &&
        std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(name);
    }
  };
  for (const auto& node : g.node()) {
    for (const auto& in : node.input()) use(in);
    for (const GraphProto* sub : node_subgraphs(node)) {
      for (const auto& name : free_names(*sub)) use(name);
    }
    for (const auto& out_name : node.output()) defined.insert(out_name);
  }
  // A branch may give an outer value as its output, unchanged.
  for (const auto& o : g.output()) use(o.name());
  return out;
}

// Outer values a subgraph reads; they become its trailing inputs.
using Captures = std::vector<std::pair<std::string, graph::TensorType>>;

struct ConvertContext {
  int opset;
  std::string source;
  // Where a subgraph sits: " in attribute 'then_branch' of node 'n' (If)"; "" in the main graph.
  std::string scope;
};

// Both take the tensors' bytes out of the protos they convert.
graph::Graph convert_graph(GraphProto& gp, const Captures& captures, const ConvertContext& ctx,
                           bool top_level);

graph::Attr convert_attr(AttributeProto& a, const graph::Node& node, const Captures& captures,
                         const ConvertContext& ctx) {
  std::string what = fmt::format("attribute '{}' of {}{}", a.name(), node.describe(), ctx.scope);
  switch (a.type()) {
    case AttributeProto::FLOAT:
      return static_cast<double>(a.f());
    case AttributeProto::INT:
      return static_cast<int64_t>(a.i());
    case AttributeProto::STRING:
      return a.s();
    case AttributeProto::TENSOR:
      return detail::tensor_from_proto(std::move(*a.mutable_t()), what);
    case AttributeProto::GRAPH: {
      ConvertContext inner{ctx.opset, ctx.source, " in " + what};
      return std::make_shared<graph::Graph>(convert_graph(*a.mutable_g(), captures, inner, false));
    }
    case AttributeProto::FLOATS:
      return std::vector<double>(a.floats().begin(), a.floats().end());
    case AttributeProto::INTS:
      return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case AttributeProto::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    default: {
      std::string kind = AttributeProto::AttributeType_Name(a.type());
      throw UnsupportedFeatureError(
          kind + " attributes",
          fmt::format("{} has type {}, which Tessel does not support", what, kind));
    }
  }
}

graph::Graph convert_graph(GraphProto& gp, const Captures& captures, const ConvertContext& ctx,
                           bool top_level) {
  graph::Graph g;
  g.opset = g.model_opset = ctx.opset;
  if (gp.sparse_initializer_size() > 0) {
    throw UnsupportedFeatureError("sparse tensors",
                                  fmt::format("'{}' has sparse initializers{}, which Tessel does "
                                              "not support",
                                              ctx.source, ctx.scope));
  }
  std::unordered_map<std::string, const TypeProto*> declared;
  for (const auto* list : {&gp.value_info(), &gp.input(), &gp.output()}) {
    for (const auto& vi : *list) declared[vi.name()] = &vi.type();
  }
  for (const auto& out : gp.output()) {
    if (has_non_tensor_type(out.type()))
      throw_non_tensor(out.type(), fmt::format("graph output '{}'{}", out.name(), ctx.scope));
  }
  // The graph IR holds tensors only, so a sequence anywhere (even between two nodes) is
  // unsupported.
  auto value_type = [&](const std::string& name) {
    auto it = declared.find(name);
    if (it == declared.end()) return unknown_type();
    std::string what = fmt::format("value '{}'{}", name, ctx.scope);
    if (has_non_tensor_type(*it->second)) throw_non_tensor(*it->second, what);
    return known_tensor_type(*it->second, what).value_or(unknown_type());
  };

  std::unordered_map<std::string, graph::ValueId> ids;
  for (auto& init : *gp.mutable_initializer()) {
    std::string what = fmt::format("initializer '{}'{}", init.name(), ctx.scope);
    ids[init.name()] =
        g.add_constant(init.name(), detail::tensor_from_proto(std::move(init), what));
  }
  for (const auto& in : gp.input()) {
    if (ids.count(in.name())) continue;  // an initializer with a default: a constant
    std::string what = fmt::format("graph input '{}'{}", in.name(), ctx.scope);
    if (has_non_tensor_type(in.type())) throw_non_tensor(in.type(), what);
    graph::TensorType type = value_type(in.name());
    if (top_level && type.dtype.is_void()) {
      throw Error(
          fmt::format("{} of '{}' has no element type or shape; give its shape with input_shapes",
                      what, ctx.source));
    }
    g.inputs.push_back(ids[in.name()] = g.add_value(in.name(), type));
  }
  for (const auto& [name, type] : captures) g.inputs.push_back(ids[name] = g.add_value(name, type));

  for (int i = 0; i < gp.node_size(); ++i) {
    NodeProto& np = *gp.mutable_node(i);
    graph::Node node;
    // Lookups by op name happen here only; collect_unsupported refused unknown ops before.
    const graph::OpDef* def = graph::find_op(np.op_type());
    TESSEL_ICHECK(def) << "op " << np.op_type()
                       << " passed the support check but is not in the table";
    node.op = def->kind;
    node.name = node_name(np, i);
    auto lookup = [&](const std::string& name) {
      auto it = ids.find(name);
      if (it == ids.end())
        throw Error(fmt::format("{}{} reads '{}', which is not defined before it", node.describe(),
                                ctx.scope, name));
      return it->second;
    };
    for (const auto& in : np.input())
      node.inputs.push_back(in.empty() ? graph::kNoValue : lookup(in));
    // All graph attributes of the node (If's two branches) share one capture list, so the node
    // passes each captured value once and every branch sees the same inputs.
    std::vector<std::string> captured_names;
    for (const GraphProto* sub : node_subgraphs(np)) {
      for (const auto& name : free_names(*sub)) {
        if (std::find(captured_names.begin(), captured_names.end(), name) == captured_names.end()) {
          captured_names.push_back(name);
        }
      }
    }
    Captures inner;
    for (const auto& name : captured_names) inner.emplace_back(name, g.value(lookup(name)).type);
    for (auto& a : *np.mutable_attribute())
      node.attrs[a.name()] = convert_attr(a, node, inner, ctx);
    for (const auto& name : captured_names) node.inputs.push_back(lookup(name));
    for (int k = 0; k < np.output_size(); ++k) {
      const std::string& out = np.output(k);
      std::string value_name = out.empty() ? fmt::format("{}_unused_output{}", node.name, k) : out;
      graph::ValueId id = g.add_value(value_name, value_type(out));
      if (!out.empty()) ids[out] = id;
      node.outputs.push_back(id);
    }
    g.add_node(std::move(node));
  }
  for (const auto& out : gp.output()) {
    auto it = ids.find(out.name());
    if (it == ids.end())
      throw Error(fmt::format("'{}': graph output '{}'{} is never defined", ctx.source, out.name(),
                              ctx.scope));
    g.outputs.push_back(it->second);
  }
  return g;
}

}  // namespace

bool op_in_table(const std::string& op_type, int opset) {
  const graph::OpDef* def = graph::find_op(op_type);
  return def != nullptr && opset >= def->since_opset;
}

namespace {

graph::Graph import_model(LoadedModel m, const ImportOptions& opt) {
  const std::string& source = m.source;
  std::vector<UnsupportedOp> unsupported = collect_unsupported(m, opt);
  if (!unsupported.empty()) throw UnsupportedOpsError(std::move(unsupported), source);
  apply_input_shapes(*m.model.mutable_graph(), opt.input_shapes, source);
  detail::infer_shapes(m.model);
  graph::Graph g =
      convert_graph(*m.model.mutable_graph(), {}, ConvertContext{m.opset, source, ""}, true);
  canonicalize_ops(g);
  return g;
}

ModelOverview overview_model(LoadedModel m, const ImportOptions& opt) {
  apply_input_shapes(*m.model.mutable_graph(), opt.input_shapes, m.source);
  ModelOverview out;
  out.opset = m.opset;
  const GraphProto& g = m.model.graph();
  std::unordered_set<std::string> inits;
  for (const auto& init : g.initializer()) inits.insert(init.name());
  auto declared = [](const ValueInfoProto& v, const char* what) {
    std::string name = fmt::format("{} '{}'", what, v.name());
    if (has_non_tensor_type(v.type())) throw_non_tensor(v.type(), name);
    return std::pair{v.name(), known_tensor_type(v.type(), name).value_or(unknown_type())};
  };
  for (const auto& in : g.input()) {
    if (!inits.count(in.name())) out.inputs.push_back(declared(in, "graph input"));
  }
  for (const auto& o : g.output()) out.outputs.push_back(declared(o, "graph output"));
  OpCollector(m, opt).collect(out);
  return out;
}

}  // namespace

graph::Graph import_onnx(const std::string& path, const ImportOptions& opt) {
  return import_model(load_model(parse_model_file(path), path), opt);
}

graph::Graph import_onnx_bytes(const std::string& bytes, const ImportOptions& opt,
                               const std::string& source) {
  return import_model(load_model(parse_model_bytes(bytes, source), source), opt);
}

ModelOverview overview_onnx(const std::string& path, const ImportOptions& opt) {
  return overview_model(load_model(parse_model_file(path), path), opt);
}

ModelOverview overview_onnx_bytes(const std::string& bytes, const ImportOptions& opt,
                                  const std::string& source) {
  return overview_model(load_model(parse_model_bytes(bytes, source), source), opt);
}

void require_static_inputs(const graph::Graph& g) {
  for (graph::ValueId id : g.inputs) {
    const graph::Value& in = g.value(id);
    for (size_t d = 0; d < in.type.shape.size(); ++d) {
      if (in.type.shape[d] >= 0) continue;
      std::string param = d < in.type.dim_params.size() && !in.type.dim_params[d].empty()
                              ? fmt::format(" ('{}')", in.type.dim_params[d])
                              : "";
      throw Error(
          fmt::format("graph input '{}' has an unknown dim {}{} in {}; give it a static shape with "
                      "input_shapes",
                      in.name, d, param, in.type.str()));
    }
  }
}

std::string onnx_text_to_model_bytes(const std::string& text) {
  ModelProto model;
  auto status = onnx::OnnxParser::Parse(model, text.c_str());
  if (!status.IsOK()) throw Error(fmt::format("cannot parse ONNX text: {}", status.ErrorMessage()));
  return model.SerializeAsString();
}

}  // namespace tessel::frontend
