import Foundation
import Testing
@testable import Strata

/// The coordinator's read-mostly values (its stores): readers never wait for one another, a
/// writer waits for the readers and excludes them.
@Suite struct ReadMostlyTests {
    @Test func aReaderDoesNotWaitForAnotherReader() {
        let value = ReadMostly([1, 2, 3])
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            value.read { _ in
                holding.signal()
                release.wait()
            }
        }.start()
        holding.wait()
        // With the first reader inside, a second one reads on another thread and returns.
        let read = DispatchSemaphore(value: 0)
        let seen = Locked<[Int]>([])
        Thread {
            value.read { values in seen.withLock { $0 = values } }
            read.signal()
        }.start()
        #expect(read.wait(timeout: .now() + 60) == .success)
        #expect(seen.current == [1, 2, 3])
        release.signal()
    }

    @Test func aWriterWaitsForTheReadersAndIsSeenByTheNextOnes() {
        let value = ReadMostly(0)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let readerSaw = Locked<[Int]>([])
        let readerDone = DispatchSemaphore(value: 0)
        Thread {
            value.read { current in
                holding.signal()
                release.wait()
                // The writer started while this reader held the value, and has not changed it.
                readerSaw.withLock { $0.append(current) }
            }
            readerDone.signal()
        }.start()
        holding.wait()
        let written = DispatchSemaphore(value: 0)
        Thread {
            value.write { $0 += 1 }
            written.signal()
        }.start()
        // The writer is blocked behind the reader.
        #expect(written.wait(timeout: .now() + 0.2) == .timedOut)
        release.signal()
        #expect(readerDone.wait(timeout: .now() + 60) == .success)
        #expect(written.wait(timeout: .now() + 60) == .success)
        #expect(readerSaw.current == [0])
        #expect(value.read { $0 } == 1)
    }

    @Test func concurrentReadersAndWritersSeeEveryWrite() {
        let value = ReadMostly<[Int]>([])
        let writers = 4, writes = 500, readers = 4
        let group = DispatchGroup()
        let shrank = Locked(false)
        for writer in 0..<writers {
            group.enter()
            Thread {
                for index in 0..<writes { value.write { $0.append(writer * writes + index) } }
                group.leave()
            }.start()
        }
        for _ in 0..<readers {
            group.enter()
            Thread {
                var last = 0
                for _ in 0..<writes {
                    let count = value.read { $0.count }
                    if count < last { shrank.withLock { $0 = true } }
                    last = count
                }
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + 300) == .success)
        #expect(!shrank.current)
        #expect(value.read { $0.sorted() } == Array(0..<writers * writes))
    }
}
