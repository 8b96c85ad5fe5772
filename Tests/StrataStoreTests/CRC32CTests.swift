import CStrataSupport
import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Tests of ``CRC32C`` and the C functions behind it.
@Suite struct CRC32CTests {
    /// The checksum of `bytes` in one call.
    private func crc(_ bytes: [UInt8]) -> UInt32 {
        CRC32C.checksum(bytes)
    }

    /// Published CRC-32C check values (RFC 3720 appendix B.4 and the usual "123456789").
    @Test func knownVectors() {
        #expect(crc([]) == 0)
        #expect(crc(Array("123456789".utf8)) == 0xE306_9283)
        #expect(crc([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(crc([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(crc((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(crc((0..<32).reversed().map { UInt8($0) }) == 0x113F_DB5C)
        #expect(CRC32C.checksum(Data("123456789".utf8)) == 0xE306_9283)
    }

    /// The portable path gives the same check values.
    @Test func portableKnownVectors() {
        let digits = Array("123456789".utf8)
        #expect(strata_crc32c_extend_portable(0, digits, digits.count) == 0xE306_9283)
        let zeros = [UInt8](repeating: 0, count: 32)
        #expect(strata_crc32c_extend_portable(0, zeros, zeros.count) == 0x8A91_36AA)
        #expect(strata_crc32c_extend_portable(0, nil, 0) == 0)
    }

    /// Extending a checksum piece by piece gives the checksum of the whole.
    @Test func extendingMatchesWhole() {
        var generator = SplitMix64(seed: 1)
        let bytes = (0..<100_000).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let whole = crc(bytes)
        for _ in 0..<50 {
            let cut = Int.random(in: 0...bytes.count, using: &generator)
            let first = crc(Array(bytes[..<cut]))
            let extended = bytes[cut...].withUnsafeBytes { CRC32C.checksum($0, extending: first) }
            #expect(extended == whole, "cut at \(cut)")
        }
    }

    /// The instruction path (when the CPU has one) agrees with the table path on random buffers
    /// of random lengths, start alignments and starting checksums, including lengths long enough
    /// for the interleaved streams.
    @Test func hardwareMatchesPortable() {
        var generator = SplitMix64(seed: 2)
        let storage = (0..<(200_000 + 8)).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        storage.withUnsafeBytes { buffer in
            for round in 0..<2_000 {
                let length =
                    round < 1_900
                    ? Int.random(in: 0...4096, using: &generator)
                    : Int.random(in: 4096...200_000, using: &generator)
                let offset = Int.random(in: 0..<8, using: &generator)
                let seed = UInt32.random(in: .min ... .max, using: &generator)
                let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + length)])
                let fast = strata_crc32c_extend(seed, slice.baseAddress, slice.count)
                let portable = strata_crc32c_extend_portable(seed, slice.baseAddress, slice.count)
                #expect(fast == portable, "length \(length), offset \(offset), seed \(seed)")
            }
        }
    }

    /// Masking is LevelDB's, changes the value and is undone by unmasking.
    @Test func maskRoundTrip() {
        #expect(CRC32C.mask(0) == 0xA282_EAD8)
        #expect(CRC32C.mask(0xE306_9283) == 0xC78A_B0E5)
        #expect(CRC32C.mask(CRC32C.mask(0xE306_9283)) != 0xE306_9283)
        var generator = SplitMix64(seed: 3)
        for _ in 0..<10_000 {
            let value = UInt32.random(in: .min ... .max, using: &generator)
            #expect(CRC32C.unmask(CRC32C.mask(value)) == value)
        }
    }
}
