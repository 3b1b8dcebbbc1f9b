#include "reference/nn_util.h"

#include "ir/error.h"

namespace tessel::reference::nn {

std::vector<double> to_doubles(const TensorData& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = get_f(t, static_cast<int64_t>(i));
  return v;
}

TensorData from_doubles(DataType dtype, std::vector<int64_t> shape,
                        const std::vector<double>& values) {
  TensorData t(dtype, std::move(shape));
  TESSEL_ICHECK(static_cast<int64_t>(values.size()) == t.numel())
      << values.size() << " values for " << t.numel();
  for (size_t i = 0; i < values.size(); ++i) set_f(t, static_cast<int64_t>(i), values[i]);
  return t;
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

}  // namespace tessel::reference::nn
