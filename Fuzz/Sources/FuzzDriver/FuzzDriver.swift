/// libFuzzer's driver, which its `main` runs: parses the options, then calls `callback` with inputs.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// Runs libFuzzer's driver with the process's arguments on `callback`: the body of a fuzzer's
/// entry point (`<Target>_main`), which SwiftPM links as `main` when the sanitizers are `-Xswiftc`
/// flags (as `make fuzz` and `make fuzz-model` pass them, so that the macro plug-in the object
/// graph builds with links too).
public func runLibFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, callback)
}
