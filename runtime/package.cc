// mod.params and the package tar (through libarchive). Formats: docs/package-format.md.
#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string_view>
#include <tuple>

#include "ir/error.h"
#include "runtime/library.h"
#include "runtime/model.h"
#include "runtime/output_file.h"

namespace tessel::runtime {

namespace {

constexpr char kParamsMagic[8] = {'T', 'S', 'L', 'P', 'A', 'R', 'A', 'M'};
constexpr uint32_t kParamsVersion = 1;

// Little-endian fixed-width fields (every host Tessel runs on is little-endian).
template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

class Reader {
 public:
  Reader(const std::string& bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  const char* take(size_t n) {
    if (n > bytes_.size() - pos_)
      throw Error(fmt::format("{} is truncated at byte {}", what_, pos_));
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  std::string what_;
  size_t pos_ = 0;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read {}", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

// The members of a tar file by name. Only a regular file is read (a FIFO would block), and no
// member may claim more bytes than the file has, so a corrupt header cannot make a huge allocation.
std::map<std::string, std::string> read_tar(const std::string& path) {
  std::error_code ec;
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw Error(fmt::format("package {} does not exist", path));
  if (!std::filesystem::is_regular_file(status))
    throw Error(fmt::format("package {} is not a regular file", path));
  uintmax_t file_size = std::filesystem::file_size(path, ec);
  ArchivePtr a(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) {
    throw Error(fmt::format("cannot open package {}: {}", path, archive_error_string(a.get())));
  }
  std::map<std::string, std::string> members;
  struct archive_entry* entry;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    la_int64_t size = archive_entry_size(entry);
    if (size < 0 || static_cast<uintmax_t>(size) > file_size) {
      throw Error(fmt::format("package {} is corrupt: member {} claims {} bytes in a file of {}",
                              path, name, size, file_size));
    }
    std::string data(static_cast<size_t>(size), '\0');
    la_ssize_t n = archive_read_data(a.get(), data.data(), data.size());
    if (n < 0 || static_cast<size_t>(n) != data.size()) {
      throw Error(fmt::format("package {} is corrupt: member {} is truncated", path, name));
    }
    if (!members.emplace(name, std::move(data)).second) {
      throw Error(fmt::format("package {} is corrupt: it has two members named {}", path, name));
    }
  }
  if (rc != ARCHIVE_EOF) {
    throw Error(
        fmt::format("package {} is not a valid tar file: {}", path, archive_error_string(a.get())));
  }
  return members;
}

// A file in $TMPDIR holding `bytes`, removed when the last copy of the handle dies.
std::shared_ptr<std::string> temporary_file(const std::string& bytes, const std::string& suffix) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("tessel-XXXXXX" + suffix)).string();
  int fd = mkstemps(pattern.data(), static_cast<int>(suffix.size()));
  if (fd < 0) throw Error(fmt::format("cannot create a temporary file: {}", std::strerror(errno)));
  bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  auto handle = std::shared_ptr<std::string>(new std::string(pattern), [](std::string* p) {
    std::remove(p->c_str());
    delete p;
  });
  if (!ok) throw Error(fmt::format("cannot write the temporary file {}", pattern));
  return handle;
}

}  // namespace

namespace {

// mod.params in pieces, each array's header then its data: a package streams the weights into
// the tar without first copying them all into one buffer.
void write_params(const std::map<std::string, NDArray>& params,
                  const std::function<void(std::string_view)>& sink) {
  std::string head(kParamsMagic, sizeof kParamsMagic);
  put<uint32_t>(head, kParamsVersion);
  put<uint64_t>(head, params.size());
  for (const auto& [name, a] : params) {
    put<uint32_t>(head, static_cast<uint32_t>(name.size()));
    head += name;
    std::string dtype = a.dtype().str();
    put<uint32_t>(head, static_cast<uint32_t>(dtype.size()));
    head += dtype;
    put<uint32_t>(head, static_cast<uint32_t>(a.ndim()));
    for (int64_t d : a.shape()) put<int64_t>(head, d);
    put<uint64_t>(head, a.nbytes());
    sink(head);
    head.clear();
    sink(std::string_view(static_cast<const char*>(a.raw_data()), a.nbytes()));
  }
  if (params.empty()) sink(head);
}

}  // namespace

std::string save_params(const std::map<std::string, NDArray>& params) {
  std::string out;
  write_params(params, [&](std::string_view piece) { out += piece; });
  return out;
}

std::map<std::string, NDArray> load_params(const std::string& bytes, const std::string& what) {
  Reader r(bytes, what);
  if (bytes.size() < sizeof kParamsMagic ||
      std::memcmp(r.take(sizeof kParamsMagic), kParamsMagic, sizeof kParamsMagic)) {
    throw Error(fmt::format("{} is not a Tessel params file", what));
  }
  uint32_t version = r.get<uint32_t>();
  if (version != kParamsVersion)
    throw Error(
        fmt::format("{} has params version {}; expected {}", what, version, kParamsVersion));
  uint64_t count = r.get<uint64_t>();
  std::map<std::string, NDArray> out;
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t name_len = r.get<uint32_t>();
    std::string name(r.take(name_len), name_len);
    uint32_t dtype_len = r.get<uint32_t>();
    DataType dtype = DataType::parse(std::string(r.take(dtype_len), dtype_len));
    uint32_t ndim = r.get<uint32_t>();
    if (ndim > 64)
      throw Error(fmt::format("{} is corrupt: array '{}' has rank {}", what, name, ndim));
    std::vector<int64_t> shape;
    for (uint32_t d = 0; d < ndim; ++d) shape.push_back(r.get<int64_t>());
    uint64_t nbytes = r.get<uint64_t>();
    const char* data = r.take(nbytes);  // before allocating: the file must hold what it claims
    // And the shape must agree before allocating: a corrupt dim would otherwise ask for terabytes.
    size_t expected = 0;
    try {
      expected = NDArray::nbytes_of(shape, dtype);
    } catch (const Error& e) {
      throw Error(fmt::format("{} is corrupt: array '{}': {}", what, name, e.what()));
    }
    if (nbytes != expected) {
      throw Error(fmt::format("{} is corrupt: array '{}' has {} bytes for {}[{}]", what, name,
                              nbytes, dtype.str(), fmt::join(shape, ", ")));
    }
    NDArray a = NDArray::empty(shape, dtype);
    if (nbytes) std::memcpy(a.raw_data(), data, nbytes);
    if (!out.emplace(name, std::move(a)).second)
      throw Error(fmt::format("{} is corrupt: two arrays named '{}'", what, name));
  }
  if (!r.done()) throw Error(fmt::format("{} has trailing bytes", what));
  return out;
}

void write_package(const std::string& path, const std::string& library_path,
                   const ExecutorPlan& plan, const std::map<std::string, NDArray>& params) {
  // Each member: its name, its size and a writer of its bytes.
  using Writer = std::function<void(const std::function<void(std::string_view)>&)>;
  std::string library = read_file(library_path), json = plan.to_json();
  size_t params_bytes = 0;
  write_params(params, [&](std::string_view piece) { params_bytes += piece.size(); });
  std::vector<std::tuple<std::string, size_t, Writer>> members = {
      {"mod.so", library.size(), [&](const auto& sink) { sink(library); }},
      {"mod.json", json.size(), [&](const auto& sink) { sink(json); }},
      {"mod.params", params_bytes, [&](const auto& sink) { write_params(params, sink); }}};
  write_atomically(path, "the package", [&](int fd) {
    ArchivePtr a(archive_write_new(), archive_write_free);
    auto fail = [&] {
      const char* why = archive_error_string(a.get());
      return Error(
          fmt::format("cannot write the package '{}': {}", path, why ? why : "write failed"));
    };
    archive_write_set_format_pax_restricted(a.get());
    // Unblocked: members go out in large writes, not 10 KiB records, with no tail padding.
    archive_write_set_bytes_per_block(a.get(), 0);
    if (archive_write_open_fd(a.get(), fd) != ARCHIVE_OK) throw fail();
    for (const auto& [name, size, write] : members) {
      std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)> e(archive_entry_new(),
                                                                               archive_entry_free);
      archive_entry_set_pathname(e.get(), name.c_str());
      archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_perm(e.get(), 0644);
      if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) throw fail();
      write([&](std::string_view piece) {
        if (archive_write_data(a.get(), piece.data(), piece.size()) !=
            static_cast<la_ssize_t>(piece.size()))
          throw fail();
      });
    }
    if (archive_write_close(a.get()) != ARCHIVE_OK) throw fail();
  });
}

Model load_package(const std::string& path) {
  std::map<std::string, std::string> members = read_tar(path);
  for (const char* name : {"mod.so", "mod.json", "mod.params"}) {
    if (!members.count(name)) throw Error(fmt::format("package {} has no {}", path, name));
  }
  ExecutorPlan plan = ExecutorPlan::from_json(members["mod.json"], path + ":mod.json");
  plan.check_host("package " + path);
  std::map<std::string, NDArray> params = load_params(members["mod.params"], path + ":mod.params");
  // dlopen needs a file; the library is mapped once loaded, so the file can go right away.
  std::shared_ptr<std::string> library = temporary_file(members["mod.so"], ".so");
  std::vector<std::string> entries;
  for (const auto& k : plan.kernels) entries.push_back(k.name);
  Module module = load_library(*library, entries, fmt::format("package {}: mod.so", path));
  try {
    return Model(std::move(module), std::move(plan), params);
  } catch (const Error& e) {
    throw Error(fmt::format("package {}: {}", path, e.what()));
  }
}

}  // namespace tessel::runtime
