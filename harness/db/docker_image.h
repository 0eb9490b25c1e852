// The image a `--cluster docker` run uses for its members and workers, built from the locally
// built programs with no registry: a base imported from a root filesystem made here (a static
// busybox, and every shared library `ldd` lists for the programs, at the paths ldd gives), then
// docker/Dockerfile FROM that base, which copies the programs into /usr/local/bin.
//
// Both images are tagged with the run id and labelled locklab.run / locklab.owner, so the run's
// cleanup and the sweep (docker_engine.h) remove them. The staging directory is the caller's.
//
// Thread rules: none (no state); one call at a time per staging directory.
#pragma once

#include <string>
#include <vector>

#include "db/docker_engine.h"

namespace locklab {

struct ImageBuild {
  std::vector<std::string> programs;  // absolute paths: mongosim, locklab-worker, ...
  std::string dockerfile;             // docker/Dockerfile
  std::string staging_dir;            // created if needed; holds rootfs/, context/, base.tar
  std::string run_id;                 // tag of both images, value of the locklab.run label
  // Files copied into the image at their own paths, with the libraries ldd lists for them
  // (e.g. libfaketime for members run as mongod); each must exist.
  std::vector<std::string> extra_files;
  // Names the member program also answers to in the image (bin/<alias> -> mongosim, the first
  // program): "mongod" for the mongod image kind built here.
  std::vector<std::string> aliases;
};

struct BuiltImage {
  std::string base;   // "locklab/base:<run id>"
  std::string image;  // "locklab/mongosim:<run id>"
};

// Builds both images. Throws std::runtime_error naming the program, library or docker command
// that failed.
BuiltImage build_image(const DockerEngine& engine, const ImageBuild& build);

// The shared libraries (and the dynamic loader) `ldd program` lists, as absolute paths. Throws
// std::runtime_error when ldd fails or names a library it could not find.
std::vector<std::string> shared_libraries(const std::string& program);

}  // namespace locklab
