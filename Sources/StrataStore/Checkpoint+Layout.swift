extension Checkpoint {
    /// Where the parts of a checkpoint file are, for the tools that damage one on purpose (the
    /// store-file fuzzer and the corruption tests): read leniently, skipping what does not fit.
    package struct Layout {
        /// The bytes of each section of the head (after its length and checksum): the header,
        /// the block table's directory, then one directory per entity.
        package var sections: [Range<Int>] = []
        /// The bytes of each page of the block table its directory places in the file, by page
        /// (`nil` for a page not written: every number of it dropped).
        package var blockPages: [Range<Int>?] = []
        /// Where in the file the block table's directory keeps each written page's checksum.
        package var blockPageChecksumOffsets: [Int] = []
        /// Per entity whose directory parses, the stored bytes of each page of its object index
        /// (``IndexPageCodec``).
        package var pages: [[Range<Int>]] = []
        /// Per entity whose directory parses, where in the file its directory keeps each page's
        /// place (`u64` offset, `u32` length, `u32` checksum).
        package var pagePlaceOffsets: [[Int]] = []
        /// Per entity whose directory parses, the bytes of its fetch indexes.
        package var fetchIndexes: [Range<Int>] = []
        /// Per entity whose directory parses, where in the file its directory keeps each page's
        /// checksum, then its fetch indexes' checksum.
        package var checksumOffsets: [(pages: [Int], fetchIndexes: Int)] = []

        /// Reads the layout of `bytes`.
        package init(_ bytes: [UInt8]) {
            guard bytes.count >= Checkpoint.prefixSize else { return }
            let headLength = min(bytes.count, Int(clamping: Self.u64(bytes, 16)))
            var position = Checkpoint.prefixSize
            while position + 8 <= headLength {
                let length = Int(Self.u32(bytes, position))
                guard length <= headLength - position - 8 else { break }
                sections.append((position + 8)..<(position + 8 + length))
                position += 8 + length
            }
            if sections.count > 1 { blockTable(bytes, sections[1]) }
            for section in sections.dropFirst(2) { directory(bytes, section) }
        }

        /// Adds the pages of the block table its directory names, while they fit the file.
        private mutating func blockTable(_ bytes: [UInt8], _ section: Range<Int>) {
            bytes.withUnsafeBytes { raw in
                var reader = BinaryReader(UnsafeRawBufferPointer(rebasing: raw[section]))
                guard let count = try? reader.count(limit: Checkpoint.maximumBlockCount),
                    var start = (try? reader.offset()).map({ Int(clamping: $0) }),
                    let pages = try? reader.count(limit: section.count)
                else { return }
                for page in 0..<pages {
                    let numbers = Swift.min(BlockTable.capacity, count - page * BlockTable.capacity)
                    guard numbers > 0, let kept = try? reader.count() else { return }
                    guard kept > 0 else {
                        blockPages.append(nil)
                        continue
                    }
                    let length = numbers * BlockTablePage.entryBytes
                    guard reader.remaining >= 4, start <= bytes.count - length else { return }
                    blockPageChecksumOffsets.append(section.lowerBound + reader.position)
                    reader.position += 4
                    blockPages.append(start..<(start + length))
                    start += length
                }
            }
        }

        /// Adds the pages and fetch indexes a directory section names, when they fit the file.
        private mutating func directory(_ bytes: [UInt8], _ section: Range<Int>) {
            bytes.withUnsafeBytes { raw in
                var reader = BinaryReader(UnsafeRawBufferPointer(rebasing: raw[section]))
                guard (try? reader.varint()) != nil, let count = try? reader.count(limit: section.count / 16) else {
                    return
                }
                var pages: [Range<Int>] = []
                var places: [Int] = []
                for _ in 0..<count {
                    places.append(section.lowerBound + reader.position)
                    guard let place = try? CheckpointPlace.decode(from: &reader, wideLength: false, fileSize: Int64(bytes.count))
                    else { return }
                    pages.append(Int(place.offset)..<(Int(place.offset) + place.length))
                }
                let fetchAt = section.lowerBound + reader.position
                guard let fetch = try? CheckpointPlace.decode(from: &reader, wideLength: true, fileSize: Int64(bytes.count))
                else { return }
                self.pages.append(pages)
                pagePlaceOffsets.append(places)
                fetchIndexes.append(Int(fetch.offset)..<(Int(fetch.offset) + fetch.length))
                checksumOffsets.append((places.map { $0 + 12 }, fetchAt + 16))
            }
        }

        static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
            bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
        }

        static func u64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
            bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        }
    }

    /// Decodes page `page` of `entity`'s object index in checkpoint `bytes`, lets `edit` change it
    /// (``IndexPage/byteCount`` bytes: locations, then sizes), and stores it again at the end of
    /// the file, its directory entry pointing there; ``reseal(_:)`` then fixes the checksums.
    /// For the tools that damage a checkpoint on purpose.
    ///
    /// - Returns: where the page now lies, or `nil` when the layout has no such page or it does
    ///   not decode.
    @discardableResult
    package static func rewritePage(
        _ bytes: inout [UInt8], entity: Int, page: Int, _ edit: (UnsafeMutableRawBufferPointer) -> Void
    ) -> Range<Int>? {
        let layout = Layout(bytes)
        guard entity < layout.pages.count, page < layout.pages[entity].count else { return nil }
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: IndexPage.byteCount, alignment: 8)
        defer { memory.deallocate() }
        let range = layout.pages[entity][page]
        guard (try? bytes.withUnsafeBytes({ try IndexPageCodec.decode(UnsafeRawBufferPointer(rebasing: $0[range]), into: memory) })) != nil
        else { return nil }
        edit(memory)
        var stored: [UInt8] = []
        IndexPageCodec.encode(UnsafeRawBufferPointer(memory), appendingTo: &stored)
        let place = layout.pagePlaceOffsets[entity][page]
        let start = bytes.count
        bytes += stored
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt64(start).littleEndian, toByteOffset: place, as: UInt64.self)
            raw.storeBytes(of: UInt32(stored.count).littleEndian, toByteOffset: place + 8, as: UInt32.self)
        }
        return start..<bytes.count
    }

    /// Recomputes every checksum of checkpoint `bytes` whose range fits the file (pages, fetch
    /// indexes, then the head's sections), so that damage under them reaches the parsers.
    package static func reseal(_ bytes: inout [UInt8]) {
        func checksum(_ range: Range<Int>) -> UInt32 {
            bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range]))) }
        }
        func store(_ value: UInt32, at offset: Int) {
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
        }
        let layout = Layout(bytes)
        for (page, offset) in zip(layout.blockPages.compactMap { $0 }, layout.blockPageChecksumOffsets) {
            store(checksum(page), at: offset)
        }
        for (entity, offsets) in layout.checksumOffsets.enumerated() {
            for (page, offset) in zip(layout.pages[entity], offsets.pages) { store(checksum(page), at: offset) }
            store(checksum(layout.fetchIndexes[entity]), at: offsets.fetchIndexes)
        }
        for section in layout.sections { store(checksum(section), at: section.lowerBound - 4) }
    }
}
