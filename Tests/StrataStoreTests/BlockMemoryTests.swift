import Dispatch
import Synchronization
import Testing
@testable import StrataStore

/// Tests of ``BlockMemory``, each on a memory of its own (the shared one serves every store).
@Suite struct BlockMemoryTests {
    /// Whether blocks of the default size take slots of mapped chunks (Linux); elsewhere every
    /// block is on the heap.
    #if os(Linux)
    static let mapsChunks = true
    #else
    static let mapsChunks = false
    #endif

    /// Where ``fill(_:seed:)`` writes the seed: 8 bytes at the start, the middle and the end of
    /// `memory` (its first byte when it is smaller).
    static func marks(_ memory: UnsafeMutableRawBufferPointer) -> [Int] {
        memory.count >= 8 ? [0, memory.count / 2 - 4, memory.count - 8] : (memory.isEmpty ? [] : [0])
    }

    /// Writes `seed` at the start, middle and end of `memory`: a slot another block also took
    /// would be written over there.
    static func fill(_ memory: UnsafeMutableRawBufferPointer, seed: Int) {
        for offset in marks(memory) {
            if memory.count >= 8 { memory.storeBytes(of: seed, toByteOffset: offset, as: Int.self) } else { memory[offset] = UInt8(truncatingIfNeeded: seed) }
        }
    }

    /// Whether `memory` still holds what ``fill(_:seed:)`` wrote with `seed`.
    static func holds(_ memory: UnsafeMutableRawBufferPointer, seed: Int) -> Bool {
        marks(memory).allSatisfy { offset in
            memory.count >= 8 ? memory.loadUnaligned(fromByteOffset: offset, as: Int.self) == seed : memory[offset] == UInt8(truncatingIfNeeded: seed)
        }
    }

    /// Blocks of the default size take slots of huge-page chunks, 128 a chunk, none overlapping
    /// another; freeing them all unmaps the chunks beyond those kept free, which the next blocks
    /// take again.
    @Test func defaultSizedBlocksShareChunksThatAreUnmappedWhenFree() {
        let memory = BlockMemory(retainedEmptyChunks: 1)
        let count = 3 * BlockMemory.slotsPerChunk + 5
        var blocks: [UnsafeMutableRawBufferPointer] = []
        for index in 0..<count {
            let block = memory.allocate(BlockMemory.slotSize - index % 100)
            Self.fill(block, seed: index)
            blocks.append(block)
        }
        #expect(memory.chunkCount == (Self.mapsChunks ? 4 : 0))
        for (index, block) in blocks.enumerated() { #expect(Self.holds(block, seed: index)) }
        // Freed out of order: every other block first.
        for index in stride(from: 0, to: count, by: 2) { memory.release(blocks[index]) }
        for index in stride(from: 1, to: count, by: 2) { #expect(Self.holds(blocks[index], seed: index)) }
        for index in stride(from: 1, to: count, by: 2) { memory.release(blocks[index]) }
        #expect(memory.chunkCount == (Self.mapsChunks ? 1 : 0))
        // A memory keeping every free chunk keeps all four.
        let keeping = BlockMemory(retainedEmptyChunks: 4)
        let kept = (0..<count).map { _ in keeping.allocate(BlockMemory.slotSize) }
        kept.forEach(keeping.release)
        #expect(keeping.chunkCount == (Self.mapsChunks ? 4 : 0))
        // The kept chunk serves the next blocks: no chunk is mapped for them.
        let again = (0..<BlockMemory.slotsPerChunk).map { _ in memory.allocate(BlockMemory.slotSize) }
        #expect(memory.chunkCount == (Self.mapsChunks ? 1 : 0))
        again.forEach(memory.release)
    }

    /// Blocks of at most half a slot (a small commit's) or larger than a slot (one holding a
    /// large row) are heap memory: no chunk is mapped for them, and their bytes hold.
    @Test func smallAndLargeBlocksAreOnTheHeap() {
        let memory = BlockMemory(retainedEmptyChunks: 1)
        let sizes = [0, 1, 100, BlockMemory.slotSize / 2, BlockMemory.slotSize + 1, 4 * BlockMemory.slotSize]
        let blocks = sizes.map { memory.allocate($0) }
        for (index, block) in blocks.enumerated() {
            #expect(block.count >= sizes[index])
            Self.fill(block, seed: index)
        }
        #expect(memory.chunkCount == 0)
        for (index, block) in blocks.enumerated() { #expect(Self.holds(block, seed: index)) }
        blocks.forEach(memory.release)
        #expect(memory.chunkCount == 0)
        #expect(BlockMemory.footprint(ofBlockBytes: 100) == 100)
        #expect(BlockMemory.footprint(ofBlockBytes: BlockMemory.slotSize - 1) == BlockMemory.slotSize)
        #expect(BlockMemory.footprint(ofBlockBytes: BlockMemory.slotSize + 1) == BlockMemory.slotSize + 1)
    }

    /// Threads taking and freeing blocks at once never get a slot another thread holds: each
    /// block keeps the bytes its thread wrote until that thread frees it.
    @Test func concurrentBlocksNeverShareASlot() {
        let memory = BlockMemory(retainedEmptyChunks: 1)
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var held: [(block: UnsafeMutableRawBufferPointer, seed: Int)] = []
            for round in 0..<2_000 {
                let seed = thread * 1_000_000 + round
                let block = memory.allocate(BlockMemory.slotSize - round % 7)
                Self.fill(block, seed: seed)
                held.append((block, seed))
                if held.count > 40 || round % 3 == 0 {
                    let (oldest, oldestSeed) = held.removeFirst()
                    if !Self.holds(oldest, seed: oldestSeed) { failures.add(1, ordering: .relaxed) }
                    memory.release(oldest)
                }
            }
            for (block, seed) in held {
                if !Self.holds(block, seed: seed) { failures.add(1, ordering: .relaxed) }
                memory.release(block)
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(memory.chunkCount == (Self.mapsChunks ? 1 : 0))
    }
}
