// A RapidCheck stateful test of the Lock API against a model: a few handles and names,
// try_acquire / release / extend / inspect in random order. Expiry is long enough (60 s) that no
// lease lapses during a case, so the model needs no clock.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <array>
#include <map>
#include <optional>

#include "test_server.h"

namespace mongolock::test {
namespace {

constexpr int kSlots = 3;
constexpr int kNames = 2;

struct Model {
  std::array<std::optional<int>, kSlots> slot_name{};  // which name a slot holds
  bool held(int name) const {
    for (const auto& slot : slot_name) {
      if (slot == name) return true;
    }
    return false;
  }
};

struct System {
  Provider* provider;
  std::array<std::optional<Handle>, kSlots> handles;
  std::map<int, int64_t> last_token;  // per name, the highest token granted so far
  static std::string name(int index) { return "model-" + std::to_string(index); }
};

using Command = rc::state::Command<Model, System>;

struct TryAcquire : Command {
  int slot = *rc::gen::inRange(0, kSlots);
  int name = *rc::gen::inRange(0, kNames);
  void checkPreconditions(const Model& model) const override {
    RC_PRE(!model.slot_name[slot].has_value());
  }
  void apply(Model& model) const override {
    if (!model.held(name)) model.slot_name[slot] = name;
  }
  void run(const Model& model, System& system) const override {
    auto handle = system.provider->create_lock(System::name(name)).try_acquire();
    RC_ASSERT(handle.has_value() == !model.held(name));
    if (handle) {
      auto last = system.last_token.find(name);
      if (last != system.last_token.end()) RC_ASSERT(handle->fencing_token() > last->second);
      system.last_token[name] = handle->fencing_token();
      system.handles[slot] = std::move(handle);
    }
  }
  void show(std::ostream& os) const override { os << "TryAcquire(" << slot << ", " << name << ")"; }
};

struct Release : Command {
  int slot = *rc::gen::inRange(0, kSlots);
  void checkPreconditions(const Model& model) const override {
    RC_PRE(model.slot_name[slot].has_value());
  }
  void apply(Model& model) const override { model.slot_name[slot].reset(); }
  void run(const Model&, System& system) const override {
    RC_ASSERT(system.handles[slot]->release());
    system.handles[slot].reset();
  }
  void show(std::ostream& os) const override { os << "Release(" << slot << ")"; }
};

struct Extend : Command {
  int slot = *rc::gen::inRange(0, kSlots);
  void checkPreconditions(const Model& model) const override {
    RC_PRE(model.slot_name[slot].has_value());
  }
  void apply(Model&) const override {}
  void run(const Model&, System& system) const override {
    const auto before = system.handles[slot]->lease_deadline();
    RC_ASSERT(system.handles[slot]->extend());
    RC_ASSERT(system.handles[slot]->lease_deadline() >= before);
    RC_ASSERT(!system.handles[slot]->lost());
  }
  void show(std::ostream& os) const override { os << "Extend(" << slot << ")"; }
};

struct Inspect : Command {
  int name = *rc::gen::inRange(0, kNames);
  void apply(Model&) const override {}
  void run(const Model& model, System& system) const override {
    auto info = system.provider->inspect(System::name(name));
    const bool held = info && info->exclusive && info->exclusive->live;
    RC_ASSERT(held == model.held(name));
    if (held) {
      bool matches = false;
      for (int slot = 0; slot < kSlots; ++slot) {
        if (model.slot_name[slot] == name) {
          matches = info->exclusive->acquisition_id == system.handles[slot]->acquisition_id();
        }
      }
      RC_ASSERT(matches);
      RC_ASSERT(info->last_token == system.last_token.at(name));
    }
  }
  void show(std::ostream& os) const override { os << "Inspect(" << name << ")"; }
};

RC_GTEST_PROP(LockModel, LockApiMatchesTheModel, ()) {
  ReplicaSet* server = shared_server();
  RC_PRE(server != nullptr);
  Options options;
  options.create_index = false;
  options.expiry_ms = 60'000;
  options.auto_extend = false;
  Provider provider(server->uri(), fresh_database(), options);
  Model model;
  System system{&provider, {}, {}};
  rc::state::check(model, system,
                   rc::state::gen::execOneOfWithArgs<TryAcquire, Release, Extend, Inspect>());
}

}  // namespace
}  // namespace mongolock::test
