import Dispatch
import StrataTestSupport
import Synchronization
import Testing
@testable import StrataStore

/// Tests of ``LRUCache``.
@Suite struct LRUCacheTests {
    /// The least recently used element goes first, and a lookup makes an element recent.
    @Test func evictsLeastRecentlyUsed() {
        let cache = LRUCache<String>(capacity: 3)
        cache.insert("one", forKey: 1, cost: 1)
        cache.insert("two", forKey: 2, cost: 1)
        cache.insert("three", forKey: 3, cost: 1)
        #expect(cache.value(forKey: 1) == "one")
        cache.insert("four", forKey: 4, cost: 1)
        #expect(cache.value(forKey: 2) == nil)
        #expect(cache.value(forKey: 1) == "one")
        #expect(cache.value(forKey: 3) == "three")
        #expect(cache.value(forKey: 4) == "four")
        cache.insert("five", forKey: 5, cost: 2)
        #expect(cache.value(forKey: 1) == nil)
        #expect(cache.value(forKey: 3) == nil)
        #expect(cache.value(forKey: 4) == "four")
        #expect(cache.value(forKey: 5) == "five")
        #expect(cache.count == 2)
        #expect(cache.totalCost == 3)
    }

    /// A lookup that prefetches from an element's read address only hints the CPU: an address
    /// that no longer holds anything (here one that never did, and one freed) is never read, and
    /// the lookup finds the element and counts its hit as any lookup does.
    @Test func prefetchingLookupsNeverReadThroughTheAddress() {
        let cache = LRUCache<String>(capacity: 4)
        cache.insert("never", forKey: 1, cost: 1, readAt: UnsafeRawPointer(bitPattern: 0x10))
        let freed = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        cache.insertIfRoom("freed", forKey: 2, cost: 1, readAt: UnsafeRawPointer(freed))
        freed.deallocate()
        cache.insert("none", forKey: 3, cost: 1)
        #expect(cache.value(forKey: 1, prefetching: 1 << 20) == "never")
        #expect(cache.value(forKey: 2, prefetching: 8) == "freed")
        #expect(cache.value(forKey: 3, prefetching: 0) == "none")
        #expect(cache.value(forKey: 4, prefetching: 0) == nil)
        #expect(cache.hits == 3 && cache.misses == 1)
    }

    /// `insertIfRoom` fills free room only, never evicting nor replacing, and what it inserts
    /// goes first when a regular insert needs room, unless it was looked up since.
    @Test func insertIfRoomNeverEvicts() {
        let cache = LRUCache<String>(capacity: 4)
        cache.insert("hot", forKey: 1, cost: 2)
        cache.insertIfRoom("cold", forKey: 2, cost: 1)
        cache.insertIfRoom("warm", forKey: 3, cost: 1)
        cache.insertIfRoom("none", forKey: 4, cost: 1)
        cache.insertIfRoom("other", forKey: 1, cost: 1)
        #expect(cache.value(forKey: 4) == nil, "a full cache takes nothing")
        #expect(cache.value(forKey: 1) == "hot", "an element is not replaced")
        #expect(cache.totalCost == 4)
        #expect(cache.value(forKey: 3) == "warm")
        cache.insert("new", forKey: 5, cost: 1)
        #expect(cache.value(forKey: 2) == nil, "the element inserted into free room is evicted first")
        #expect(cache.value(forKey: 1) == "hot")
        #expect(cache.value(forKey: 3) == "warm")
        #expect(cache.value(forKey: 5) == "new")
        let empty = LRUCache<String>(capacity: 0)
        empty.insertIfRoom("x", forKey: 1, cost: 0)
        #expect(empty.count == 0, "a cache of no capacity takes nothing")
    }

    /// The total cost never exceeds the capacity; replacing an element replaces its cost; an
    /// element costing more than the capacity is not kept and drops the one it replaces.
    @Test func boundedInBytes() {
        let cache = LRUCache<Int>(capacity: 100)
        cache.insert(1, forKey: 1, cost: 60)
        cache.insert(2, forKey: 2, cost: 40)
        #expect(cache.totalCost == 100)
        cache.insert(3, forKey: 1, cost: 10)
        #expect(cache.totalCost == 50)
        #expect(cache.value(forKey: 1) == 3)
        cache.insert(4, forKey: 3, cost: 55)
        #expect(cache.value(forKey: 2) == nil)
        #expect(cache.totalCost == 65)
        cache.insert(5, forKey: 1, cost: 101)
        #expect(cache.value(forKey: 1) == nil)
        #expect(cache.totalCost == 55)
        #expect(cache.count == 1)
        cache.insert(6, forKey: 4, cost: 100)
        #expect(cache.count == 1)
        #expect(cache.value(forKey: 4) == 6)
    }

    /// Lookups count hits and misses.
    @Test func countsHitsAndMisses() {
        let cache = LRUCache<Int>(capacity: 10)
        cache.insert(7, forKey: 7, cost: 1)
        _ = cache.value(forKey: 7)
        _ = cache.value(forKey: 7)
        _ = cache.value(forKey: 8)
        #expect(cache.hits == 2)
        #expect(cache.misses == 1)
    }

    /// A cache of capacity 0 keeps nothing.
    @Test func zeroCapacityCachesNothing() {
        let cache = LRUCache<Int>(capacity: 0)
        cache.insert(1, forKey: 1, cost: 0)
        cache.insert(2, forKey: 2, cost: 5)
        #expect(cache.value(forKey: 1) == nil)
        #expect(cache.value(forKey: 2) == nil)
        #expect(cache.count == 0)
        #expect(cache.misses == 2)
    }

    /// Removing one element or all of them frees their cost and slots for reuse.
    @Test func removes() {
        let cache = LRUCache<Int>(capacity: 10)
        for key in UInt64(0)..<5 { cache.insert(Int(key), forKey: key, cost: 2) }
        cache.removeValue(forKey: 2)
        cache.removeValue(forKey: 99)
        #expect(cache.count == 4)
        #expect(cache.totalCost == 8)
        #expect(cache.value(forKey: 2) == nil)
        cache.insert(20, forKey: 20, cost: 2)
        #expect(cache.value(forKey: 0) == 0)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache.value(forKey: 0) == nil)
        cache.insert(30, forKey: 30, cost: 10)
        #expect(cache.value(forKey: 30) == 30)
    }

    /// Random operations give the same results as a simple list ordered by recency.
    @Test func matchesModel() {
        var generator = SplitMix64(seed: 4)
        let capacity = 200
        let cache = LRUCache<Int>(capacity: capacity)
        var model: [(key: UInt64, value: Int, cost: Int)] = []
        for step in 0..<20_000 {
            let key = UInt64.random(in: 0..<64, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                let cost = Int.random(in: 0...(step % 100 == 0 ? 250 : 30), using: &generator)
                cache.insert(step, forKey: key, cost: cost)
                model.removeAll { $0.key == key }
                if cost <= capacity { model.insert((key, step, cost), at: 0) }
                while model.reduce(0, { $0 + $1.cost }) > capacity { model.removeLast() }
            case 4:
                cache.removeValue(forKey: key)
                model.removeAll { $0.key == key }
            default:
                let expected = model.firstIndex { $0.key == key }.map { model.remove(at: $0) }
                if let expected { model.insert(expected, at: 0) }
                #expect(cache.value(forKey: key) == expected?.value, "step \(step)")
            }
            #expect(cache.count == model.count, "step \(step)")
            #expect(cache.totalCost == model.reduce(0) { $0 + $1.cost }, "step \(step)")
        }
    }

    /// Many threads using one cache keep its counts and bound consistent.
    @Test func concurrentUse() {
        let capacity = 1_000
        let cache = LRUCache<[UInt64]>(capacity: capacity)
        let threads = 8
        let lookupsPerThread = 20_000
        let wrongElements = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var generator = SplitMix64(seed: UInt64(thread))
            for _ in 0..<lookupsPerThread {
                let key = UInt64.random(in: 0..<200, using: &generator)
                if let value = cache.value(forKey: key) {
                    if value != [key, key] { wrongElements.add(1, ordering: .relaxed) }
                } else {
                    cache.insert([key, key], forKey: key, cost: Int(key % 20))
                }
                if key % 97 == 0 { cache.removeValue(forKey: key) }
            }
        }
        #expect(wrongElements.load(ordering: .relaxed) == 0)
        #expect(cache.hits + cache.misses == threads * lookupsPerThread)
        #expect(cache.hits > 0)
        #expect(cache.totalCost <= capacity)
        let cached = (UInt64(0)..<200).filter { cache.value(forKey: $0) != nil }
        #expect(cached.count == cache.count)
        #expect(cached.reduce(0) { $0 + Int($1 % 20) } == cache.totalCost)
    }
}
