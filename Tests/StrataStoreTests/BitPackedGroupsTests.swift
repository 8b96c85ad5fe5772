@testable import StrataStore
import Testing

/// Bit-packed groups: every width from 0 to 64 round-trips across group boundaries, in exactly
/// the bytes the widths need; cut or damaged bytes do not read.
@Suite struct BitPackedGroupsTests {
    static func write(_ values: [UInt64]) -> [UInt8] {
        var output = BinaryWriter()
        var writer = BitPackedGroups.Writer()
        for value in values { writer.append(value, to: &output) }
        writer.finish(to: &output)
        return output.bytes
    }

    static func read(_ bytes: [UInt8], count: Int) throws -> [UInt64] {
        var values: [UInt64] = []
        try bytes.withUnsafeBytes { raw in
            var reader = BinaryReader(raw)
            try BitPackedGroups.read(count: count, from: &reader) { index, value in
                #expect(index == values.count)
                values.append(value)
            }
            #expect(reader.isAtEnd)
        }
        return values
    }

    @Test(arguments: [0, 1, 127, 128, 129, 300])
    func everyWidthRoundTripsInTheBytesItNeeds(count: Int) throws {
        var random = SystemRandomNumberGenerator()
        for width in 0...64 {
            let values = (0..<count).map { index -> UInt64 in
                let value = width == 0 ? 0 : UInt64.random(in: 0...UInt64.max, using: &random) >> (64 - width)
                // The widest value of each group sets its width.
                return index % BitPackedGroups.size == 0 && width > 0 ? value | 1 << (width - 1) : value
            }
            let bytes = Self.write(values)
            let groups = stride(from: 0, to: count, by: BitPackedGroups.size).map {
                1 + (width * min(BitPackedGroups.size, count - $0) + 7) / 8
            }
            #expect(bytes.count == groups.reduce(0, +), "width \(width)")
            #expect(try Self.read(bytes, count: count) == values, "width \(width)")
        }
    }

    @Test func cutBytesAndWidthsOver64DoNotRead() throws {
        let bytes = Self.write((0..<200).map { UInt64($0 * 977) })
        #expect(throws: BinaryReader.Malformed.self) { try Self.read(Array(bytes.dropLast()), count: 200) }
        var wide = bytes
        wide[0] = 65
        #expect(throws: BinaryReader.Malformed.self) { try Self.read(wide, count: 200) }
    }
}
