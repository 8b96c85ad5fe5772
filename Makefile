# Strata: `make demo` runs the quickstart, `make test` the test suite, `make bench` the
# benchmarks against SQLite, RocksDB and LMDB. Each first installs what is missing (liblz4-dev,
# libjemalloc-dev for strata-service, and for the benchmarks librocksdb-dev and liblmdb-dev,
# through apt-get).
SWIFT ?= swift
# The demos build without indexing-while-building, which only an editor reads: it costs 5-10% of
# the compilers' time. The test build keeps it: on Linux SwiftPM finds a test target's tests by
# reading its index, even with XCTest disabled.
DEMO_FLAGS := --disable-index-store
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps postgres-deps demo mirror-demo mirror-bench test bench bench-deps soak clean service-demo

deps:
	@command -v $(SWIFT) >/dev/null || { echo "make: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
	@pkg-config --exists liblz4 jemalloc 2>/dev/null || { \
		echo "Installing liblz4-dev, libjemalloc-dev and pkg-config with apt-get"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liblz4-dev libjemalloc-dev pkg-config >/dev/null; }

# The mirror's tests and demo start a private PostgreSQL server (scripts/private-postgres.sh).
postgres-deps:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "Installing postgresql with apt-get"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends postgresql >/dev/null; }

# A debug build: the quickstart's figures do not matter, and swift-syntax (the @Managed macro)
# compiles several times faster in debug than in release.
demo: deps
	$(SWIFT) run $(DEMO_FLAGS) strata-quickstart

# A failing run ends with its failures repeated, so the tail of the output names them.
test: deps postgres-deps
	$(SWIFT) build --build-tests -Xswiftc -warnings-as-errors
	@bash -o pipefail -c '$(SWIFT) test --skip-build 2>&1 | tee .build/test-output.txt' || { \
		echo "make: the failures (whole output in .build/test-output.txt):"; \
		grep -E "✘|error:" .build/test-output.txt | head -60; exit 1; }

# strata-service (docs/service.md) on the loopback address, on Strata and then on GRDB, driven by
# a short curl session (scripts/service-demo.sh) and stopped with SIGTERM. Built with the test
# build's exact command, so that after `make test` nothing is compiled again.
service-demo: deps
	$(SWIFT) build --build-tests -Xswiftc -warnings-as-errors
	SERVICE=.build/debug/strata-service bash scripts/service-demo.sh

# strata-service under load (docs/service.md), on Strata and on GRDB side by side, from the
# Benchmarks package in release: strata-service-release (the same server) and its load generator
# strata-service-load. service-bench runs every mix (95/5, 50/50, 0/100 reads/writes) at 1, 16, 64
# and 256 connections and the change feed's lag at 1,000 writes/s, SERVICE_SECONDS (default 10)
# each, ROUNDS (default 3) rounds; prints the table and, last, the JSON object. service-memory runs
# 50/50 at 64 connections for SERVICE_SECONDS (default 1800) and compares the server's memory after
# the first 5 minutes with its memory at the end (SERVICE_STEADY=1: the data set keeps its size,
# every other create deleting an employee the run created). service-soak SIGKILLs the server under write load
# SERVICE_KILLS (default 50) times per backend and checks every acknowledged write and the feed.
SERVICE_LOAD := Benchmarks/.build/release/strata-service-load
.PHONY: service-load-build service-bench service-memory service-soak
service-load-build: deps
	cd Benchmarks && $(SWIFT) build -c release --product strata-service-release \
		&& $(SWIFT) build -c release --product strata-service-load
service-bench: service-load-build
	$(SERVICE_LOAD) bench --rounds $${ROUNDS:-3}
service-memory: service-load-build
	$(SERVICE_LOAD) memory $(if $(SERVICE_STEADY),--steady)
service-soak: service-load-build
	$(SERVICE_LOAD) soak --kills $${SERVICE_KILLS:-50}

# Three mirrored instances as processes over a private PostgreSQL server; one SIGKILLed and
# restarted, PostgreSQL restarted midway; ends with `mirror: N transactions, 3 instances, lag …,
# identical: yes` for each MODE (synchronous, asynchronous; both unless MODE=synchronous or
# MODE=asynchronous), after a line naming the mode.
mirror-demo: deps postgres-deps
	$(SWIFT) run $(DEMO_FLAGS) -c $${CONFIG:-debug} strata-mirror-demo $${SAVES:-200} $${MODE:-both}

# The mirror's figures (save latency, lag, saves/s with 1/2/4 instance processes, catch-up,
# pgbench) on a private PostgreSQL server: SAVES (default 2000) and CHANGES (default 100000) size
# the runs. Built in the Benchmarks package (strata-mirror-bench: the same program in release).
mirror-bench: deps postgres-deps
	cd Benchmarks && $(SWIFT) run -c release strata-mirror-bench bench $${SAVES:-2000} $${CHANGES:-100000}

# The long crash soak: STRATA_SOAK_KILLS (default 10000) SIGKILLs at random moments inside six
# operations in turn (a durable save, compaction, a lightweight migration, batch requests,
# `strata replay`, a mirror apply; a private PostgreSQL server for the run), each store checked
# after each kill; ends with a line of figures per operation (kills, acknowledged units, lost,
# duplicated, unopenable). STRATA_SOAK_SECONDS, if set, also bounds it, and then the engine
# writer's soak (CrashRecoveryTests) runs that long beside it. Built in release (with testing
# enabled, in .build/release) so the checks between kills and the killed tools run at the speed
# users run them; `make test` keeps the debug build.
soak: deps postgres-deps
	$(SWIFT) build -c release --build-tests -Xswiftc -enable-testing
	@STRATA_SOAK_KILLS=$${STRATA_SOAK_KILLS:-10000} bash -o pipefail -c \
		'$(SWIFT) test -c release --skip-build --filter "CrashRecoveryTests|KillSoakTests" 2>&1 \
		| tee .build/soak-output.txt'; \
		status=$$?; echo "make: the kill soak's figures (whole output in .build/soak-output.txt):"; \
		grep "^soak:" .build/soak-output.txt; exit $$status

# RocksDB and LMDB, strata-bench's baselines beside SQLite, are linked from their C libraries.
bench-deps:
	@pkg-config --exists rocksdb lmdb 2>/dev/null || { \
		echo "Installing librocksdb-dev and liblmdb-dev with apt-get"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq librocksdb-dev liblmdb-dev pkg-config >/dev/null; }

bench: deps bench-deps
	cd Benchmarks && $(SWIFT) run -c release strata-bench --rows $${ROWS:-100000}

# The scale run: ROWS (default 10,000,000) employees, ROUNDS (default 1) rounds, each figure
# against SQLite in the same run. The object graph (strata-graph-bench: W1, W3, W4, W5, W6 with
# its peak memory, W7), then the engine (strata-bench: W1, W3, W4, W6, W7, W8 compaction with
# reads running, W10 bytes per object). Stores go under SCALE_DIR (default the temporary
# directory); the JSON objects to .build/scale-graph.json and .build/scale-engine.json. W6's
# peak memory is measured in the benchmark's own process: a child process of its own per engine
# (the default) loads the ten million objects again beside the parent's, more than 24 GiB.
.PHONY: scale
scale: deps bench-deps
	cd Benchmarks && $(SWIFT) build -c release --product strata-graph-bench \
		&& $(SWIFT) build -c release --product strata-bench
	mkdir -p .build
	Benchmarks/.build/release/strata-graph-bench --rows $${ROWS:-10000000} --rounds $${ROUNDS:-1} \
		--workloads W1,W3,W4,W5,W6,W7 --isolated-memory false $${SCALE_DIR:+--dir $$SCALE_DIR} \
		--json .build/scale-graph.json
	Benchmarks/.build/release/strata-bench --rows $${ROWS:-10000000} --rounds $${ROUNDS:-1} --baselines sqlite \
		--workloads W1,W3,W4,W6,W7,W8,W10 $${SCALE_DIR:+--dir $$SCALE_DIR} --json .build/scale-engine.json

clean:
	rm -rf .build Benchmarks/.build

# The predicate format fuzzer (libFuzzer, address sanitizer): FUZZ_SECONDS (default 180) of
# generated formats from Fuzz/seeds; a crash, a failed round trip or a hang over 10 s stops it and
# leaves the input in Fuzz/.build/. Leak detection is off: Foundation's NSRegularExpression on
# Linux loses the pattern it compiled inside _CFRegularExpressionCreate for some inputs. Built as
# fuzz-model is (the macro plug-in links with Fuzz/fuzz-target-stub.c), sharing its build.
.PHONY: fuzz
fuzz: deps
	mkdir -p Fuzz/.build && cc -c -fPIC -o Fuzz/.build/fuzz-target-stub.o Fuzz/fuzz-target-stub.c
	cd Fuzz && $(SWIFT) build -c release --product PredicateFuzzer -Xswiftc -sanitize=fuzzer,address \
		-Xswiftc -enable-testing -Xlinker $(CURDIR)/Fuzz/.build/fuzz-target-stub.o
	mkdir -p Fuzz/.build/corpus
	ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no Fuzz/.build/release/PredicateFuzzer Fuzz/.build/corpus Fuzz/seeds -max_total_time=$${FUZZ_SECONDS:-180} \
		-dict=Fuzz/predicate.dict -max_len=512 -timeout=10 -rss_limit_mb=4096 -artifact_prefix=Fuzz/.build/ -print_final_stats=1

# The store-file fuzzer (libFuzzer, address sanitizer, leak detection on): FUZZ_SECONDS (default
# 180) of edits to the files of a small real store (manifest, checkpoint, segments) from
# Fuzz/store-seeds, with their checksums recomputed on a share of inputs so the parsers behind them
# are reached; each damaged store is verified, opened, read, written to, compacted and closed. A
# crash, an error that is not a typed StoreError (or a `corrupt` one naming no file and offset, or
# one `strata verify` does not report), a hang over 10 s, an allocation over 64 MiB (a damaged file
# of a few KiB never justifies one) or a leak stops it and leaves the input in Fuzz/.build/store-*.
# Only the fuzzer's product is built: not the object graph, nor swift-syntax. The Swift runtime's
# backtracer is off, so that a trap reaches libFuzzer's handler and the input is kept.
.PHONY: fuzz-store
fuzz-store: deps
	cd Fuzz && $(SWIFT) build -c release --product StoreFileFuzzer --sanitize=fuzzer --sanitize=address \
		-Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing
	mkdir -p Fuzz/.build/store-corpus
	SWIFT_BACKTRACE=enable=no Fuzz/.build/release/StoreFileFuzzer Fuzz/.build/store-corpus Fuzz/store-seeds -max_total_time=$${FUZZ_SECONDS:-180} \
		-dict=Fuzz/store.dict -max_len=1024 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
		-artifact_prefix=Fuzz/.build/store- -print_final_stats=1

# The model-file fuzzer (libFuzzer, address sanitizer): FUZZ_SECONDS (default
# 180) of damaged model `contents` XML, mapping model `xcmapping.xml`, compiled `.cdm` archives
# and `.xccurrentversion` lists from Fuzz/model-seeds (the first byte picks which), loaded through
# the public initializers and used: entities, inverses, version hashes, inferred mappings,
# expressions. An error that is not a ModelError (or inference's CoreDataError), a crash, a hang
# over 10 s or an allocation over 64 MiB stops it and leaves the input in Fuzz/.build/model-*. Leak
# detection is off: FoundationXML on Linux loses a CFString in _CFErrorCreateFromXMLInterface for
# every XML error it reports.
# The sanitizer flags reach the macro plug-in Strata builds with, so it links with libFuzzer too:
# Fuzz/fuzz-target-stub.c gives it the LLVMFuzzerTestOneInput that libFuzzer's unused main names.
.PHONY: fuzz-model
fuzz-model: deps
	mkdir -p Fuzz/.build && cc -c -fPIC -o Fuzz/.build/fuzz-target-stub.o Fuzz/fuzz-target-stub.c
	cd Fuzz && $(SWIFT) build -c release --product ModelFileFuzzer -Xswiftc -sanitize=fuzzer,address \
		-Xswiftc -enable-testing -Xlinker $(CURDIR)/Fuzz/.build/fuzz-target-stub.o
	mkdir -p Fuzz/.build/model-corpus
	ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no Fuzz/.build/release/ModelFileFuzzer Fuzz/.build/model-corpus Fuzz/model-seeds -max_total_time=$${FUZZ_SECONDS:-180} \
		-dict=Fuzz/model.dict -max_len=12288 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
		-artifact_prefix=Fuzz/.build/model- -print_final_stats=1

# The thread sanitizer over the concurrency-heavy suites (TSAN_SUITES: concurrent contexts and
# saves, group commit, compaction with reads, query generations, the history's live tail, child
# contexts, the mirror's tail on a private PostgreSQL server). Built apart in .build-tsan with
# -DSTRATA_TSAN, which backs the modules' `Lock` with a pthread mutex the sanitizer sees on every
# platform (on Linux it always is one; `Synchronization.Mutex`'s futex it cannot see). Any report fails the run and its count is printed
# (whole output in .build-tsan/tsan-output.txt). Tests/tsan-suppressions.txt may list races inside
# Foundation, Dispatch or the Swift runtime, each explained; it lists none.
TSAN_SUITES := ConcurrencyTests CommitBatchTests CommitConditionTests ReplayCommitPipelineTests\
	SpaceAheadTests LRUCacheTests WrittenBlockCacheTests BlockCacheWarmUpTests ParallelEncodingTests\
	LZ4BlockTests HistoryTests ConcurrentSaveTests CommitThreadsTests QueryGenerationTests\
	PersistentHistoryStreamTests NestedContextTests NotificationThreadingTests ParallelInsertRowsTests\
	ContextLifecycleTests ReadMostlyTests PersistentStoreRemoteChangeTests\
	AsynchronousFetchRequestTests MirrorReplicationTests MirrorAsynchronousTests
TSAN_FLAGS := --scratch-path .build-tsan --sanitize=thread -Xswiftc -DSTRATA_TSAN
.PHONY: tsan
tsan: deps postgres-deps
	$(SWIFT) build --build-tests $(TSAN_FLAGS)
	@TSAN_OPTIONS="suppressions=$(CURDIR)/Tests/tsan-suppressions.txt halt_on_error=0" \
		bash -o pipefail -c '$(SWIFT) test --skip-build $(TSAN_FLAGS) \
		--filter "\.($$(echo $(TSAN_SUITES) | tr " " "|"))/" 2>&1 | tee .build-tsan/tsan-output.txt'; status=$$?; \
		echo "make: $$(grep -c '^WARNING: ThreadSanitizer' .build-tsan/tsan-output.txt) thread-sanitizer reports (whole output in .build-tsan/tsan-output.txt)"; \
		exit $$status
