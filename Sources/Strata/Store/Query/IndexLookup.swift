import Foundation
internal import StrataStore

/// A lookup in the fetch index of one column of the fetched hierarchy.
struct IndexLookup {
    /// What the lookup finds: store-independent queries, or related objects (whose keys are
    /// per store).
    enum Target {
        /// Index queries on an attribute column; their results are unioned.
        case queries([IndexQuery])
        /// Rows whose to-one column names one of the objects (`nil`: no object), of the
        /// relationship's destination hierarchy, named `root`.
        case references([ManagedObjectID?], root: String)
    }

    /// The engine column.
    var column: Int
    /// The property name.
    var key: String
    /// What is looked up.
    var target: Target
    /// Whether the rows found are exactly those meeting the comparison (else the comparison is
    /// evaluated again on each row).
    var isExact: Bool
    /// The comparison's operator, for ``condition``.
    var operation: ComparisonOperator
    /// The comparison's constant, for ``condition``.
    var constant: Any?

    /// The comparison, for ``FetchPlan``: `> 150000`. Made only when a plan is explained, not
    /// for every fetch planned.
    var condition: String { "\(operation.rawValue) \(PredicateIndexAnalysis.describe(constant))" }

    /// The queries for the rows of `store`.
    func queries(in store: PersistentStore) -> [IndexQuery] {
        switch target {
        case .queries(let queries):
            return queries
        case .references(let ids, let root):
            var values: [Value] = []
            for id in ids {
                guard let id else {
                    values.append(.null)
                    continue
                }
                guard !id.isTemporaryID, id.storeIdentifier == store.identifier, IndexLookup.rootName(id.entity) == root
                else { continue }
                values.append(.reference(id.primaryKey))
            }
            return values.count == 1 ? [.equal(values[0])] : [.in(values)]
        }
    }

    /// The name of an entity's inheritance root.
    static func rootName(_ entity: EntityDescription) -> String {
        var root = entity
        while let parent = root.superentity { root = parent }
        return root.entityName
    }
}
