// fuzz_wire_driver: runs the wire fuzz target without libFuzzer, so every build (GCC included,
// with or without sanitizers) replays the seed corpus and a bounded, seeded batch of mutations
// of it as a ctest. libFuzzer's coverage-guided search is `make fuzz` (clang); this driver is
// its always-on regression net.
//
//   fuzz_wire_driver [--target wire|peer] [--mutations N] [--seed S] [--only I]
//                    [--progress-every K] PATH...
//
// --target picks what an input is: a client's connection (wire_target.h, the default) or a
// replica-set peer's script of replies (peer_target.h). PATHs are corpus files or directories of
// them. Mutation i is derived from (seed, i) alone, so a failure is reproduced with the same seed
// and `--only i` (a peer input's run also depends on the member's timing: peer_target.h). A line
// is printed before every K-th mutation runs (default 1000), so with K = 1 the last line before a
// crash names the input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fuzz/bson_mutation.h"
#include "fuzz/peer_target.h"
#include "fuzz/wire_target.h"

namespace {

using Input = std::vector<uint8_t>;
constexpr int64_t kMaxMutations = 10'000'000;
constexpr int kMaxEditsPerInput = 6;
constexpr int64_t kDefaultProgressEvery = 1000;

using Target = void (*)(const uint8_t*, size_t);

struct Options {
  Target target = mongosim::fuzz::run_wire_input;
  int64_t mutations = 2000;
  uint64_t seed = 1;
  int64_t only = -1;
  int64_t progress_every = kDefaultProgressEvery;
  std::vector<std::string> paths;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "fuzz_wire_driver: %s\nusage: fuzz_wire_driver [--target wire|peer] "
               "[--mutations N] [--seed S] [--only I] [--progress-every K] PATH...\n",
               why.c_str());
  std::exit(2);
}

int64_t parse_count(const char* flag, const char* text, int64_t max) {
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > max) {
    usage(std::string(flag) + ": expected an integer in [0, " + std::to_string(max) + "], got '" +
          text + "'");
  }
  return v;
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--target" && has_value) {
      const std::string target = argv[++i];
      if (target == "wire") {
        o.target = mongosim::fuzz::run_wire_input;
      } else if (target == "peer") {
        o.target = mongosim::fuzz::run_peer_input;
      } else {
        usage("--target: expected wire or peer, got '" + target + "'");
      }
    } else if (arg == "--mutations" && has_value) {
      o.mutations = parse_count("--mutations", argv[++i], kMaxMutations);
    } else if (arg == "--seed" && has_value) {
      o.seed = static_cast<uint64_t>(
          parse_count("--seed", argv[++i], std::numeric_limits<int64_t>::max()));
    } else if (arg == "--progress-every" && has_value) {
      o.progress_every =
          std::max<int64_t>(1, parse_count("--progress-every", argv[++i], kMaxMutations));
    } else if (arg == "--only" && has_value) {
      o.only = parse_count("--only", argv[++i], kMaxMutations);
    } else if (!arg.empty() && arg[0] == '-') {
      usage("unknown or incomplete flag '" + arg + "'");
    } else {
      o.paths.push_back(arg);
    }
  }
  if (o.paths.empty()) usage("no corpus path given");
  return o;
}

Input read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return Input(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::vector<Input> load_corpus(const std::vector<std::string>& paths) {
  std::vector<Input> corpus;
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(p)) {
        if (entry.is_regular_file()) corpus.push_back(read_file(entry.path()));
      }
    } else if (std::filesystem::is_regular_file(p, ec)) {
      corpus.push_back(read_file(p));
    } else {
      usage("corpus path '" + p + "' is neither a file nor a directory");
    }
  }
  if (corpus.empty()) usage("the corpus is empty");
  return corpus;
}

// Values that sit on the boundaries the parsers check: lengths, counts, flags, type bytes.
int32_t interesting_int32(std::mt19937_64& rng) {
  static constexpr int32_t kValues[] = {
      0,    -1,   1,    4,    5, 16, 21, 0x7fffffff, -0x7fffffff - 1, 48000000, 16 * 1024 * 1024,
      2013, 2004, 2012, 65536};
  return kValues[rng() % std::size(kValues)];
}

void edit_once(Input& in, const std::vector<Input>& corpus, std::mt19937_64& rng) {
  auto pos = [&](size_t extra) { return in.empty() ? 0 : rng() % (in.size() + extra); };
  switch (rng() % 8) {
    case 6:
    case 7:  // one body element retyped or removed, lengths fixed (bson_mutation.h)
      if (mongosim::fuzz::edit_one_element(in, rng)) break;
      [[fallthrough]];
    case 0:  // flip one bit
      if (!in.empty()) in[pos(0)] ^= static_cast<uint8_t>(1u << (rng() % 8));
      break;
    case 1: {  // overwrite a little-endian int32 (message lengths, section sizes, BSON sizes)
      if (in.size() < 4) break;
      size_t at = rng() % (in.size() - 3);
      auto v = static_cast<uint32_t>(interesting_int32(rng));
      for (int b = 0; b < 4; ++b) in[at + b] = static_cast<uint8_t>(v >> (8 * b));
      break;
    }
    case 2: {  // insert random bytes
      size_t at = pos(1);
      size_t n = 1 + rng() % 16;
      Input bytes(n);
      for (auto& b : bytes) b = static_cast<uint8_t>(rng());
      in.insert(in.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin(), bytes.end());
      break;
    }
    case 3: {  // erase a range
      if (in.empty()) break;
      size_t at = pos(0);
      size_t n = 1 + rng() % std::min<size_t>(64, in.size() - at);
      in.erase(in.begin() + static_cast<std::ptrdiff_t>(at),
               in.begin() + static_cast<std::ptrdiff_t>(at + n));
      break;
    }
    case 4: {  // splice the tail of another session in
      const Input& other = corpus[rng() % corpus.size()];
      if (other.empty()) break;
      size_t from = rng() % other.size();
      in.resize(pos(1));
      in.insert(in.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
      break;
    }
    default:  // truncate
      in.resize(pos(1));
      break;
  }
}

Input mutation(const Options& o, const std::vector<Input>& corpus, int64_t index) {
  std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(index));
  Input in = corpus[rng() % corpus.size()];
  int edits = 1 + static_cast<int>(rng() % kMaxEditsPerInput);
  for (int e = 0; e < edits; ++e) edit_once(in, corpus, rng);
  if (in.size() > mongosim::fuzz::kMaxInputBytes) in.resize(mongosim::fuzz::kMaxInputBytes);
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  std::vector<Input> corpus = load_corpus(o.paths);
  if (o.only >= 0) {
    Input in = mutation(o, corpus, o.only);
    o.target(in.data(), in.size());
    std::printf("fuzz_wire_driver: mutation %lld (seed %llu) ran cleanly\n",
                static_cast<long long>(o.only), static_cast<unsigned long long>(o.seed));
    return 0;
  }
  for (const Input& in : corpus) o.target(in.data(), in.size());
  std::printf("fuzz_wire_driver: %zu corpus inputs ran cleanly\n", corpus.size());
  for (int64_t i = 0; i < o.mutations; ++i) {
    // Printed before running, so the last line before a crash names the input to reproduce.
    if (i % o.progress_every == 0) {
      std::printf("fuzz_wire_driver: mutations %lld.. (seed %llu)\n", static_cast<long long>(i),
                  static_cast<unsigned long long>(o.seed));
      std::fflush(stdout);
    }
    Input in = mutation(o, corpus, i);
    o.target(in.data(), in.size());
  }
  std::printf("fuzz_wire_driver: %lld mutations (seed %llu) ran cleanly\n",
              static_cast<long long>(o.mutations), static_cast<unsigned long long>(o.seed));
  return 0;
}
