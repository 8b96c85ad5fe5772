/// The row an update or delete of a commit replaces, as the commit found it: a row it holds
/// decoded (one it wrote earlier, one its caller read, or a projection of the committed row), or
/// the committed row still encoded in its decoded block, which goes into the history record as
/// its bytes when the block's schema version encodes the entity as the current one does.
enum PriorRow {
    /// A decoded row (a projection holds `null` in the columns it leaves out).
    case decoded(Row)
    /// The row in `slot` of `block`, a block of the entity's rows.
    case encoded(DecodedBlock, slot: Int)
}

extension Store {
    /// The codec of `prior`'s bytes, and whether they encode the entity's rows as the current
    /// schema does (every column stored), for an `.encoded` prior of `entity`.
    ///
    /// - Throws: ``StoreError`` `corrupt` when the block names a schema version the store lacks.
    private func priorCodec(_ block: DecodedBlock, entity: Int) throws -> (codec: RowCodec, isCurrent: Bool) {
        do {
            let codec = try codec(entity, of: block)
            return (codec, codec.storesEveryColumn)
        } catch {
            throw StoreError(
                .corrupt, "a block names schema version \(block.schemaVersion), unknown to the store", path: path)
        }
    }

    /// Decodes the `.encoded` row of `block` at `slot` with `body`, as a `corrupt` error when it does not decode.
    private func decodingPrior<T>(
        _ block: DecodedBlock, slot: Int, entity: Int, _ body: (RowCodec, UnsafeRawBufferPointer) throws -> T
    ) throws -> T {
        let codec = try priorCodec(block, entity: entity).codec
        do {
            return try block.withRow(at: slot) { try body(codec, $0) }
        } catch {
            throw StoreError(.corrupt, "a committed row does not decode", path: path)
        }
    }

    /// `prior` (a row of `entity`) with every column decoded.
    func decoded(_ prior: PriorRow, entity: Int) throws -> Row {
        switch prior {
        case .decoded(let row): return row
        case .encoded(let block, let slot):
            return try decodingPrior(block, slot: slot, entity: entity) { codec, bytes in try codec.decode(bytes) }
        }
    }

    /// The values of `prior`'s fetch-indexed columns (a row of `entity`).
    func indexedValues(_ prior: PriorRow, entity: Int) throws -> IndexedValues {
        switch prior {
        case .decoded(let row): return .row(row)
        case .encoded(let block, let slot):
            return try decodingPrior(block, slot: slot, entity: entity) { codec, bytes in
                try codec.decodeIndexed(bytes, columns: schema.entities[entity].indexedColumns)
            }
        }
    }

    /// Adds `prior` (a row of `entity`) to `builder` as the history's prior row of its last
    /// operation: the bytes as the block holds them when they are in the current layout, else
    /// the row encoded again.
    func addPrior(_ prior: PriorRow, entity: Int, to builder: inout RecordBuilder) throws {
        switch prior {
        case .decoded(let row):
            builder.addPrior(row, codec: codecs[entity])
        case .encoded(let block, let slot):
            if try priorCodec(block, entity: entity).isCurrent {
                block.withRow(at: slot) { builder.addPrior(encodedRow: $0) }
            } else {
                builder.addPrior(try decoded(prior, entity: entity), codec: codecs[entity])
            }
        }
    }
}
