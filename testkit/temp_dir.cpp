#include "temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace locklab::testkit {

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = std::filesystem::temp_directory_path() / (prefix + ".XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory from " + pattern + ": " +
                             std::strerror(errno));
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;  // never throw from a destructor
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace locklab::testkit
