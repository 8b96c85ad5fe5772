import Foundation

/// An employee as the API reads and writes it. Dates are ISO 8601, the photo is base64 and the
/// department is the department's ID. `Sendable`.
public struct EmployeeRecord: Codable, Sendable, Hashable {
    /// The employee's ID, unique among employees.
    public var id: Int64
    /// The employee's full name.
    public var name: String
    /// The yearly salary.
    public var salary: Int64
    /// The hiring date.
    public var hired: Date
    /// Whether the employee is active.
    public var active: Bool
    /// Free text.
    public var notes: String
    /// An optional picture.
    public var photo: Data?
    /// The ID of the employee's department, if any.
    public var department: Int64?

    /// Creates a record with `id` and the fields of `input`.
    public init(id: Int64, _ input: EmployeeInput) {
        self.id = id
        name = input.name
        salary = input.salary
        hired = input.hired
        active = input.active
        notes = input.notes
        photo = input.photo
        department = input.department
    }

    /// The attributes a list may sort by and a predicate may name, as both backends store them.
    public static let attributeNames: Set<String> = ["name", "salary", "hired", "active", "notes"]
}

/// The fields of a new employee: the body of `POST /employees` and each element of
/// `POST /employees/import`. `Sendable`.
public struct EmployeeInput: Codable, Sendable, Hashable {
    /// The employee's full name.
    public var name: String
    /// The yearly salary.
    public var salary: Int64
    /// The hiring date.
    public var hired: Date
    /// Whether the employee is active.
    public var active: Bool
    /// Free text.
    public var notes: String
    /// An optional picture.
    public var photo: Data?
    /// The ID of the employee's department, if any.
    public var department: Int64?

    /// Creates the fields of an employee.
    public init(
        name: String, salary: Int64, hired: Date, active: Bool, notes: String, photo: Data? = nil,
        department: Int64? = nil
    ) {
        self.name = name
        self.salary = salary
        self.hired = hired
        self.active = active
        self.notes = notes
        self.photo = photo
        self.department = department
    }

    /// Checks employees for a bulk import, which sets no relationships (as a batch insert does
    /// not): every backend refuses the same input with the same error.
    ///
    /// - Throws: ``ServiceError`` `badRequest` naming the first employee that names a department.
    public static func checkImportable(_ employees: [EmployeeInput]) throws {
        if let index = employees.firstIndex(where: { $0.department != nil }) {
            throw ServiceError(
                .badRequest,
                "employee \(index) names a department: a bulk import sets no relationships, as a batch insert does not")
        }
    }
}

/// The fields an update changes: the body of `PATCH /employees/{id}`; a field left out keeps
/// its value. `Sendable`.
public struct EmployeePatch: Codable, Sendable, Hashable {
    /// The new name.
    public var name: String?
    /// The new salary.
    public var salary: Int64?
    /// The new hiring date.
    public var hired: Date?
    /// The new active flag.
    public var active: Bool?
    /// The new notes.
    public var notes: String?
    /// The new photo.
    public var photo: Data?
    /// The ID of the new department.
    public var department: Int64?

    /// Creates a patch; every field left `nil` is kept.
    public init(
        name: String? = nil, salary: Int64? = nil, hired: Date? = nil, active: Bool? = nil, notes: String? = nil,
        photo: Data? = nil, department: Int64? = nil
    ) {
        self.name = name
        self.salary = salary
        self.hired = hired
        self.active = active
        self.notes = notes
        self.photo = photo
        self.department = department
    }

    /// `record` with the patch's fields applied.
    public func applied(to record: EmployeeRecord) -> EmployeeRecord {
        var record = record
        if let name { record.name = name }
        if let salary { record.salary = salary }
        if let hired { record.hired = hired }
        if let active { record.active = active }
        if let notes { record.notes = notes }
        if let photo { record.photo = photo }
        if let department { record.department = department }
        return record
    }
}
