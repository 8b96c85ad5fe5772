// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataStore", targets: ["StrataStore"]),
        .executable(name: "strata", targets: ["strata"]),
        .library(name: "StrataMirror", targets: ["StrataMirror"]),
        // An HTTP service over Strata (Hummingbird), and the same service on GRDB beside it: the
        // model of how to embed Strata in a server (docs/service.md).
        .library(name: "StrataService", targets: ["StrataService", "StrataServiceGRDB"]),
        .executable(name: "strata-service", targets: ["strata-service"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "600.0.1"..<"604.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // Resolved through postgres-nio; named for the NIO modules StrataMirror and its tests import.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The service's HTTP server, its Prometheus endpoint and its SQLite backend. Only the
        // StrataService product and its tests build them; the traits leave out swift-configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        // Resolved through Hummingbird; named for the channel the change feed hands events over.
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(name: "CStrataSupport"),
        // The lock every module uses: a pthread mutex on Linux and under `make tsan` (-DSTRATA_TSAN),
        // `Synchronization.Mutex` elsewhere.
        .target(name: "StrataSynchronization"),
        .target(
            name: "StrataStore",
            dependencies: [
                "CLZ4",
                "CStrataSupport",
                "StrataSynchronization",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .macro(
            name: "StrataMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "Strata",
            dependencies: [
                "StrataStore", "StrataMacros", "CStrataSupport", "StrataSynchronization",
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        ),
        // The command-line tool; its folder is not a case variant of the library's.
        .executableTarget(
            name: "strata",
            dependencies: [
                "Strata",
                "StrataStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/StrataCLI"
        ),
        .target(
            name: "StrataMirror",
            dependencies: [
                "Strata",
                "StrataStore",
                "StrataSynchronization",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "strata-mirror-demo",
            dependencies: [
                "Strata", "StrataMirror", "StrataSynchronization",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The service's routes, JSON shapes, change feed and Strata backend over Hummingbird.
        .target(
            name: "StrataService",
            dependencies: [
                "Strata", "StrataStore", "StrataSynchronization",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The same routes on SQLite through GRDB, with a trigger-fed change table for the feed.
        .target(
            name: "StrataServiceGRDB",
            dependencies: [
                "StrataService", "Strata",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The service's executable: configuration, logging, metrics and the service group. On
        // Linux it allocates with jemalloc (Debian's libjemalloc-dev, `make deps`), whose memory
        // stays flat under the dozens of threads a loaded service runs, where glibc's arenas grow.
        .executableTarget(
            name: "strata-service",
            dependencies: [
                "StrataService", "StrataServiceGRDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),
        .executableTarget(name: "strata-torture", dependencies: ["StrataStore", "StrataSynchronization"]),
        .executableTarget(name: "strata-quickstart", dependencies: ["Strata"]),
        .executableTarget(
            name: "strata-graph-probe", dependencies: ["Strata", "StrataStore", "StrataSynchronization"]),
        // What every test target shares: a seeded generator, temporary directories, the built
        // executables and child processes. It depends on Foundation and the lock type alone.
        .target(name: "StrataTestSupport", dependencies: ["StrataSynchronization"], path: "Tests/StrataTestSupport"),
        .testTarget(
            name: "StrataStoreTests",
            dependencies: [
                "StrataStore", "CStrataSupport", "StrataSynchronization", "StrataTestSupport",
                // A test's log handler (`LogHandler.log(event:)`, which swift-log 1.16 asks for).
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StrataTests",
            dependencies: [
                "Strata", "StrataStore", "StrataTestSupport",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            resources: [.copy("Models")]
        ),
        // The macros' tests run the compiler on code that uses them, with the built Strata
        // module and plug-in; a test target depending on swift-syntax would build it a second time.
        .testTarget(name: "StrataMacrosTests", dependencies: ["Strata", "StrataTestSupport"]),
        .testTarget(
            name: "StrataMirrorTests",
            dependencies: [
                "StrataMirror", "Strata", "StrataStore", "StrataTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The service end to end over loopback, on both backends.
        .testTarget(
            name: "StrataServiceTests",
            dependencies: [
                "StrataService", "StrataServiceGRDB", "StrataTestSupport",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
