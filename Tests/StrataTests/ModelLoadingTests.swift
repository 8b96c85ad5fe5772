import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// The sample models in `Tests/StrataTests/Models`.
private enum SampleModels {
    static var company: URL {
        Bundle.module.url(forResource: "Company", withExtension: "xcdatamodeld", subdirectory: "Models")!
    }
    static var library: URL {
        Bundle.module.url(forResource: "Library", withExtension: "xcdatamodel", subdirectory: "Models")!
    }
    static var minimalContents: URL {
        Bundle.module.url(forResource: "contents", withExtension: nil, subdirectory: "Models/Minimal.xcdatamodel")!
    }
}

/// Tolerance comparison for floating-point defaults.
private func close(_ value: Any?, _ expected: Double) -> Bool {
    switch value {
    case let value as Double: abs(value - expected) < 1e-9
    case let value as Float: abs(Double(value) - expected) < 1e-6
    default: false
    }
}

@Suite("Loading Company.xcdatamodeld")
struct CompanyModelLoadingTests {
    let model: ManagedObjectModel

    init() throws {
        model = try ManagedObjectModel(checkedContentsOf: SampleModels.company)
    }

    @Test("the current version (Company 2) is loaded, entities in file order")
    func currentVersion() {
        #expect(model.entities.map(\.name) == ["Department", "Employee", "Manager", "Person"])
        #expect(model.versionIdentifiers == ["2"])
        #expect(model.configurations.isEmpty)
        #expect(model.entities.allSatisfy { $0.managedObjectModel === model })
        #expect(model.entities.map(\.managedObjectClassName) == ["Department", "Employee", "Manager", "Person"])
    }

    @Test("inheritance: abstract Person, Employee, Manager")
    func inheritance() throws {
        let person = try #require(model.entitiesByName["Person"])
        let employee = try #require(model.entitiesByName["Employee"])
        let manager = try #require(model.entitiesByName["Manager"])
        #expect(person.isAbstract && !employee.isAbstract && !manager.isAbstract)
        #expect(person.superentity == nil)
        #expect(person.subentities == [employee])
        #expect(employee.superentity === person)
        #expect(employee.subentities == [manager])
        #expect(manager.superentity === employee)
        #expect(manager.isKindOf(entity: person))
        #expect(
            manager.properties.map(\.name) == [
                "email", "name", "active", "hired", "notes", "photo", "salary", "department", "manager", "level",
                "reports",
            ])
        #expect(
            manager.attributesByName.keys.sorted() == [
                "active", "email", "hired", "level", "name", "notes", "photo", "salary",
            ])
        #expect(manager.relationshipsByName.keys.sorted() == ["department", "manager", "reports"])
        #expect(manager.attributesByName["name"] === person.attributesByName["name"])
        #expect(manager.attributesByName["salary"]?.entity === employee)
    }

    @Test("Department: attributes, cascade to employees, index, constraint, userInfo")
    func department() throws {
        let department = try #require(model.entitiesByName["Department"])
        let budget = try #require(department.attributesByName["budget"])
        #expect(budget.attributeType == .doubleAttributeType)
        #expect(!budget.isOptional)
        #expect(close(budget.defaultValue, 0))
        #expect(close(budget.minValue, 0))
        #expect(budget.maxValue == nil)
        let name = try #require(department.attributesByName["name"])
        #expect(name.type == .string)
        #expect(name.minValue as? Int == 1)
        #expect(name.maxValue as? Int == 80)

        let employees = try #require(department.relationshipsByName["employees"])
        #expect(employees.isToMany && employees.maxCount == 0 && employees.minCount == 0)
        #expect(employees.isOptional)
        #expect(employees.deleteRule == .cascadeDeleteRule)
        #expect(employees.destinationEntity === model.entitiesByName["Employee"])
        #expect(employees.inverseRelationship === model.entitiesByName["Employee"]?.relationshipsByName["department"])
        #expect(!employees.isOrdered)

        #expect(department.indexes.map(\.name) == ["byNameIndex"])
        let element = try #require(department.indexes.first?.elements.first)
        #expect(element.property === name)
        #expect(element.collationType == .binary && element.isAscending)
        #expect(department.indexes.first?.entity === department)

        #expect(department.uniquenessConstraints.map { $0.compactMap { $0 as? String } } == [["name"]])
        #expect(department.userInfo?["displayName"] as? String == "Departments")
        #expect(department.userInfo?["owner"] as? String == "HR")
        #expect(department.userInfo?.count == 2)
    }

    @Test("Employee: typed defaults and limits, external storage, nullify to Department, two indexes")
    func employee() throws {
        let employee = try #require(model.entitiesByName["Employee"])
        let salary = try #require(employee.attributesByName["salary"])
        #expect(salary.attributeType == .integer64AttributeType)
        #expect(!salary.isOptional)
        #expect(salary.defaultValue as? Int64 == 30_000)
        #expect(salary.minValue as? Int64 == 30_000)
        #expect(salary.maxValue as? Int64 == 200_000)
        #expect(salary.userInfo?["currency"] as? String == "EUR")
        let hired = try #require(employee.attributesByName["hired"])
        #expect(hired.defaultValue as? Date == Date(timeIntervalSinceReferenceDate: 694_224_000))
        #expect(employee.attributesByName["active"]?.defaultValue as? Bool == true)
        let notes = try #require(employee.attributesByName["notes"])
        #expect(notes.isOptional && notes.maxValue as? Int == 1000)
        let photo = try #require(employee.attributesByName["photo"])
        #expect(
            photo.attributeType == .binaryDataAttributeType && photo.allowsExternalBinaryDataStorage && photo.isOptional
        )
        #expect(employee.attributesByName["name"]?.preservesValueInHistoryOnDeletion == true)

        let department = try #require(employee.relationshipsByName["department"])
        #expect(!department.isToMany && department.maxCount == 1)
        #expect(department.deleteRule == .nullifyDeleteRule)
        #expect(department.destinationEntity === model.entitiesByName["Department"])
        #expect(department.inverseRelationship?.name == "employees")
        let manager = try #require(employee.relationshipsByName["manager"])
        #expect(manager.destinationEntity === model.entitiesByName["Manager"])
        #expect(manager.inverseRelationship === model.entitiesByName["Manager"]?.relationshipsByName["reports"])
        #expect(manager.inverseRelationship?.inverseRelationship === manager)

        #expect(employee.indexes.map(\.name) == ["bySalaryIndex", "byDepartmentSalaryIndex"])
        let compound = employee.indexes[1]
        #expect(compound.elements.map { $0.propertyName ?? "" } == ["department", "salary"])
        #expect(compound.elements.map(\.isAscending) == [true, false])
        #expect(compound.elements[0].property === department)
    }

    @Test("Manager and Person: own attributes, constraint, regex")
    func managerAndPerson() throws {
        let manager = try #require(model.entitiesByName["Manager"])
        let level = try #require(manager.attributesByName["level"])
        #expect(level.attributeType == .integer16AttributeType)
        #expect(level.defaultValue as? Int16 == 1)
        #expect(level.minValue as? Int16 == 1 && level.maxValue as? Int16 == 9)
        let reports = try #require(manager.relationshipsByName["reports"])
        #expect(reports.isToMany && reports.destinationEntity === model.entitiesByName["Employee"])

        let person = try #require(model.entitiesByName["Person"])
        #expect(person.attributesByName["email"]?.regularExpressionString == "[^@ ]+@[^@ ]+")
        #expect(person.uniquenessConstraints.map { $0.compactMap { $0 as? String } } == [["email"]])
    }

    @Test("the model validates, freezes and keeps its hashes")
    func freezes() throws {
        try model.validate()
        let hashes = model.entityVersionHashesByName
        model.freeze()
        #expect(model.entityVersionHashesByName == hashes)
        let again = try ManagedObjectModel(checkedContentsOf: SampleModels.company)
        #expect(again.entityVersionHashesByName == hashes)
    }

    @Test("version 1 loads on its own, and its Employee hash differs from version 2's")
    func firstVersion() throws {
        let first = try ManagedObjectModel(
            checkedContentsOf: SampleModels.company.appendingPathComponent("Company.xcdatamodel"))
        #expect(first.entities.map(\.name) == ["Department", "Employee"])
        #expect(first.versionIdentifiers.isEmpty)
        let employee = try #require(first.entitiesByName["Employee"])
        #expect(employee.superentity == nil)
        #expect(employee.attributesByName["name"]?.entity === employee)
        #expect(employee.attributesByName["salary"]?.defaultValue as? Int64 == 0)
        #expect(employee.attributesByName["hired"]?.defaultValue == nil)
        #expect(first.entityVersionHashesByName["Employee"] != model.entityVersionHashesByName["Employee"])
        #expect(first.entityVersionHashesByName["Department"] != model.entityVersionHashesByName["Department"])
    }
}

@Suite("Choosing the version of an .xcdatamodeld")
struct ModelVersionSelectionTests {
    /// Copies the Company bundle into a scratch directory.
    private func copyOfCompany(in scratch: TemporaryDirectory) throws -> URL {
        let copy = scratch.url.appendingPathComponent("Company.xcdatamodeld")
        try FileManager.default.copyItem(at: SampleModels.company, to: copy)
        return copy
    }

    private func currentVersionPlist(_ name: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>_XCCurrentVersionName</key>
        \t<string>\(name)</string>
        </dict>
        </plist>
        """
    }

    @Test(".xccurrentversion decides which version loads")
    func markerDecides() throws {
        let scratch = TemporaryDirectory()
        let bundle = try copyOfCompany(in: scratch)
        try scratch.write(currentVersionPlist("Company.xcdatamodel"), to: "Company.xcdatamodeld/.xccurrentversion")
        let first = try ManagedObjectModel(checkedContentsOf: bundle)
        #expect(first.entities.map(\.name) == ["Department", "Employee"])
    }

    @Test("without .xccurrentversion the last version by name loads")
    func lastVersionWithoutMarker() throws {
        let scratch = TemporaryDirectory()
        let bundle = try copyOfCompany(in: scratch)
        try FileManager.default.removeItem(at: bundle.appendingPathComponent(".xccurrentversion"))
        let model = try ManagedObjectModel(checkedContentsOf: bundle)
        #expect(model.entitiesByName["Manager"] != nil)
        // "Company 10" sorts after "Company 2".
        try FileManager.default.copyItem(
            at: bundle.appendingPathComponent("Company.xcdatamodel"),
            to: bundle.appendingPathComponent("Company 10.xcdatamodel"))
        let tenth = try ManagedObjectModel(checkedContentsOf: bundle)
        #expect(tenth.entitiesByName["Manager"] == nil)
    }

    @Test("a version named by .xccurrentversion that does not exist is an error")
    func missingCurrentVersion() throws {
        let scratch = TemporaryDirectory()
        let bundle = try copyOfCompany(in: scratch)
        try scratch.write(currentVersionPlist("Company 3.xcdatamodel"), to: "Company.xcdatamodeld/.xccurrentversion")
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: bundle) }
        #expect(error?.code == .fileNotFound)
        #expect(error?.message.contains("Company 3.xcdatamodel") == true)
    }

    @Test("a malformed .xccurrentversion is an error")
    func malformedMarker() throws {
        let scratch = TemporaryDirectory()
        let bundle = try copyOfCompany(in: scratch)
        try scratch.write("<plist><dict><key>", to: "Company.xcdatamodeld/.xccurrentversion")
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: bundle) }
        #expect(error?.code == .malformedXML)
        #expect(error?.path?.hasSuffix(".xccurrentversion") == true)
    }

    @Test("an .xcdatamodeld without versions is an error")
    func emptyBundle() throws {
        let scratch = TemporaryDirectory()
        let bundle = scratch.url.appendingPathComponent("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: bundle) }
        #expect(error?.code == .fileNotFound)
        #expect(error?.message.contains("no .xcdatamodel") == true)
    }
}

@Suite("Loading Library.xcdatamodel")
struct LibraryModelLoadingTests {
    let model: ManagedObjectModel
    let book: EntityDescription

    init() throws {
        model = try ManagedObjectModel(checkedContentsOf: SampleModels.library)
        book = try #require(model.entitiesByName["Book"])
    }

    private func attribute(_ name: String) throws -> AttributeDescription {
        try #require(book.attributesByName[name])
    }

    @Test("entities and configurations")
    func entitiesAndConfigurations() throws {
        #expect(model.entities.map(\.name) == ["Author", "Book", "Tag"])
        #expect(model.configurations == ["Catalog", "Tagging"])
        #expect(model.entities(forConfigurationName: "Catalog")?.map(\.name) == ["Author", "Book"])
        #expect(model.entities(forConfigurationName: "Tagging")?.map(\.name) == ["Tag"])
        #expect(model.entities(forConfigurationName: nil)?.count == 3)
        #expect(model.entities(forConfigurationName: "Missing") == nil)
        try model.validate()
    }

    @Test(
        "every attribute type",
        arguments: [
            ("pages", AttributeType.integer16AttributeType), ("wordCount", .integer32AttributeType),
            ("isbn", .integer64AttributeType), ("price", .decimalAttributeType), ("rating", .doubleAttributeType),
            ("weight", .floatAttributeType), ("title", .stringAttributeType), ("inPrint", .booleanAttributeType),
            ("published", .dateAttributeType), ("cover", .binaryDataAttributeType), ("identifier", .UUIDAttributeType),
            ("link", .URIAttributeType), ("metadata", .transformableAttributeType),
            ("sourceID", .objectIDAttributeType),
            ("scratch", .undefinedAttributeType), ("displayTitle", .stringAttributeType),
        ])
    func attributeTypes(name: String, type: AttributeType) throws {
        let attribute = try attribute(name)
        #expect(attribute.attributeType == type)
        #expect(attribute.type == AttributeDescription.AttributeType(type))
        #expect(attribute.entity === book)
    }

    @Test("default values are converted to the attribute's type")
    func defaults() throws {
        #expect(try attribute("pages").defaultValue as? Int16 == 1)
        #expect(try attribute("wordCount").defaultValue as? Int32 == 0)
        #expect(try attribute("isbn").defaultValue == nil)
        #expect(try attribute("price").defaultValue as? Decimal == Decimal(string: "9.99"))
        #expect(close(try attribute("rating").defaultValue, 2.5))
        #expect(try attribute("weight").defaultValue as? Float == 0.5)
        #expect(try attribute("inPrint").defaultValue as? Bool == true)
        #expect(try attribute("published").defaultValue as? Date == Date(timeIntervalSinceReferenceDate: 694_224_000))
        #expect(try attribute("title").defaultValue == nil)
        let tag = try #require(model.entitiesByName["Tag"])
        #expect(
            tag.attributesByName["identifier"]?.defaultValue as? UUID
                == UUID(uuidString: "9F1C5C1E-2D3B-4C5D-8E6F-7A8B9C0D1E2F"))
        let author = try #require(model.entitiesByName["Author"])
        #expect(author.attributesByName["website"]?.defaultValue as? URL == URL(string: "https://example.com/authors"))
    }

    @Test("minimums, maximums and patterns")
    func limits() throws {
        #expect(try attribute("pages").minValue as? Int16 == 1)
        #expect(try attribute("pages").maxValue as? Int16 == 10_000)
        #expect(try attribute("wordCount").minValue as? Int32 == 0)
        #expect(try attribute("isbn").maxValue as? Int64 == 9_999_999_999_999)
        #expect(try attribute("price").minValue as? Decimal == 0)
        #expect(close(try attribute("rating").maxValue, 5))
        let title = try attribute("title")
        #expect(title.minValue as? Int == 1 && title.maxValue as? Int == 200)
        #expect(title.regularExpressionString == ".*\\S.*")
        #expect(try attribute("cover").maxValue as? Int == 10_485_760)
        let author = try #require(model.entitiesByName["Author"])
        let name = try #require(author.attributesByName["name"])
        #expect(name.minValue as? Int == 1 && name.maxValue as? Int == 100)
        #expect(name.regularExpressionString == "[A-Za-z .'-]+")
        let born = try #require(author.attributesByName["born"])
        #expect(born.minValue as? Date == Date(timeIntervalSinceReferenceDate: -3_155_760_000))
        #expect(born.maxValue as? Date == Date(timeIntervalSinceReferenceDate: 978_307_200))
    }

    @Test("optional, transient, external storage, transformer, history")
    func flags() throws {
        #expect(try !attribute("title").isOptional)
        #expect(try attribute("title").preservesValueInHistoryOnDeletion)
        #expect(try !attribute("pages").isOptional)
        #expect(try attribute("link").isOptional)
        #expect(try attribute("displayTitle").isTransient)
        #expect(try attribute("scratch").isTransient)
        #expect(try !attribute("title").isTransient)
        #expect(try attribute("cover").allowsExternalBinaryDataStorage)
        #expect(try !attribute("identifier").allowsExternalBinaryDataStorage)
        let metadata = try attribute("metadata")
        #expect(metadata.valueTransformerName == "NSSecureUnarchiveFromDataTransformer")
        #expect(metadata.attributeValueClassName == "[String: String]")
        #expect(try attribute("price").attributeValueClassName == "Decimal")
        let tag = try #require(model.entitiesByName["Tag"])
        #expect(tag.attributesByName["name"]?.userInfo?["normalization"] as? String == "lowercase")
        #expect(tag.uniquenessConstraints.map { $0.compactMap { $0 as? String } } == [["name"]])
    }

    @Test("relationships: many-to-many, ordered, deny, no action, counts")
    func relationships() throws {
        let author = try #require(model.entitiesByName["Author"])
        let tag = try #require(model.entitiesByName["Tag"])
        let books = try #require(author.relationshipsByName["books"])
        let authors = try #require(book.relationshipsByName["authors"])
        let tags = try #require(book.relationshipsByName["tags"])
        let tagBooks = try #require(tag.relationshipsByName["books"])

        #expect(books.isToMany && books.isOrdered && books.deleteRule == .denyDeleteRule)
        #expect(books.destinationEntity === book && books.inverseRelationship === authors)
        #expect(authors.isToMany && !authors.isOrdered && authors.deleteRule == .nullifyDeleteRule)
        #expect(authors.minCount == 1 && authors.maxCount == 0 && !authors.isOptional)
        #expect(authors.destinationEntity === author && authors.inverseRelationship === books)
        #expect(tags.isToMany && tags.maxCount == 10 && tags.isOptional)
        #expect(tags.inverseRelationship === tagBooks && tagBooks.inverseRelationship === tags)
        #expect(tagBooks.deleteRule == .noActionDeleteRule)
        #expect(book.relationships(forDestination: tag) == [tags])
    }
}

@Suite("Loading Minimal.xcdatamodel/contents")
struct MinimalModelLoadingTests {
    @Test("a contents file loads directly")
    func contentsFile() throws {
        let model = try ManagedObjectModel(checkedContentsOf: SampleModels.minimalContents)
        #expect(model.entities.map(\.name) == ["Item"])
        let item = try #require(model.entitiesByName["Item"])
        #expect(item.managedObjectClassName == "ManagedObject")
        #expect(item.properties.map(\.name) == ["title"])
        let title = try #require(item.attributesByName["title"])
        #expect(title.attributeType == .stringAttributeType && title.isOptional && title.defaultValue == nil)
        #expect(item.relationshipsByName.isEmpty && item.indexes.isEmpty && item.uniquenessConstraints.isEmpty)
        #expect(model.versionIdentifiers.isEmpty && model.configurations.isEmpty)

        let viaDirectory = try ManagedObjectModel(
            checkedContentsOf: SampleModels.minimalContents.deletingLastPathComponent())
        #expect(viaDirectory.entityVersionHashesByName == model.entityVersionHashesByName)
    }

    @Test("the loaded entity hashes like the same entity built in code")
    func sameAsInCode() throws {
        let model = try ManagedObjectModel(checkedContentsOf: SampleModels.minimalContents)
        let item = EntityDescription(name: "Item", properties: [AttributeDescription(name: "title", type: .string)])
        #expect(model.entitiesByName["Item"]?.versionHash == item.versionHash)
    }
}

/// A model file that must not load, and what the error must say.
struct MalformedModel: Sendable, CustomTestStringConvertible {
    let name: String
    /// The body inside `<model>` (or the whole file when `whole`).
    let body: String
    let whole: Bool
    let code: ModelError.Code
    /// A substring of the line the error must point at, if any.
    let lineMarker: String?
    /// Substrings the message must contain.
    let fragments: [String]
    let entity: String?
    let property: String?

    init(
        _ name: String, _ body: String, whole: Bool = false, code: ModelError.Code, line lineMarker: String? = nil,
        says fragments: [String], entity: String? = nil, property: String? = nil
    ) {
        self.name = name
        self.body = body
        self.whole = whole
        self.code = code
        self.lineMarker = lineMarker
        self.fragments = fragments
        self.entity = entity
        self.property = property
    }

    var testDescription: String { name }

    var document: String {
        if whole { return body }
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            \(body)
            </model>
            """
    }

    /// The 1-based line of `lineMarker` in the document.
    var expectedLine: Int? {
        guard let lineMarker else { return nil }
        return document.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(lineMarker) }
            .map { $0 + 1 }
    }

    static let all: [MalformedModel] = [
        MalformedModel(
            "unclosed element",
            """
                <entity name="A">
                    <attribute name="x" attributeType="String">
                </entity>
            """,
            code: .malformedXML, line: "</entity>", says: ["malformed XML", "closing tag"]),
        MalformedModel(
            "unquoted attribute value",
            """
                <entity name="A">
                    <attribute name=x attributeType="String"/>
                </entity>
            """,
            code: .malformedXML, line: "name=x", says: ["without quotes"]),
        MalformedModel(
            "attribute given twice",
            """
                <entity name="A" name="B"/>
            """,
            code: .malformedXML, line: "name=\"B\"", says: ["appears twice"]),
        MalformedModel(
            "content after the root element",
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="A"/>
            </model>
            <model/>
            """,
            whole: true, code: .malformedXML, line: "<model/>", says: ["goes on after its root element"]),
        MalformedModel("empty file", "", whole: true, code: .malformedXML, says: ["malformed XML"]),
        MalformedModel(
            "not a model",
            """
            <?xml version="1.0"?>
            <plist version="1.0"><dict/></plist>
            """,
            whole: true, code: .invalidModel, line: "<plist", says: ["<plist>", "not <model>"]),
        MalformedModel(
            "unknown attribute type",
            """
                <entity name="Employee">
                    <attribute name="name" attributeType="String"/>
                    <attribute name="salary" attributeType="Integer 128"/>
                </entity>
            """,
            code: .unknownAttributeType, line: "Integer 128", says: ["Employee.salary", "Integer 128"],
            entity: "Employee", property: "salary"),
        MalformedModel(
            "attribute without a type",
            """
                <entity name="Employee">
                    <attribute name="salary"/>
                </entity>
            """,
            code: .unknownAttributeType, line: "salary", says: ["Employee.salary", "no attributeType"],
            entity: "Employee", property: "salary"),
        MalformedModel(
            "missing destination entity",
            """
                <entity name="Employee">
                    <relationship name="department" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Departmnt"/>
                </entity>
            """,
            code: .missingEntity, line: "Departmnt", says: ["Employee.department", "Departmnt", "does not exist"],
            entity: "Employee", property: "department"),
        MalformedModel(
            "missing inverse relationship",
            """
                <entity name="Department">
                    <attribute name="name" attributeType="String"/>
                </entity>
                <entity name="Employee">
                    <relationship name="department" maxCount="1" deletionRule="Nullify" destinationEntity="Department" inverseName="staff" inverseEntity="Department"/>
                </entity>
            """,
            code: .missingProperty, line: "inverseName=\"staff\"", says: ["Employee.department", "Department.staff"],
            entity: "Employee", property: "department"),
        MalformedModel(
            "missing inverse entity",
            """
                <entity name="Department"/>
                <entity name="Employee">
                    <relationship name="department" maxCount="1" deletionRule="Nullify" destinationEntity="Department" inverseName="employees" inverseEntity="Dept"/>
                </entity>
            """,
            code: .missingEntity, line: "Dept\"", says: ["Employee.department", "Dept"], entity: "Employee"),
        MalformedModel(
            "inverse that is an attribute",
            """
                <entity name="Department">
                    <attribute name="name" attributeType="String"/>
                </entity>
                <entity name="Employee">
                    <relationship name="department" maxCount="1" deletionRule="Nullify" destinationEntity="Department" inverseName="name" inverseEntity="Department"/>
                </entity>
            """,
            code: .invalidModel, line: "inverseName=\"name\"", says: ["Department.name", "attribute"],
            entity: "Employee"),
        MalformedModel(
            "inverse pointing at an unrelated entity",
            """
                <entity name="A">
                    <relationship name="b" maxCount="1" destinationEntity="B" inverseName="c" inverseEntity="B"/>
                </entity>
                <entity name="B">
                    <relationship name="c" maxCount="1" destinationEntity="C"/>
                </entity>
                <entity name="C"/>
            """,
            code: .invalidModel, line: "name=\"b\"", says: ["A.b", "B.c", "not A"], entity: "A", property: "b"),
        MalformedModel(
            "missing parent entity",
            """
                <entity name="Manager" parentEntity="Employe"/>
            """,
            code: .missingEntity, line: "Manager", says: ["Manager", "parent entity Employe"], entity: "Manager"),
        MalformedModel(
            "cycle of parent entities",
            """
                <entity name="A" parentEntity="C"/>
                <entity name="B" parentEntity="A"/>
                <entity name="C" parentEntity="B"/>
            """,
            code: .inheritanceCycle, line: "name=\"A\"", says: ["cycle", "A -> C -> B -> A"], entity: "A"),
        MalformedModel(
            "entity that is its own parent",
            """
                <entity name="Loop" parentEntity="Loop"/>
            """,
            code: .inheritanceCycle, line: "Loop", says: ["Loop -> Loop"], entity: "Loop"),
        MalformedModel(
            "unknown delete rule",
            """
                <entity name="Node">
                    <relationship name="parent" maxCount="1" deletionRule="Explode" destinationEntity="Node"/>
                </entity>
            """,
            code: .invalidValue, line: "Explode", says: ["Node.parent", "Explode"], entity: "Node", property: "parent"),
        MalformedModel(
            "two entities of one name",
            """
                <entity name="Item"/>
                <entity name="Item"/>
            """,
            code: .duplicateName, says: ["two entities are named Item"], entity: "Item"),
        MalformedModel(
            "two properties of one name",
            """
                <entity name="Item">
                    <attribute name="title" attributeType="String"/>
                    <relationship name="title" maxCount="1" destinationEntity="Item"/>
                </entity>
            """,
            code: .duplicateName, line: "<relationship", says: ["Item", "title"], entity: "Item", property: "title"),
        MalformedModel(
            "a sub-entity redefining an inherited property",
            """
                <entity name="Person" isAbstract="YES">
                    <attribute name="name" attributeType="String"/>
                </entity>
                <entity name="Employee" parentEntity="Person">
                    <attribute name="name" attributeType="String"/>
                </entity>
            """,
            code: .duplicateName, says: ["Employee", "name", "Person"], entity: "Employee", property: "name"),
        MalformedModel(
            "fetch index on a missing property",
            """
                <entity name="Employee">
                    <attribute name="salary" attributeType="Integer 64"/>
                    <fetchIndex name="byPay">
                        <fetchIndexElement property="pay" type="Binary" order="ascending"/>
                    </fetchIndex>
                </entity>
            """,
            code: .missingProperty, line: "property=\"pay\"", says: ["Employee.byPay", "pay"], entity: "Employee",
            property: "pay"),
        MalformedModel(
            "uniqueness constraint on a missing property",
            """
                <entity name="Person">
                    <attribute name="name" attributeType="String"/>
                    <uniquenessConstraints>
                        <uniquenessConstraint>
                            <constraint value="email"/>
                        </uniquenessConstraint>
                    </uniquenessConstraints>
                </entity>
            """,
            code: .missingProperty, line: "value=\"email\"", says: ["Person", "email"], entity: "Person",
            property: "email"),
        MalformedModel(
            "configuration naming a missing entity",
            """
                <entity name="Item"/>
                <configuration name="Cloud">
                    <memberEntity name="Ghost"/>
                </configuration>
            """,
            code: .missingEntity, line: "Ghost", says: ["configuration Cloud", "Ghost"], entity: "Ghost"),
        MalformedModel(
            "entity without a name",
            """
                <entity representedClassName="Item"/>
            """,
            code: .invalidModel, line: "representedClassName", says: ["entity", "no name"]),
        MalformedModel(
            "bad YES/NO flag",
            """
                <entity name="Item">
                    <attribute name="title" optional="maybe" attributeType="String"/>
                </entity>
            """,
            code: .invalidValue, line: "maybe", says: ["Item.title", "optional", "maybe"], entity: "Item",
            property: "title"),
    ]
}

@Suite("Malformed models")
struct MalformedModelTests {
    @Test("each malformed model throws a ModelError that says what and where", arguments: MalformedModel.all)
    func throwsUsefulError(_ sample: MalformedModel) throws {
        let scratch = TemporaryDirectory()
        let file = try scratch.write(sample.document, to: "Bad.xcdatamodel/contents")
        let error = #expect(throws: ModelError.self) {
            try ManagedObjectModel(checkedContentsOf: file.deletingLastPathComponent())
        }
        guard let error else { return }
        #expect(error.code == sample.code, "\(error)")
        for fragment in sample.fragments {
            #expect(error.message.contains(fragment), "message \"\(error.message)\" lacks \"\(fragment)\"")
        }
        #expect(error.path == file.path)
        if let line = sample.expectedLine {
            #expect(error.line == line, "\(error)")
            #expect(error.message.contains("line \(line)"), "\(error)")
        }
        if let entity = sample.entity { #expect(error.entityName == entity) }
        if let property = sample.property { #expect(error.propertyName == property) }
        #expect(error.description.contains(error.message))
    }

    @Test("a missing file throws fileNotFound naming the path")
    func missingFile() throws {
        let scratch = TemporaryDirectory()
        let missing = scratch.url.appendingPathComponent("Nope.xcdatamodeld")
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: missing) }
        #expect(error?.code == .fileNotFound)
        #expect(error?.path == missing.path)
        #expect(error?.message.contains(missing.path) == true)
    }

    @Test("a model directory without a contents file throws fileNotFound")
    func missingContents() throws {
        let scratch = TemporaryDirectory()
        let directory = scratch.url.appendingPathComponent("Hollow.xcdatamodel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: directory) }
        #expect(error?.code == .fileNotFound)
        #expect(error?.message.contains("no contents file") == true)
    }
}
