// swift-tools-version: 6.1
// The libFuzzer targets, in a package of their own so the library never builds with sanitizer
// flags. `make fuzz`, `make fuzz-store` and `make fuzz-model` build them with
// the fuzzer and address sanitizers and run them.
import PackageDescription

let package = Package(
    name: "StrataFuzz",
    dependencies: [
        .package(name: "Strata", path: "../"),
        // Resolved through Strata; named so that the model-file fuzzer can silence the loaders' logs.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    ],
    targets: [
        // What the fuzzers built with `-Xswiftc` sanitizer flags share: their `main` runs
        // libFuzzer's driver.
        .target(name: "FuzzDriver"),
        .executableTarget(
            name: "PredicateFuzzer",
            dependencies: ["FuzzDriver", .product(name: "Strata", package: "Strata")],
            // libFuzzer provides `main`; the target only defines `LLVMFuzzerTestOneInput`.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // Damaged store directories: only the storage engine, so that `make fuzz-store` builds
        // neither the object graph nor swift-syntax.
        .executableTarget(
            name: "StoreFileFuzzer",
            dependencies: [.product(name: "StrataStore", package: "Strata")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // Damaged model and mapping model files, through the loaders a user calls.
        .executableTarget(
            name: "ModelFileFuzzer",
            dependencies: [
                "FuzzDriver",
                .product(name: "Strata", package: "Strata"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
