import Foundation
@testable import StrataStore
import StrataTestSupport
import Testing

/// How checkpoints store the pages of an object index: packed, then LZ4.
@Suite struct IndexPageCodecTests {
    /// A page's bytes: `locations` and `sizes` by slot, every other slot empty.
    static func page(locations: [Int: UInt64], sizes: [Int: UInt32]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: IndexPage.byteCount)
        bytes.withUnsafeMutableBytes { raw in
            for (slot, location) in locations { raw.storeBytes(of: location, toByteOffset: slot * 8, as: UInt64.self) }
            for (slot, size) in sizes {
                raw.storeBytes(of: size, toByteOffset: IndexPage.capacity * 8 + slot * 4, as: UInt32.self)
            }
        }
        return bytes
    }

    static func roundTrip(_ page: [UInt8]) throws -> (stored: [UInt8], decoded: [UInt8]) {
        var stored: [UInt8] = []
        page.withUnsafeBytes { IndexPageCodec.encode($0, appendingTo: &stored) }
        var decoded = [UInt8](repeating: 0xAA, count: IndexPage.byteCount)
        try stored.withUnsafeBytes { source in
            try decoded.withUnsafeMutableBytes { try IndexPageCodec.decode(source, into: $0) }
        }
        return (stored, decoded)
    }

    @Test("a page of any locations, starts and sizes decodes to the same bytes")
    func anyPageRoundTrips() throws {
        var random = SystemRandomNumberGenerator()
        for round in 0..<8 {
            var locations: [Int: UInt64] = [:]
            var sizes: [Int: UInt32] = [:]
            for slot in 0..<IndexPage.capacity where round == 0 || Int.random(in: 0..<4, using: &random) != 0 {
                let place = UInt64.random(in: 1...0xFFFF_FFFF_FFFF, using: &random)
                let start = round % 2 == 0 ? UInt64.random(in: 0...0xFFFF, using: &random) : 0
                locations[slot] = start << 48 | place
                sizes[slot] = round == 0 ? UInt32.max : UInt32.random(in: 0...UInt32.max, using: &random)
            }
            let page = Self.page(locations: locations, sizes: sizes)
            #expect(try Self.roundTrip(page).decoded == page)
        }
        let empty = Self.page(locations: [:], sizes: [:])
        let (stored, decoded) = try Self.roundTrip(empty)
        #expect(decoded == empty)
        #expect(stored.count <= 100, "an empty page stores \(stored.count) bytes")
    }

    @Test("rows written in order store in under 3 bytes a key")
    func rowsInOrderStoreSmall() throws {
        // 80 rows a block, each starting where the one before it ends, of 140 to 259 bytes.
        var locations: [Int: UInt64] = [:]
        var sizes: [Int: UInt32] = [:]
        var start: UInt64 = 0
        for slot in 0..<IndexPage.capacity {
            let block = UInt64(1_000 + slot / 80)
            if slot % 80 == 0 { start = 0 }
            let size = UInt32(140 + (slot * 7919) % 120)
            locations[slot] = (start + 1) << 48 | (block + 1) << 16 | UInt64(slot % 80)
            sizes[slot] = size
            start += UInt64(size)
        }
        let page = Self.page(locations: locations, sizes: sizes)
        let (stored, decoded) = try Self.roundTrip(page)
        #expect(decoded == page)
        #expect(stored.count < 3 * IndexPage.capacity, "\(stored.count) bytes for \(IndexPage.capacity) keys")
    }

    @Test("a stored page that is not one the codec wrote does not decode")
    func damagedPagesDoNotDecode() throws {
        let page = Self.page(locations: [1: 1 << 16 | 3], sizes: [1: 200])
        let (stored, _) = try Self.roundTrip(page)
        var damaged: [[UInt8]] = []
        damaged.append([9] + stored.dropFirst())  // An unknown codec.
        damaged.append(Array(stored.dropLast(3)))  // Cut short.
        var longer = stored
        longer.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(1 << 30), toByteOffset: 1, as: UInt32.self) }
        damaged.append(longer)  // A packed length past the largest page.
        var raw: [UInt8] = [0]
        withUnsafeBytes(of: UInt32(3).littleEndian) { raw += $0 }
        damaged.append(raw + [0, 0, 0])  // Packed, with fewer entries than slots.
        for bytes in damaged {
            var decoded = [UInt8](repeating: 0, count: IndexPage.byteCount)
            #expect(throws: BinaryReader.Malformed.self) {
                try bytes.withUnsafeBytes { source in
                    try decoded.withUnsafeMutableBytes { try IndexPageCodec.decode(source, into: $0) }
                }
            }
        }
    }

    @Test("a checkpoint of rows written in order keeps its object index in under 4 bytes a key, and reopens")
    func checkpointIndexIsSmall() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let rows = try LazyIndexTests.makeStore(at: url, configuration: TestSchema.configuration())
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path + "/checkpoints")
        let file = url.path + "/checkpoints/" + (try #require(names.first { $0.hasSuffix(".ckpt") }))
        let layout = Checkpoint.Layout([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        let stored = layout.pages[TestSchema.employee].reduce(0) { $0 + $1.count }
        #expect(stored < 4 * rows.count, "\(stored) bytes of pages for \(rows.count) keys")
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        for (key, row) in rows { #expect(try store.read(TestSchema.employee, key: key) == row) }
        try store.close()
        #expect(try Store.verify(at: url).problems == [])
    }
}
