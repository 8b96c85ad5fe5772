import Foundation

/// One employee of the reference data set. `Sendable`.
public struct Employee: Sendable, Hashable {
    /// The employee's full name.
    public var name: String
    /// The yearly salary, uniform in `30_000...200_000`.
    public var salary: Int64
    /// The hiring date, a whole second between 2000 and 2025.
    public var hired: Date
    /// Whether the employee is active (true for 90%).
    public var active: Bool
    /// About 120 bytes of compressible English-like text.
    public var notes: String
    /// `nil` for 99% of employees, 4 KiB of incompressible bytes for 1%.
    public var photo: Data?
    /// The position of the employee's department in ``Dataset/departments``.
    public var department: Int

    /// Creates an employee.
    public init(
        name: String,
        salary: Int64,
        hired: Date,
        active: Bool,
        notes: String,
        photo: Data?,
        department: Int
    ) {
        self.name = name
        self.salary = salary
        self.hired = hired
        self.active = active
        self.notes = notes
        self.photo = photo
        self.department = department
    }
}
