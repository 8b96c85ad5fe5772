import StrataStore

/// The reference model as a Strata schema, and the data set as Strata rows.
public enum StrataModel {
    /// The id of the `Department` entity.
    public static let department = 0
    /// The id of the `Employee` entity.
    public static let employee = 1

    /// The positions of the `Employee` columns.
    public enum EmployeeColumn {
        public static let name = 0
        public static let salary = 1
        public static let hired = 2
        public static let active = 3
        public static let notes = 4
        public static let photo = 5
        public static let department = 6
    }

    /// `Department(name indexed, budget)` and `Employee(name, salary indexed, hired, active, notes,
    /// photo?, department -> Department)`.
    public static func schema() throws -> Schema {
        let department = EntitySchema(
            id: Self.department,
            name: "Department",
            columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false, isIndexed: true),
                ColumnSchema(name: "budget", type: .double, isNullable: false),
            ]
        )
        let employee = EntitySchema(
            id: Self.employee,
            name: "Employee",
            columns: [
                ColumnSchema(name: "name", type: .string, isNullable: false),
                ColumnSchema(name: "salary", type: .int64, isNullable: false, isIndexed: true),
                ColumnSchema(name: "hired", type: .date, isNullable: false),
                ColumnSchema(name: "active", type: .bool, isNullable: false),
                ColumnSchema(name: "notes", type: .string, isNullable: false),
                ColumnSchema(name: "photo", type: .binary),
                ColumnSchema(name: "department", type: .reference(entity: Self.department)),
            ]
        )
        return try Schema(entities: [department, employee])
    }

    /// The row of `department`.
    public static func row(_ department: Department) -> Row {
        Row([.string(department.name), .double(department.budget)])
    }

    /// The row of `employee`, whose department is stored under ``Dataset/departmentKey(_:)``.
    public static func row(_ employee: Employee) -> Row {
        Row([
            .string(employee.name),
            .int(employee.salary),
            .date(employee.hired),
            .bool(employee.active),
            .string(employee.notes),
            employee.photo.map(Value.data) ?? .null,
            .reference(Dataset.departmentKey(employee.department)),
        ])
    }
}
