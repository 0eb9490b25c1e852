#include "mongosim_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <mongoc/mongoc.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <thread>

#include "bson_ptr.h"

namespace mongolock::test {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr auto kStopDeadline = std::chrono::seconds(5);

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    throw std::runtime_error("cannot bind a probe socket");
  }
  socklen_t length = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  close(fd);
  return ntohs(addr.sin_port);
}

bool accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

std::string log_path_for(int port) {
  return "/tmp/mongolock-test-mongosim-" + std::to_string(port) + ".log";
}

pid_t spawn(int port) {
  const std::string port_text = std::to_string(port);
  const std::string log_path = log_path_for(port);
  const pid_t pid = fork();
  if (pid == 0) {
    // A test process that dies without running its destructors must not orphan the server.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The server's log goes to a file, keeping test output readable.
    const int log_fd = open(log_path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (log_fd >= 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      close(log_fd);
    }
    execl(MONGOSIM_PATH, MONGOSIM_PATH, "--port", port_text.c_str(), "--replSet", "rs0",
          "--bind_ip", "127.0.0.1", "--setParameter", "ttlMonitorSleepSecs=1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid < 0) throw std::runtime_error("fork failed");
  return pid;
}

void reap(pid_t pid) {
  kill(pid, SIGCONT);
  kill(pid, SIGTERM);
  const auto deadline = Clock::now() + kStopDeadline;
  while (Clock::now() < deadline) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(kPollInterval);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace

std::unique_ptr<MongosimProcess> MongosimProcess::start(bool initiate_alone) {
  if (std::string(MONGOSIM_PATH).empty()) return nullptr;
  mongoc_init();
  const int port = free_port();
  std::unique_ptr<MongosimProcess> process(new MongosimProcess(spawn(port), port));
  const auto deadline = Clock::now() + kStartDeadline;
  while (!accepts(port)) {
    if (waitpid(process->pid_, nullptr, WNOHANG) == process->pid_) {
      process->pid_ = -1;
      throw std::runtime_error("mongosim exited during start-up on port " + std::to_string(port));
    }
    if (Clock::now() > deadline) throw std::runtime_error("mongosim did not accept connections");
    std::this_thread::sleep_for(kPollInterval);
  }
  if (initiate_alone) process->initiate();
  return process;
}

MongosimProcess::~MongosimProcess() {
  if (pid_ > 0) reap(pid_);
  std::remove(log_path_for(port_).c_str());
}

std::string MongosimProcess::uri(const std::string& extra) const {
  return "mongodb://127.0.0.1:" + std::to_string(port_) + "/?replicaSet=rs0" + extra;
}

void MongosimProcess::pause() {
  kill(pid_, SIGSTOP);
}
void MongosimProcess::resume() {
  kill(pid_, SIGCONT);
}

std::string MongosimProcess::command(const std::string& db, const std::string& json) const {
  const std::string direct = "mongodb://127.0.0.1:" + std::to_string(port_) +
                             "/?directConnection=true&serverSelectionTimeoutMS=5000";
  mongoc_client_t* client = mongoc_client_new(direct.c_str());
  if (client == nullptr) throw std::runtime_error("bad test URI " + direct);
  mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
  bson_error_t error;
  bson_t* cmd = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                   static_cast<ssize_t>(json.size()), &error);
  if (cmd == nullptr) {
    mongoc_client_destroy(client);
    throw std::runtime_error("bad test command JSON: " + json);
  }
  bson_t reply;
  const bool ok = mongoc_client_command_simple(client, db.c_str(), cmd, nullptr, &reply, &error);
  const std::string text = detail::to_json(reply);
  bson_destroy(&reply);
  bson_destroy(cmd);
  mongoc_client_destroy(client);
  if (!ok) throw std::runtime_error(json + " failed: " + error.message + " reply " + text);
  return text;
}

int64_t MongosimProcess::command_total(const std::string& name) const {
  const std::string reply_json = command("admin", R"({"serverStatus": 1})");
  bson_error_t error;
  bson_t* reply = bson_new_from_json(reinterpret_cast<const uint8_t*>(reply_json.data()),
                                     static_cast<ssize_t>(reply_json.size()), &error);
  if (reply == nullptr) throw std::runtime_error("unparsable serverStatus reply");
  detail::Bson owned(reply);
  const std::string path = "metrics.commands." + name + ".total";
  return detail::find_int64(*owned, path.c_str()).value_or(0);
}

void MongosimProcess::initiate() const {
  command("admin",
          R"({"replSetInitiate": {"_id": "rs0", "members": [{"_id": 0, "host": "127.0.0.1:)" +
              std::to_string(port_) + R"("}]}})");
  const auto deadline = Clock::now() + kStartDeadline;
  while (command("admin", R"({"hello": 1})").find("\"isWritablePrimary\" : true") ==
         std::string::npos) {
    if (Clock::now() > deadline) throw std::runtime_error("mongosim never became primary");
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace mongolock::test
