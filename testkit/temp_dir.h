// A private temporary directory for one test, removed with everything in it when the TempDir
// goes out of scope.
//
// Thread rules: owned by one thread; path() may be read from any thread while it lives.
#pragma once

#include <string>

namespace locklab::testkit {

class TempDir {
 public:
  // Creates <temp>/<prefix>.XXXXXX; throws std::runtime_error naming the pattern on failure.
  explicit TempDir(const std::string& prefix = "locklab_test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path()/name (not created).
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace locklab::testkit
