// Stateful property: insert/update/delete/find on one collection agree with a std::map model.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

// (_id, x) in insertion order: a single-document update hits the first match in natural order.
using Model = std::vector<std::pair<int32_t, int32_t>>;

bool contains(const Model& m, int32_t id) {
  return std::any_of(m.begin(), m.end(), [&](const auto& p) { return p.first == id; });
}

struct Harness {
  ServerClock clock;
  FailPoints failpoints;
  CommandRegistry registry;
  std::unique_ptr<Store> store;

  Harness() {
    StoreOptions options;
    options.clock = &clock;
    options.failpoints = &failpoints;
    store = std::make_unique<Store>(std::move(options));
    store->register_commands(registry);
  }
  Document run(const Document& body) {
    CommandContext ctx;
    ctx.db = "db";
    ctx.body = body;
    ctx.name = body.first_key();
    ctx.now_ms = clock.now_ms();
    return registry.find(ctx.name)->handler(ctx);
  }
};

Document one_statement(const char* cmd, const char* field, Document statement) {
  return Document{{cmd, bson::V("c")},
                  {field, bson::V(bson::Array{bson::V(std::move(statement))})}};
}

struct Insert : rc::state::Command<Model, Harness> {
  int32_t id = *rc::gen::inRange(0, 8);
  int32_t x = *rc::gen::inRange(0, 4);
  void apply(Model& m) const override {
    if (!contains(m, id)) m.emplace_back(id, x);
  }
  void run(const Model& m, Harness& h) const override {
    Document r = h.run(
        one_statement("insert", "documents", Document{{"_id", bson::V(id)}, {"x", bson::V(x)}}));
    bool duplicate = contains(m, id);
    RC_ASSERT(r.get("n")->as_int32() == (duplicate ? 0 : 1));
    RC_ASSERT(r.has("writeErrors") == duplicate);
  }
  void show(std::ostream& os) const override { os << "insert " << id << " x=" << x; }
};

struct SetWhereX : rc::state::Command<Model, Harness> {
  int32_t from = *rc::gen::inRange(0, 4);
  int32_t to = *rc::gen::inRange(0, 4);
  bool multi = *rc::gen::arbitrary<bool>();
  void apply(Model& m) const override {
    for (auto& [id, x] : m) {
      if (x == from) {
        x = to;
        if (!multi) break;
      }
    }
  }
  void run(const Model& m, Harness& h) const override {
    Document stmt{{"q", bson::V(Document{{"x", bson::V(from)}})},
                  {"u", bson::V(Document{{"$set", bson::V(Document{{"x", bson::V(to)}})}})},
                  {"multi", bson::V(multi)}};
    Document r = h.run(one_statement("update", "updates", stmt));
    int32_t matched = 0;
    for (const auto& [id, x] : m) matched += (x == from) ? 1 : 0;
    if (!multi) matched = std::min(matched, 1);
    RC_ASSERT(r.get("n")->as_int32() == matched);
    RC_ASSERT(r.get("nModified")->as_int32() == (from == to ? 0 : matched));
  }
  void show(std::ostream& os) const override {
    os << "update x=" << from << " -> " << to << (multi ? " multi" : "");
  }
};

struct DeleteId : rc::state::Command<Model, Harness> {
  int32_t id = *rc::gen::inRange(0, 8);
  void apply(Model& m) const override {
    std::erase_if(m, [&](const auto& p) { return p.first == id; });
  }
  void run(const Model& m, Harness& h) const override {
    Document stmt{{"q", bson::V(Document{{"_id", bson::V(id)}})}, {"limit", bson::V(1)}};
    Document r = h.run(one_statement("delete", "deletes", stmt));
    RC_ASSERT(r.get("n")->as_int32() == (contains(m, id) ? 1 : 0));
  }
  void show(std::ostream& os) const override { os << "delete " << id; }
};

struct FindSorted : rc::state::Command<Model, Harness> {
  void run(const Model& m, Harness& h) const override {
    Document r = h.run(J(R"({"find": "c", "sort": {"_id": 1}, "batchSize": 1000})"));
    const bson::Array& batch = r.get("cursor")->as_document().get("firstBatch")->as_array();
    RC_ASSERT(batch.size() == m.size());
    Model sorted = m;
    std::sort(sorted.begin(), sorted.end());
    size_t i = 0;
    for (const auto& [id, x] : sorted) {
      const Document& d = batch[i++].as_document();
      RC_ASSERT(d.get("_id")->as_int32() == id);
      RC_ASSERT(d.get("x")->as_int32() == x);
    }
  }
  void show(std::ostream& os) const override { os << "find"; }
};

RC_GTEST_PROP(StoreModelTest, AgreesWithAMapModel, ()) {
  Harness h;
  Model initial;
  rc::state::check(initial, h,
                   rc::state::gen::execOneOfWithArgs<Insert, SetWhereX, DeleteId, FindSorted>());
}

}  // namespace
}  // namespace mongosim::data::testing
