// mongolock's version: MAJOR changes when the public API or the lock document's format changes
// incompatibly, MINOR when either grows compatibly, PATCH for fixes. lib/CMakeLists.txt reads
// these three lines for the installed package's version (find_package(mongolock 1.0)).
#pragma once

#include <string_view>

#define MONGOLOCK_VERSION_MAJOR 1
#define MONGOLOCK_VERSION_MINOR 1
#define MONGOLOCK_VERSION_PATCH 0

namespace mongolock {

inline constexpr int kVersionMajor = MONGOLOCK_VERSION_MAJOR;
inline constexpr int kVersionMinor = MONGOLOCK_VERSION_MINOR;
inline constexpr int kVersionPatch = MONGOLOCK_VERSION_PATCH;
inline constexpr std::string_view kVersion = "1.1.0";
static_assert(kVersion.size() == 5 && kVersion[0] - '0' == kVersionMajor &&
                  kVersion[2] - '0' == kVersionMinor && kVersion[4] - '0' == kVersionPatch,
              "kVersion spells the three numbers");

}  // namespace mongolock
