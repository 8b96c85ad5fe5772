import Foundation

extension ManagedObject {
    /// The value at a dotted key path (Core Data's `value(forKeyPath:)`, from `NSObject`):
    /// `department.name` reads through the to-one `department`; a path through a to-many
    /// relationship gives the values of its members (a `Set<AnyHashable>` for an unordered one,
    /// an array for an ordered one, without `nil`s); `employees.@count`, `@sum`, `@avg`, `@min`
    /// and `@max` (`employees.@sum.salary`) aggregate them, counts, sums and averages as
    /// `NSNumber`s. A `nil` on the way gives `nil`.
    ///
    /// - Important: an unknown key stops the program, as ``value(forKey:)`` does.
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValuePath.value(
            of: self, at: keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)[...])
    }

    /// Sets the value at a dotted key path (Core Data's `setValue(_:forKeyPath:)`): the last key
    /// of the object the rest of the path reads, or of each member when that is a to-many
    /// relationship; nothing when it reads `nil`.
    ///
    /// - Important: an unknown key stops the program, as ``setValue(_:forKey:)`` does.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        guard let dot = keyPath.lastIndex(of: ".") else { return setValue(value, forKey: keyPath) }
        let key = String(keyPath[keyPath.index(after: dot)...])
        switch self.value(forKeyPath: String(keyPath[..<dot])) {
        case let object as ManagedObject: object.setValue(value, forKey: key)
        case let objects as Set<ManagedObject>: for object in objects { object.setValue(value, forKey: key) }
        case let objects as [ManagedObject]: for object in objects { object.setValue(value, forKey: key) }
        case nil: break
        case let other?: preconditionFailure("\(entity.entityName).\(keyPath): \(type(of: other)) has no key \(key)")
        }
    }

    /// Sets several properties (Core Data's `setValuesForKeys(_:)`); `NSNull` sets `nil`.
    public func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues { setValue(value is NSNull ? nil : value, forKey: key) }
    }

    /// The values of `keys` (Core Data's `dictionaryWithValues(forKeys:)`), with `NSNull()` for
    /// `nil`.
    public func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        Dictionary(uniqueKeysWithValues: keys.map { key in (key, value(forKey: key) ?? NSNull()) })
    }
}

/// Key-value coding over dotted paths, as `NSObject` reads them.
enum KeyValuePath {
    /// The value at `path` from `root`: keys read one by one, collections mapped member by
    /// member, collection operators applied to what the path has read so far.
    static func value(of root: Any?, at path: ArraySlice<String>) -> Any? {
        guard let key = path.first else { return root }
        let rest = path.dropFirst()
        switch root {
        case nil:
            return nil
        case let object as ManagedObject:
            return value(of: object.value(forKey: key), at: rest)
        case let objects as Set<ManagedObject>:
            if key.hasPrefix("@") { return aggregate(key, Array(objects), rest) }
            return Set(objects.compactMap { value(of: $0, at: path) as? AnyHashable })
        case let objects as [ManagedObject]:
            if key.hasPrefix("@") { return aggregate(key, objects, rest) }
            return objects.compactMap { value(of: $0, at: path) }
        case let dictionary as [String: Any]:
            return value(of: dictionary[key], at: rest)
        case let other?:
            preconditionFailure("\(type(of: other)) has no key \(key)")
        }
    }

    /// `@count` of `members`, or `@sum`/`@avg`/`@min`/`@max` of their values at `path`. Counts,
    /// sums and averages are `NSNumber`s (`NSDecimalNumber` for decimals), as Core Data gives
    /// them, so they cast to any number type; `@min` and `@max` are the values themselves.
    private static func aggregate(_ operation: String, _ members: [ManagedObject], _ path: ArraySlice<String>) -> Any? {
        if operation == "@count" { return NSNumber(value: members.count) }
        let values = members.compactMap { value(of: $0, at: path) }
        do {
            let result = try PredicateEvaluation.aggregate(operation, values)
            guard operation == "@sum" || operation == "@avg" else { return result }
            switch result {
            case let decimal as Decimal: return NSDecimalNumber(decimal: decimal)
            case let integer as Int: return NSNumber(value: integer)
            case let double as Double: return NSNumber(value: double)
            default: return result
            }
        } catch {
            preconditionFailure(
                "\(operation) of \(path.joined(separator: ".")): not a collection operator over these values")
        }
    }
}
