#ifndef STRATA_SUPPORT_H
#define STRATA_SUPPORT_H

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

#ifdef __cplusplus
}
#endif

#endif
