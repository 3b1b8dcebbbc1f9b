#include "zoo_builder.h"

#include <fstream>
#include <stdexcept>

namespace tessel::tools {

ZooBuilder::ZooBuilder(const std::string& name, int opset, uint32_t seed) : rng_(seed) {
  model_.set_ir_version(8);
  model_.set_producer_name("tessel make_zoo");
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  graph_ = model_.mutable_graph();
  graph_->set_name(name);
}

std::string ZooBuilder::fresh(const std::string& base) {
  return base + "_" + std::to_string(counter_++);
}

std::string ZooBuilder::input(const std::string& name, const std::vector<int64_t>& shape) {
  auto* in = graph_->add_input();
  in->set_name(name);
  auto* t = in->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
  return name;
}

void ZooBuilder::output(const std::string& name, const std::vector<int64_t>& shape) {
  auto* out = graph_->add_output();
  out->set_name(name);
  auto* t = out->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
}

std::string ZooBuilder::weight(const std::string& name, const std::vector<int64_t>& shape, float lo,
                               float hi) {
  auto* t = graph_->add_initializer();
  std::string n = fresh(name);
  t->set_name(n);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t d : shape) {
    t->add_dims(d);
    count *= d;
  }
  // Weights as exporters write them (torch.onnx, tf2onnx): little-endian bytes in raw_data.
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = dist(rng_);
  t->set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return n;
}

std::string ZooBuilder::int64_constant(const std::string& name,
                                       const std::vector<int64_t>& values) {
  auto* t = graph_->add_initializer();
  std::string n = fresh(name);
  t->set_name(n);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return n;
}

std::string ZooBuilder::int64_scalar(const std::string& name, int64_t value) {
  auto* t = graph_->add_initializer();
  std::string n = fresh(name);
  t->set_name(n);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(value);
  return n;
}

std::string ZooBuilder::float_constant(const std::string& name, float value) {
  auto* t = graph_->add_initializer();
  std::string n = fresh(name);
  t->set_name(n);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(value);
  return n;
}

std::string ZooBuilder::node(const std::string& op, const std::vector<std::string>& inputs,
                             const std::vector<Attr>& attrs, int num_outputs,
                             const std::string& name) {
  auto* n = graph_->add_node();
  std::string nn = name.empty() ? fresh(op) : name;
  n->set_op_type(op);
  n->set_name(nn);
  for (const auto& in : inputs) n->add_input(in);
  for (int k = 0; k < num_outputs; ++k) n->add_output(k == 0 ? nn : nn + "_" + std::to_string(k));
  for (const auto& a : attrs) {
    auto* at = n->add_attribute();
    at->set_name(a.name);
    if (a.kind == Attr::kInts) {
      at->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints) at->add_ints(v);
    } else if (a.kind == Attr::kInt) {
      at->set_type(onnx::AttributeProto::INT);
      at->set_i(a.ints[0]);
    } else {
      at->set_type(onnx::AttributeProto::FLOAT);
      at->set_f(a.f);
    }
  }
  return nn;
}

std::string ZooBuilder::conv(const std::string& x, int64_t in_c, int64_t out_c, int64_t k,
                             int64_t stride, int64_t pad, int64_t group, float weight_range,
                             bool bias) {
  std::vector<std::string> inputs = {
      x, weight("w", {out_c, in_c / group, k, k}, -weight_range, weight_range)};
  if (bias) inputs.push_back(weight("bias", {out_c}, -0.1f, 0.1f));
  return node("Conv", inputs,
              {ints("kernel_shape", {k, k}), ints("strides", {stride, stride}),
               ints("pads", {pad, pad, pad, pad}), i("group", group)});
}

std::string ZooBuilder::conv_bn(const std::string& x, int64_t in_c, int64_t out_c, int64_t k,
                                int64_t stride, int64_t group, const std::string& activation,
                                float weight_range) {
  std::string y = conv(x, in_c, out_c, k, stride, k / 2, group, weight_range);
  y = node("BatchNormalization",
           {y, weight("gamma", {out_c}, 0.5f, 1.5f), weight("beta", {out_c}),
            weight("mean", {out_c}), weight("var", {out_c}, 0.5f, 1.5f)},
           {f("epsilon", 1e-5f)});
  if (activation == "Relu") return node("Relu", {y});
  if (activation == "Relu6")
    return node("Clip", {y, float_constant("zero", 0.0f), float_constant("six", 6.0f)});
  return y;
}

void ZooBuilder::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  if (!out || !model_.SerializeToOstream(&out)) throw std::runtime_error("cannot write " + path);
}

}  // namespace tessel::tools
