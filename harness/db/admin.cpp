#include "db/admin.h"

#include <fcntl.h>
#include <mongoc/mongoc.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "bson_owner.h"
#include "run/process.h"

namespace locklab {
namespace {

using mongolock::bson::Bson;
using mongolock::bson::BsonReply;

constexpr int64_t kAdminTimeoutMs = 2000;
constexpr const char* kHarnessAppName = "locklab-harness";

nlohmann::json to_json(const bson_t* doc) {
  size_t length = 0;
  char* text = bson_as_relaxed_extended_json(doc, &length);
  if (!text) return {{"ok", 0}, {"errmsg", "reply is not valid UTF-8"}};
  nlohmann::json out = nlohmann::json::parse(text, text + length, nullptr, false);
  bson_free(text);
  return out;
}

// A direct, single-threaded connection's URI with the harness's appname and bounded timeouts.
std::string admin_uri(const std::string& host) {
  return "mongodb://" + host + "/?directConnection=true&appname=" + kHarnessAppName +
         "&serverSelectionTimeoutMS=" + std::to_string(kAdminTimeoutMs) +
         "&connectTimeoutMS=" + std::to_string(kAdminTimeoutMs) +
         "&socketTimeoutMS=" + std::to_string(kAdminTimeoutMs * 5);
}

// Runs one command on an open client; the reply, with ok 0 and errmsg on failure.
nlohmann::json client_command(mongoc_client_t* client, const std::string& database,
                              const nlohmann::ordered_json& command) {
  bson_error_t error;
  const std::string text = command.dump();
  const Bson cmd(bson_new_from_json(reinterpret_cast<const uint8_t*>(text.data()),
                                    static_cast<ssize_t>(text.size()), &error));
  if (!cmd) throw std::runtime_error("bad command " + text + ": " + error.message);
  BsonReply reply;
  const bool ok = mongoc_client_command_simple(client, database.c_str(), cmd.get(), nullptr,
                                               reply.out(), &error);
  nlohmann::json out = to_json(reply.get());
  if (!ok) {
    if (!out.is_object()) out = nlohmann::json::object();
    out["ok"] = 0;
    if (!out.contains("errmsg")) out["errmsg"] = error.message;
  }
  return out;
}

}  // namespace

// The electionId of a primary's hello as comparable text ("" when absent). ObjectId hex of one
// length orders as the term it encodes.
std::string election_id(const nlohmann::json& hello) {
  if (!hello.contains("electionId")) return "";
  const nlohmann::json& id = hello["electionId"];
  return id.is_object() ? id.value("$oid", "") : id.dump();
}

// One command on a fresh single-threaded client in the calling thread (so its sockets are
// created in whatever namespace the thread is in).
nlohmann::json direct_command(const std::string& host, const std::string& database,
                              const nlohmann::ordered_json& command) {
  const std::string uri = admin_uri(host);
  bson_error_t error;
  const std::string text = command.dump();
  const Bson cmd(bson_new_from_json(reinterpret_cast<const uint8_t*>(text.data()),
                                    static_cast<ssize_t>(text.size()), &error));
  if (!cmd) throw std::runtime_error("bad admin command " + text + ": " + error.message);
  mongoc_client_t* client = mongoc_client_new(uri.c_str());
  if (!client) throw std::runtime_error("bad admin URI " + uri);
  mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
  BsonReply reply;
  const bool ok = mongoc_client_command_simple(client, database.c_str(), cmd.get(), nullptr,
                                               reply.out(), &error);
  mongoc_client_destroy(client);
  nlohmann::json out = to_json(reply.get());
  if (!ok) {
    if (!out.is_object() || out.empty()) out = nlohmann::json::object();
    out["ok"] = 0;
    if (!out.contains("errmsg")) out["errmsg"] = error.message;
    if (!out.contains("code")) out["code"] = error.code;
  }
  return out;
}

// hello, find at majority, hello, all on one single-threaded client with a direct connection
// (one socket): the member answered the read as writable primary in one term. The find waits
// (afterClusterTime, bounded by kConfirmedFindCommitWaitMs) until the commit point reaches what
// the primary had applied at the first hello: a write acknowledged at w:1 just before the read
// is then in it, as it will be in the set once the secondaries have it; one that cannot be
// committed in time makes the read fail, never a final state that leaves it out.
nlohmann::json confirmed_find(const std::string& host, const std::string& database,
                              const std::string& collection, const std::string& id) {
  const std::string uri = admin_uri(host);
  mongoc_client_t* client = mongoc_client_new(uri.c_str());
  if (!client) throw std::runtime_error("bad admin URI " + uri);
  mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
  std::unique_ptr<mongoc_client_t, void (*)(mongoc_client_t*)> owned(client, mongoc_client_destroy);
  auto primary_hello = [&](const char* when) {
    nlohmann::json hello = client_command(client, "admin", {{"hello", 1}});
    if (!reply_ok(hello) || !hello.value("isWritablePrimary", false)) {
      throw std::runtime_error(host + " is not writable primary " + when + " the read");
    }
    return hello;
  };
  const nlohmann::json hello = primary_hello("before");
  const nlohmann::json* applied = nullptr;
  if (const auto p = nlohmann::json::json_pointer("/lastWrite/opTime/ts"); hello.contains(p)) {
    applied = &hello.at(p);
  }
  if (applied == nullptr || !applied->is_object() || !applied->contains("$timestamp")) {
    throw std::runtime_error(host + "'s hello has no lastWrite.opTime.ts timestamp");
  }
  const nlohmann::json found =
      client_command(client, database,
                     {{"find", collection},
                      {"filter", {{"_id", id}}},
                      {"limit", 1},
                      {"readConcern", {{"level", "majority"}, {"afterClusterTime", *applied}}},
                      {"maxTimeMS", kConfirmedFindCommitWaitMs}});
  if (!reply_ok(found)) {
    throw std::runtime_error("find on " + host + " failed: " + found.value("errmsg", found.dump()));
  }
  const std::string before = election_id(hello);
  const std::string after = election_id(primary_hello("after"));
  if (after != before) {
    throw std::runtime_error(host + " changed term during the read (" + before + " -> " + after +
                             ")");
  }
  const nlohmann::json& batch = found["cursor"]["firstBatch"];
  return batch.empty() ? nlohmann::json(nullptr) : batch[0];
}

bool reply_ok(const nlohmann::json& reply) {
  return reply.is_object() && reply.contains("ok") && reply["ok"].is_number() &&
         reply["ok"].get<double>() == 1.0;
}

namespace {

// The driver warns "Falling back to malloc for counters." at mongoc_init whenever it does not use
// /dev/shm, asked or not; that line would open every worker's log. Everything else goes to the
// driver's default handler (whoever inits later may install their own).
void drop_counters_warning(mongoc_log_level_t level, const char* domain, const char* message,
                           void* data) {
  if (std::strstr(message, "Falling back to malloc for counters") != nullptr) return;
  mongoc_log_default_handler(level, domain, message, data);
}

}  // namespace

void keep_driver_out_of_shm(char** argv) {
  mongoc_log_set_handler(drop_counters_warning, nullptr);
  const char* set = std::getenv("MONGOC_DISABLE_SHM");
  if (set != nullptr && std::string_view(set) == "1") return;
  if (setenv("MONGOC_DISABLE_SHM", "1", 1) != 0) {
    throw std::runtime_error(std::string("cannot set MONGOC_DISABLE_SHM: ") + std::strerror(errno));
  }
  if (argv == nullptr) return;
  // The driver's load-time initializer already made /dev/shm/mongoc-<pid>: remove it, and start
  // this program again (same pid, same arguments) so its initializer reads the variable.
  mongoc_cleanup();
  execv("/proc/self/exe", argv);
  const int e = errno;
  throw std::runtime_error(std::string("cannot restart /proc/self/exe with MONGOC_DISABLE_SHM: ") +
                           std::strerror(e));
}

void init_driver() {
  static std::once_flag once;
  std::call_once(once, [] {
    mongoc_init();
    mongoc_log_set_handler(nullptr, nullptr);
  });
}

void run_in_netns(const std::string& netns, const std::function<void()>& body) {
  std::exception_ptr failure;
  std::thread helper([&] {
    try {
      if (!netns.empty()) {
        const std::string path = netns_path(netns);
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
        const int rc = setns(fd, CLONE_NEWNET);
        const int saved = errno;
        close(fd);
        if (rc != 0) throw std::runtime_error("setns " + path + ": " + std::strerror(saved));
      }
      body();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  helper.join();
  if (failure) std::rethrow_exception(failure);
}

std::string unique_set_name() {
  std::random_device entropy;
  char suffix[9];
  std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(entropy()));
  return "rs0-" + std::to_string(getpid()) + "-" + suffix;
}

}  // namespace locklab
