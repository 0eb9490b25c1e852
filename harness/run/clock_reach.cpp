#include "run/clock_reach.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace locklab {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSectionNamesBytesMax = 1 << 20;  // a section-name table larger is not an ELF's
constexpr size_t kMapsBytesMax = 64 << 20;         // a process's memory map as text

// Reads exactly `size` bytes at `offset`; false when the file is shorter or unreadable.
bool read_at(int fd, void* into, size_t size, off_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, static_cast<char*>(into) + done, size - done,
                              offset + static_cast<off_t>(done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The names of the sections of an ELF file of one class (Ehdr/Shdr: Elf64_* or Elf32_*).
template <typename Ehdr, typename Shdr>
std::optional<std::vector<std::string>> section_names(int fd) {
  Ehdr header{};
  if (!read_at(fd, &header, sizeof header, 0)) return std::nullopt;
  if (header.e_shentsize != sizeof(Shdr) || header.e_shstrndx >= header.e_shnum) {
    return std::nullopt;
  }
  Shdr names_section{};
  const off_t names_at = static_cast<off_t>(header.e_shoff + header.e_shstrndx * sizeof(Shdr));
  if (!read_at(fd, &names_section, sizeof names_section, names_at)) return std::nullopt;
  if (names_section.sh_size > kSectionNamesBytesMax) return std::nullopt;
  std::string names(names_section.sh_size, '\0');
  if (!read_at(fd, names.data(), names.size(), static_cast<off_t>(names_section.sh_offset))) {
    return std::nullopt;
  }
  std::vector<std::string> result;
  for (size_t i = 0; i < header.e_shnum; ++i) {
    Shdr section{};
    if (!read_at(fd, &section, sizeof section,
                 static_cast<off_t>(header.e_shoff + i * sizeof(Shdr))))
      return std::nullopt;
    if (section.sh_name >= names.size()) return std::nullopt;
    result.emplace_back(names.c_str() + section.sh_name);
  }
  return result;
}

std::string read_bounded(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  char chunk[65536];
  while (in && text.size() < max_bytes) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  return text;
}

// The process group and state of /proc/<pid>/stat; nullopt when the process is gone.
struct Stat {
  char state = '?';
  pid_t pgid = 0;
};
std::optional<Stat> read_stat(const std::string& proc, const std::string& pid) {
  const std::string text = read_bounded(proc + "/" + pid + "/stat", 4096);
  // The command name is in parentheses and may hold anything; the fields follow the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  Stat stat;
  pid_t parent = 0;
  if (!(rest >> stat.state >> parent >> stat.pgid)) return std::nullopt;
  return stat;
}

std::string canonical_or_same(const std::string& path) {
  std::error_code error;
  const fs::path resolved = fs::canonical(path, error);
  return error ? path : resolved.string();
}

}  // namespace

std::vector<pid_t> process_group(pid_t pgid, const std::string& proc) {
  std::vector<pid_t> members;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(proc, error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const std::optional<Stat> stat = read_stat(proc, name);
    if (stat && stat->pgid == pgid && stat->state != 'Z') members.push_back(std::stoi(name));
  }
  std::sort(members.begin(), members.end());
  return members;
}

bool is_go_program(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char ident[EI_NIDENT] = {};
  std::optional<std::vector<std::string>> names;
  if (read_at(fd, ident, sizeof ident, 0) && std::memcmp(ident, ELFMAG, SELFMAG) == 0) {
    if (ident[EI_CLASS] == ELFCLASS64) names = section_names<Elf64_Ehdr, Elf64_Shdr>(fd);
    if (ident[EI_CLASS] == ELFCLASS32) names = section_names<Elf32_Ehdr, Elf32_Shdr>(fd);
  }
  ::close(fd);
  if (!names) return false;
  return std::any_of(names->begin(), names->end(), [](const std::string& name) {
    return name == ".go.buildinfo" || name == ".note.go.buildid";
  });
}

std::string clock_fault_unreachable(pid_t pgid, const std::string& library,
                                    const std::string& proc) {
  const std::string loaded = canonical_or_same(library);
  for (const pid_t pid : process_group(pgid, proc)) {
    const std::string dir = proc + "/" + std::to_string(pid);
    std::error_code error;
    const std::string exe = fs::read_symlink(dir + "/exe", error).string();
    const std::string maps = read_bounded(dir + "/maps", kMapsBytesMax);
    if (error || maps.empty()) continue;  // ended while being read
    const std::string who = "process " + std::to_string(pid) + " (" + exe + ")";
    if (is_go_program(dir + "/exe")) {
      return who +
             " is a Go program, and Go reads the time without libc, where libfaketime "
             "cannot move it";
    }
    if (maps.find(loaded) == std::string::npos) {
      return who + " has not loaded libfaketime (" + loaded +
             "): a static binary, or its LD_PRELOAD was cleared";
    }
  }
  return "";
}

}  // namespace locklab
