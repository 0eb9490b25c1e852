// Network partitions among members (and between a worker and some members): each is a set of
// cuts (db/partitions.h) chosen when the window opens, from whoever is primary then, and removed on
// heal. Workers keep reaching every member unless a fault says otherwise: that is what lets an
// isolated former primary go on acknowledging w:1 writes from the workers still connected to
// it while the majority side elects a new primary (docs/mongodb-behaviour.md, Losing the majority).
#include <stdexcept>
#include <utility>

#include "db/db.h"
#include "nemesis/kinds.h"
#include "run/workers.h"

namespace locklab {
namespace {

using Cuts = std::vector<Partitions::Cut>;

// Members with the current primary first, then the others in index order; the shapes below
// place the primary by position, so every shape is deterministic given who is primary.
std::vector<int> primary_first(const Db& db) {
  const int p = db.primary();
  std::vector<int> order;
  if (p >= 0) order.push_back(p);
  for (int m = 0; m < db.size(); ++m) {
    if (m != p) order.push_back(m);
  }
  return order;
}

Cuts between(const std::vector<int>& a, const std::vector<int>& b) {
  Cuts out;
  for (int x : a) {
    for (int y : b) out.push_back({member_role(x), member_role(y)});
  }
  return out;
}

nlohmann::json roles(const std::vector<int>& members) {
  nlohmann::json out = nlohmann::json::array();
  for (int m : members) out.push_back(member_role(m));
  return out;
}

// The common part: compute the cuts at begin(), apply them, undo exactly them on heal.
class Partition : public Fault {
 public:
  void begin(FaultContext& c) override {
    if (!c.db.partitions())
      throw std::runtime_error("partitions need a backend that can partition");
    cuts_ = shape(c);
    c.db.partitions()->cut(cuts_);
  }
  // The cut counts drop once even if rewriting a table fails (that failure fails the heal;
  // a second heal must not drop another window's counts).
  void heal(FaultContext& c) override {
    const Cuts cuts = std::exchange(cuts_, {});
    if (c.db.partitions()) c.db.partitions()->uncut(cuts);
  }
  nlohmann::json detail() const override {
    nlohmann::json out = detail_;
    out["cuts"] = nlohmann::json::array();
    for (const auto& [a, b] : cuts_) out["cuts"].push_back({a, b});
    return out;
  }

 protected:
  virtual Cuts shape(FaultContext& c) = 0;
  nlohmann::json detail_ = nlohmann::json::object();

 private:
  Cuts cuts_;
};

// The target members cut from every other member (and, with from = "everyone", from every
// worker too).
class IsolateMember : public Partition {
 public:
  IsolateMember(const std::string& target, const nlohmann::json& params)
      : members_(member_indices(target)),
        everyone_(params.value("from", "members") == "everyone") {}

 private:
  std::vector<int> members_;
  bool everyone_;
  Cuts shape(FaultContext& c) override {
    std::vector<int> others;
    for (int m = 0; m < c.db.size(); ++m) {
      if (std::find(members_.begin(), members_.end(), m) == members_.end()) others.push_back(m);
    }
    Cuts cuts = between(members_, others);
    if (everyone_) {
      for (int m : members_) {
        for (const std::string& w : c.workers.ids()) cuts.push_back({member_role(m), w});
      }
    }
    detail_ = {{"isolated", roles(members_)}};
    return cuts;
  }
};

// A minority holding the primary (floor(n/2) members) against the majority.
class Halves : public Partition {
  Cuts shape(FaultContext& c) override {
    const std::vector<int> order = primary_first(c.db);
    const size_t minority = order.size() / 2;
    const std::vector<int> a(order.begin(), order.begin() + static_cast<long>(minority));
    const std::vector<int> b(order.begin() + static_cast<long>(minority), order.end());
    detail_ = {{"minority", roles(a)}, {"majority", roles(b)}};
    return between(a, b);
  }
};

// Majorities ring: members on a ring (primary first) each see only their nearest neighbours,
// enough for a majority of their own, but no two members see the same majority.
class Ring : public Partition {
  Cuts shape(FaultContext& c) override {
    const std::vector<int> order = primary_first(c.db);
    const int n = static_cast<int>(order.size());
    const int reach = (n / 2 + 1) / 2;  // neighbours on each side; 1 for 5 members
    Cuts cuts;
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        const int distance = std::min(j - i, n - (j - i));
        if (distance > reach) cuts.push_back({member_role(order[i]), member_role(order[j])});
      }
    }
    detail_ = {{"ring", roles(order)}};
    return cuts;
  }
};

// Two sides that cannot see each other, and one member (the bridge) that sees both. The
// primary is on the first side.
class Bridge : public Partition {
  Cuts shape(FaultContext& c) override {
    const std::vector<int> order = primary_first(c.db);
    const size_t side = (order.size() - 1) / 2;
    const std::vector<int> a(order.begin(), order.begin() + static_cast<long>(side));
    const std::vector<int> b(order.begin() + static_cast<long>(side) + 1, order.end());
    detail_ = {{"side_a", roles(a)}, {"bridge", member_role(order[side])}, {"side_b", roles(b)}};
    return between(a, b);
  }
};

// One worker cut from some members: the primary, the secondaries or all of them.
class PartitionWorker : public Partition {
 public:
  PartitionWorker(std::string target, const nlohmann::json& params)
      : worker_(std::move(target)), which_(params.value("members", "primary")) {}

 private:
  std::string worker_;
  std::string which_;
  Cuts shape(FaultContext& c) override {
    const int p = c.db.primary();
    if (which_ != "all" && p < 0) throw std::runtime_error("no primary to tell members apart");
    Cuts cuts;
    std::vector<int> members;
    for (int m = 0; m < c.db.size(); ++m) {
      const bool take = which_ == "all" || (which_ == "primary") == (m == p);
      if (take) members.push_back(m);
    }
    for (int m : members) cuts.push_back({worker_, member_role(m)});
    detail_ = {{"worker", worker_}, {"members", roles(members)}};
    return cuts;
  }
};

}  // namespace

std::unique_ptr<Fault> make_partition_fault(FaultKind kind, const std::string& target,
                                            const nlohmann::json& params) {
  if (kind == FaultKind::kIsolateMember) return std::make_unique<IsolateMember>(target, params);
  if (kind == FaultKind::kPartitionHalves) return std::make_unique<Halves>();
  if (kind == FaultKind::kPartitionRing) return std::make_unique<Ring>();
  if (kind == FaultKind::kPartitionBridge) return std::make_unique<Bridge>();
  if (kind == FaultKind::kPartitionWorker) return std::make_unique<PartitionWorker>(target, params);
  return nullptr;
}

}  // namespace locklab
