#ifndef STRATA_SUPPORT_H
#define STRATA_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Extends the CRC-32C (Castagnoli) `crc` of earlier bytes with `length` bytes at `data`.
///
/// Pass 0 to start. The pre- and post-inversion are handled inside, so extending the
/// checksum of `a` with `b` gives the checksum of `a` followed by `b`. Uses the CPU's CRC32C
/// instructions when available (SSE4.2 on x86_64, the CRC extension on arm64). Thread-safe.
uint32_t strata_crc32c_extend(uint32_t crc, const void *data, size_t length);

/// The same as `strata_crc32c_extend`, always computed with the portable slice-by-8 tables.
uint32_t strata_crc32c_extend_portable(uint32_t crc, const void *data, size_t length);

/// Exchanges the files or directories at the paths `first` and `second` in one atomic step
/// (Linux `renameat2` with `RENAME_EXCHANGE`): a crash leaves both paths as they were or both
/// exchanged. Returns 0, or -1 with `errno` set (`ENOSYS` where the system has no exchange).
int strata_rename_exchange(const char *first, const char *second);

/// Reads the 16-bit word at `word` with acquire ordering: the writes made before the store
/// that gave it its value (`strata_store_release_u16`) are seen after it.
static inline uint16_t strata_load_acquire_u16(const uint16_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Writes `value` to the 16-bit word at `word` with release ordering.
static inline void strata_store_release_u16(uint16_t *word, uint16_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Copies `count` 16-bit words from `source` to `destination`, each read as a relaxed atomic
/// load (a plain load on x86-64 and arm64), so that words another thread may write at the same
/// time are read without a data race.
static inline void strata_load_relaxed_u16s(uint16_t *destination, const uint16_t *source, size_t count) {
    for (size_t index = 0; index < count; index++) destination[index] = __atomic_load_n(source + index, __ATOMIC_RELAXED);
}

/// Writes `count` 16-bit words from `source` to `destination`, each as a relaxed atomic store.
static inline void strata_store_relaxed_u16s(uint16_t *destination, const uint16_t *source, size_t count) {
    for (size_t index = 0; index < count; index++) __atomic_store_n(destination + index, source[index], __ATOMIC_RELAXED);
}

/// Asks the CPU to start loading the cache line at `address` for a read soon, without waiting
/// for it: never faults, whatever the address.
static inline void strata_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// Finds the Swift nominal types of the loaded images (the type metadata records of their
/// `swift5_types` sections, through the runtime's `swift_enumerateAllMetadataSections`) whose
/// context descriptor has the kind `kind` (16: class, 17: struct, 18: enum), no generic
/// parameters, and the name `name` (or a name starting with `name` when `prefix`); with
/// `top_level`, only types declared at a module's top level. Calls each one's metadata accessor
/// and stores the metadata of the first `capacity` in `metadata`, in image and record order.
/// Returns how many types were found (more than `capacity` when some were not stored). Linux
/// only: elsewhere it finds none. Thread-safe; costs a pass over every type record of every
/// image.
size_t strata_swift_types(
    const char *name, bool prefix, uint32_t kind, bool top_level, const void **metadata, size_t capacity);

/// The number of images whose Swift metadata sections the runtime has registered (0 where
/// ``strata_swift_types`` finds nothing).
size_t strata_swift_image_count(void);

#ifdef __cplusplus
}
#endif

#endif
