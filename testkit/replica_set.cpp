#include "replica_set.h"

#include <sstream>
#include <stdexcept>

#include "db/admin.h"
#include "db/db.h"
#include "run/process.h"

namespace locklab::testkit {
namespace {

int64_t steady_ms(Deadline deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline.time_since_epoch()).count();
}

// Whether the node's process is alive: started, and neither gone nor a zombie not yet reaped
// (a crashed member). Reads /proc only, so any thread may ask.
bool alive(const MongosimNode& node) {
  const char state = node.pid() > 0 ? process_state(node.pid()) : 0;
  return state != 0 && state != 'Z' && state != 'X';
}

bool ok(const nlohmann::json& reply) {
  return reply_ok(reply);
}

}  // namespace

// The harness's Db over the kit's members, so that the set is initiated, "ready" and "primary"
// as the harness does it (Db::initiate, Db::wait_ready, Db::primary) and not by a copy. Only
// what those ask is answered; the levers belong to ReplicaSet, so every other method refuses.
class ReadinessDb final : public Db {
 public:
  ReadinessDb(ReplicaSet& set, const SetOptions& options)
      : Db(config(set.size(), set.set_name(), options)), set_(set) {}

  void initiate_set() const { initiate(); }
  void wait(int64_t deadline_ms) const { wait_ready(deadline_ms); }

  std::string name() const override { return "testkit"; }
  std::string member_program() const override { return mongosim_program(); }
  std::optional<std::string> supports(FaultKind) const override { return "testkit: no faults"; }
  void start() override { refuse(); }
  void stop(int64_t) override {}
  void teardown() override {}
  std::string host(int member) const override { return set_.member(member).host(); }
  std::string uri(const std::string&) const override { return set_.uri(); }
  std::string worker_netns(const std::string&) const override { return ""; }
  void kill_member(int) override { refuse(); }
  void restart_member(int) override { refuse(); }
  void pause_member(int) override { refuse(); }
  void resume_member(int) override { refuse(); }
  bool running(int member) const override { return alive(set_.member(member)); }
  bool paused(int member) const override { return set_.member(member).paused(); }
  int64_t set_clock_offset(int, int64_t) override { refuse(); }
  int64_t clock_offset(int) const override { return 0; }

 protected:
  std::string log_tail(int) const override { return set_.logs(); }

 private:
  static DbConfig config(int members, const std::string& set_name, const SetOptions& options) {
    DbConfig c;
    c.members = members;
    c.set_name = set_name;
    c.ready_timeout_ms = options.ready_timeout.count();
    c.election_timeout_ms = options.election_timeout_ms;
    c.heartbeat_interval_ms = options.heartbeat_interval_ms;
    c.priorities = options.priorities;
    c.settings = options.settings;
    return c;
  }
  [[noreturn]] static void refuse() {
    throw std::logic_error("the test kit's set is driven through ReplicaSet, not Db");
  }
  const ReplicaSet& set_;
};

ReplicaSet::ReplicaSet(SetOptions options)
    : options_(std::move(options)), set_name_(unique_set_name()) {
  if (options_.members < 1 || options_.members > kMaxMembers) {
    throw std::invalid_argument("a test set has 1.." + std::to_string(kMaxMembers) +
                                " members, not " + std::to_string(options_.members));
  }
  if (!options_.priorities.empty() &&
      options_.priorities.size() != static_cast<size_t>(options_.members)) {
    throw std::invalid_argument("SetOptions::priorities must name every member");
  }
  if (options_.dbpaths) dir_ = std::make_unique<TempDir>("locklab-set");
  for (int i = 0; i < options_.members; ++i) {
    NodeOptions node;
    node.program = options_.program;
    node.args = {"--replSet", set_name_};
    node.args.insert(node.args.end(), options_.args.begin(), options_.args.end());
    node.start_timeout = options_.start_timeout;
    if (dir_) {
      node.dbpath = dir_->file("m" + std::to_string(i));
      node.log_path = node.dbpath + ".log";
    }
    members_.push_back(std::make_unique<MongosimNode>(std::move(node)));
  }
  for (int i : options_.start_paused) pause(i);
  db_ = std::make_unique<ReadinessDb>(*this, options_);
  initiate();
  wait_ready(after(options_.ready_timeout));
}

ReplicaSet::~ReplicaSet() {
  db_.reset();
  members_.clear();  // kills every member before the dbpaths go
}

std::string ReplicaSet::uri(const std::string& options) const {
  std::string out = "mongodb://";
  for (int i = 0; i < size(); ++i) out += (i ? "," : "") + member(i).host();
  return out + "/?replicaSet=" + set_name_ + (options.empty() ? "" : "&" + options);
}

void ReplicaSet::initiate() {
  // Not Db::start's prompt_first_election: a test's set elects its primary itself (priorities,
  // members started paused), and the tests of elections depend on it.
  try {
    db_->initiate_set();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + "\n" + logs());
  }
}

void ReplicaSet::wait_ready(Deadline deadline) {
  db_->wait(steady_ms(deadline));
  if (!poll_until(deadline, [&] { return primary() >= 0; })) {
    throw std::runtime_error("ready, but the members never agreed on the primary\n" + logs());
  }
}

bool ReplicaSet::reachable(int i) const {
  return alive(member(i)) && !member(i).paused();
}

std::optional<nlohmann::json> ReplicaSet::hello(int i) const {
  if (!reachable(i)) return std::nullopt;
  nlohmann::json reply = member(i).try_command("admin", {{"hello", 1}});
  if (!ok(reply)) return std::nullopt;
  return reply;
}

int ReplicaSet::primary() const {
  const int p = db_->primary();  // the harness's: the writable primary of the latest election
  if (p < 0) return -1;
  for (int i = 0; i < size(); ++i) {
    if (!reachable(i)) continue;
    const std::optional<nlohmann::json> h = hello(i);
    if (!h || h->value("primary", "") != member(p).host()) return -1;
  }
  return p;
}

int ReplicaSet::wait_for_primary(Deadline deadline, int not_this) const {
  int found = -1;
  poll_until(deadline, [&] {
    found = primary();
    return found >= 0 && found != not_this;
  });
  return found != not_this ? found : -1;
}

std::string ReplicaSet::logs() const {
  std::string out;
  for (int i = 0; i < size(); ++i) {
    out += "--- member " + std::to_string(i) + " log (tail):\n";
    std::istringstream lines(member(i).log_text());
    std::string text;
    for (std::string line; std::getline(lines, line);) {
      if (line.find(R"("c":"NETWORK")") == std::string::npos) text += line + "\n";
    }
    out += text.size() > kLogTailBytes ? text.substr(text.size() - kLogTailBytes) : text;
    if (reachable(i)) {
      const nlohmann::json status = member(i).try_command("admin", {{"replSetGetStatus", 1}});
      out += "--- member " + std::to_string(i) + " replSetGetStatus: " + status.dump() + "\n";
    }
  }
  return out;
}

}  // namespace locklab::testkit
