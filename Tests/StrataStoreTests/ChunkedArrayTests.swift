import Testing
@testable import StrataStore

/// Tests of ``ChunkedArray``, the store's block table and history directory: it must read and
/// change like an array across its chunk boundaries, and a copy must never see another's changes.
@Suite struct ChunkedArrayTests {
    /// Elements across three chunks and a part of a fourth.
    static let length = ChunkedArray<Int>.chunkCount * 3 + 17

    /// `0..<length`, appended one at a time.
    static func filled(_ length: Int = length) -> ChunkedArray<Int> {
        var array = ChunkedArray<Int>()
        for value in 0..<length { array.append(value) }
        return array
    }

    @Test func appendsReadBackInOrderAcrossChunks() {
        let array = Self.filled()
        #expect(array.count == Self.length)
        #expect(Array(array) == Array(0..<Self.length))
        #expect(array[ChunkedArray<Int>.chunkCount] == ChunkedArray<Int>.chunkCount)
        #expect(array.last == Self.length - 1)
        #expect(Array(array[5..<9]) == [5, 6, 7, 8])
        #expect(array.partitioningIndex { $0 >= 10_000 } == 10_000)
    }

    /// Appending runs (from mid-chunk, across chunk boundaries, after vacant positions) reads
    /// back as appending one at a time, holds no more than the elements and one chunk of room,
    /// and leaves a copy taken before unchanged.
    @Test func appendingRunsReadsBackAsAppendingOneAtATime() {
        let chunk = ChunkedArray<Int>.chunkCount
        var array = ChunkedArray<Int>()
        var expected: [Int] = []
        array.append(contentsOf: [7, 8, 9])
        expected += [7, 8, 9]
        let before = array
        for run in [chunk - 5, 2 * chunk + 3, 0, 1, chunk] {
            let values = Array(expected.count..<(expected.count + run))
            array.append(contentsOf: values)
            expected += values
        }
        array.appendVacant(chunk + 2, filler: -1)
        expected += Array(repeating: -1, count: chunk + 2)
        array.append(contentsOf: [1, 2])
        expected += [1, 2]
        #expect(Array(array) == expected)
        #expect(array.count == expected.count)
        #expect(Array(before) == [7, 8, 9])
        #expect(array.allocatedBytes < (expected.count + chunk) * MemoryLayout<Int>.stride)
    }

    @Test func copiesAreIndependentOfEachOthersChanges() {
        var original = Self.filled()
        var copy = original
        copy.append(-1)
        copy[3] = -3
        copy[ChunkedArray<Int>.chunkCount * 2 + 1] = -5
        #expect(Array(original) == Array(0..<Self.length), "the copy's changes did not reach the original")
        original[3] = 33
        original.append(-7)
        #expect(copy[3] == -3)
        #expect(copy.count == Self.length + 1 && copy.last == -1)
        #expect(original.count == Self.length + 1 && original.last == -7)
        #expect(original[ChunkedArray<Int>.chunkCount * 2 + 1] == ChunkedArray<Int>.chunkCount * 2 + 1)
    }

    @Test(arguments: [0, 1, ChunkedArray<Int>.chunkCount - 1, ChunkedArray<Int>.chunkCount, 10_000, length])
    func removeFirstKeepsTheRestAndAppendsAfterThem(removed: Int) {
        var array = Self.filled()
        let copy = array
        array.removeFirst(removed)
        #expect(Array(array) == Array(removed..<Self.length))
        for value in Self.length..<(Self.length + ChunkedArray<Int>.chunkCount + 3) { array.append(value) }
        #expect(Array(array) == Array(removed..<(Self.length + ChunkedArray<Int>.chunkCount + 3)))
        array[0] = -1
        #expect(Array(copy) == Array(0..<Self.length), "the copy kept every element")
    }

    @Test func sortsInPlaceAndEmpties() {
        var array = ChunkedArray<Int>()
        for value in (0..<Self.length).reversed() { array.append(value) }
        array.sort()
        #expect(Array(array) == Array(0..<Self.length))
        array.removeAll()
        #expect(array.isEmpty)
        array.append(4)
        #expect(Array(array) == [4])
    }

    @Test func allocatedBytesFollowTheElementsNotTheirDoubling() {
        let array = Self.filled()
        let stride = MemoryLayout<Int>.stride
        #expect(array.allocatedBytes >= Self.length * stride)
        // Full chunks hold exactly their elements; only the last and the list may have room.
        #expect(array.allocatedBytes < (Self.length + ChunkedArray<Int>.chunkCount) * stride)
    }

    /// Chunks whose elements are all vacant free their storage and read as the filler; the
    /// others, and copies taken before, keep their elements.
    @Test func vacatedChunksFreeTheirStorageAndReadAsTheFiller() {
        let chunk = ChunkedArray<Int>.chunkCount
        var array = Self.filled()
        let copy = array
        let before = array.allocatedBytes
        // The first two chunks and the second half of the third are vacant.
        array.vacateChunks(filler: -1) { $0 < 2 * chunk || $0 >= 2 * chunk + chunk / 2 && $0 < 3 * chunk }
        #expect(array.count == Self.length)
        #expect(array.allocatedBytes <= before - 2 * chunk * MemoryLayout<Int>.stride)
        #expect(array.occupiedRanges == [(2 * chunk)..<(3 * chunk), (3 * chunk)..<Self.length])
        #expect(Array(array) == Array(repeating: -1, count: 2 * chunk) + Array((2 * chunk)..<Self.length))
        #expect(Array(copy) == Array(0..<Self.length), "the copy kept every element")
    }

    /// Writing into a vacated chunk gives it storage again, every other position holding the
    /// filler; appending after a vacated last chunk does too.
    @Test func writingIntoAVacatedChunkOccupiesItAgain() {
        let chunk = ChunkedArray<Int>.chunkCount
        var array = Self.filled()
        array.vacateChunks(filler: -1) { $0 < chunk || $0 >= 3 * chunk }
        #expect(array.occupiedRanges == [chunk..<(2 * chunk), (2 * chunk)..<(3 * chunk)])
        array[5] = 5
        array.append(-2)
        #expect(array.occupiedRanges.first == 0..<chunk && array.occupiedRanges.last == (3 * chunk)..<(Self.length + 1))
        var expected = Array(0..<Self.length).map { $0 < chunk || $0 >= 3 * chunk ? -1 : $0 } + [-2]
        expected[5] = 5
        #expect(Array(array) == expected)
    }

    /// Vacant positions appended in bulk take no storage for whole chunks, and appends after
    /// them land at the right positions; the first chunk's removed elements never keep it.
    @Test(arguments: [0, 1, 5, ChunkedArray<Int>.chunkCount - 3])
    func appendedVacantPositionsTakeNoStorageForWholeChunks(before: Int) {
        let chunk = ChunkedArray<Int>.chunkCount
        var array = ChunkedArray<Int>()
        for value in 0..<before { array.append(value) }
        array.appendVacant(3 * chunk + 7, filler: -1)
        array.append(-2)
        let count = before + 3 * chunk + 8
        #expect(array.count == count)
        #expect(array.allocatedBytes < 3 * chunk * MemoryLayout<Int>.stride)
        #expect(Array(array) == Array(0..<before) + Array(repeating: -1, count: 3 * chunk + 7) + [-2])
        array.removeFirst(before + 2)
        array.vacateChunks(filler: -1) { $0 == -1 }
        #expect(array.occupiedRanges == [(count - before - 2 - 1 - ((count - 1) & (chunk - 1)))..<(count - before - 2)])
    }
}
