// swift-tools-version: 6.1
// The libFuzzer targets, in a package of their own so the library never builds with sanitizer
// flags. `make fuzz` and `make fuzz-store` build them with `--sanitize=fuzzer --sanitize=address`
// and run them.
import PackageDescription

let package = Package(
    name: "StrataFuzz",
    dependencies: [.package(name: "Strata", path: "../")],
    targets: [
        .executableTarget(
            name: "PredicateFuzzer",
            dependencies: [.product(name: "Strata", package: "Strata")],
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
    ]
)
