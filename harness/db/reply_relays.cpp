#include "db/reply_relays.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "checker/clock.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kPollMs = 10;
constexpr size_t kLogTailBytes = 2000;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string tail(const std::string& text) {
  return text.size() > kLogTailBytes ? "..." + text.substr(text.size() - kLogTailBytes) : text;
}

// Written whole and renamed into place: the relay never reads half a number.
void write_delay_file(const std::string& path, int64_t delay_ms) {
  const std::string temp = path + ".new";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << delay_ms << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write the reply-delay file " + temp);
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) throw std::runtime_error("cannot rename " + temp + " to " + path + ": " + ec.message());
}

}  // namespace

std::string nft_relay_script(const std::string& table, const std::string& subnet, int member_port,
                             int relay_port, uint32_t mark) {
  // Output nat: the worker's own connections. Marked packets are the relay's upstream side.
  return "table ip " + table + " {\n  chain out {\n    type nat hook output priority -100;\n" +
         "    meta mark " + std::to_string(mark) + " return\n" + "    ip daddr " + subnet +
         " tcp dport " + std::to_string(member_port) +
         " redirect to :" + std::to_string(relay_port) + "\n  }\n}\n";
}

ReplyRelays::ReplyRelays(Supervisor& supervisor, std::string program, std::string prefix,
                         std::string dir, std::string log_dir, std::string subnet)
    : supervisor_(supervisor),
      program_(std::move(program)),
      prefix_(std::move(prefix)),
      dir_(std::move(dir)),
      log_dir_(std::move(log_dir)),
      subnet_(std::move(subnet)) {}

void ReplyRelays::start(const NetHost& worker) {
  if (relays_.count(worker.role))
    throw std::logic_error("reply relay of " + worker.role + " twice");
  Relay relay;
  relay.delay_file = dir_ + "/relay-" + worker.role + ".delay";
  relay.log = log_dir_ + "/relay-" + worker.role + ".log";
  write_delay_file(relay.delay_file, 0);
  SpawnOptions spawn;
  spawn.argv = {program_,
                "--listen",
                "127.0.0.1:" + std::to_string(kRelayPort),
                "--delay-file",
                relay.delay_file,
                "--mark",
                std::to_string(kRelayMark)};
  spawn.netns = worker.netns;
  spawn.log_path = relay.log;
  relay.pid = supervisor_.spawn(spawn);
  relays_[worker.role] = relay;  // recorded first: stop() ends it whatever happens next
  wait_ready(worker.role, relay);
  run_tool_checked({"nft", "-f", "-"}, worker.netns,
                   nft_relay_script(table(), subnet_, kMemberPort, kRelayPort, kRelayMark));
}

void ReplyRelays::wait_ready(const std::string& worker, const Relay& relay) {
  const int64_t deadline = steady_now_ms() + kReadyTimeoutMs;
  for (;;) {
    const std::string log = read_text(relay.log);
    if (log.rfind("ready ", 0) == 0 || log.find("\nready ") != std::string::npos) return;
    supervisor_.poll();
    if (!supervisor_.running(relay.pid)) {
      throw std::runtime_error("the reply relay of " + worker +
                               " ended before it listened: " + tail(log));
    }
    if (steady_now_ms() > deadline) {
      throw std::runtime_error("the reply relay of " + worker + " did not listen within " +
                               std::to_string(kReadyTimeoutMs) + " ms: " + tail(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
}

void ReplyRelays::add_delay(const std::string& worker, int64_t delay_ms) {
  if (delay_ms < 1 || delay_ms > kDelayMaxMs) {
    throw std::invalid_argument("reply delay " + std::to_string(delay_ms) + " ms outside [1, " +
                                std::to_string(kDelayMaxMs) + "]");
  }
  Relay& relay = relays_.at(worker);
  relay.open_ms.insert(delay_ms);
  write_in_force(relay);
}

void ReplyRelays::remove_delay(const std::string& worker, int64_t delay_ms) {
  Relay& relay = relays_.at(worker);
  const auto it = relay.open_ms.find(delay_ms);
  if (it == relay.open_ms.end()) {
    throw std::logic_error("no " + std::to_string(delay_ms) + " ms reply delay is open on " +
                           worker);
  }
  relay.open_ms.erase(it);
  write_in_force(relay);
}

// The longest open window's delay, or 0 with none open.
void ReplyRelays::write_in_force(const Relay& relay) {
  write_delay_file(relay.delay_file, relay.open_ms.empty() ? 0 : *relay.open_ms.rbegin());
}

std::optional<std::string> ReplyRelays::owner_of(pid_t pid) const {
  for (const auto& [worker, relay] : relays_) {
    if (relay.pid == pid) return "the reply relay of " + worker + " (see " + relay.log + ")";
  }
  return std::nullopt;
}

void ReplyRelays::stop(int64_t grace_ms) {
  for (auto& [worker, relay] : relays_) {
    if (relay.pid <= 0 || !supervisor_.running(relay.pid)) continue;
    supervisor_.signal(relay.pid, SIGTERM);
    if (!supervisor_.wait_exit(relay.pid, grace_ms)) {
      supervisor_.signal(relay.pid, SIGKILL);
      supervisor_.wait_exit(relay.pid, grace_ms);
    }
  }
  relays_.clear();
}

}  // namespace locklab
