import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A configuration with a setting out of range is refused with `invalidConfiguration` before the
/// store's directory is touched; the largest valid settings open, commit and reopen.
@Suite struct StoreConfigurationValidationTests {
    /// One setting set out of its range.
    enum BadSetting: String, CaseIterable, Sendable {
        case segmentSizeZero, segmentSizePastBlockPlaces, blockSizeZero, blockSizeHuge, cacheSizeNegative
        case checkpointIntervalZero, compactionThresholdZero, compactionThresholdNaN, commitThreadsZero
        case lagLimitNegative, ageLimitNaN

        /// The setting's name, as the error's message names it.
        var setting: String {
            switch self {
            case .segmentSizeZero, .segmentSizePastBlockPlaces: "segmentSize"
            case .blockSizeZero, .blockSizeHuge: "blockSize"
            case .cacheSizeNegative: "cacheSize"
            case .checkpointIntervalZero: "checkpointInterval"
            case .compactionThresholdZero, .compactionThresholdNaN: "compactionThreshold"
            case .commitThreadsZero: "commitThreads"
            case .lagLimitNegative: "historyConsumerLagLimit"
            case .ageLimitNaN: "historyConsumerAgeLimit"
            }
        }

        /// The test configuration with this setting out of range.
        var configuration: StoreConfiguration {
            var configuration = TestSchema.configuration()
            switch self {
            case .segmentSizeZero: configuration.segmentSize = 0
            case .segmentSizePastBlockPlaces: configuration.segmentSize = StoreConfiguration.maximumSegmentSize + 1
            case .blockSizeZero: configuration.blockSize = 0
            case .blockSizeHuge: configuration.blockSize = Int.max
            case .cacheSizeNegative: configuration.cacheSize = -1
            case .checkpointIntervalZero: configuration.checkpointInterval = 0
            case .compactionThresholdZero: configuration.compactionThreshold = 0
            case .compactionThresholdNaN: configuration.compactionThreshold = .nan
            case .commitThreadsZero: configuration.commitThreads = 0
            case .lagLimitNegative: configuration.historyConsumerLagLimit = -1
            case .ageLimitNaN: configuration.historyConsumerAgeLimit = .nan
            }
            return configuration
        }
    }

    @Test(arguments: BadSetting.allCases)
    func settingOutOfRangeIsRefusedBeforeTheDirectoryIsTouched(_ bad: BadSetting) throws {
        let directory = TemporaryDirectory()
        let missing = directory.store("Missing")
        let error = try #require(throws: StoreError.self) {
            try Store.open(at: missing, schema: TestSchema.schema, configuration: bad.configuration)
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.hasPrefix(bad.setting + " is "), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: missing.path), "nothing is created")

        // An existing store opened with it is left as it was, and unlocked.
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var transaction = Transaction()
        transaction.insert(1, key: store.allocateKeys(for: 1).lowerBound, row: TestSchema.employee(1))
        try store.commit(transaction)
        try store.close()
        let before = try Self.contents(of: url)
        #expect(throws: StoreError.self) {
            try Store.open(at: url, schema: TestSchema.schema, configuration: bad.configuration)
        }
        #expect(try Self.contents(of: url) == before)
        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try reopened.read(1, key: 1) == TestSchema.employee(1))
        try reopened.close()
    }

    @Test func largestSegmentAndBlockSizesOpenCommitAndReopen() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.segmentSize = StoreConfiguration.maximumSegmentSize
        configuration.blockSize = StoreConfiguration.maximumBlockSize
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        var transaction = Transaction()
        for key in store.allocateKeys(for: 1, count: 1_000) {
            transaction.insert(1, key: key, row: TestSchema.employee(Int(key)))
        }
        try store.commit(transaction)
        try store.close()
        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        #expect(reopened.count(1) == 1_000)
        #expect(try reopened.read(1, key: 1_000) == TestSchema.employee(1_000))
        try reopened.close()
    }

    /// Every file of the store directory `url` (but its lock file) by relative path, with its bytes.
    static func contents(of url: URL) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        let enumerator = try #require(FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil))
        for case let file as URL in enumerator where !file.hasDirectoryPath && file.lastPathComponent != "lock" {
            contents[String(file.path.dropFirst(url.path.count))] = try Data(contentsOf: file)
        }
        return contents
    }
}
