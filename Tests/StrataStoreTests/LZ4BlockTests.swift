import Foundation
import StrataTestSupport
import StrataSynchronization
import Synchronization
import Testing
@testable import StrataStore

/// Blocks compressed with a reused compression state: each is an independent LZ4 block that
/// decompresses on its own, whatever was compressed before it with the same state and on other
/// threads at the same time.
@Suite("LZ4 blocks")
struct LZ4BlockTests {
    /// Bytes that compress: words from a small vocabulary, chosen by a seeded generator.
    static func compressible(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        let words = ["employee", "department", "salary", "name", "2026-11-23", "Strata", "row"]
        var bytes: [UInt8] = []
        while bytes.count < count { bytes += Array(words[Int(generator.next() % 7)].utf8) }
        return Array(bytes.prefix(count))
    }

    /// Bytes that do not compress.
    static func random(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    /// Compresses `raw` after a prefix already in `output`, checks that the block decompresses
    /// to `raw` on its own, and returns whether it was compressed.
    static func roundTrip(_ raw: [UInt8]) -> Bool {
        var output: [UInt8] = [7, 7, 7]
        guard let size = raw.withUnsafeBytes({ LZ4.compress($0, appendingTo: &output) }) else {
            #expect(output == [7, 7, 7], "a block that does not compress appends nothing")
            return false
        }
        #expect(output.count == 3 + size)
        #expect(size <= raw.count - raw.count / 16)
        let back = output[3...].withUnsafeBytes { LZ4.decompress($0, rawCount: raw.count) }
        #expect(back == raw)
        return true
    }

    @Test("Blocks in sequence decompress independently, including after one that did not compress")
    func sequence() {
        var compressed = 0
        for index in 0..<200 {
            let size = [100, 4_000, 70_000, 300_000][index % 4]
            let raw =
                index % 7 == 3 ? Self.random(size, seed: UInt64(index)) : Self.compressible(size, seed: UInt64(index))
            if Self.roundTrip(raw) { compressed += 1 }
        }
        #expect(compressed >= 170)
        #expect(!Self.roundTrip(Self.random(10_000, seed: 99)))
        #expect(Self.roundTrip(Self.compressible(10_000, seed: 99)))
    }

    @Test("Blocks compressed on many threads at once decompress to their input")
    func concurrent() {
        // Threads of their own, more than the pool keeps states for, so that states are made
        // when the pool is empty and let go when it is full.
        let group = DispatchGroup()
        let results = Lock<[Bool]>([])
        for thread in 0..<24 {
            group.enter()
            Thread {
                let allCompressed = (0..<40).allSatisfy { index in
                    Self.roundTrip(Self.compressible(1_000 + index * 997, seed: UInt64(thread * 1_000 + index)))
                }
                results.withLock { $0.append(allCompressed) }
                group.leave()
            }.start()
        }
        group.wait()
        #expect(results.withLock { $0 } == [Bool](repeating: true, count: 24))
    }

    @Test("A damaged block is refused, not decompressed into wrong bytes")
    func damaged() {
        let raw = Self.compressible(20_000, seed: 5)
        var output: [UInt8] = []
        let size = raw.withUnsafeBytes { LZ4.compress($0, appendingTo: &output) }
        #expect(size != nil)
        #expect(output.withUnsafeBytes { LZ4.decompress($0, rawCount: raw.count + 1) } == nil)
        let truncated = Array(output.dropLast(10))
        #expect(truncated.withUnsafeBytes { LZ4.decompress($0, rawCount: raw.count) } == nil)
    }
}
