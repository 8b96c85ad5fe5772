import Foundation
import Testing
@testable import StrataStore

/// Rows encoded through the codec's pointer path (no URI or decimal, at most 1 KiB) and through
/// its value-by-value path (a URI, a decimal, or a longer row) decode to the values encoded,
/// one after the other in one writer, with nulls anywhere in the bitmap.
@Suite struct RowEncodingTests {
    static let codec = RowCodec(RoundTripTests.schema.entities[RoundTripTests.allTypes])

    /// The AllTypes rows, as they are and without their URI and decimal (the pointer path when short).
    static var rows: [Row] {
        RoundTripTests.rows.flatMap { row -> [Row] in
            var plain = row
            plain.values[5] = .null
            plain.values[11] = .null
            var short = plain
            for column in short.values.indices {
                if case .string(let text) = short[column], text.utf8.count > 100 {
                    short.values[column] = .string(String(text.prefix(100)))
                }
                if case .data(let data) = short[column], data.count > 100 {
                    short.values[column] = .data(data.prefix(100))
                }
            }
            // Nulls in every column but one, by turns.
            let nulls = short.values.indices.map { kept in
                Row(short.values.indices.map { $0 == kept ? short[$0] : .null })
            }
            return [row, plain, short] + nulls
        }
    }

    @Test func everyRowDecodesToItsValuesInOneWriter() throws {
        var writer = BinaryWriter()
        var ends: [Int] = []
        for row in Self.rows {
            Self.codec.encode(row, into: &writer)
            ends.append(writer.count)
        }
        var start = 0
        for (row, end) in zip(Self.rows, ends) {
            let decoded = try writer.bytes.withUnsafeBytes {
                try Self.codec.decode(UnsafeRawBufferPointer(rebasing: $0[start..<end]))
            }
            #expect(RoundTripTests.identical(decoded, row), "\(RoundTripTests.differences(decoded, row))")
            start = end
        }
    }

    @Test func aRowLongerThanTheScratchRoomEncodesAsAShortOneDoes() throws {
        for length in [1_000, 1_023, 1_024, 1_025, 5_000] {
            var row = Row([Value](repeating: .null, count: Self.codec.types.count))
            row.values[2] = .int(Int64(length))
            row.values[7] = .string(String(repeating: "é", count: length / 2))
            row.values[9] = .data(Data(count: length))
            var writer = BinaryWriter()
            Self.codec.encode(row, into: &writer)
            let decoded = try writer.bytes.withUnsafeBytes { try Self.codec.decode($0) }
            #expect(
                RoundTripTests.identical(decoded, row), "length \(length): \(RoundTripTests.differences(decoded, row))")
        }
    }
}
