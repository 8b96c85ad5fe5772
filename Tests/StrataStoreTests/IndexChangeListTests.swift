import Testing
@testable import StrataStore

/// ``IndexChangeList`` keeps its changes in order whichever way they are appended: one at a
/// time, copied into the last segment, or joined as segments, from a list made with room
/// reserved or not.
@Suite struct IndexChangeListTests {
    static func list(_ keys: Range<Int>, reserving: Int? = nil) -> IndexChangeList {
        var list = reserving.map { IndexChangeList(reservingCapacity: $0) } ?? IndexChangeList()
        for key in keys {
            list.append(OrderedIndexChange(value: .int(Int64(key)), key: PrimaryKey(key), inserts: true))
        }
        return list
    }

    @Test(arguments: [nil, 0, 8, 5_000])
    func appendsKeepTheOrder(reserving: Int?) {
        var list = Self.list(0..<0, reserving: reserving)
        var expected: [PrimaryKey] = []
        var next = 0
        // Few changes (copied), many (joined), few again, one at a time.
        for size in [3, IndexChangeList.copiedAppend + 10, 7, 2 * IndexChangeList.copiedAppend, 1] {
            list.append(contentsOf: Self.list(next..<(next + size)))
            expected += (next..<(next + size)).map { PrimaryKey($0) }
            next += size
            list.append(OrderedIndexChange(value: .int(Int64(next)), key: PrimaryKey(next), inserts: true))
            expected.append(PrimaryKey(next))
            next += 1
        }
        #expect(list.count == expected.count)
        #expect(list.map(\.key) == expected)
        #expect(list.indices.map { list[$0].key } == expected)
    }
}
