// swift-tools-version: 6.1
import PackageDescription

// The benchmarks live in their own package so that users of Strata never resolve
// GRDB or package-benchmark. Run from this directory:
//   swift run -c release strata-bench --rows 100000
//   swift run -c release strata-graph-bench --rows 100000
//   swift run -c release strata-migration-probe 100000 /tmp/probe
//   swift package benchmark
let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Strata", path: "../"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        // Already resolved through Strata; named so strata-graph-bench can quiet the store's info logs.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        // Already resolved through Strata; named for strata-mirror-bench.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        // Already resolved through Strata; named for strata-service-release's Prometheus endpoint.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // strata-service-load's HTTP client, and the NIO types it speaks (resolved through Strata).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        // Naming the trait turns off the runtime (ARC) interposer, which this machine cannot resolve.
        .package(
            url: "https://github.com/ordo-one/benchmark.git",
            .upToNextMinor(from: "1.38.1"),
            traits: ["MallocInterposer"]
        ),
    ],
    targets: [
        // The reference data set and the seeded generator, shared by every engine and suite.
        .target(
            name: "Workloads",
            dependencies: [.product(name: "StrataStore", package: "Strata")]
        ),
        // What strata-bench and strata-graph-bench share: timing, the side-by-side report, option
        // parsing, the SQLite setup and the workload steps both run the same way.
        .target(
            name: "BenchSupport",
            dependencies: [
                "Workloads",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The engine-level baselines beside SQLite, through their C APIs: RocksDB (LSM) and LMDB
        // (memory-mapped B+tree), Debian's librocksdb-dev and liblmdb-dev (`make bench-deps`).
        .systemLibrary(
            name: "CRocksDB",
            pkgConfig: "rocksdb",
            providers: [.apt(["librocksdb-dev"]), .brew(["rocksdb"])]
        ),
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // Engine-level workloads W1-W10 against Strata, SQLite (GRDB), RocksDB and LMDB, side by side.
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "Workloads",
                "BenchSupport",
                "CRocksDB",
                "CLMDB",
                .product(name: "StrataStore", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Object-graph workloads (W1, W3, W4, W5, W6, W7) through Strata's Core Data API, against
        // GRDB records over SQLite, side by side: `swift run -c release strata-graph-bench`.
        .executableTarget(
            name: "strata-graph-bench",
            dependencies: [
                "Workloads",
                "BenchSupport",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataStore", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The mirror's figures (`strata-mirror-bench bench`, `make mirror-bench`): the root package's
        // strata-mirror-demo built here, where a release build of postgres-nio already lives
        // (Sources/strata-mirror-bench links to ../../Sources/strata-mirror-demo).
        .executableTarget(
            name: "strata-mirror-bench",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataMirror", package: "Strata"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The root package's strata-service built here in release, where a release build of Strata
        // already lives (Sources/strata-service-release links to ../../Sources/strata-service):
        // the server strata-service-load starts, loads and kills.
        .executableTarget(
            name: "strata-service-release",
            dependencies: [
                .product(name: "StrataService", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            // As strata-service: jemalloc on Linux.
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),
        // strata-service under load, on Strata and on GRDB side by side (`make service-bench`), a
        // long run's memory (`make service-memory`) and SIGKILLs under load (`make service-soak`).
        .executableTarget(
            name: "strata-service-load",
            dependencies: [
                "BenchSupport",
                "Workloads",
                .product(name: "StrataService", package: "Strata"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Lightweight migration on a store of N objects: the method each kind of model change takes,
        // its seconds and the bytes it writes (`swift run -c release strata-migration-probe 1000000 /tmp/probe`).
        .executableTarget(
            name: "strata-migration-probe",
            dependencies: [.product(name: "Strata", package: "Strata")]
        ),
        // package-benchmark suites: `swift package benchmark`.
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                "Workloads",
                .product(name: "StrataStore", package: "Strata"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
