extension StoreConfiguration {
    /// The largest ``segmentSize``: a block's place in its segment is stored in 32 bits.
    public static let maximumSegmentSize = Int(UInt32.max)
    /// The largest ``blockSize``: a record, which holds its blocks, is at most 1 GiB.
    public static let maximumBlockSize = RecordHeader.maxLength

    /// Checks that every setting is within its range, as opening a store does before it touches
    /// the directory.
    ///
    /// - Throws: ``StoreError`` `invalidConfiguration` naming the first setting out of range.
    public func validate() throws {
        func check(_ valid: Bool, _ setting: String, _ value: Any, _ range: String) throws {
            guard valid else {
                throw StoreError(.invalidConfiguration, "\(setting) is \(value); it must be \(range)")
            }
        }
        try check((1...Self.maximumSegmentSize).contains(segmentSize), "segmentSize", segmentSize,
            "from 1 to \(Self.maximumSegmentSize) bytes")
        try check((1...Self.maximumBlockSize).contains(blockSize), "blockSize", blockSize,
            "from 1 to \(Self.maximumBlockSize) bytes")
        try check(cacheSize >= 0, "cacheSize", cacheSize, "at least 0 bytes")
        try check(checkpointInterval >= 1, "checkpointInterval", checkpointInterval, "at least 1 byte")
        try check(compactionThreshold > 0, "compactionThreshold", compactionThreshold,
            "above 0 (above 1 never compacts)")
        try check(commitThreads >= 1, "commitThreads", commitThreads, "at least 1")
        if let limit = historyConsumerLagLimit {
            try check(limit >= 0, "historyConsumerLagLimit", limit, "at least 0 bytes, or nil")
        }
        if let limit = historyConsumerAgeLimit {
            try check(limit >= 0, "historyConsumerAgeLimit", limit, "at least 0 seconds, or nil")
        }
    }
}
