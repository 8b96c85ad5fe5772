/// One department of the reference data set. `Sendable`.
public struct Department: Sendable, Hashable {
    /// The department's name (indexed in both engines).
    public var name: String
    /// The yearly budget, in currency units with two decimals.
    public var budget: Double

    /// Creates a department.
    public init(name: String, budget: Double) {
        self.name = name
        self.budget = budget
    }
}
