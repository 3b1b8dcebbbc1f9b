#include "frontend/proto_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "ir/error.h"

namespace tessel::frontend::detail {

namespace {

// Closes the descriptor on every path out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Opens a regular file of at most kMaxProtobufBytes; *size is its size.
FileDescriptor open_protobuf_file(const std::string& path, const std::string& what, off_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before fstat can
  // refuse it.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0)
    throw Error(fmt::format("cannot open {} '{}': {}", what, path, std::strerror(errno)));
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) {
    throw Error(fmt::format("cannot stat {} '{}': {}", what, path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) throw Error(fmt::format("{} '{}' is not a regular file", what, path));
  if (st.st_size > kMaxProtobufBytes) {
    throw Error(fmt::format("{} '{}' has {} bytes, over protobuf's 2 GiB message limit", what, path,
                            st.st_size));
  }
  *size = st.st_size;
  return fd;
}

}  // namespace

std::string read_protobuf_file(const std::string& path, const std::string& what) {
  off_t size = 0;
  FileDescriptor fd = open_protobuf_file(path, what, &size);
  std::string bytes(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw Error(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
    if (n == 0) break;  // the file shrank while we read it
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

bool parse_protobuf_file(const std::string& path, const std::string& what,
                         google::protobuf::MessageLite& message) {
  off_t size = 0;
  FileDescriptor fd = open_protobuf_file(path, what, &size);
  google::protobuf::io::FileInputStream in(fd.get());
  bool parsed = message.ParseFromZeroCopyStream(&in);
  if (in.GetErrno() != 0) {
    throw Error(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(in.GetErrno())));
  }
  return parsed;
}

}  // namespace tessel::frontend::detail
