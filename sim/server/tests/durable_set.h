// A replica set of real mongosim processes, each with its own --dbpath under one temporary
// folder, that tests can kill (SIGKILL), restart on the same port and dbpath, pause (SIGSTOP)
// and resume (SIGCONT). Talks to members with RawClient over TCP. Every wait is a poll with a
// deadline; nothing sleeps in place of synchronisation.
//
//   DurableSet set(3);            // starts and initiates; throws if no primary is elected
//   int p = set.primary();        // -1 while there is no agreed primary
//   set.pause(p); set.resume(p); set.kill(p); set.restart(p);
//
// Thread rules: one owner thread. The destructor kills every member and removes the folder.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bson/codec.h"
#include "server/tests/mongosim_process.h"
#include "server/tests/raw_client.h"

namespace mongosim::testing {

using bson::Document;
using bson::V;

inline bool reply_is_ok(const std::optional<Document>& reply) {
  return reply && reply->get("ok") != nullptr && reply->get("ok")->truthy();
}

// A write reply that is ok with no write error and no write-concern error.
inline bool write_ok(const std::optional<Document>& reply) {
  return reply_is_ok(reply) && !reply->has("writeErrors") && !reply->has("writeConcernError");
}

inline std::string show(const std::optional<Document>& reply) {
  return reply ? bson::to_json(*reply) : std::string("no reply");
}

// Polls `done` every 20 ms until it is true or the deadline passes; returns its last value.
inline bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// The BSON documents of a file written as concatenated documents (a rollback file).
inline std::vector<Document> read_bson_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<Document> out;
  size_t offset = 0;
  while (offset + 4 <= bytes.size()) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + offset;
    int32_t length = bson::peek_document_length(p, bytes.size() - offset);
    if (length <= 0 || static_cast<size_t>(length) > bytes.size() - offset) {
      throw std::runtime_error("bad document at offset " + std::to_string(offset) + " of " + path);
    }
    auto decoded = bson::decode_document(p, static_cast<size_t>(length));
    if (!decoded.doc) throw std::runtime_error(path + ": " + decoded.error);
    out.push_back(*decoded.doc);
    offset += static_cast<size_t>(length);
  }
  return out;
}

class DurableMember {
 public:
  DurableMember(std::string dbpath, std::string log_path)
      : port_(MongosimProcess::free_port()),
        dbpath_(std::move(dbpath)),
        log_path_(std::move(log_path)) {}
  ~DurableMember() { kill(); }
  DurableMember(const DurableMember&) = delete;
  DurableMember& operator=(const DurableMember&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& dbpath() const { return dbpath_; }
  bool alive() const { return pid_ > 0; }
  // Whether the process is still running (reaps it, and then alive() turns false, if it ended).
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  bool paused() const { return paused_; }

  // Starts on the member's port and dbpath; waits until it accepts connections. The log file
  // is appended to, so one file holds every run.
  void start(const std::vector<std::string>& extra) {
    if (pid_ > 0) throw std::logic_error("member already running");
    std::vector<std::string> args = {MONGOSIM_PATH, "--port", std::to_string(port_), "--dbpath",
                                     dbpath_};
    args.insert(args.end(), extra.begin(), extra.end());
    int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) throw std::runtime_error("cannot open " + log_path_);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(log_fd);
    bool up = poll_until(
        [&] {
          int fd = MongosimProcess::connect_to(port_);
          if (fd >= 0) ::close(fd);
          return fd >= 0 || !running();
        },
        std::chrono::seconds(10));
    if (!up || !running()) {
      throw std::runtime_error("member on port " + std::to_string(port_) +
                               " did not start; log:\n" + log_text());
    }
  }

  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    paused_ = false;
  }
  void pause() {
    if (pid_ > 0 && ::kill(pid_, SIGSTOP) == 0 && wait_until_stopped(pid_)) paused_ = true;
  }
  void resume() {
    if (pid_ > 0 && ::kill(pid_, SIGCONT) == 0) paused_ = false;
  }

  std::string log_text() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // A command with a fresh connection; nullopt if the member cannot be reached or answer.
  std::optional<Document> command(const Document& cmd, const std::string& db = "admin") const {
    if (pid_ <= 0 || paused_) return std::nullopt;
    try {
      RawClient raw(port_);
      return raw.command(cmd, db);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

 private:
  int port_;
  std::string dbpath_;
  std::string log_path_;
  pid_t pid_ = -1;
  bool paused_ = false;
};

class DurableSet {
 public:
  static constexpr int32_t kElectionTimeoutMs = 1500;
  static constexpr int32_t kHeartbeatIntervalMs = 200;
  static constexpr auto kConvergeTimeout = std::chrono::seconds(40);

  // extra_settings: replica-set settings added to the config's (e.g. catchUpTimeoutMillis).
  explicit DurableSet(int members, Document extra_settings = {})
      : extra_settings_(std::move(extra_settings)) {
    char root[] = "/tmp/mongosim-durable-XXXXXX";
    if (::mkdtemp(root) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = root;
    try {
      start_and_initiate(members);
    } catch (...) {
      remove_all();  // the destructor does not run for a constructor that throws
      throw;
    }
  }

  ~DurableSet() { remove_all(); }

  int size() const { return static_cast<int>(members_.size()); }
  DurableMember& member(int i) { return *members_[static_cast<size_t>(i)]; }

  void kill(int i) { member(i).kill(); }
  void restart(int i) { member(i).start(args()); }
  void pause(int i) { member(i).pause(); }
  void resume(int i) { member(i).resume(); }

  bool wait_for(const std::function<bool()>& done,
                std::chrono::milliseconds timeout = kConvergeTimeout) {
    return poll_until(done, timeout);
  }

  std::optional<Document> hello(int i) { return member(i).command(Document{{"hello", V(1)}}); }

  // The member that every running, unpaused member agrees is the writable primary, or -1.
  int primary() {
    int writable = -1;
    std::vector<std::string> primaries;
    for (int i = 0; i < size(); ++i) {
      if (!member(i).alive() || member(i).paused()) continue;
      auto h = hello(i);
      if (!h) return -1;
      if (h->get("isWritablePrimary")->truthy()) {
        if (writable >= 0) return -1;
        writable = i;
      }
      const bson::Value* p = h->get("primary");
      primaries.push_back(p != nullptr && p->is_string() ? p->as_string() : "");
    }
    if (writable < 0) return -1;
    for (const auto& p : primaries) {
      if (p != member(writable).host()) return -1;
    }
    return writable;
  }

  // Inserts one document; returns the reply (nullopt if the member did not answer).
  std::optional<Document> insert(int i, const Document& doc, const Document& write_concern) {
    return member(i).command(Document{{"insert", V("c")},
                                      {"documents", V(bson::Array{V(doc)})},
                                      {"writeConcern", V(write_concern)}},
                             "db");
  }

  // Polls until the agreed primary acknowledges a fresh document under w:"majority" (wtimeout
  // 5 s); returns that primary, or -1 at the deadline with the last reply in `last`.
  // Each attempt inserts a new _id: an attempt answered with a write-concern error, or not at
  // all, may still have been applied and replicate (an indeterminate write), and retrying the
  // same _id would then fail with E11000 forever although the set takes writes.
  int wait_for_majority_write(std::optional<Document>* last = nullptr) {
    const Document majority{{"w", V("majority")}, {"wtimeout", V(int32_t{5000})}};
    int primary_index = -1;
    int attempt = 0;
    std::optional<Document> reply;
    bool taken = wait_for([&] {
      primary_index = primary();
      if (primary_index < 0) return false;
      std::string id = "majority-probe-" + std::to_string(++attempt);
      reply = insert(primary_index, Document{{"_id", V(id)}}, majority);
      return write_ok(reply);
    });
    if (last != nullptr) *last = reply;
    return taken ? primary_index : -1;
  }

  // The _ids in db.c on member i (any state: the read says secondaryOk); nullopt if it did not
  // answer.
  std::optional<std::vector<std::string>> ids(int i) {
    auto reply = member(i).command(
        Document{{"find", V("c")},
                 {"batchSize", V(int32_t{100000})},
                 {"$readPreference", V(Document{{"mode", V("secondaryPreferred")}})}},
        "db");
    if (!reply_is_ok(reply)) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& d : reply->get("cursor")->as_document().get("firstBatch")->as_array()) {
      out.push_back(bson::to_json(*d.as_document().get("_id")));
    }
    return out;
  }

  // The member's state in its own hello: "PRIMARY", "SECONDARY", "OTHER" or "" if unreachable.
  std::string state(int i) {
    auto h = hello(i);
    if (!h) return "";
    if (h->get("isWritablePrimary")->truthy()) return "PRIMARY";
    const bson::Value* s = h->get("secondary");
    return s != nullptr && s->truthy() ? "SECONDARY" : "OTHER";
  }

  // Every member's log without the per-connection lines, the last kLogTailBytes of each.
  std::string logs() const {
    constexpr size_t kLogTailBytes = 12'000;
    std::string out;
    for (size_t i = 0; i < members_.size(); ++i) {
      out += "--- member " + std::to_string(i) + " log (tail):\n";
      std::istringstream lines(members_[i]->log_text());
      std::string text;
      for (std::string line; std::getline(lines, line);) {
        if (line.find(R"("c":"NETWORK")") == std::string::npos) text += line + "\n";
      }
      out += text.size() > kLogTailBytes ? text.substr(text.size() - kLogTailBytes) : text;
      if (members_[i]->alive() && !members_[i]->paused()) {
        auto status = members_[i]->command(Document{{"replSetGetStatus", V(1)}});
        out += "--- member " + std::to_string(i) + " replSetGetStatus: " +
               (status ? bson::to_json(*status) : std::string("(no answer)")) + "\n";
      }
    }
    return out;
  }

 private:
  void start_and_initiate(int members) {
    for (int i = 0; i < members; ++i) {
      std::string name = root_ + "/m" + std::to_string(i);
      members_.push_back(std::make_unique<DurableMember>(name, name + ".log"));
    }
    for (auto& m : members_) m->start(args());
    bson::Array hosts;
    for (int i = 0; i < members; ++i) {
      hosts.push_back(V(Document{{"_id", V(int32_t{i})}, {"host", V(members_[i]->host())}}));
    }
    Document settings{{"electionTimeoutMillis", V(kElectionTimeoutMs)},
                      {"heartbeatIntervalMillis", V(kHeartbeatIntervalMs)}};
    for (const auto& [k, v] : extra_settings_) settings.append(k, v);
    Document config{
        {"_id", V("rs0")}, {"members", V(std::move(hosts))}, {"settings", V(std::move(settings))}};
    if (!reply_is_ok(members_[0]->command(Document{{"replSetInitiate", V(config)}}))) {
      throw std::runtime_error("replSetInitiate failed; log:\n" + members_[0]->log_text());
    }
    if (!wait_for([&] { return primary() >= 0; })) {
      throw std::runtime_error("no primary elected;\n" + logs());
    }
  }

  void remove_all() {
    members_.clear();  // kills every member
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  static std::vector<std::string> args() { return {"--replSet", "rs0"}; }

  Document extra_settings_;
  std::string root_;
  std::vector<std::unique_ptr<DurableMember>> members_;
};

}  // namespace mongosim::testing
