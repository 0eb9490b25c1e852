// Small file helpers the run and the explorer share: whole-file writes that name the path on
// failure, and the UTC stamp that names default output directories.
// Thread rules: none (no state).
#pragma once

#include <filesystem>
#include <string>

namespace locklab {

// Writes `text` to `path` (created or truncated). Throws std::runtime_error naming the path.
void write_file(const std::filesystem::path& path, const std::string& text);

// The current UTC time as 20261124T121700Z (sorts as time does; safe in a file name).
std::string utc_stamp();

}  // namespace locklab
