internal import CStrataSupport
import Foundation

/// CRC-32C (Castagnoli) checksums, as used by the storage engine's on-disk records.
///
/// Uses the CPU's CRC32C instructions when available (SSE4.2 on x86_64, the CRC extension on
/// arm64) and slice-by-8 tables otherwise.
enum CRC32C {
    /// The checksum of `bytes`, extending `crc`, the checksum of the bytes before them (0 to start).
    static func checksum(_ bytes: UnsafeRawBufferPointer, extending crc: UInt32 = 0) -> UInt32 {
        strata_crc32c_extend(crc, bytes.baseAddress, bytes.count)
    }

    /// The checksum of `bytes`, extending `crc`, the checksum of the bytes before them (0 to start).
    static func checksum<C: ContiguousBytes>(_ bytes: C, extending crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, extending: crc) }
    }

    /// `crc` masked for storage next to the data it covers (LevelDB's scheme), so that the
    /// checksum of bytes that themselves contain checksums stays well distributed.
    static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xa282_ead8
    }

    /// The checksum that ``mask(_:)`` turned into `masked`.
    static func unmask(_ masked: UInt32) -> UInt32 {
        let rotated = masked &- 0xa282_ead8
        return (rotated >> 17) | (rotated << 15)
    }
}
