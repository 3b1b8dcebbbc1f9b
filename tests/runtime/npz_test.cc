#include "runtime/npz.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "ir/error.h"
#include "tests/common/expect_error.h"
#include "tests/runtime/temp_dir_fixture.h"

namespace tessel::runtime {
namespace {

namespace fs = std::filesystem;

using tessel::testing::expect_error;

// Archives written by numpy 1.24 (so this test needs no numpy), from:
//   np.savez('stored.npz', x=np.array([[1.5, -2], [3, 4.25], [0, 7]], dtype=np.float32),
//            n=np.array(-7, dtype=np.int64), b=np.array([True, False, True]))
//   np.savez_compressed('deflated.npz', h=np.array([0.5, -1, 65504], dtype=np.float16),
//                       u=np.arange(6, dtype=np.uint16).reshape(2, 3), s=np.array(2.5))
// numpy writes each local header with a zip64 extra field (force_zip64), which libzip must accept.
constexpr std::string_view kNumpySavez =
    "504b030414000000000000002100217a3c82980000009800000005001400782e6e7079010010009800000000000000"
    "98"
    "00000000000000934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f726465"
    "72"
    "273a2046616c73652c20277368617065273a2028332c2032292c207d20202020202020202020202020202020202020"
    "20"
    "20202020202020202020202020202020202020202020202020202020202020202020202020200a0000c03f000000c0"
    "00"
    "00404000008840000000000000e040504b030414000000000000002100c8b83ce48800000088000000050014006e2e"
    "6e"
    "70790100100088000000000000008800000000000000934e554d5059010076007b276465736372273a20273c693827"
    "2c"
    "2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028292c207d2020202020202020"
    "20"
    "2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "20"
    "20202020200af9ffffffffffffff504b03041400000000000000210016938cbb830000008300000005001400622e6e"
    "70"
    "790100100083000000000000008300000000000000934e554d5059010076007b276465736372273a20277c6231272c"
    "20"
    "27666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c292c207d20202020202020"
    "20"
    "2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "20"
    "202020200a010001504b0102140314000000000000002100217a3c8298000000980000000500000000000000000000"
    "00"
    "800100000000782e6e7079504b0102140314000000000000002100c8b83ce488000000880000000500000000000000"
    "00"
    "0000008001cf0000006e2e6e7079504b010214031400000000000000210016938cbb83000000830000000500000000"
    "00"
    "00000000000080018e010000622e6e7079504b0506000000000300030099000000480200000000";
constexpr std::string_view kNumpySavezCompressed =
    "504b0304140000000800000021007c7cc6134a0000008600000005001400682e6e7079010010008600000000000000"
    "4a"
    "000000000000009bec17ea1b10c9c850c650ad9e925a9c5ca46ea5a06e9366a4aea3a09e965f54529498179f5f9492"
    "0a"
    "12774bcc294e058a17672416a402f91ac63a9a3a0ab50a14002e060b863dffab01504b030414000000080000002100"
    "05"
    "950f6e520000008c00000005001400752e6e7079010010008c0000000000000052000000000000009bec17ea1b10c9"
    "c8"
    "50c650ad9e925a9c5ca46ea5a06e536aa4aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416a402"
    "f9"
    "1a463a0ac69a3a0ab50a64032e06064606260666061606560600504b03041400000008000000210035b43a93470000"
    "00"
    "8800000005001400732e6e707901001000880000000000000047000000000000009bec17ea1b10c9c850c650ad9e92"
    "5a"
    "9c5ca46ea5a06e9366a1aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416a402f91a9a3a0ab50a"
    "14"
    "012e063060710000504b01021403140000000800000021007c7cc6134a000000860000000500000000000000000000"
    "00"
    "800100000000682e6e7079504b010214031400000008000000210005950f6e520000008c0000000500000000000000"
    "00"
    "000000800181000000752e6e7079504b010214031400000008000000210035b43a9347000000880000000500000000"
    "00"
    "00000000000080010a010000732e6e7079504b0506000000000300030099000000880100000000";

std::string unhex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return bytes;
}

class NpzTest : public tessel::testing::TempDirTest {
 protected:
  std::string write_file(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }
  // The names in the test directory.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

// An array whose bytes are a deterministic pattern (0/1 for bool).
NDArray pattern_array(std::vector<int64_t> shape, DataType dtype) {
  NDArray a = NDArray::empty(std::move(shape), dtype);
  auto* bytes = static_cast<unsigned char*>(a.raw_data());
  for (size_t i = 0; i < a.nbytes(); ++i)
    bytes[i] = dtype.is_bool() ? i % 3 == 0 : static_cast<unsigned char>(i * 37 + 11);
  return a;
}

void expect_same(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.nbytes()), 0) << what;
}

const DataType kAllDtypes[] = {DataType::f16(), DataType::f32(), DataType::f64(),
                               DataType::i8(),  DataType::i16(), DataType::i32(),
                               DataType::i64(), DataType::u8(),  DataType::u16(),
                               DataType::u32(), DataType::u64(), DataType::boolean()};

TEST_F(NpzTest, RoundTripsEveryDtypeAndShape) {
  std::vector<std::pair<std::string, NDArray>> arrays;
  for (DataType dtype : kAllDtypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3}, {}, {5}, {0}, {2, 0, 3}}) {
      NDArray a = pattern_array(shape, dtype);
      std::string name = fmt::format("{}_{}", dtype.str(), shape.size());
      if (a.numel() == 0) name += "_empty";
      expect_same(parse_npy(to_npy(a), name), a, name);
      arrays.emplace_back(name, a);
    }
  }
  save_npz(path("all.npz"), arrays);
  auto loaded = load_npz(path("all.npz"));
  ASSERT_EQ(loaded.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(loaded[i].first, arrays[i].first);
    expect_same(loaded[i].second, arrays[i].second, arrays[i].first);
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"all.npz"});  // no temporary file left
}

TEST_F(NpzTest, ReadsNumpySavez) {
  auto arrays = load_npz(write_file("stored.npz", unhex(kNumpySavez)));
  ASSERT_EQ(arrays.size(), 3u);
  EXPECT_EQ(arrays[0].first, "x");
  EXPECT_EQ(arrays[1].first, "n");
  EXPECT_EQ(arrays[2].first, "b");
  const NDArray& x = arrays[0].second;
  ASSERT_EQ(x.dtype(), DataType::f32());
  ASSERT_EQ(x.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(std::vector<float>(x.data<float>(), x.data<float>() + 6),
            (std::vector<float>{1.5f, -2, 3, 4.25f, 0, 7}));
  const NDArray& n = arrays[1].second;
  ASSERT_EQ(n.dtype(), DataType::i64());
  ASSERT_EQ(n.ndim(), 0);
  EXPECT_EQ(*n.data<int64_t>(), -7);
  const NDArray& b = arrays[2].second;
  ASSERT_EQ(b.dtype(), DataType::boolean());
  ASSERT_EQ(b.shape(), std::vector<int64_t>{3});
  EXPECT_EQ(std::vector<uint8_t>(b.data<uint8_t>(), b.data<uint8_t>() + 3),
            (std::vector<uint8_t>{1, 0, 1}));
}

TEST_F(NpzTest, ReadsNumpySavezCompressed) {
  auto arrays = load_npz(write_file("deflated.npz", unhex(kNumpySavezCompressed)));
  ASSERT_EQ(arrays.size(), 3u);
  EXPECT_EQ(arrays[0].first, "h");
  const NDArray& h = arrays[0].second;
  ASSERT_EQ(h.dtype(), DataType::f16());
  ASSERT_EQ(h.shape(), std::vector<int64_t>{3});
  // float16 bits of 0.5, -1 and 65504.
  EXPECT_EQ(std::vector<uint16_t>(h.data<uint16_t>(), h.data<uint16_t>() + 3),
            (std::vector<uint16_t>{0x3800, 0xbc00, 0x7bff}));
  const NDArray& u = arrays[1].second;
  ASSERT_EQ(u.dtype(), DataType::u16());
  ASSERT_EQ(u.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::vector<uint16_t>(u.data<uint16_t>(), u.data<uint16_t>() + 6),
            (std::vector<uint16_t>{0, 1, 2, 3, 4, 5}));
  const NDArray& s = arrays[2].second;
  ASSERT_EQ(s.dtype(), DataType::f64());
  ASSERT_EQ(s.ndim(), 0);
  EXPECT_EQ(*s.data<double>(), 2.5);
}

TEST_F(NpzTest, WritesNumpysBytes) {
  // numpy's x.npy payload and ours agree byte for byte, header padding included.
  auto entries = read_zip(write_file("stored.npz", unhex(kNumpySavez)));
  ASSERT_EQ(entries[0].first, "x.npy");
  NDArray x = parse_npy(entries[0].second, "x");
  EXPECT_EQ(to_npy(x), entries[0].second);
}

// A .npy payload with the given format version and header text (padded with spaces to the 64-byte
// boundary, ending in '\n') followed by `data`.
std::string npy(int major, const std::string& header, const std::string& data) {
  int len_width = major == 1 ? 2 : 4;
  size_t prefix = 8 + len_width;
  size_t len = (prefix + header.size() + 1 + 63) / 64 * 64 - prefix;
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  for (int i = 0; i < len_width; ++i) out += static_cast<char>(len >> (8 * i) & 0xff);
  return out + header + std::string(len - header.size() - 1, ' ') + "\n" + data;
}

TEST_F(NpzTest, ReadsVersions2And3AndHeaderVariants) {
  std::string data("\x01\x00\x02\x00\x03\x00", 6);
  for (int major : {1, 2, 3}) {
    for (const std::string& header :
         {std::string("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }"),
          std::string("{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"<i2\"}"),
          std::string("  { 'descr' : '<i2' ,'fortran_order':False,'shape':( 3 , ) }")}) {
      NDArray a = parse_npy(npy(major, header, data), header);
      ASSERT_EQ(a.dtype(), DataType::i16()) << header;
      ASSERT_EQ(a.shape(), std::vector<int64_t>{3}) << header;
      EXPECT_EQ(a.data<int16_t>()[2], 3) << header;
    }
  }
  // 1-byte dtypes have no byte order; any marker is accepted.
  EXPECT_EQ(
      parse_npy(npy(1, "{'descr': '>u1', 'fortran_order': False, 'shape': (), }", "\x07"), "u")
          .dtype(),
      DataType::u8());
}

TEST_F(NpzTest, WritesVersion2WhenTheHeaderNeedsIt) {
  // 22000 dims of 1 make a header longer than version 1.0's 65535 bytes.
  NDArray a = pattern_array(std::vector<int64_t>(22000, 1), DataType::i32());
  std::string bytes = to_npy(a);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - a.nbytes()) % 64, 0u);
  expect_same(parse_npy(bytes, "big"), a, "big");
  EXPECT_EQ(to_npy(pattern_array({4}, DataType::i32()))[6], 1);
}

TEST_F(NpzTest, BadArraysNameTheFileAndArray) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data(8, '\0');
  struct Case {
    std::string payload;
    std::string message;
  };
  const Case cases[] = {
      {"not numpy", "not a .npy file"},
      {npy(4, f4, data), "unsupported .npy format version 4.0"},
      {npy(1, f4, data).substr(0, 40), "truncated .npy header"},
      {npy(1, "{'descr': '<f4', 'shape': (2,), }", data), "no 'fortran_order' key"},
      {npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data),
       "unexpected keys"},
      {npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", data),
       "corrupt .npy header"},
      {npy(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", data),
       "fortran_order is not True"},
      {npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data),
       "not a tuple of integers"},
      {npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", data),
       "not a tuple of integers"},
      {npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data), "big-endian"},
      {npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data), "Fortran-order"},
      {npy(1, "{'descr': '<U5', 'fortran_order': False, 'shape': (2,), }", data),
       "unsupported dtype '<U5'"},
      {npy(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", data),
       "unsupported dtype '|O'"},
      {npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", data),
       "unsupported dtype '<c8'"},
      {npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data),
       "unsupported dtype [('a', '<f4')] (structured"},
      {npy(1, f4, data.substr(0, 7)),
       "truncated data: a float32 array of shape (2,) needs 8 bytes, the file has 7"},
      {npy(1, f4, data + "x"), "trailing bytes"},
      {npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
           data),
       "too large"},
      // Empty, so it needs no bytes, but its strides overflow: NDArray's error, with the file's
      // and array's names.
      {npy(1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1099511627776, "
           "1099511627776), }",
           ""),
       "too large"},
  };
  for (const Case& c : cases) {
    std::string file = path("bad.npz");
    write_zip(file,
              {{"ok.npy", to_npy(pattern_array({2}, DataType::f32()))}, {"a.npy", c.payload}});
    expect_error([&] { load_npz(file); }, {"'" + file + "' array 'a'", c.message});
  }
}

TEST_F(NpzTest, BadArchivesNameTheFile) {
  std::string missing = path("missing.npz");
  expect_error([&] { load_npz(missing); }, {"'" + missing + "'", "No such file"});
  std::string text = write_file("text.npz", "this is not a zip archive");
  expect_error([&] { load_npz(text); }, {"'" + text + "'", "Not a zip archive"});
  std::string other = path("other.npz");
  write_zip(other, {{"readme.txt", "hi"}});
  expect_error([&] { load_npz(other); },
               {"'" + other + "' entry 'readme.txt' is not a .npy array"});
  // A flipped data byte in a stored entry fails its CRC check.
  std::string bytes = unhex(kNumpySavez);
  size_t x_data = bytes.find(std::string_view("\x00\x00\xc0\x3f", 4));
  ASSERT_NE(x_data, std::string::npos);
  bytes[x_data + 2] ^= 1;
  std::string corrupt = write_file("corrupt.npz", bytes);
  expect_error([&] { load_npz(corrupt); }, {"'" + corrupt + "' entry 'x.npy'", "CRC"});
}

// The central directory record of the archive's only entry.
size_t central_entry(const std::string& zip) {
  size_t at = zip.find("PK\x01\x02");
  EXPECT_NE(at, std::string::npos);
  EXPECT_EQ(zip.find("PK\x01\x02", at + 1), std::string::npos);
  return at;
}

void put_u32(std::string& bytes, size_t offset, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<char>(v >> (8 * i) & 0xff);
}

TEST_F(NpzTest, DuplicateEntriesAreRefused) {
  // Readers differ on which of two same-named entries counts: libzip's index order gave the last.
  std::string file = path("dup.npz");
  NDArray a = pattern_array({2}, DataType::f32());
  write_zip(file, {{"a.npy", to_npy(a)}, {"b.npy", to_npy(a)}});
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  for (size_t at; (at = bytes.find("b.npy")) != std::string::npos;) bytes[at] = 'a';
  write_file("dup.npz", bytes);
  expect_error([&] { load_npz(file); },
               {"'" + file + "' entry 'a.npy'", "two entries of this name"});
}

TEST_F(NpzTest, ImpossibleDeclaredSizesNameTheEntry) {
  std::string file = path("one.npz");
  write_zip(file, {{"a.npy", to_npy(pattern_array({2}, DataType::f32()))}});
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  size_t entry = central_entry(bytes);
  // 0xFFFFFFFF is the zip64 marker: libzip then looks for the zip64 field, and its "No such file"
  // named neither the entry nor the reason.
  std::string marker = bytes;
  put_u32(marker, entry + 24, 0xFFFFFFFF);
  std::string four_gib = write_file("four_gib.npz", marker);
  expect_error([&] { load_npz(four_gib); },
               {"'" + four_gib + "'", "entry 'a.npy' is corrupt: its size is 0xFFFFFFFF",
                "no zip64 extra field"});
  // Just under 4 GiB: a stored entry's size is its stored bytes.
  std::string big = bytes;
  put_u32(big, entry + 24, 0xFFFFFFF0);
  std::string almost = write_file("almost.npz", big);
  expect_error([&] { load_npz(almost); }, {"'" + almost + "' entry 'a.npy'",
                                           "declares a size of 4294967280 bytes but stores"});
}

TEST_F(NpzTest, AFifoIsNotRead) {
  std::string fifo = path("in.npz");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_error([&] { load_npz(fifo); },
               {"'" + fifo + "'", "not a regular file"});  // instead of blocking
}

TEST_F(NpzTest, SaveToMissingDirectoryFailsAndLeavesNothing) {
  std::string file = path("no/such/dir/out.npz");
  expect_error([&] { save_npz(file, {{"a", pattern_array({2}, DataType::f32())}}); },
               {"cannot write '" + file + "'"});
  EXPECT_TRUE(listing().empty());
}

TEST_F(NpzTest, SaveRejectsBadArraysAndLeavesNothing) {
  std::string file = path("out.npz");
  NDArray ok = pattern_array({2}, DataType::f32());
  expect_error(
      [&] {
        save_npz(file, {{"a", ok}, {"v", pattern_array({2}, DataType::f32().with_lanes(4))}});
      },
      {"cannot write '" + file + "' array 'v'", "float32x4 has no .npy equivalent"});
  expect_error([&] { save_npz(file, {{"a", ok}, {"a", ok}}); },
               {"cannot write '" + file + "' entry 'a.npy'", "duplicate"});
  expect_error([&] { save_npz(file, {{"a", NDArray()}}); }, {"array 'a': undefined"});
  expect_error([&] { save_npz(file, {}); }, {"cannot write '" + file + "'", "no entries"});
  EXPECT_TRUE(listing().empty());
}

TEST_F(NpzTest, OverwriteReplacesTheFileAndLeavesNoTemporaries) {
  std::string file = path("out.npz");
  write_file("out.npz", "old contents, not even a zip");
  save_npz(file, {{"a", pattern_array({2, 2}, DataType::f64())}});
  NDArray b = pattern_array({3}, DataType::i8());
  save_npz(file, {{"b", b}});
  auto arrays = load_npz(file);
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(arrays[0].first, "b");
  expect_same(arrays[0].second, b, "b");
  EXPECT_EQ(listing(), std::vector<std::string>{"out.npz"});
}

}  // namespace
}  // namespace tessel::runtime
