// swift-tools-version: 6.1
// The libFuzzer targets, in a package of their own so the library never builds with sanitizer
// flags. `make fuzz` builds it with `--sanitize=fuzzer --sanitize=address` and runs it.
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
        )
    ]
)
