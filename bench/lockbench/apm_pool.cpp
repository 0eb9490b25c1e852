#include "apm_pool.h"

#include <mongoc/mongoc.h>

#include <cassert>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bson_owner.h"

namespace lockbench {
namespace {

constexpr std::chrono::milliseconds kQuietPoll{2};

void started_cb(const mongoc_apm_command_started_t* event) {
  auto* self = static_cast<ApmPool*>(mongoc_apm_command_started_get_context(event));
  self->on_started(mongoc_apm_command_started_get_command_name(event));
}
void succeeded_cb(const mongoc_apm_command_succeeded_t* event) {
  static_cast<ApmPool*>(mongoc_apm_command_succeeded_get_context(event))->on_finished();
}
void failed_cb(const mongoc_apm_command_failed_t* event) {
  static_cast<ApmPool*>(mongoc_apm_command_failed_get_context(event))->on_finished();
}

}  // namespace

ApmPool::ApmPool(const std::string& uri_text) {
  mongoc_init();
  bson_error_t error;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(uri_text.c_str(), &error);
  if (uri == nullptr) {
    throw std::invalid_argument("bad MongoDB URI '" + uri_text + "': " + error.message);
  }
  pool_ = mongoc_client_pool_new(uri);
  mongoc_uri_destroy(uri);
  if (pool_ == nullptr) throw std::invalid_argument("no client pool for '" + uri_text + "'");
  mongoc_apm_callbacks_t* callbacks = mongoc_apm_callbacks_new();
  mongoc_apm_set_command_started_cb(callbacks, started_cb);
  mongoc_apm_set_command_succeeded_cb(callbacks, succeeded_cb);
  mongoc_apm_set_command_failed_cb(callbacks, failed_cb);
  const bool set = mongoc_client_pool_set_apm_callbacks(pool_, callbacks, this);
  mongoc_apm_callbacks_destroy(callbacks);
  if (!set) {
    mongoc_client_pool_destroy(pool_);
    throw std::logic_error("libmongoc refused the APM callbacks of a new pool");
  }
}

ApmPool::~ApmPool() {
  close();
}

void ApmPool::close() {
  if (pool_ != nullptr) mongoc_client_pool_destroy(pool_);
  pool_ = nullptr;
}

void ApmPool::open_connections(int n) {
  std::vector<mongoc_client_t*> clients;
  mongolock::bson::Bson ping(BCON_NEW("ping", BCON_INT32(1)));
  std::string failure;
  for (int i = 0; i < std::min(n, kPoolClientsMax); ++i) {
    mongoc_client_t* client = mongoc_client_pool_pop(pool_);
    clients.push_back(client);
    mongolock::bson::BsonReply reply;
    bson_error_t error;
    if (!mongoc_client_command_simple(client, "admin", ping.get(), nullptr, reply.out(), &error)) {
      failure = error.message;
      break;
    }
  }
  for (mongoc_client_t* client : clients) mongoc_client_pool_push(pool_, client);
  if (!failure.empty()) throw std::runtime_error("ping on a pooled client failed: " + failure);
}

void ApmPool::on_started(const char* name) {
  std::lock_guard guard(mutex_);
  ++started_[name];
  ++started_total_;
}

void ApmPool::on_finished() {
  std::lock_guard guard(mutex_);
  ++finished_;
  assert(finished_ <= started_total_);
}

std::map<std::string, int64_t> ApmPool::started() const {
  std::lock_guard guard(mutex_);
  return started_;
}

int64_t ApmPool::in_flight() const {
  std::lock_guard guard(mutex_);
  return started_total_ - finished_;
}

bool ApmPool::wait_quiet(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (in_flight() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kQuietPoll);
  }
  return true;
}

int64_t total(const std::map<std::string, int64_t>& counts) {
  int64_t sum = 0;
  for (const auto& [name, count] : counts) sum += count;
  return sum;
}

std::map<std::string, int64_t> difference(const std::map<std::string, int64_t>& after,
                                          const std::map<std::string, int64_t>& before) {
  std::map<std::string, int64_t> out;
  for (const auto& [name, count] : after) {
    auto it = before.find(name);
    const int64_t d = count - (it == before.end() ? 0 : it->second);
    if (d != 0) out[name] = d;
  }
  return out;
}

}  // namespace lockbench
