#include "runtime/npz.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "ir/error.h"
#include "ir/whole_number.h"
#include "runtime/output_file.h"

namespace tessel::runtime {

// Payloads are copied byte for byte, so the host must share the files' byte order.
static_assert(std::endian::native == std::endian::little, "npz I/O assumes a little-endian host");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;  // numpy pads headers so the data starts 64-byte aligned

// numpy's dtype kind character and item size for each supported DataType.
struct NpyType {
  char kind;
  int size;
  DataType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {'f', 2, DataType::f16()}, {'f', 4, DataType::f32()}, {'f', 8, DataType::f64()},
    {'i', 1, DataType::i8()},  {'i', 2, DataType::i16()}, {'i', 4, DataType::i32()},
    {'i', 8, DataType::i64()}, {'u', 1, DataType::u8()},  {'u', 2, DataType::u16()},
    {'u', 4, DataType::u32()}, {'u', 8, DataType::u64()}, {'b', 1, DataType::boolean()},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// ---- .npy header: a Python dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape':
// (2, 3), }

// One dict value. Tuples/lists of integers become `ints`; anything else the header grammar does
// not need (e.g. a structured dtype's list of fields) is kept as raw `text` for messages.
struct HeaderValue {
  enum Kind { kString, kBool, kInts, kOther } kind = kOther;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  std::map<std::string, HeaderValue> parse_dict() {
    std::map<std::string, HeaderValue> dict;
    expect('{');
    while (peek() != '}') {
      HeaderValue key = parse_value();
      if (key.kind != HeaderValue::kString) fail(fmt::format("key {} is not a string", key.text));
      expect(':');
      if (!dict.emplace(key.text, parse_value()).second)
        fail(fmt::format("duplicate key '{}'", key.text));
      if (peek() != ',') break;
      ++pos_;
    }
    expect('}');
    if (peek() != '\0') fail("text after the dict");
    return dict;
  }

  [[noreturn]] void fail(const std::string& detail) const {
    constexpr size_t kShown = 200;  // version 2.0 headers can be huge
    throw Error(fmt::format("{}: corrupt .npy header ({}): {}{}", what_, detail,
                            s_.substr(0, kShown), s_.size() > kShown ? "..." : ""));
  }

 private:
  // The next non-space character, '\0' at the end.
  char peek() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(fmt::format("expected '{}' at offset {}", c, pos_));
    ++pos_;
  }

  HeaderValue parse_value() {
    HeaderValue v;
    char c = peek();
    size_t start = pos_;
    if (c == '\'' || c == '"') {
      size_t end = s_.find(c, start + 1);
      if (end == std::string_view::npos) fail("unterminated string");
      pos_ = end + 1;
      v.kind = HeaderValue::kString;
      v.text = s_.substr(start + 1, end - start - 1);
      return v;
    }
    if (c == '(' || c == '[') {
      skip_balanced();
      v.text = s_.substr(start, pos_ - start);
      if (std::optional<std::vector<int64_t>> ints = parse_ints(v.text)) {
        v.kind = HeaderValue::kInts;
        v.ints = std::move(*ints);
      }
      return v;
    }
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != '}' && s_[pos_] != ':') ++pos_;
    v.text = trim(s_.substr(start, pos_ - start));
    if (v.text == "True" || v.text == "False") {
      v.kind = HeaderValue::kBool;
      v.flag = v.text == "True";
    }
    if (v.text.empty()) fail(fmt::format("missing value at offset {}", start));
    return v;
  }

  // Moves past a bracketed group, nested brackets and quoted strings included.
  void skip_balanced() {
    int depth = 0;
    char quote = 0;
    for (; pos_ < s_.size(); ++pos_) {
      char c = s_[pos_];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '(' || c == '[') {
        ++depth;
      } else if ((c == ')' || c == ']') && --depth == 0) {
        ++pos_;
        return;
      }
    }
    fail("unbalanced brackets");
  }

  // "(2, 3)", "(3,)", "()" (and Python 2's "(3L,)"); nullopt for anything else.
  static std::optional<std::vector<int64_t>> parse_ints(std::string_view group) {
    std::string_view body = trim(group.substr(1, group.size() - 2));
    std::vector<int64_t> ints;
    if (body.empty()) return ints;
    if (body.back() == ',') body.remove_suffix(1);
    while (true) {
      size_t comma = body.find(',');
      std::string_view item = trim(body.substr(0, comma));
      if (!item.empty() && item.back() == 'L') item.remove_suffix(1);
      std::optional<int64_t> v = parse_whole_number<int64_t>(item);
      if (!v) return std::nullopt;
      ints.push_back(*v);
      if (comma == std::string_view::npos) return ints;
      body.remove_prefix(comma + 1);
    }
  }

  std::string_view s_;
  const std::string& what_;
  size_t pos_ = 0;
};

DataType parse_descr(const HeaderValue& descr, const std::string& what) {
  auto unsupported = [&](const std::string& why) {
    return Error(fmt::format(
        "{}: unsupported dtype {} ({}); supported: float16/32/64, int8/16/32/64, "
        "uint8/16/32/64, bool",
        what, descr.kind == HeaderValue::kString ? "'" + descr.text + "'" : descr.text, why));
  };
  if (descr.kind != HeaderValue::kString) {
    throw unsupported(descr.text.starts_with('[') ? "structured arrays are not supported"
                                                  : "not a dtype string");
  }
  const std::string& s = descr.text;
  if (s.size() < 3 || std::string_view("<>|=").find(s[0]) == std::string_view::npos) {
    throw unsupported("not a simple dtype");
  }
  int size = 0;
  for (char c : s.substr(2)) {
    if (c < '0' || c > '9' || size > 1000) throw unsupported("not a simple dtype");
    size = size * 10 + (c - '0');
  }
  for (const NpyType& t : kNpyTypes) {
    if (t.kind != s[1] || t.size != size) continue;
    if (s[0] == '>' && size > 1) {
      throw Error(fmt::format(
          "{}: dtype '{}' is big-endian; only little-endian arrays are supported", what, s));
    }
    return t.dtype;
  }
  throw unsupported("unknown kind or size");
}

uint32_t read_le(const std::string& bytes, size_t offset, int width) {
  uint32_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(bytes[offset + i]);
  return v;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// Closes a zip_t on scope exit; zip_discard drops unwritten changes.
struct ZipDiscard {
  void operator()(zip_t* za) const { zip_discard(za); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipDiscard>;

std::string zip_code_message(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string message = zip_error_strerror(&error);
  zip_error_fini(&error);
  return message;
}

constexpr uint32_t kZip64Marker = 0xFFFFFFFF;

// libzip 1.7 fails to open an archive with ZIP_ER_NOENT ("No such file") when a central directory
// entry holds the zip64 marker 0xFFFFFFFF as its size, compressed size or offset but has no zip64
// extra field with the real value (a size of "4 GiB"). Finds that entry to say so; "" when none is.
std::string missing_zip64_field(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(0, std::ios::end);
  size_t file_size = static_cast<size_t>(std::max<std::streamoff>(in.tellg(), 0));
  auto read_at = [&](size_t offset, size_t n) {
    std::string bytes(n, '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(bytes.data(), static_cast<std::streamsize>(n));
    return in ? bytes : std::string();
  };
  // The end of central directory record: 22 bytes and a comment of up to 65535.
  constexpr size_t kEocd = 22, kCentral = 46;
  size_t tail_size = std::min<size_t>(file_size, kEocd + 65535);
  std::string tail = read_at(file_size - tail_size, tail_size);
  size_t eocd =
      tail.size() < kEocd ? std::string::npos : tail.rfind("PK\x05\x06", tail.size() - kEocd);
  if (eocd == std::string::npos) return "";
  size_t cd_size = read_le(tail, eocd + 12, 4), cd_offset = read_le(tail, eocd + 16, 4);
  constexpr size_t kMaxDirectory = 64 << 20;
  if (cd_offset > file_size || cd_size > file_size - cd_offset || cd_size > kMaxDirectory)
    return "";
  std::string dir = read_at(cd_offset, cd_size);
  for (size_t pos = 0; pos + kCentral <= dir.size() && dir.compare(pos, 4, "PK\x01\x02") == 0;) {
    size_t name_len = read_le(dir, pos + 28, 2), extra_len = read_le(dir, pos + 30, 2);
    size_t end = pos + kCentral + name_len + extra_len + read_le(dir, pos + 32, 2);
    if (end > dir.size()) return "";
    std::string name = dir.substr(pos + kCentral, name_len);
    // The zip64 extra field (id 1) holds 8 bytes for each marked field.
    std::vector<std::string> fields;
    for (auto [offset, field] :
         {std::pair{24, "size"}, std::pair{20, "compressed size"}, std::pair{42, "offset"}}) {
      if (read_le(dir, pos + offset, 4) == kZip64Marker) fields.push_back(field);
    }
    bool has_zip64 = false;
    for (size_t e = pos + kCentral + name_len; e + 4 <= pos + kCentral + name_len + extra_len;) {
      size_t id = read_le(dir, e, 2), len = read_le(dir, e + 2, 2);
      has_zip64 |= id == 1 && len >= 8 * fields.size();
      e += 4 + len;
    }
    if (!fields.empty() && !has_zip64) {
      return fmt::format(
          "entry '{}' is corrupt: its {} is 0xFFFFFFFF (4 GiB, the zip64 marker) but it has no "
          "zip64 "
          "extra field giving the real value",
          name, fmt::join(fields, " and "));
    }
    pos = end;
  }
  return "";
}

// Error unless `st`'s declared sizes fit the archive: stored entries hold exactly their size,
// deflate expands at most 1032:1, and nothing is larger than the file. So a corrupt header cannot
// make read_zip allocate more than the data could fill.
void check_declared_size(const zip_stat_t& st, uint64_t file_size,
                         const std::function<Error(std::string)>& fail) {
  constexpr zip_uint64_t kNeeded = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((st.valid & kNeeded) != kNeeded) throw fail("its size is unknown");
  constexpr uint64_t kMaxDeflateRatio = 1032, kDeflateSlack = 1024;
  if (st.comp_size > file_size) {
    throw fail(fmt::format("it declares {} compressed bytes, more than the file's {}", st.comp_size,
                           file_size));
  }
  if (st.comp_method == ZIP_CM_STORE && st.size != st.comp_size) {
    throw fail(fmt::format("it declares a size of {} bytes but stores {}", st.size, st.comp_size));
  }
  if (st.comp_method == ZIP_CM_DEFLATE &&
      st.size > st.comp_size * kMaxDeflateRatio + kDeflateSlack) {
    throw fail(
        fmt::format("it declares a size of {} bytes, more than its {} compressed bytes can hold",
                    st.size, st.comp_size));
  }
  if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE) {
    throw fail(
        fmt::format("compression method {} is not supported (.npz entries are stored or deflated)",
                    st.comp_method));
  }
}

}  // namespace

NDArray parse_npy(const std::string& bytes, const std::string& what) {
  if (bytes.size() < kMagic.size() + 2 ||
      std::string_view(bytes).substr(0, kMagic.size()) != kMagic) {
    throw Error(fmt::format("{}: not a .npy file (no \\x93NUMPY magic)", what));
  }
  int major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    throw Error(fmt::format("{}: unsupported .npy format version {}.{}", what, major, minor));
  }
  // Version 1.0 has a 16-bit header length, 2.0 and 3.0 (a UTF-8 header) a 32-bit one.
  int len_width = major == 1 ? 2 : 4;
  size_t prefix = kMagic.size() + 2 + len_width;
  if (bytes.size() < prefix) throw Error(fmt::format("{}: truncated .npy header", what));
  size_t header_len = read_le(bytes, kMagic.size() + 2, len_width);
  if (bytes.size() - prefix < header_len) {
    throw Error(fmt::format("{}: truncated .npy header ({} bytes announced, {} present)", what,
                            header_len, bytes.size() - prefix));
  }
  HeaderParser parser(std::string_view(bytes).substr(prefix, header_len), what);
  std::map<std::string, HeaderValue> dict = parser.parse_dict();
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (!dict.contains(key)) parser.fail(fmt::format("no '{}' key", key));
  }
  if (dict.size() != 3) parser.fail("unexpected keys");
  const HeaderValue& order = dict["fortran_order"];
  if (order.kind != HeaderValue::kBool) parser.fail("fortran_order is not True or False");
  const HeaderValue& shape_value = dict["shape"];
  if (shape_value.kind != HeaderValue::kInts) {
    parser.fail(fmt::format("shape {} is not a tuple of integers", shape_value.text));
  }
  DataType dtype = parse_descr(dict["descr"], what);
  const std::vector<int64_t>& shape = shape_value.ints;
  // A Fortran-order array of at most one dim over 1 has C order's layout, but numpy only writes
  // fortran_order True for genuinely column-major data, so it is refused outright.
  if (order.flag) {
    throw Error(
        fmt::format("{}: Fortran-order (column-major) arrays are not supported; save with "
                    "numpy.ascontiguousarray",
                    what));
  }

  uint64_t needed = dtype.bytes();
  for (int64_t d : shape) {
    if (d != 0 && needed > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / d) {
      throw Error(fmt::format("{}: shape {} is too large", what, shape_str(shape)));
    }
    needed *= static_cast<uint64_t>(d);
  }
  size_t offset = prefix + header_len;
  size_t available = bytes.size() - offset;
  if (available != needed) {
    throw Error(fmt::format("{}: {} data: a {} array of shape {} needs {} bytes, the file has {}",
                            what, available < needed ? "truncated" : "trailing bytes after the",
                            dtype.str(), shape_str(shape), needed, available));
  }
  // Empty arrays pass the size check above whatever their other dims; NDArray's limits apply too.
  NDArray array;
  try {
    array = NDArray::empty(shape, dtype);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", what, e.what()));
  }
  array.copy_from(bytes.data() + offset, needed);
  return array;
}

std::string to_npy(const NDArray& a) {
  TESSEL_ICHECK(a.defined()) << "to_npy of an undefined NDArray";
  const NpyType* type = nullptr;
  for (const NpyType& t : kNpyTypes) {
    if (t.dtype == a.dtype()) type = &t;
  }
  if (type == nullptr) throw Error(fmt::format("dtype {} has no .npy equivalent", a.dtype().str()));
  std::string header =
      fmt::format("{{'descr': '{}{}{}', 'fortran_order': False, 'shape': {}, }}",
                  type->size == 1 ? '|' : '<', type->kind, type->size, shape_str(a.shape()));
  // The header ends in '\n' and is space-padded so that magic + version + length + header is a
  // multiple of kAlign; version 2.0 is only for headers longer than 1.0's 16-bit length allows.
  int major = 1;
  auto padded = [&](int len_width) {
    size_t unpadded = kMagic.size() + 2 + len_width + header.size() + 1;
    return header.size() + 1 + (kAlign - unpadded % kAlign) % kAlign;
  };
  size_t header_len = padded(2);
  if (header_len > std::numeric_limits<uint16_t>::max()) {
    major = 2;
    header_len = padded(4);
  }
  int len_width = major == 1 ? 2 : 4;
  std::string out(kMagic);
  out += static_cast<char>(major);
  out += '\0';
  for (int i = 0; i < len_width; ++i) out += static_cast<char>(header_len >> (8 * i) & 0xff);
  out += header;
  out.append(header_len - header.size() - 1, ' ');
  out += '\n';
  size_t data_offset = out.size();
  out.resize(data_offset + a.nbytes());
  a.copy_to(out.data() + data_offset, a.nbytes());
  return out;
}

std::vector<std::pair<std::string, std::string>> read_zip(const std::string& path) {
  struct stat file{};
  bool exists = stat(path.c_str(), &file) == 0;
  // libzip would block on a FIFO; a missing file is left to libzip's message.
  if (exists && !S_ISREG(file.st_mode))
    throw Error(fmt::format("cannot read '{}': it is not a regular file", path));
  int code = 0;
  ZipPtr za(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (za == nullptr) {
    std::string why = zip_code_message(code);
    if (exists && code == ZIP_ER_NOENT) {
      why = missing_zip64_field(path);
      if (why.empty())
        why = "the archive is inconsistent (a field its directory refers to is missing)";
    }
    throw Error(fmt::format("cannot read '{}': {}", path, why));
  }
  std::vector<std::pair<std::string, std::string>> entries;
  std::set<std::string> names;
  zip_int64_t count = zip_get_num_entries(za.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    if (zip_stat_index(za.get(), i, 0, &st) != 0) {
      throw Error(fmt::format("cannot read '{}' entry {}: {}", path, i, zip_strerror(za.get())));
    }
    std::string name = st.name;
    auto fail = [&](const std::string& why) {
      return Error(fmt::format("cannot read '{}' entry '{}': {}", path, name, why));
    };
    // Readers differ on which of two same-named entries counts; refuse rather than pick one.
    if (!names.insert(name).second) throw fail("the archive has two entries of this name");
    check_declared_size(st, static_cast<uint64_t>(file.st_size), fail);
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> entry(zip_fopen_index(za.get(), i, 0),
                                                             &zip_fclose);
    if (entry == nullptr) throw fail(zip_strerror(za.get()));
    std::string bytes(st.size, '\0');
    zip_int64_t got = zip_fread(entry.get(), bytes.data(), st.size);
    if (got >= 0 && static_cast<zip_uint64_t>(got) != st.size) {
      throw fail(fmt::format("it holds {} bytes, not the {} it declares", got, st.size));
    }
    // A read past the declared size (0 at the end) makes libzip verify the entry's CRC.
    char extra;
    if (got >= 0) got = zip_fread(entry.get(), &extra, 1);
    if (got != 0)
      throw fail(got < 0 ? zip_file_strerror(entry.get()) : "it holds more bytes than it declares");
    entries.emplace_back(std::move(name), std::move(bytes));
  }
  return entries;
}

void write_zip(const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& entries) {
  // libzip itself makes the write atomic: zip_close writes a temporary file beside `path`, renames
  // it over `path`, and removes it if anything fails. So `path` must be one that may be replaced.
  check_replaceable(path, "the .npz");
  if (entries.empty()) {
    // With no entries zip_close would delete `path` instead of writing an empty archive.
    throw Error(fmt::format("cannot write '{}': no entries to write", path));
  }
  int code = 0;
  ZipPtr za(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (za == nullptr)
    throw Error(fmt::format("cannot write '{}': {}", path, zip_code_message(code)));
  std::set<std::string_view> names;
  for (const auto& [name, bytes] : entries) {
    auto fail = [&](const std::string& why) {
      return Error(fmt::format("cannot write '{}' entry '{}': {}", path, name, why));
    };
    if (!names.insert(name).second) throw fail("duplicate entry name");
    // The buffer is read at zip_close, while `entries` is still alive.
    zip_source_t* source = zip_source_buffer(za.get(), bytes.data(), bytes.size(), 0);
    if (source == nullptr) throw fail(zip_strerror(za.get()));
    zip_int64_t index = zip_file_add(za.get(), name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      throw fail(zip_strerror(za.get()));
    }
    if (zip_set_file_compression(za.get(), index, ZIP_CM_STORE, 0) != 0)
      throw fail(zip_strerror(za.get()));
  }
  if (zip_close(za.get()) != 0)
    throw Error(fmt::format("cannot write '{}': {}", path, zip_strerror(za.get())));
  za.release();  // zip_close freed it
}

std::vector<std::pair<std::string, NDArray>> load_npz(const std::string& path) {
  std::vector<std::pair<std::string, NDArray>> arrays;
  for (auto& [entry, bytes] : read_zip(path)) {
    constexpr std::string_view kSuffix = ".npy";
    if (!entry.ends_with(kSuffix)) {
      throw Error(fmt::format("'{}' entry '{}' is not a .npy array", path, entry));
    }
    std::string name = entry.substr(0, entry.size() - kSuffix.size());
    NDArray array = parse_npy(bytes, fmt::format("'{}' array '{}'", path, name));
    bytes = std::string();  // release the payload early: archives can be large
    arrays.emplace_back(std::move(name), std::move(array));
  }
  return arrays;
}

void save_npz(const std::string& path, const std::vector<std::pair<std::string, NDArray>>& arrays) {
  std::vector<std::pair<std::string, std::string>> entries;
  entries.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    if (!array.defined())
      throw Error(fmt::format("cannot write '{}' array '{}': undefined array", path, name));
    try {
      entries.emplace_back(name + ".npy", to_npy(array));
    } catch (const Error& e) {
      throw Error(fmt::format("cannot write '{}' array '{}': {}", path, name, e.what()));
    }
  }
  write_zip(path, entries);
}

}  // namespace tessel::runtime
