#include "codegen/kernel_cache.h"

#include <dlfcn.h>
#include <elf.h>
#include <fmt/format.h>
#include <link.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/xxhash.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace tessel {
namespace {

constexpr const char* kMagic = "tessel-kernel-object 1";

// The GNU build ID of the loaded file that holds this code generator (the executable, or a shared
// library of Tessel), or its path, size and modification time where it has none: a rebuilt code
// generator must not read objects that an older one wrote.
std::string codegen_build_identity() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&codegen_build_identity), &info) == 0) return "unknown";
  struct Search {
    const void* base;
    std::string id;
  } search{info.dli_fbase, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* phdr, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        bool is_ours = false;
        for (int i = 0; i < phdr->dlpi_phnum && !is_ours; ++i) {
          is_ours = phdr->dlpi_phdr[i].p_type == PT_LOAD && phdr->dlpi_phdr[i].p_offset == 0 &&
                    reinterpret_cast<const void*>(phdr->dlpi_addr + phdr->dlpi_phdr[i].p_vaddr) ==
                        s->base;
        }
        if (!is_ours) return 0;
        for (int i = 0; i < phdr->dlpi_phnum; ++i) {
          if (phdr->dlpi_phdr[i].p_type != PT_NOTE) continue;
          const auto* p =
              reinterpret_cast<const char*>(phdr->dlpi_addr + phdr->dlpi_phdr[i].p_vaddr);
          const char* end = p + phdr->dlpi_phdr[i].p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const char* name = p + sizeof(ElfW(Nhdr));
            const char* desc = name + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
              for (uint32_t b = 0; b < note->n_descsz; ++b)
                s->id += fmt::format("{:02x}", static_cast<unsigned char>(desc[b]));
              return 1;
            }
            p = desc + ((note->n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &search);
  if (!search.id.empty()) return search.id;
  struct stat st{};
  if (info.dli_fname == nullptr || stat(info.dli_fname, &st) != 0) return "unknown";
  return fmt::format("{}:{}:{}", info.dli_fname, st.st_size, st.st_mtim.tv_sec);
}

std::string hex128(llvm::StringRef text) {
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(llvm::ArrayRef(text.bytes_begin(), text.size()));
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

std::string checksum(llvm::StringRef bytes) {
  return fmt::format("{:016x}", llvm::xxh3_64bits(bytes));
}

}  // namespace

std::optional<KernelCache> KernelCache::from_environment() {
  if (const char* dir = std::getenv("TESSEL_CACHE_DIR")) {
    std::string d = dir;
    if (d.empty() || d == "off") return std::nullopt;
    return KernelCache(d);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return KernelCache(std::string(xdg) + "/tessel");
  if (const char* home = std::getenv("HOME"); home && *home)
    return KernelCache(std::string(home) + "/.cache/tessel");
  return std::nullopt;
}

std::string KernelCache::path_of(const std::string& key) const {
  return fmt::format("{}/kernels/{}.o", dir_, key);
}

// An entry is a header line "MAGIC KEY SIZE CHECKSUM\n", then the object's bytes.
std::optional<std::string> KernelCache::get(const std::string& key) const {
  std::ifstream in(path_of(key), std::ios::binary);
  std::string header;
  if (!in || !std::getline(in, header)) return std::nullopt;
  std::istringstream fields(header.substr(std::min(header.size(), std::strlen(kMagic))));
  std::string stored_key, sum;
  size_t size = 0;
  if (!header.starts_with(kMagic) || !(fields >> stored_key >> size >> sum) || stored_key != key ||
      size > (size_t{1} << 31)) {
    return std::nullopt;
  }
  std::string object(size, '\0');
  if (!in.read(object.data(), static_cast<std::streamsize>(size)) || in.peek() != EOF)
    return std::nullopt;
  if (checksum(object) != sum) return std::nullopt;
  return object;
}

void KernelCache::put(const std::string& key, const std::string& object) const {
  static std::atomic<int> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(dir_ + "/kernels", ec);
  if (ec) return;
  std::string path = path_of(key);
  std::string tmp = fmt::format("{}.tmp.{}.{}", path, getpid(), counter++);
  {
    std::ofstream out(tmp, std::ios::binary);
    out << kMagic << " " << key << " " << object.size() << " " << checksum(object) << "\n";
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

std::string kernel_key(const PrimFunc& func, const Target& target) {
  static const std::string build = codegen_build_identity();
  return hex128(fmt::format("{}\n{}\n{}\nllvm {}\n{}", canonical_text(func),
                            structural_hash(func->body), target.str(), LLVM_VERSION_STRING, build));
}

}  // namespace tessel
