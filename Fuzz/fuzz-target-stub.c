/* A weak LLVMFuzzerTestOneInput for the executables that `make fuzz-model` links with libFuzzer
 * but that are no fuzzer: the macro plug-in Strata builds with gets the -Xswiftc sanitizer flags
 * too, and libFuzzer's unused main refers to this function. A fuzzer's own definition wins. */
__attribute__((weak)) int LLVMFuzzerTestOneInput(const unsigned char *data, unsigned long size) {
    (void)data;
    (void)size;
    return 0;
}
