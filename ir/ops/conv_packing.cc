#include "ir/ops/conv_packing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "ir/error.h"

namespace tessel::graph::ops {

namespace {

// Moves elements of kBytes bytes between [O, rest] and [O / b, rest, b] (rest: the product of the
// middle dims): per block of b rows, a transpose of [b, rest] and [rest, b]. A constant element
// size lets each move compile to one load and store; chunks of kChunk columns keep the lines that
// both sides touch in cache.
template <size_t kBytes>
void permute_blocks(const char* src, char* dst, int64_t blocks, int64_t rest, int64_t block,
                    bool pack) {
  constexpr int64_t kChunk = 64;
  for (int64_t ob = 0; ob < blocks; ++ob) {
    for (int64_t r0 = 0; r0 < rest; r0 += kChunk) {
      int64_t r1 = std::min(rest, r0 + kChunk);
      for (int64_t b = 0; b < block; ++b) {
        for (int64_t r = r0; r < r1; ++r) {
          int64_t plain = (ob * block + b) * rest + r, packed = (ob * rest + r) * block + b;
          int64_t s = pack ? plain : packed, d = pack ? packed : plain;
          std::memcpy(dst + static_cast<size_t>(d) * kBytes, src + static_cast<size_t>(s) * kBytes,
                      kBytes);
        }
      }
    }
  }
}

void permute_blocks(DataType dtype, const void* from, void* to, int64_t blocks, int64_t rest,
                    int64_t block, bool pack) {
  const char* src = static_cast<const char*>(from);
  char* dst = static_cast<char*>(to);
  switch (dtype.bytes()) {
    case 1:
      return permute_blocks<1>(src, dst, blocks, rest, block, pack);
    case 2:
      return permute_blocks<2>(src, dst, blocks, rest, block, pack);
    case 4:
      return permute_blocks<4>(src, dst, blocks, rest, block, pack);
    case 8:
      return permute_blocks<8>(src, dst, blocks, rest, block, pack);
    default:
      throw InternalError(fmt::format("cannot pack {} tensors", dtype.str()));
  }
}

}  // namespace

std::vector<int64_t> packed_output_channels_shape(const std::vector<int64_t>& s, int64_t block) {
  if (s.size() < 2 || block <= 0 || s[0] <= 0) {
    throw InternalError(
        fmt::format("cannot pack weights of shape [{}] into blocks of {} output channels",
                    fmt::join(s, ", "), block));
  }
  std::vector<int64_t> shape{padded_channels(s[0], block) / block};
  shape.insert(shape.end(), s.begin() + 1, s.end());
  shape.push_back(block);
  return shape;
}

TensorData pack_output_channels(const TensorData& w, int64_t block) {
  std::vector<int64_t> shape = packed_output_channels_shape(w.shape(), block);
  int64_t rest = w.numel() / w.shape()[0];
  const TensorData* plain = &w;
  TensorData padded;  // O rounded up to whole blocks, the extra channels zero
  if (w.shape()[0] % block != 0) {
    std::vector<int64_t> padded_shape = w.shape();
    padded_shape[0] = shape[0] * block;
    padded = TensorData(w.dtype(), padded_shape);
    std::memset(padded.raw(), 0, static_cast<size_t>(padded.numel() * w.dtype().bytes()));
    std::memcpy(padded.raw(), w.raw(), static_cast<size_t>(w.numel() * w.dtype().bytes()));
    plain = &padded;
  }
  TensorData out(w.dtype(), shape);
  permute_blocks(w.dtype(), plain->raw(), out.raw(), shape[0], rest, block, true);
  return out;
}

TensorData unpack_output_channels(const TensorData& packed, int64_t channels) {
  const std::vector<int64_t>& s = packed.shape();
  if (s.size() < 3)
    throw InternalError(fmt::format("packed weights need rank >= 3, got [{}]", fmt::join(s, ", ")));
  int64_t block = s.back(), total = s[0] * block;
  if (channels > total)
    throw InternalError(fmt::format("{} output channels from {} packed ones", channels, total));
  std::vector<int64_t> shape{total};
  shape.insert(shape.end(), s.begin() + 1, s.end() - 1);
  TensorData all(packed.dtype(), shape);
  permute_blocks(packed.dtype(), packed.raw(), all.raw(), s[0], packed.numel() / total, block,
                 false);
  if (channels < 0 || channels == total) return all;
  shape[0] = channels;
  TensorData out(packed.dtype(), shape);  // the leading channels: a prefix of the buffer
  std::memcpy(out.raw(), all.raw(), static_cast<size_t>(out.numel() * packed.dtype().bytes()));
  return out;
}

std::vector<int64_t> blocked_channels_shape(const std::vector<int64_t>& s, int64_t block) {
  if (s.size() < 3 || block <= 0 || s[1] < 0) {
    throw InternalError(
        fmt::format("cannot block [{}] into blocks of {} channels", fmt::join(s, ", "), block));
  }
  std::vector<int64_t> shape = s;
  shape[1] = padded_channels(s[1], block) / block;
  shape.push_back(block);
  return shape;
}

std::vector<int64_t> unblocked_channels_shape(const std::vector<int64_t>& s) {
  if (s.size() < 4)
    throw InternalError(
        fmt::format("blocked activations need rank >= 4, got [{}]", fmt::join(s, ", ")));
  std::vector<int64_t> shape(s.begin(), s.end() - 1);
  shape[1] *= s.back();
  return shape;
}

namespace {

// Per batch element, NCHW and NCHW[b]c are the two sides of permute_blocks.
TensorData permute_channels(const TensorData& x, std::vector<int64_t> shape, int64_t block,
                            bool pack) {
  TensorData out(x.dtype(), std::move(shape));
  int64_t batch = x.shape()[0], per_batch = batch ? x.numel() / batch : 0;
  int64_t blocks = pack ? x.shape()[1] / block : x.shape()[1];
  size_t bytes = static_cast<size_t>(per_batch * x.dtype().bytes());
  for (int64_t n = 0; n < batch && per_batch > 0; ++n) {
    permute_blocks(x.dtype(), static_cast<const char*>(x.raw()) + n * bytes,
                   static_cast<char*>(out.raw()) + n * bytes, blocks, per_batch / (blocks * block),
                   block, pack);
  }
  return out;
}

}  // namespace

TensorData resize_channels(const TensorData& x, int64_t channels) {
  std::vector<int64_t> shape = x.shape();
  if (shape.size() < 2 || channels < 0) {
    throw InternalError(
        fmt::format("cannot give [{}] {} channels", fmt::join(shape, ", "), channels));
  }
  if (shape[1] == channels) return x;
  int64_t batch = shape[0], plane = 1;
  for (size_t d = 2; d < shape.size(); ++d) plane *= shape[d];
  size_t elem = static_cast<size_t>(x.dtype().bytes());
  size_t from = static_cast<size_t>(shape[1] * plane) * elem;
  size_t to = static_cast<size_t>(channels * plane) * elem;
  shape[1] = channels;
  TensorData out(x.dtype(), shape);
  std::memset(out.raw(), 0, static_cast<size_t>(out.numel()) * elem);
  for (int64_t n = 0; n < batch; ++n) {
    std::memcpy(static_cast<char*>(out.raw()) + n * to,
                static_cast<const char*>(x.raw()) + n * from, std::min(from, to));
  }
  return out;
}

TensorData block_channels(const TensorData& x, int64_t block) {
  std::vector<int64_t> shape = blocked_channels_shape(x.shape(), block);
  return permute_channels(resize_channels(x, shape[1] * block), shape, block, true);
}

TensorData unblock_channels(const TensorData& x) {
  return permute_channels(x, unblocked_channels_shape(x.shape()), x.shape().back(), false);
}

int64_t input_block(const Node& node) { return node.attr_int("input_block", 0); }
int64_t output_block(const Node& node) { return node.attr_int("output_block", 0); }

bool reads_channel_blocks(OpKind op) {
  return writes_channel_blocks(op) || op == OpKind::GlobalAveragePool ||
         op == OpKind::GlobalMaxPool;
}

bool writes_channel_blocks(OpKind op) {
  return op == OpKind::ConvNCHWc || op == OpKind::ConvWinograd || op == OpKind::MaxPool ||
         op == OpKind::AveragePool;
}

void check_channel_blocks(const Node& node) {
  for (auto [attr, takes] : {std::pair{"input_block", reads_channel_blocks(node.op)},
                             std::pair{"output_block", writes_channel_blocks(node.op)}}) {
    if (node.has_attr(attr) && !takes) {
      throw Error(fmt::format("{}: {} is for ops that {} blocked channels, not {}", node.describe(),
                              attr, std::string_view(attr) == "input_block" ? "read" : "write",
                              op_kind_name(node.op)));
    }
  }
}

}  // namespace tessel::graph::ops
