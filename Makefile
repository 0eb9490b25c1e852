# locklab — the two commands a user needs are `make demo` and `make test`.
# Everything else here is a building block of those two.

BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: all deps configure build test test-long test-asan test-tsan demo format clean

all: build

deps:
	@scripts/install-deps.sh
	@if [ -x sim/fidelity/install-node-deps.sh ]; then sim/fidelity/install-node-deps.sh; fi

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The default suite: unit, property, integration and the quick scenario tier.
test: build
	@cd $(BUILD_DIR) && ctest --no-tests=error --output-on-failure -j $(JOBS) -LE long $(CTEST_ARGS)

# The long tier: longer scenarios and wider property searches.
test-long: build
	@cd $(BUILD_DIR) && ctest --no-tests=error --output-on-failure -j $(JOBS) -L long $(CTEST_ARGS)

# Sanitizer builds of the same suite.
test-asan:
	@$(MAKE) --no-print-directory test BUILD_DIR=build-asan BUILD_TYPE=Debug \
	  CMAKE_ARGS="-DLOCKLAB_SANITIZE=address,undefined"
test-tsan:
	@$(MAKE) --no-print-directory test BUILD_DIR=build-tsan BUILD_TYPE=Debug \
	  CMAKE_ARGS="-DLOCKLAB_SANITIZE=thread"

# The main job: run the default scenario against an embedded mongosim replica set.
demo: build
	@$(BUILD_DIR)/bin/locklab run scenarios/demo.toml

format:
	@find sim lib harness bench -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	@rm -rf build build-asan build-tsan
