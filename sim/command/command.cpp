#include "command/command.h"

#include <cassert>

namespace mongosim {

void CommandRegistry::add(CommandSpec spec) {
  auto owned = std::make_unique<CommandSpec>(std::move(spec));
  const CommandSpec* raw = owned.get();
  bool inserted = by_name_.emplace(raw->name, raw).second;
  assert(inserted && "command registered twice");
  for (const auto& alias : raw->aliases) {
    inserted = by_name_.emplace(alias, raw).second;
    assert(inserted && "command alias registered twice");
  }
  (void)inserted;
  specs_.push_back(std::move(owned));
}

const CommandSpec* CommandRegistry::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<std::string> CommandRegistry::canonical_names() const {
  std::vector<std::string> names;
  names.reserve(specs_.size());
  for (const auto& s : specs_) names.push_back(s->name);
  return names;
}

}  // namespace mongosim
