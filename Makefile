# locklab — the two commands a user needs are `make demo` and `make test`.
# Everything else here is a building block of those two.

BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
FUZZ_SECONDS ?= 60
CTEST_ARGS ?=
# A test without a TIMEOUT of its own (every gtest case) fails after this many seconds instead of
# stalling the suite: a hang is a finding, reported by name.
TEST_TIMEOUT_S ?= 900

.PHONY: all deps configure build test test-long test-asan test-tsan fuzz demo soak format clean

all: build

deps:
	@scripts/install-deps.sh
	@if [ -x sim/fidelity/install-node-deps.sh ]; then sim/fidelity/install-node-deps.sh; fi
	@# Lock clients with packages of their own; one that cannot be installed is skipped (exit 77).
	@for script in clients/*/install.sh; do [ -x "$$script" ] || continue; \
	  "$$script" || echo "deps: $$script failed; that client's scenarios will be skipped"; done

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The default suite: unit, property, integration and the quick scenario tier.
test: build
	@cd $(BUILD_DIR) && ctest --no-tests=error --output-on-failure -j $(JOBS) \
	  --timeout $(TEST_TIMEOUT_S) -LE long $(CTEST_ARGS)

# The long tier: longer scenarios and wider property searches.
test-long: build
	@cd $(BUILD_DIR) && ctest --no-tests=error --output-on-failure -j $(JOBS) \
	  --timeout $(TEST_TIMEOUT_S) -L long $(CTEST_ARGS)

# Sanitizer builds of the same suite. The ASan/UBSan preset also runs libFuzzer on the wire
# path for FUZZ_SECONDS (the suite itself replays the seed corpus and seeded mutations).
test-asan:
	@$(MAKE) --no-print-directory test BUILD_DIR=build-asan BUILD_TYPE=Debug \
	  CMAKE_ARGS="-DLOCKLAB_SANITIZE=address,undefined"
	@$(MAKE) --no-print-directory fuzz

# Coverage-guided fuzzing with libFuzzer (clang), bounded by FUZZ_SECONDS: FUZZ_TARGET=wire (a
# client's connection, the default) or peer (a replica-set peer's replies; sim/fuzz/peer_target.h).
# Findings land in build-fuzz/fuzz/findings/ (crash-*, timeout-*, leak-*).
FUZZ_TARGET ?= wire
FUZZ_CORPUS = build-fuzz/fuzz/$(if $(filter peer,$(FUZZ_TARGET)),peer-corpus,corpus)
fuzz:
	@case "$(FUZZ_TARGET)" in wire|peer) ;; *) echo "FUZZ_TARGET must be wire or peer, not '$(FUZZ_TARGET)'" >&2; exit 2;; esac
	@scripts/install-deps.sh --fuzz
	@cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DLOCKLAB_FUZZ=ON -DLOCKLAB_SANITIZE=address,undefined >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_$(FUZZ_TARGET) fuzz_seed_corpus
	@build-fuzz/bin/fuzz_seed_corpus build-fuzz/fuzz/corpus build-fuzz/fuzz/peer-corpus
	@mkdir -p build-fuzz/fuzz/findings
	@build-fuzz/bin/fuzz_$(FUZZ_TARGET) -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
	  -artifact_prefix=build-fuzz/fuzz/findings/ -print_final_stats=1 $(FUZZ_CORPUS)
# TSan runs with lib/test/tsan.supp (races inside Debian's uninstrumented libmongoc/libbson).
test-tsan:
	@TSAN_OPTIONS="suppressions=$(CURDIR)/lib/test/tsan.supp $$TSAN_OPTIONS" \
	  $(MAKE) --no-print-directory test BUILD_DIR=build-tsan BUILD_TYPE=Debug \
	  CMAKE_ARGS="-DLOCKLAB_SANITIZE=thread"

# The main job: run the default scenario against an embedded mongosim replica set.
demo: build
	@$(BUILD_DIR)/bin/locklab run scenarios/demo.toml

# Explore for DURATION (e.g. 10m, 2h): generated experiments, shrunk repros of what fails
# (locklab explore; results in results/explore/soak-<time>/). EXPLORE_ARGS pins dimensions, e.g.
# EXPLORE_ARGS="--client mongolock --write-concern majority --members 3".
DURATION ?= 10m
EXPLORE_ARGS ?=
soak: build
	@$(BUILD_DIR)/bin/locklab explore --time-budget $(DURATION) --cases 1000000 \
	  --out results/explore/soak-$$(date -u +%Y%m%dT%H%M%SZ) $(EXPLORE_ARGS)

format:
	@find sim lib harness bench -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	@rm -rf build build-asan build-tsan build-fuzz
