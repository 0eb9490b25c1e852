#include "db/docker_image.h"

#include <sys/stat.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "run/process.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBusybox = "/bin/busybox";
constexpr int kLibrariesMax = 500;
// The busybox applets the image offers (the Dockerfile's RUN needs sh and mkdir).
constexpr const char* kApplets[] = {"sh", "mkdir", "ls", "cat", "sleep", "kill", "ps", "nc"};

void copy_into(const fs::path& rootfs, const std::string& path) {
  const fs::path target = rootfs / fs::path(path).relative_path();
  fs::create_directories(target.parent_path());
  // copy_file follows symlinks: the image gets the library under the name the loader asks for.
  fs::copy_file(path, target, fs::copy_options::overwrite_existing);
}

void make_rootfs(const fs::path& rootfs, const ImageBuild& build) {
  const std::vector<std::string>& programs = build.programs;
  fs::remove_all(rootfs);
  fs::create_directories(rootfs / "bin");
  if (!fs::exists(kBusybox)) {
    throw std::runtime_error(std::string(kBusybox) +
                             " is missing: install busybox-static (scripts/install-deps.sh)");
  }
  fs::copy_file(kBusybox, rootfs / "bin/busybox");
  for (const char* applet : kApplets) fs::create_symlink("busybox", rootfs / "bin" / applet);
  for (const std::string& program : programs) {
    for (const std::string& library : shared_libraries(program)) copy_into(rootfs, library);
  }
  for (const std::string& file : build.extra_files) {
    copy_into(rootfs, file);
    for (const std::string& library : shared_libraries(file)) copy_into(rootfs, library);
  }
  fs::create_directories(rootfs / "tmp");
  fs::permissions(rootfs / "tmp", fs::perms::all | fs::perms::sticky_bit);
  fs::create_directories(rootfs / "etc");
  fs::create_directories(rootfs / "data/db");
}

void make_context(const fs::path& context, const ImageBuild& build) {
  fs::remove_all(context);
  fs::create_directories(context / "bin");
  for (const std::string& program : build.programs) {
    fs::copy_file(program, context / "bin" / fs::path(program).filename());
  }
  // COPY keeps a symlink inside the context as a symlink.
  for (const std::string& alias : build.aliases) {
    fs::create_symlink(fs::path(build.programs.at(0)).filename(), context / "bin" / alias);
  }
  fs::copy_file(build.dockerfile, context / "Dockerfile");
}

}  // namespace

std::vector<std::string> shared_libraries(const std::string& program) {
  if (!fs::exists(program)) throw std::runtime_error("no program at " + program);
  const ToolResult ldd = run_tool({"ldd", program});
  if (ldd.output.find("not a dynamic executable") != std::string::npos) return {};
  if (ldd.code != 0) throw std::runtime_error("ldd " + program + " failed: " + ldd.output);
  // "libx.so.1 => /lib/.../libx.so.1 (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)",
  // "linux-vdso.so.1 (0x...)" (in the kernel: nothing to copy).
  static const std::regex resolved(R"(=>\s*(/\S+)\s*\()");
  static const std::regex loader(R"(^\s*(/\S+)\s*\()");
  std::vector<std::string> out;
  std::istringstream in(ldd.output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("not found") != std::string::npos) {
      throw std::runtime_error("ldd " + program + ": a library is missing: " + line);
    }
    std::smatch m;
    if (std::regex_search(line, m, resolved) || std::regex_search(line, m, loader)) {
      out.push_back(m[1]);
    }
    if (static_cast<int>(out.size()) > kLibrariesMax) {
      throw std::runtime_error("ldd " + program + " lists more than " +
                               std::to_string(kLibrariesMax) + " libraries");
    }
  }
  return out;
}

BuiltImage build_image(const DockerEngine& engine, const ImageBuild& build) {
  if (build.run_id.empty()) throw std::invalid_argument("build_image: empty run id");
  const fs::path staging = build.staging_dir;
  fs::create_directories(staging);
  make_rootfs(staging / "rootfs", build);
  make_context(staging / "context", build);
  const std::string tar = (staging / "base.tar").string();
  run_tool_checked({"tar", "-C", (staging / "rootfs").string(), "-cf", tar, "."});
  BuiltImage out{"locklab/base:" + build.run_id, "locklab/mongosim:" + build.run_id};
  const std::string run_label = "locklab.run=" + build.run_id;
  const std::string owner_label = "locklab.owner=" + own_identity();
  engine.checked({"import", "--change", "LABEL " + run_label, "--change", "LABEL " + owner_label,
                  tar, out.base},
                 120'000);
  // The legacy builder: it needs no buildx plugin and builds FROM a local image offline.
  std::vector<std::string> argv = {"env",
                                   "DOCKER_BUILDKIT=0",
                                   engine.client(),
                                   "-H",
                                   engine.host(),
                                   "build",
                                   "--quiet",
                                   "--build-arg",
                                   "BASE=" + out.base,
                                   "--label",
                                   run_label,
                                   "--label",
                                   owner_label,
                                   "-t",
                                   out.image,
                                   (staging / "context").string()};
  const ToolResult built = run_tool(argv, "", "", 300'000, engine.interrupted());
  if (built.code != 0) {
    throw std::runtime_error("docker build of " + out.image + " failed: " + built.output);
  }
  fs::remove(tar);
  return out;
}

}  // namespace locklab
