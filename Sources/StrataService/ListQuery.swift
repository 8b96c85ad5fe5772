/// A page of employees as a list request asks for it: `GET /employees?where=…&sort=…&limit=…&offset=…`.
/// `Sendable`.
///
/// `where` is a Core Data predicate format string (`salary > 150000 AND active == YES`), `sort`
/// a comma-separated list of attributes, each descending when it starts with `-`
/// (`-salary,name`).
public struct ListQuery: Sendable, Hashable {
    /// One key of the order.
    public struct SortKey: Sendable, Hashable {
        /// The attribute.
        public var key: String
        /// Whether the order is ascending.
        public var ascending: Bool

        /// Creates a sort key.
        public init(key: String, ascending: Bool) {
            self.key = key
            self.ascending = ascending
        }
    }

    /// The largest page a request may ask for.
    public static let maximumLimit = 1_000
    /// The page size when the request names none.
    public static let defaultLimit = 100

    /// The predicate format string, when the request filters.
    public var predicateFormat: String?
    /// The order, first key first.
    public var sort: [SortKey]
    /// The most employees returned. The default is ``defaultLimit``.
    public var limit: Int
    /// How many matching employees to skip first. The default is 0.
    public var offset: Int

    /// Creates a query.
    public init(predicateFormat: String? = nil, sort: [SortKey] = [], limit: Int = defaultLimit, offset: Int = 0) {
        self.predicateFormat = predicateFormat
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }

    /// Reads a query from the request's parameters, checking the sort keys against
    /// `attributes`; the predicate is checked by the backend that parses it.
    ///
    /// - Throws: ``ServiceError`` `badRequest` for an unknown sort key, or a limit or offset
    ///   that is not a number in range.
    public init(parameters: [String: String], attributes: Set<String>) throws(ServiceError) {
        self.init()
        if let format = parameters["where"], !format.isEmpty { predicateFormat = format }
        if let text = parameters["sort"], !text.isEmpty {
            sort = try text.split(separator: ",").map { (part) throws(ServiceError) -> SortKey in
                let descending = part.hasPrefix("-")
                let key = String(descending ? part.dropFirst() : part)
                guard attributes.contains(key) else {
                    throw ServiceError(
                        .badRequest, "cannot sort by \(key): sort by one of \(attributes.sorted().joined(separator: ", "))"
                    )
                }
                return SortKey(key: key, ascending: !descending)
            }
        }
        limit = try Self.number(parameters["limit"], named: "limit", default: Self.defaultLimit, in: 1...Self.maximumLimit)
        offset = try Self.number(parameters["offset"], named: "offset", default: 0, in: 0...Int(Int32.max))
    }

    /// The integer parameter `name`, or `fallback` when it is absent.
    private static func number(
        _ text: String?, named name: String, default fallback: Int, in range: ClosedRange<Int>
    ) throws(ServiceError) -> Int {
        guard let text else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ServiceError(.badRequest, "\(name)=\(text) is not a number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }
}
