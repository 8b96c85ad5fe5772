import Foundation

/// How dictionary results are built from a request's properties.
enum DictionaryResults {
    /// One value of a result dictionary.
    enum Item {
        /// The value at `path`, under `name`.
        case value(name: String, path: String)
        /// An aggregate over the rows of a group.
        case aggregate(ExpressionDescription)

        /// The key of the value in a result dictionary.
        var name: String {
            switch self {
            case .value(let name, _): return name
            case .aggregate(let description): return description.name
            }
        }
    }

    /// Whether the request's dictionaries are not one per matching row: it groups, aggregates
    /// or removes repeats.
    static func isAggregating<T>(_ request: FetchRequest<T>) -> Bool {
        request.propertiesToGroupBy != nil || request.returnsDistinctResults
            || (request.propertiesToFetch ?? []).contains { ($0 as? ExpressionDescription)?.function != nil }
    }

    /// The item a member of `propertiesToFetch` or `propertiesToGroupBy` names.
    ///
    /// `"objectID"` names the object's ID, as in Core Data.
    ///
    /// - Throws: ``CoreDataError`` `coreData` for anything but a name, a property description of
    ///   `entity` that is not a to-many relationship, or an expression description.
    static func item(_ member: Any, entity: EntityDescription, role: String) throws -> Item {
        switch member {
        case let expression as ExpressionDescription:
            return expression.function == nil
                ? .value(name: expression.name, path: expression.keyPath) : .aggregate(expression)
        case let property as PropertyDescription:
            if let relationship = property as? RelationshipDescription, relationship.isToMany {
                throw CoreDataError(.coreData, "\(role) cannot hold the to-many relationship \(property.name)")
            }
            guard entity.propertiesByName[property.name] != nil else {
                throw CoreDataError(
                    .coreData, "\(role) names \(property.name), which \(entity.entityName) does not have")
            }
            return .value(name: property.name, path: property.name)
        case "objectID" as String where entity.propertiesByName["objectID"] == nil:
            // The object itself, which a result dictionary holds as its ID, as in Core Data.
            return .value(name: "objectID", path: "SELF")
        case let name as String:
            let first = String(name.split(separator: ".").first ?? "")
            guard let property = entity.propertiesByName[first] else {
                throw CoreDataError(.coreData, "\(role) names \(name), which \(entity.entityName) does not have")
            }
            if !name.contains("."), let relationship = property as? RelationshipDescription, relationship.isToMany {
                throw CoreDataError(.coreData, "\(role) cannot hold the to-many relationship \(name)")
            }
            return .value(name: name, path: name)
        default:
            throw CoreDataError(
                .coreData,
                "\(role) holds \(type(of: member)); use names, property descriptions or expression descriptions")
        }
    }

    /// A value as a result dictionary holds it: objects as their IDs.
    static func exported(_ value: Any?) -> Any? {
        if let object = value as? ManagedObject { return object.objectID }
        return value
    }

    /// A hashable form of a value, for grouping and distinct results.
    static func hashable(_ value: Any?) -> AnyHashable {
        guard let value else { return AnyHashable(Optional<Int>.none) }
        if let number = FetchValue.number(value), !(value is Bool) { return AnyHashable(number) }
        if let hashable = value as? AnyHashable { return hashable }
        return AnyHashable(String(describing: value))
    }
}

extension ManagedObjectContext {
    /// The dictionaries of a dictionary request, from the stores only (pending changes are not
    /// seen, as in Core Data): one per matching row, or one per group with aggregates, after
    /// `havingPredicate`, distinct, sort, offset and limit.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when a property of the request is not one of the
    ///   entity, or a fetched property is neither grouped nor an aggregate; or a read fails.
    func dictionaries<T>(_ request: FetchRequest<T>) throws -> [[String: Any]] {
        let plan = try plan(request, counting: false)
        let entity = plan.entity
        let fetched = try request.propertiesToFetch.map {
            try $0.map { try DictionaryResults.item($0, entity: entity, role: "propertiesToFetch") }
        }
        let grouped = try request.propertiesToGroupBy.map {
            try $0.map { try DictionaryResults.item($0, entity: entity, role: "propertiesToGroupBy") }
        }
        let aggregating = DictionaryResults.isAggregating(request)
        if !aggregating {
            // One dictionary a row: sort and cut the rows first.
            let (candidates, stores) = try candidates(request, plan: plan)
            return candidates.map { dictionary(for: $0, items: fetched, plan: plan, stores: stores) }
        }
        if let grouped {
            let groupNames = Set(grouped.map(\.name))
            for case .value(let name, _) in fetched ?? [] where !groupNames.contains(name) {
                throw CoreDataError(
                    .coreData,
                    "\(name) is fetched but neither grouped by nor an aggregate: add it to propertiesToGroupBy")
            }
        } else if (fetched ?? []).contains(where: { if case .aggregate = $0 { return true } else { return false } }),
            (fetched ?? []).contains(where: { if case .value = $0 { return true } else { return false } })
        {
            throw CoreDataError(
                .coreData, "propertiesToFetch mixes aggregates with plain properties: group by the plain properties")
        }
        let stores = fetchStores(plan)
        var rows: [FetchCandidate] = []
        try collectStored(plan, stores: stores) { rows.append(.stored($0)) }
        var results: [[String: Any]]
        if let grouped {
            results = try groups(rows, by: grouped, fetching: fetched ?? grouped, plan: plan, stores: stores)
        } else if (fetched ?? []).contains(where: { if case .aggregate = $0 { return true } else { return false } }) {
            results = try groups(rows, by: [], fetching: fetched ?? [], plan: plan, stores: stores)
        } else {
            results = rows.map { dictionary(for: $0, items: fetched, plan: plan, stores: stores) }
        }
        if let having = request.havingPredicate {
            // Each result's values are also its variables: `$count > 1` names the expression
            // description `count`, as Core Data's having predicates do.
            results = results.filter { having.evaluate(with: $0, substitutionVariables: $0) }
        }
        if request.returnsDistinctResults {
            var seen = Set<[String: AnyHashable]>()
            results = results.filter { seen.insert($0.mapValues { DictionaryResults.hashable($0) }).inserted }
        }
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            results.sort { left, right in
                for descriptor in descriptors {
                    switch descriptor.compare(left[descriptor.key], right[descriptor.key]) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return false
            }
        }
        return cut(results, offset: request.fetchOffset, limit: request.fetchLimit)
    }

    /// The dictionary of one row: the values of `items` (every attribute and to-one relationship
    /// of the row's entity when `nil`), leaving out `nil` values.
    private func dictionary(
        for candidate: FetchCandidate, items: [DictionaryResults.Item]?, plan: QueryPlan, stores: FetchStores
    ) -> [String: Any] {
        var result: [String: Any] = [:]
        guard let items else {
            guard case .stored(let match) = candidate, let concrete = plan.concrete(of: match) else { return result }
            for property in concrete.entity.properties where !property.isTransient {
                if let relationship = property as? RelationshipDescription, relationship.isToMany { continue }
                if let value = DictionaryResults.exported(
                    candidateValue(atKeyPath: property.name, candidate, plan: plan, stores: stores))
                {
                    result[property.name] = value
                }
            }
            return result
        }
        for case .value(let name, let path) in items {
            if let value = DictionaryResults.exported(
                candidateValue(atKeyPath: path, candidate, plan: plan, stores: stores))
            {
                result[name] = value
            }
        }
        return result
    }

    /// One dictionary per group of rows with equal values of `keys` (one group of all rows when
    /// `keys` is empty), holding the grouped values and the aggregates of `items`, in the order
    /// groups are first seen.
    private func groups(
        _ rows: [FetchCandidate], by keys: [DictionaryResults.Item], fetching items: [DictionaryResults.Item],
        plan: QueryPlan, stores: FetchStores
    ) throws -> [[String: Any]] {
        var order: [[AnyHashable]] = []
        var members: [[AnyHashable]: (values: [String: Any], rows: [FetchCandidate])] = [:]
        for row in rows {
            var values: [String: Any] = [:]
            var signature: [AnyHashable] = []
            for case .value(let name, let path) in keys {
                let value = DictionaryResults.exported(candidateValue(atKeyPath: path, row, plan: plan, stores: stores))
                signature.append(DictionaryResults.hashable(value))
                if let value { values[name] = value }
            }
            if members[signature] == nil { order.append(signature) }
            members[signature, default: (values, [])].rows.append(row)
        }
        if keys.isEmpty && order.isEmpty {
            order.append([])
            members[[]] = ([:], [])
        }
        return order.map { signature in
            let group = members[signature]!
            var result = group.values
            for item in items {
                switch item {
                case .value(let name, _):
                    if result[name] == nil, let first = group.rows.first, case .value(_, let path) = item,
                        let value = DictionaryResults.exported(
                            candidateValue(atKeyPath: path, first, plan: plan, stores: stores))
                    {
                        result[name] = value
                    }
                case .aggregate(let description):
                    let values = group.rows.map {
                        candidateValue(atKeyPath: description.keyPath, $0, plan: plan, stores: stores)
                    }
                    if let value = description.aggregate(values) { result[description.name] = value }
                }
            }
            return result
        }
    }
}
