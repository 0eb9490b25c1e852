#include "holds_file.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace lockbench {

std::string write_holds_file(const std::string& dir, const std::string& run_id,
                             const CellRaw& raw) {
  using Json = nlohmann::ordered_json;
  const CellSpec& s = raw.spec;
  const auto rel = [&](int64_t ns) { return ns - raw.start_ns; };
  Json contenders = Json::array();
  for (const ContenderReport& c : raw.contenders) {
    Json holds = Json::array();
    for (const Hold& h : c.holds) {
      holds.push_back({h.lock, h.token, rel(h.asked_ns), rel(h.acquired_ns),
                       rel(h.release_asked_ns), rel(h.released_ns)});
    }
    Json open = nullptr;
    if (c.open_wait) {
      open = {c.open_wait->lock, rel(c.open_wait->asked_ns), rel(c.open_wait->given_up_ns)};
    }
    contenders.push_back({{"holds", std::move(holds)}, {"open_wait", std::move(open)}});
  }
  const Json doc = {{"run_id", run_id},
                    {"cell",
                     {{"index", s.index},
                      {"plan", s.plan},
                      {"strategy", std::string(s.strategy->name)},
                      {"mode", mode_name(s.mode)},
                      {"contenders", s.contenders},
                      {"locks", s.locks},
                      {"hold_ms", s.hold_ms},
                      {"members", s.members}}},
                    {"start_ns", raw.start_ns},
                    {"stop_ns", raw.stop_ns},
                    {"contenders", std::move(contenders)}};
  const std::string path = dir + "/cell-" + std::to_string(s.index) + ".json";
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  std::ofstream out(path);
  out << doc.dump() << '\n';
  out.close();
  if (error || !out) return "cannot write " + path;
  return {};
}

}  // namespace lockbench
