#include "run/clock_reach.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace locklab {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSectionNamesBytesMax = 1 << 20;  // a section-name table larger is not an ELF's
constexpr size_t kNotesBytesMax = 1 << 16;         // per PT_NOTE segment read
constexpr size_t kHeadersMax = 1 << 16;            // program or section headers
constexpr size_t kMapsBytesMax = 64 << 20;         // a process's memory map as text
constexpr uint32_t kGoBuildIdNote = 4;             // the Go linker's build-id note type

// Reads exactly `size` bytes at `offset`; false when the file is shorter or unreadable.
bool read_at(int fd, void* into, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, static_cast<char*>(into) + done, size - done,
                              static_cast<off_t>(offset + done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string read_bytes(int fd, uint64_t offset, uint64_t size, size_t max_bytes) {
  if (size > max_bytes) return "";
  std::string bytes(size, '\0');
  return read_at(fd, bytes.data(), bytes.size(), offset) ? bytes : "";
}

// Whether a note segment holds a note named "Go" of the Go build-id type.
bool has_go_note(const std::string& notes) {
  size_t at = 0;
  const auto aligned = [](size_t n) { return (n + 3) & ~size_t{3}; };
  while (at + 12 <= notes.size()) {
    uint32_t name_size = 0, desc_size = 0, type = 0;
    std::memcpy(&name_size, notes.data() + at, 4);
    std::memcpy(&desc_size, notes.data() + at + 4, 4);
    std::memcpy(&type, notes.data() + at + 8, 4);
    const size_t name_at = at + 12;
    if (name_size > notes.size() - name_at) return false;
    // The Go linker names it "Go\0\0" (4 bytes); "Go\0" is taken too.
    if (type == kGoBuildIdNote && (name_size == 3 || name_size == 4) &&
        notes.compare(name_at, 3, std::string("Go\0", 3)) == 0) {
      return true;
    }
    const size_t next = name_at + aligned(name_size) + aligned(desc_size);
    if (next <= at || next > notes.size()) return false;
    at = next;
  }
  return false;
}

// ELF facts from one class's headers (Ehdr/Phdr/Shdr: the Elf64_* or the Elf32_* types).
template <typename Ehdr, typename Phdr, typename Shdr>
ElfFacts read_facts(int fd) {
  Ehdr header{};
  if (!read_at(fd, &header, sizeof header, 0)) return {};
  ElfFacts facts{.elf = true};
  if (header.e_phentsize == sizeof(Phdr) && header.e_phnum < kHeadersMax) {
    for (size_t i = 0; i < header.e_phnum; ++i) {
      Phdr segment{};
      if (!read_at(fd, &segment, sizeof segment, header.e_phoff + i * sizeof(Phdr))) return {};
      if (segment.p_type == PT_INTERP) {
        facts.dynamic = true;
        facts.interpreter = read_bytes(fd, segment.p_offset, segment.p_filesz, 4096).c_str();
      }
      if (segment.p_type == PT_NOTE &&
          has_go_note(read_bytes(fd, segment.p_offset, segment.p_filesz, kNotesBytesMax))) {
        facts.go = true;
      }
    }
  }
  if (header.e_shentsize != sizeof(Shdr) || header.e_shstrndx >= header.e_shnum) return facts;
  Shdr names_section{};
  if (!read_at(fd, &names_section, sizeof names_section,
               header.e_shoff + header.e_shstrndx * sizeof(Shdr))) {
    return facts;
  }
  const std::string names =
      read_bytes(fd, names_section.sh_offset, names_section.sh_size, kSectionNamesBytesMax);
  for (size_t i = 0; i < header.e_shnum && !names.empty(); ++i) {
    Shdr section{};
    if (!read_at(fd, &section, sizeof section, header.e_shoff + i * sizeof(Shdr))) break;
    if (section.sh_name >= names.size()) break;
    const std::string name(names.c_str() + section.sh_name);
    if (name == ".go.buildinfo" || name == ".note.go.buildid") facts.go = true;
  }
  return facts;
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

// The files a memory map maps (the text after the fifth field of each line).
std::set<std::string> mapped_files(const std::string& maps) {
  std::set<std::string> files;
  std::istringstream lines(maps);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos) files.insert(line.substr(slash));
  }
  return files;
}

// Why an executable with these facts escapes libfaketime whatever is preloaded; "" when it may
// not (a dynamic non-Go ELF, or not an ELF at all: a script's interpreter is checked instead).
std::string why_unreachable(const ElfFacts& facts) {
  if (facts.go) {
    return "is a Go program, and Go reads the time without libc, where libfaketime cannot move it";
  }
  if (facts.elf && !facts.dynamic) {
    return "is a static binary: no loader runs to preload libfaketime into it";
  }
  return "";
}

}  // namespace

ElfFacts elf_facts(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  unsigned char ident[EI_NIDENT] = {};
  ElfFacts facts;
  if (read_at(fd, ident, sizeof ident, 0) && std::memcmp(ident, ELFMAG, SELFMAG) == 0) {
    if (ident[EI_CLASS] == ELFCLASS64) facts = read_facts<Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr>(fd);
    if (ident[EI_CLASS] == ELFCLASS32) facts = read_facts<Elf32_Ehdr, Elf32_Phdr, Elf32_Shdr>(fd);
  }
  ::close(fd);
  return facts;
}

bool proc_is_ours(const std::string& proc) {
  std::error_code error;
  return fs::read_symlink(proc + "/self", error).string() == std::to_string(::getpid());
}

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

std::string check_worker_program(const std::string& program) {
  const std::string why = why_unreachable(elf_facts(program));
  return why.empty() ? "" : program + " " + why;
}

namespace {

// Why one process of the group escapes libfaketime; "" when it does not, or when it ended
// while being read, or is still being loaded.
std::string process_unreachable(const std::string& proc, pid_t pid, const std::string& faketime,
                                const std::set<std::string>& preloads) {
  const std::string dir = proc + "/" + std::to_string(pid);
  std::error_code error;
  const std::string exe = fs::read_symlink(dir + "/exe", error).string();
  const std::string maps = read_bounded(dir + "/maps", kMapsBytesMax);
  const ElfFacts facts = elf_facts(dir + "/exe");
  const std::string who = "process " + std::to_string(pid) + " (" + exe + ")";
  if (error || maps.empty() || !facts.elf) {
    const std::optional<Stat> stat = read_stat(proc, std::to_string(pid));
    if (!stat || stat->state == 'Z') return "";  // ended while being read
    return who +
           " cannot be checked: its executable or memory map cannot be read here (an "
           "executable its user may run but not read?)";
  }
  const std::set<std::string> files = mapped_files(maps);
  const std::string loader = canonical_or_same(facts.interpreter);
  const auto library = [&](const std::string& f) {
    return f != exe && f != loader && preloads.count(f) == 0 && f.find(".so") != std::string::npos;
  };
  if (facts.go) return who + " " + why_unreachable(facts);
  for (const std::string& f : files) {
    if (library(f) && elf_facts(f).go) {
      return who + " has loaded " + f + ", Go code, which reads the time without libc";
    }
  }
  if (files.count(faketime) > 0) return "";  // loaded (a program run through ld.so too)
  if (const std::string why = why_unreachable(facts); !why.empty()) return who + " " + why;
  if (std::any_of(files.begin(), files.end(), library)) {
    return who + " has not loaded libfaketime (" + faketime + "): its LD_PRELOAD was cleared";
  }
  return "";  // only the loader and the preloads so far: still being loaded
}

}  // namespace

std::string clock_fault_unreachable(pid_t pgid, const std::string& library,
                                    const std::vector<std::string>& preloads,
                                    const std::string& proc) {
  if (!proc_is_ours(proc)) {
    return "it cannot be checked: " + proc +
           " shows another PID namespace's processes (a sandbox without a /proc of its own)";
  }
  const std::string faketime = canonical_or_same(library);
  std::set<std::string> expected;  // what a process still being loaded may have mapped already
  for (const std::string& p : preloads) expected.insert(canonical_or_same(p));
  for (const pid_t pid : process_group(pgid, proc)) {
    if (std::string why = process_unreachable(proc, pid, faketime, expected); !why.empty()) {
      return why;
    }
  }
  return "";
}

}  // namespace locklab
