#include "runtime/fill.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

#include "ir/error.h"

namespace tessel::runtime {

void fill(NDArray& a, const std::string& mode, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  DataType t = a.dtype();
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = mode == "zeros"  ? 0
               : mode == "ones" ? 1
               : t.is_float()   ? unit(rng)
                                : std::floor(unit(rng) * (t.is_bool() ? 2 : 10));
    if (t == DataType::f32())
      a.data<float>()[i] = static_cast<float>(v);
    else if (t == DataType::f64())
      a.data<double>()[i] = v;
    else if (t == DataType::i64())
      a.data<int64_t>()[i] = static_cast<int64_t>(v);
    else if (t == DataType::i32())
      a.data<int32_t>()[i] = static_cast<int32_t>(v);
    else if (t.bytes() == 1)
      a.data<uint8_t>()[i] = static_cast<uint8_t>(v);  // int8, uint8, bool
    else
      throw Error(fmt::format("cannot fill {} arrays", t.str()));
  }
}

}  // namespace tessel::runtime
