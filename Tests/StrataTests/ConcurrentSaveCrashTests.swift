import Foundation
import StrataTestSupport
import Testing
@testable import Strata
#if canImport(Glibc)
import Glibc
#endif

/// A process with many contexts saving at once is killed: after reopening, every save it
/// acknowledged is there, and each context's saves form an unbroken run (at most the one save
/// in flight beyond its acknowledged ones).
@Suite struct ConcurrentSaveCrashTests {
    /// Runs `strata-graph-probe <store> save-concurrently <contexts>` until it has acknowledged
    /// `saves` saves, kills it with `SIGKILL` and returns the names of every save it acknowledged
    /// with the last commit and `fdatasync` counts it printed.
    static func killSaver(
        store url: URL, contexts: Int, after saves: Int
    ) throws -> (saves: [String], commits: Int, fsyncs: Int) {
        let process = Process()
        process.executableURL = try BuiltExecutable.url(named: "strata-graph-probe")
        process.arguments = [url.path, "save-concurrently", "\(contexts)"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var text = Data()
        func acknowledged() -> [String] {
            // Only whole lines: a line is printed after its save returned.
            let lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast()
            return lines.compactMap { $0.hasPrefix("saved ") ? String($0.dropFirst(6)) : nil }
        }
        while acknowledged().count < saves {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text.append(chunk)
        }
        kill(process.processIdentifier, SIGKILL)
        text.append(output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .uncaughtSignal, "the saver stopped before it was killed: \(stderr)")
        let statistics = String(decoding: text, as: UTF8.self).split(separator: "\n").last {
            $0.hasPrefix("statistics ")
        }
        let counts = statistics?.split(separator: " ").dropFirst().compactMap { Int($0) } ?? []
        return (acknowledged(), counts.first ?? 0, counts.last ?? 0)
    }

    @Test func killedWhileSixteenContextsSaveLosesNothingAcknowledged() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        // The store exists with its model before the saver opens it.
        try GraphModel.container(at: url).close()
        for _ in 0..<3 {
            let (acknowledged, commits, fsyncs) = try Self.killSaver(store: url, contexts: 16, after: 200)
            #expect(
                commits > 0 && fsyncs < commits,
                "the contexts' durable saves shared fdatasyncs (\(commits) commits, \(fsyncs) syncs)")
            let (lost, duplicated) = try Self.checkThenClear(store: url, acknowledged: acknowledged)
            #expect(acknowledged.count >= 200)
            #expect(lost == 0 && duplicated == 0)
        }
    }

    /// Checks the store at `url` after a killed `save-concurrently` run that acknowledged the
    /// saves `acknowledged`: each is stored, none twice, each context's saves an unbroken run;
    /// then deletes every employee (the next run starts numbering again) and closes the store.
    ///
    /// - Returns: how many acknowledged saves are missing and how many stored twice.
    static func checkThenClear(store url: URL, acknowledged: [String]) throws -> (lost: Int, duplicated: Int) {
        let container = try GraphModel.container(at: url)
        let context = container.newBackgroundContext()
        let stored = try context.performAndWait { try context.fetch(Employee.fetchRequest()).map(\.name) }
        #expect(stored.count == Set(stored).count, "no save is stored twice")
        let lost = Set(acknowledged).subtracting(stored)
        #expect(lost.isEmpty, "acknowledged saves lost: \(lost.sorted())")
        var byWorker: [String: [Int]] = [:]
        for name in Set(stored) {
            let parts = name.dropFirst().split(separator: "-")
            byWorker[String(parts[0]), default: []].append(Int(parts[1])!)
        }
        for (worker, numbers) in byWorker {
            #expect(numbers.sorted() == Array(0..<numbers.count), "worker \(worker)'s saves have a hole")
        }
        // The store takes new saves after recovery; the next run starts from an empty store.
        try context.performAndWait {
            for employee in try context.fetch(Employee.fetchRequest()) { context.delete(employee) }
            try context.save()
        }
        try container.close()
        return (lost.count, stored.count - Set(stored).count)
    }
}
