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
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "600.0.1"..<"604.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(name: "CStrataSupport"),
        .target(
            name: "StrataStore",
            dependencies: [
                "CLZ4",
                "CStrataSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .macro(
            name: "StrataMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "Strata",
            dependencies: ["StrataStore", "StrataMacros", "CStrataSupport", .product(name: "OrderedCollections", package: "swift-collections")]
        ),
        .executableTarget(
            name: "strata",
            dependencies: [
                "Strata",
                "StrataStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "StrataMirror",
            dependencies: [
                "Strata",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "strata-mirror-demo",
            dependencies: [
                "Strata", "StrataMirror",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(name: "strata-torture", dependencies: ["StrataStore"]),
        .executableTarget(name: "strata-quickstart", dependencies: ["Strata"]),
        .executableTarget(name: "strata-graph-probe", dependencies: ["Strata"]),
        .testTarget(name: "StrataStoreTests", dependencies: ["StrataStore", "CStrataSupport", "Strata"]),
        .testTarget(name: "StrataTests", dependencies: ["Strata"], resources: [.copy("Models")]),
        .testTarget(
            name: "StrataMacrosTests",
            dependencies: [
                "StrataMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
        .testTarget(
            name: "StrataMirrorTests",
            dependencies: ["StrataMirror", "Strata", .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
