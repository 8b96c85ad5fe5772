#include "strata_support.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
/// Whether this build has a CRC32C instruction path (chosen at run time on x86_64).
#define STRATA_CRC32C_HARDWARE 1
/// The attribute enabling the CRC32C instructions in the functions that use them.
#define STRATA_CRC32C_TARGET __attribute__((target("sse4.2")))
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
/// Whether this build has a CRC32C instruction path (always available on this target).
#define STRATA_CRC32C_HARDWARE 1
/// The attribute enabling the CRC32C instructions in the functions that use them.
#define STRATA_CRC32C_TARGET
#else
/// Whether this build has a CRC32C instruction path.
#define STRATA_CRC32C_HARDWARE 0
#endif

/// The Castagnoli polynomial, bit-reflected (bit 31 is x^0).
#define CASTAGNOLI 0x82f63b78u

/// Slice-by-8 tables: `table[k][b]` is the CRC register after byte `b` followed by `k` zero bytes.
static uint32_t table[8][256];

/// Makes the tables (and, on x86_64, the instruction choice) exactly once.
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/// Multiplies `crc` by x modulo the polynomial, in the reflected representation.
static inline uint32_t times_x(uint32_t crc) {
    return (crc & 1) ? (crc >> 1) ^ CASTAGNOLI : crc >> 1;
}

/// Extends the raw (not inverted) register `crc` with `length` bytes, eight at a time.
static uint32_t portable_extend(uint32_t crc, const unsigned char *p, size_t length) {
    while (length >= 8) {
        crc ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        crc = table[7][crc & 0xff] ^ table[6][(crc >> 8) & 0xff] ^ table[5][(crc >> 16) & 0xff]
            ^ table[4][crc >> 24] ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
        p += 8;
        length -= 8;
    }
    while (length--) {
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    }
    return crc;
}

#if STRATA_CRC32C_HARDWARE

/// The size of each of the three streams the instruction path interleaves on large buffers.
#define LONG_BLOCK 8192
/// The size of each of the three interleaved streams on medium buffers.
#define SHORT_BLOCK 256

/// `shift_long[k][b]` is byte `b` at position `k` of a register, moved past `LONG_BLOCK` zero bytes.
static uint32_t shift_long[4][256];
/// `shift_short[k][b]` is byte `b` at position `k` of a register, moved past `SHORT_BLOCK` zero bytes.
static uint32_t shift_short[4][256];

/// Multiplies two reflected polynomials modulo the Castagnoli polynomial.
static uint32_t multiply(uint32_t a, uint32_t b) {
    uint32_t product = 0;
    for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
        if (a & bit) product ^= b;
        b = times_x(b);
    }
    return product;
}

/// Fills `shift` so that `shifted` computes the register after `length` more zero bytes.
static void make_shift_table(uint32_t shift[4][256], size_t length) {
    uint32_t power = 1u << 31;
    for (size_t i = 0; i < 8 * length; i++) power = times_x(power);
    for (uint32_t k = 0; k < 4; k++) {
        for (uint32_t b = 0; b < 256; b++) shift[k][b] = multiply(power, b << (8 * k));
    }
}

/// The register `crc` moved past the zero bytes `shift` was made for.
static inline uint32_t shifted(const uint32_t shift[4][256], uint32_t crc) {
    return shift[0][crc & 0xff] ^ shift[1][(crc >> 8) & 0xff] ^ shift[2][(crc >> 16) & 0xff]
        ^ shift[3][crc >> 24];
}

/// Extends the register `crc` with the 8 bytes at `p` using the CRC32C instruction.
STRATA_CRC32C_TARGET static inline uint32_t hardware_word(uint32_t crc, const unsigned char *p) {
    uint64_t word;
    memcpy(&word, p, sizeof word);
#if defined(__x86_64__)
    return (uint32_t)_mm_crc32_u64(crc, word);
#else
    return __crc32cd(crc, word);
#endif
}

/// Extends the register `crc` with the byte `byte` using the CRC32C instruction.
STRATA_CRC32C_TARGET static inline uint32_t hardware_byte(uint32_t crc, unsigned char byte) {
#if defined(__x86_64__)
    return _mm_crc32_u8(crc, byte);
#else
    return __crc32cb(crc, byte);
#endif
}

/// Consumes runs of three `block`-byte streams from `*p`, computed side by side and combined.
STRATA_CRC32C_TARGET static inline uint32_t hardware_triples(
    uint32_t crc, const unsigned char **p, size_t *length, size_t block, const uint32_t shift[4][256]) {
    const unsigned char *next = *p;
    while (*length >= 3 * block) {
        uint32_t second = 0, third = 0;
        const unsigned char *end = next + block;
        do {
            crc = hardware_word(crc, next);
            second = hardware_word(second, next + block);
            third = hardware_word(third, next + 2 * block);
            next += 8;
        } while (next < end);
        crc = shifted(shift, shifted(shift, crc) ^ second) ^ third;
        next += 2 * block;
        *length -= 3 * block;
    }
    *p = next;
    return crc;
}

/// Extends the raw register `crc` with `length` bytes using the CRC32C instructions.
STRATA_CRC32C_TARGET static uint32_t hardware_extend(uint32_t crc, const unsigned char *p, size_t length) {
    while (length > 0 && ((uintptr_t)p & 7) != 0) {
        crc = hardware_byte(crc, *p++);
        length--;
    }
    crc = hardware_triples(crc, &p, &length, LONG_BLOCK, shift_long);
    crc = hardware_triples(crc, &p, &length, SHORT_BLOCK, shift_short);
    while (length >= 8) {
        crc = hardware_word(crc, p);
        p += 8;
        length -= 8;
    }
    while (length--) crc = hardware_byte(crc, *p++);
    return crc;
}

#endif

#if defined(__x86_64__)
/// Whether this CPU has SSE4.2, decided once in `setup`.
static int has_sse42;
#endif

/// Computes the tables and, on x86_64, whether the CPU has the CRC32C instructions.
static void setup(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t crc = b;
        for (int bit = 0; bit < 8; bit++) crc = times_x(crc);
        table[0][b] = crc;
    }
    for (uint32_t b = 0; b < 256; b++) {
        for (int k = 1; k < 8; k++) table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xff];
    }
#if STRATA_CRC32C_HARDWARE
    make_shift_table(shift_long, LONG_BLOCK);
    make_shift_table(shift_short, SHORT_BLOCK);
#endif
#if defined(__x86_64__)
    __builtin_cpu_init();
    has_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

/// Extends a CRC-32C with the fastest path this CPU has (see strata_support.h).
uint32_t strata_crc32c_extend(uint32_t crc, const void *data, size_t length) {
    pthread_once(&setup_once, setup);
#if defined(__x86_64__)
    if (has_sse42) return ~hardware_extend(~crc, data, length);
    return ~portable_extend(~crc, data, length);
#elif STRATA_CRC32C_HARDWARE
    return ~hardware_extend(~crc, data, length);
#else
    return ~portable_extend(~crc, data, length);
#endif
}

/// Extends a CRC-32C with the slice-by-8 tables (see strata_support.h).
uint32_t strata_crc32c_extend_portable(uint32_t crc, const void *data, size_t length) {
    pthread_once(&setup_once, setup);
    return ~portable_extend(~crc, data, length);
}
