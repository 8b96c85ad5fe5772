import BenchSupport

/// One figure of strata-bench's report, measured for each engine.
enum Metric: String, CaseIterable, BenchMetric {
    case bulkInsert = "W1"
    case smallSavesDurable = "W2.durable"
    case smallSavesRelaxed = "W2.relaxed"
    case coldOpen = "W3"
    case randomFaults = "W4"
    case predicateFetch = "W5.fetch"
    case predicateCount = "W5.count"
    case fullScan = "W6"
    case update = "W7"
    case compactionRate = "W8.rate"
    case compactionReadP99 = "W8.readP99"
    case compactionSize = "W8.afterOverBefore"
    case size = "W10"

    var title: String {
        switch self {
        case .bulkInsert: "W1 bulk insert"
        case .smallSavesDurable: "W2 small saves, durable"
        case .smallSavesRelaxed: "W2 small saves, relaxed"
        case .coldOpen: "W3 cold open"
        case .randomFaults: "W4 random faults"
        case .predicateFetch: "W5 top 100 by salary index, active (x50)"
        case .predicateCount: "W5 count salary > 150k, active (x50)"
        case .fullScan: "W6 full scan"
        case .update: "W7 update 10%"
        case .compactionRate: "W8 compaction"
        case .compactionReadP99: "W8 p99 read during compaction"
        case .compactionSize: "W8 bytes on disk after/before"
        case .size: "W10 size after W1"
        }
    }

    var unit: String {
        switch self {
        case .bulkInsert, .fullScan, .update: "objects/s"
        case .smallSavesDurable, .smallSavesRelaxed: "saves/s"
        case .coldOpen, .compactionReadP99: "ms"
        case .randomFaults: "lookups/s"
        case .predicateFetch, .predicateCount: "queries/s"
        case .compactionRate: "MB/s"
        case .compactionSize: "ratio"
        case .size: "bytes/object"
        }
    }

    var better: Better {
        switch self {
        case .coldOpen, .compactionReadP99, .compactionSize, .size: .lower
        default: .higher
        }
    }
}
