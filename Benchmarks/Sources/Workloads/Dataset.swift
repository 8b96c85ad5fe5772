import Foundation

/// The reference data set of WORKLOADS.md, generated from a fixed seed.
///
/// Employee `i` (0-based) is stored under primary key `i + 1` and department `j` under `j + 1`
/// in every engine, so that the engines are asked for the same rows. `Sendable`.
public struct Dataset: Sendable {
    /// The departments: `max(1, employeeCount / 1000)` of them.
    public let departments: [Department]
    /// The employees, in insertion order.
    public let employees: [Employee]
    /// The seed the data set was generated from.
    public let seed: UInt64
    /// The generator as it stood after the last employee, for ``additionalEmployees(count:)``.
    private let generatorAfterEmployees: DatasetGenerator

    /// Generates the data set. Costs about a second per million employees.
    ///
    /// - Parameters:
    ///   - employeeCount: N, the number of employees.
    ///   - seed: the SplitMix64 seed. The default is ``SplitMix64/referenceSeed``.
    public init(employeeCount: Int, seed: UInt64 = SplitMix64.referenceSeed) {
        precondition(employeeCount >= 0, "employeeCount must not be negative")
        var generator = DatasetGenerator(
            random: SplitMix64(seed: seed),
            departmentCount: Self.departmentCount(forEmployees: employeeCount)
        )
        departments = (0..<generator.departmentCount).map { generator.department(index: $0) }
        var employees: [Employee] = []
        employees.reserveCapacity(employeeCount)
        for _ in 0..<employeeCount {
            employees.append(generator.employee())
        }
        self.employees = employees
        self.seed = seed
        generatorAfterEmployees = generator
    }

    /// The number of departments for `employeeCount` employees: `max(1, employeeCount / 1000)`.
    public static func departmentCount(forEmployees employeeCount: Int) -> Int {
        max(1, employeeCount / 1000)
    }

    /// The most employees W1 inserts in one save. A Strata transaction is one log record, at most
    /// 1 GiB and 65,535 blocks (about seven million employees), so above this W1 saves in parts,
    /// on every engine alike.
    public static let largestSave = 1_000_000

    /// The employees of each of W1's saves, in order (the first also inserts the departments):
    /// one save up to ``largestSave`` employees, then one per ``largestSave``.
    public var saveParts: [Range<Int>] {
        stride(from: 0, to: max(employees.count, 1), by: Self.largestSave).map {
            $0..<min($0 + Self.largestSave, employees.count)
        }
    }

    /// The primary key of employee `index`.
    public static func employeeKey(_ index: Int) -> Int64 { Int64(index) + 1 }

    /// The primary key of department `index`.
    public static func departmentKey(_ index: Int) -> Int64 { Int64(index) + 1 }

    /// More employees, drawn from where the generator stood after ``employees``.
    ///
    /// Every call returns the same employees; W2 inserts them into stores that hold only the
    /// departments.
    public func additionalEmployees(count: Int) -> [Employee] {
        var generator = generatorAfterEmployees
        return (0..<count).map { _ in generator.employee() }
    }
}

/// Draws departments and employees, in a fixed order of draws.
struct DatasetGenerator: Sendable {
    var random: SplitMix64
    let departmentCount: Int

    private static let firstNames = [
        "Ada", "Alan", "Barbara", "Brian", "Claude", "Dennis", "Donald", "Edsger",
        "Frances", "Grace", "Guido", "Hedy", "Ivan", "John", "Ken", "Leslie",
        "Linus", "Margaret", "Niklaus", "Radia", "Richard", "Rob", "Shafi", "Sophie",
        "Tim", "Tony", "Vint", "Whitfield", "Xavier", "Yukihiro", "Zhang", "Lynn",
    ]
    private static let lastNames = [
        "Allen", "Backus", "Bernstein", "Cerf", "Codd", "Dijkstra", "Engelbart", "Floyd",
        "Goldwasser", "Hamilton", "Hoare", "Hopper", "Kahn", "Kay", "Knuth", "Lamport",
        "Liskov", "Lovelace", "McCarthy", "Milner", "Naur", "Perlman", "Pike", "Ritchie",
        "Shannon", "Stroustrup", "Sutherland", "Thompson", "Torvalds", "Turing", "Wirth", "Wilson",
    ]
    private static let departmentWords = [
        "Accounting", "Design", "Engineering", "Facilities", "Finance", "Legal", "Logistics", "Marketing",
        "Operations", "Platform", "Procurement", "Quality", "Research", "Sales", "Security", "Support",
    ]
    private static let noteWords = [
        "the", "employee", "has", "shown", "strong", "results", "in", "the", "quarterly", "review",
        "and", "is", "expected", "to", "lead", "a", "new", "project", "next", "year", "with",
        "the", "team", "from", "the", "platform", "group", "who", "also", "asked", "for", "more",
        "training", "on", "customer", "support", "tools", "meeting", "notes", "were", "shared",
        "after", "the", "offsite", "budget", "planning", "session", "follow", "up", "on",
    ]

    /// The target size of ``Employee/notes``, in UTF-8 bytes.
    static let notesLength = 120
    /// The share of employees with a photo.
    static let photoShare = 0.01
    /// The size of a photo.
    static let photoSize = 4096
    /// The share of active employees.
    static let activeShare = 0.9
    /// Salaries are uniform in this range.
    static let salaryRange: ClosedRange<Int64> = 30_000...200_000
    /// 2000-01-01T00:00:00Z ..< 2025-01-01T00:00:00Z, in seconds since 1970.
    static let hiredRange: ClosedRange<Int64> = 946_684_800...(1_735_689_600 - 1)

    mutating func department(index: Int) -> Department {
        let word = Self.departmentWords[random.index(below: Self.departmentWords.count)]
        let cents = random.int64(in: 10_000_000...1_000_000_000)
        return Department(name: "\(word) \(index + 1)", budget: Double(cents) / 100)
    }

    mutating func employee() -> Employee {
        let first = Self.firstNames[random.index(below: Self.firstNames.count)]
        let last = Self.lastNames[random.index(below: Self.lastNames.count)]
        let salary = random.int64(in: Self.salaryRange)
        let hired = Date(timeIntervalSince1970: Double(random.int64(in: Self.hiredRange)))
        let active = random.unit() < Self.activeShare
        let notes = makeNotes()
        let photo = random.unit() < Self.photoShare ? makePhoto() : nil
        let department = random.index(below: departmentCount)
        return Employee(
            name: "\(first) \(last)",
            salary: salary,
            hired: hired,
            active: active,
            notes: notes,
            photo: photo,
            department: department
        )
    }

    private mutating func makeNotes() -> String {
        var notes = ""
        notes.reserveCapacity(Self.notesLength + 16)
        while notes.utf8.count < Self.notesLength - 1 {
            if !notes.isEmpty { notes += " " }
            notes += Self.noteWords[random.index(below: Self.noteWords.count)]
        }
        notes += "."
        return notes
    }

    private mutating func makePhoto() -> Data {
        var photo = Data(count: Self.photoSize)
        photo.withUnsafeMutableBytes { buffer in
            for offset in stride(from: 0, to: Self.photoSize, by: 8) {
                buffer.storeBytes(of: random.next().littleEndian, toByteOffset: offset, as: UInt64.self)
            }
        }
        return photo
    }
}
