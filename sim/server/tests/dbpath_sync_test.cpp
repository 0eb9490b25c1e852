// A new --dbpath's directory entries survive a machine crash only once their parent directories
// are synced: DIR itself when the server creates it (an fsync of its parent), DIR/journal after
// its mkdir (an fsync of DIR), the journal file after its creation (an fsync of DIR/journal).
// Every directory the server makes (rollback folders too) goes through the same make_dir. Checked
// on the real server's system calls as strace records them. Model: it observes the calls, not the
// disk — a machine crash cannot be made here, and a file system that orders metadata (ext4
// data=ordered) would hide a missing sync from any crash test on this machine anyway. Skipped, with
// the reason, where strace is missing or cannot trace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStrace = "/usr/bin/strace";

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The index of the first line at or after `from` containing every needle; -1 if none.
long find_line(const std::vector<std::string>& lines, size_t from,
               const std::vector<std::string>& needles) {
  for (size_t i = from; i < lines.size(); ++i) {
    bool all = true;
    for (const auto& n : needles) all = all && lines[i].find(n) != std::string::npos;
    if (all) return static_cast<long>(i);
  }
  return -1;
}

std::string show(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(DbPathSync, NewDirectoryEntriesAreSyncedThroughTheirParents) {
  if (::access(kStrace, X_OK) != 0) GTEST_SKIP() << kStrace << " is missing";
  const locklab::testkit::TempDir dir("mongosim-dbpath-sync");
  const std::string root = dir.path();
  const std::string db = root + "/db";
  const std::string trace = root + "/trace.txt";
  {
    // -y shows each descriptor's path, so an fsync names the directory it synced.
    MongosimNode server({.args = {"--replSet", "rs0"},
                         .dbpath = db,
                         .launcher = {kStrace, "-f", "-qq", "-y", "-o", trace, "-e",
                                      "trace=mkdir,mkdirat,openat,fsync,fdatasync"}});
    // strace outlives a SIGTERM while its tracee runs: the server itself is stopped first.
    std::ifstream children("/proc/" + std::to_string(server.pid()) + "/task/" +
                           std::to_string(server.pid()) + "/children");
    for (pid_t child = 0; children >> child;) ::kill(child, SIGTERM);
    server.stop();
  }
  std::vector<std::string> lines = lines_of(trace);
  if (lines.empty()) GTEST_SKIP() << "strace recorded nothing (tracing not permitted here?)";

  long mkdir_db = find_line(lines, 0, {"mkdir", "\"" + db + "\"", "= 0"});
  ASSERT_GE(mkdir_db, 0) << show(lines);
  long sync_root = find_line(lines, static_cast<size_t>(mkdir_db), {"fsync(", "<" + root + ">"});
  EXPECT_GE(sync_root, 0) << "DIR's own entry is never synced through its parent:\n" << show(lines);

  long mkdir_journal = find_line(lines, 0, {"mkdir", "\"" + db + "/journal\"", "= 0"});
  ASSERT_GE(mkdir_journal, 0) << show(lines);
  long sync_db = find_line(lines, static_cast<size_t>(mkdir_journal), {"fsync(", "<" + db + ">"});
  EXPECT_GE(sync_db, 0) << "DIR/journal's entry is never synced through DIR:\n" << show(lines);

  long create_journal = find_line(lines, 0, {"openat(", db + "/journal/oplog.journal", "O_CREAT"});
  ASSERT_GE(create_journal, 0) << show(lines);
  long sync_journal_dir =
      find_line(lines, static_cast<size_t>(create_journal), {"fsync(", "<" + db + "/journal>"});
  EXPECT_GE(sync_journal_dir, 0) << "the journal file's entry is never synced through its folder:\n"
                                 << show(lines);
}

}  // namespace
}  // namespace mongosim::testing
