// The machine a run was measured on: CPU model, online cores, kernel, load averages.
// Thread rules: reads /proc and uname; call from any thread.
#pragma once

#include <nlohmann/json.hpp>

namespace lockbench {

nlohmann::ordered_json machine_info();
nlohmann::ordered_json load_average();  // [1 min, 5 min, 15 min]

}  // namespace lockbench
