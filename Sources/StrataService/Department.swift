/// A department as the API reads and writes it: `{"id": 1, "name": "Sales", "budget": 250000.5}`.
/// `Sendable`.
public struct DepartmentRecord: Codable, Sendable, Hashable {
    /// The department's ID, unique among departments.
    public var id: Int64
    /// The department's name.
    public var name: String
    /// The yearly budget.
    public var budget: Double

    /// Creates a record.
    public init(id: Int64, name: String, budget: Double) {
        self.id = id
        self.name = name
        self.budget = budget
    }
}

/// The fields of a new department: the body of `POST /departments`. `Sendable`.
public struct DepartmentInput: Codable, Sendable, Hashable {
    /// The department's name.
    public var name: String
    /// The yearly budget.
    public var budget: Double

    /// Creates the fields of a department.
    public init(name: String, budget: Double) {
        self.name = name
        self.budget = budget
    }
}
