import Foundation
import Testing

@testable import Strata

/// Builds the reference Company model in code: abstract Person, Employee (sub-entity of
/// Person), Manager (sub-entity of Employee), Department.
private struct CompanyModel {
    let model = ManagedObjectModel()
    let person = EntityDescription(name: "Person")
    let employee = EntityDescription(name: "Employee")
    let manager = EntityDescription(name: "Manager")
    let department = EntityDescription(name: "Department")
    let personName = AttributeDescription(name: "name", type: .string)
    let email = AttributeDescription(name: "email", type: .string)
    let salary = AttributeDescription(name: "salary", type: .integer64)
    let hired = AttributeDescription(name: "hired", type: .date)
    let level = AttributeDescription(name: "level", type: .integer16)
    let departmentName = AttributeDescription(name: "name", type: .string)
    let budget = AttributeDescription(name: "budget", type: .double)
    let employees = RelationshipDescription()
    let employeeDepartment = RelationshipDescription()
    let reports = RelationshipDescription()
    let employeeManager = RelationshipDescription()
    let salaryIndex: FetchIndexDescription

    init() {
        person.isAbstract = true
        personName.isOptional = false
        person.properties = [email, personName]
        person.uniquenessConstraints = [["email"]]

        employees.name = "employees"
        employees.destinationEntity = employee
        employees.maxCount = 0
        employees.deleteRule = .cascadeDeleteRule
        employeeDepartment.name = "department"
        employeeDepartment.destinationEntity = department
        employees.inverseRelationship = employeeDepartment
        employeeDepartment.inverseRelationship = employees

        reports.name = "reports"
        reports.destinationEntity = employee
        reports.maxCount = 0
        employeeManager.name = "manager"
        employeeManager.destinationEntity = manager
        reports.inverseRelationship = employeeManager
        employeeManager.inverseRelationship = reports

        salary.defaultValue = Int64(30_000)
        employee.properties = [salary, hired, employeeDepartment, employeeManager]
        salaryIndex = FetchIndexDescription(
            name: "bySalaryIndex",
            elements: [FetchIndexElementDescription(property: salary, collationType: .binary)])
        employee.indexes = [salaryIndex]
        manager.properties = [level, reports]
        department.properties = [departmentName, budget, employees]

        person.subentities = [employee]
        employee.subentities = [manager]
        model.entities = [department, person, employee, manager]
    }
}

@Suite("AttributeType and AttributeDescription.AttributeType")
struct AttributeTypeTests {
    @Test("the two spellings of the type stay in sync")
    func typesStayInSync() {
        let attribute = AttributeDescription(name: "salary", type: .integer64)
        #expect(attribute.attributeType == .integer64AttributeType)
        #expect(attribute.type == .integer64)
        attribute.attributeType = .stringAttributeType
        #expect(attribute.type == .string)
        attribute.type = .uuid
        #expect(attribute.attributeType == .UUIDAttributeType)
        attribute.type = AttributeDescription.AttributeType(rawValue: 12_345)
        #expect(attribute.attributeType == .undefinedAttributeType)
    }

    @Test(
        "raw values are Core Data's",
        arguments: [
            (AttributeType.undefinedAttributeType, AttributeDescription.AttributeType.undefined, UInt(0)),
            (.integer16AttributeType, .integer16, 100), (.integer32AttributeType, .integer32, 200),
            (.integer64AttributeType, .integer64, 300), (.decimalAttributeType, .decimal, 400),
            (.doubleAttributeType, .double, 500), (.floatAttributeType, .float, 600),
            (.stringAttributeType, .string, 700), (.booleanAttributeType, .boolean, 800),
            (.dateAttributeType, .date, 900), (.binaryDataAttributeType, .binaryData, 1000),
            (.UUIDAttributeType, .uuid, 1100), (.URIAttributeType, .uri, 1200),
            (.transformableAttributeType, .transformable, 1800), (.objectIDAttributeType, .objectID, 2000),
        ])
    func rawValues(type: AttributeType, newType: AttributeDescription.AttributeType, raw: UInt) {
        #expect(type.rawValue == raw)
        #expect(newType.rawValue == raw)
        #expect(AttributeDescription.AttributeType(type) == newType)
    }

    @Test("the value class name follows the type unless set")
    func valueClassName() {
        let attribute = AttributeDescription(name: "when", type: .date)
        #expect(attribute.attributeValueClassName == "Date")
        attribute.type = .integer16
        #expect(attribute.attributeValueClassName == "Int16")
        attribute.type = .transformable
        #expect(attribute.attributeValueClassName == nil)
        attribute.attributeValueClassName = "Color"
        #expect(attribute.attributeValueClassName == "Color")
        #expect(AttributeDescription.AttributeType.binaryData.description == "Binary")
    }

    @Test("defaults are Core Data's")
    func defaults() {
        let attribute = AttributeDescription()
        #expect(attribute.name == "")
        #expect(attribute.attributeType == .undefinedAttributeType)
        #expect(attribute.isOptional)
        #expect(!attribute.isTransient)
        #expect(attribute.defaultValue == nil)
        #expect(!attribute.allowsExternalBinaryDataStorage)
        #expect(!attribute.preservesValueInHistoryOnDeletion)
        #expect(attribute.minValue == nil && attribute.maxValue == nil && attribute.regularExpressionString == nil)
        #expect(attribute.entity == nil)
        #expect(attribute.userInfo?.isEmpty == true)

        let relationship = RelationshipDescription()
        #expect(relationship.deleteRule == .nullifyDeleteRule)
        #expect(relationship.minCount == 0 && relationship.maxCount == 1 && !relationship.isToMany)
        #expect(!relationship.isOrdered)
        #expect(relationship.destinationEntity == nil && relationship.inverseRelationship == nil)

        let entity = EntityDescription()
        #expect(entity.name == nil)
        #expect(entity.managedObjectClassName == "ManagedObject")
        #expect(!entity.isAbstract)
        #expect(entity.properties.isEmpty && entity.subentities.isEmpty && entity.superentity == nil)
        #expect(entity.indexes.isEmpty && entity.uniquenessConstraints.isEmpty)
        #expect(entity.versionHash.count == 32)
    }
}

@Suite("Building a model in code")
struct ModelBuildingTests {
    @Test("properties get their entity, and lose it when removed")
    func propertyBackReferences() {
        let entity = EntityDescription(name: "Item")
        let title = AttributeDescription(name: "title", type: .string)
        let count = AttributeDescription(name: "count", type: .integer32)
        entity.properties = [title, count]
        #expect(title.entity === entity && count.entity === entity)
        #expect(entity.properties.map(\.name) == ["title", "count"])
        entity.properties = [count]
        #expect(title.entity == nil)
        #expect(count.entity === entity)
        #expect(entity.propertiesByName.keys.sorted() == ["count"])
        entity.properties.append(title)
        #expect(entity.properties.map(\.name) == ["count", "title"])
        #expect(title.entity === entity)
    }

    @Test("references to an entity read nil once it is gone, as weak references do")
    func referencesToAGoneEntityReadNil() {
        let title = AttributeDescription(name: "title", type: .string)
        let link = RelationshipDescription()
        let index = FetchIndexDescription(name: "byTitle", elements: [])
        let child = EntityDescription(name: "Child")
        var entity: EntityDescription? = EntityDescription(name: "Gone", properties: [title])
        entity!.indexes = [index]
        entity!.subentities = [child]
        link.destinationEntity = entity
        #expect(
            title.entity === entity && index.entity === entity && child.superentity === entity
                && link.destinationEntity === entity)
        // An ID of the entity keeps the entity, and so the references to it, alive.
        var id: ManagedObjectID? = ManagedObjectID(temporaryFor: entity!)
        weak let gone = entity
        entity = nil
        #expect(gone != nil && title.entity === gone && link.destinationEntity === gone)
        withExtendedLifetime(id) {}
        id = nil
        #expect(gone == nil)
        #expect(title.entity == nil && index.entity == nil && child.superentity == nil && link.destinationEntity == nil)
    }

    @Test("a relationship's inverse reads nil once the inverse is gone, as a weak reference does")
    func inverseOfAGoneRelationshipReadsNil() {
        let employees = RelationshipDescription()
        var department: RelationshipDescription? = RelationshipDescription()
        employees.inverseRelationship = department
        department!.inverseRelationship = employees
        #expect(employees.inverseRelationship === department && department!.inverseRelationship === employees)
        weak let gone = department
        department = nil
        #expect(gone == nil)
        #expect(employees.inverseRelationship == nil)
    }

    @Test("sub-entities inherit every property, superentity's first")
    func inheritance() {
        let company = CompanyModel()
        #expect(company.person.isAbstract && !company.employee.isAbstract)
        #expect(company.person.subentities == [company.employee])
        #expect(company.employee.superentity === company.person)
        #expect(company.manager.superentity === company.employee)
        #expect(company.person.superentity == nil)
        #expect(company.employee.subentitiesByName["Manager"] === company.manager)

        #expect(company.person.properties.map(\.name) == ["email", "name"])
        #expect(
            company.employee.properties.map(\.name) == ["email", "name", "salary", "hired", "department", "manager"])
        #expect(
            company.manager.properties.map(\.name) == [
                "email", "name", "salary", "hired", "department", "manager", "level", "reports",
            ])
        #expect(company.manager.propertiesByName.count == 8)
        #expect(company.manager.attributesByName.keys.sorted() == ["email", "hired", "level", "name", "salary"])
        #expect(company.manager.relationshipsByName.keys.sorted() == ["department", "manager", "reports"])
        #expect(company.manager.attributesByName["name"] === company.personName)
        // An inherited property still belongs to the entity that defines it.
        #expect(company.manager.propertiesByName["salary"]?.entity === company.employee)
        #expect(company.person.propertiesByName["salary"] == nil)

        #expect(company.manager.isKindOf(entity: company.person))
        #expect(company.manager.isKindOf(entity: company.manager))
        #expect(!company.person.isKindOf(entity: company.employee))
        #expect(!company.department.isKindOf(entity: company.person))
    }

    @Test("appending to a sub-entity's properties keeps inherited ones inherited")
    func appendOnSubentity() {
        let company = CompanyModel()
        let bonus = AttributeDescription(name: "bonus", type: .decimal)
        company.manager.properties.append(bonus)
        #expect(company.manager.properties.map(\.name).suffix(3) == ["level", "reports", "bonus"])
        #expect(company.personName.entity === company.person)
        #expect(company.salary.entity === company.employee)
        #expect(company.employee.propertiesByName["bonus"] == nil)
    }

    @Test("moving a sub-entity to another parent removes it from the first")
    func reparenting() {
        let company = CompanyModel()
        company.person.subentities = [company.employee, company.manager]
        #expect(company.manager.superentity === company.person)
        #expect(company.employee.subentities.isEmpty)
        #expect(company.manager.properties.map(\.name) == ["email", "name", "level", "reports"])
        company.person.subentities = [company.employee]
        #expect(company.manager.superentity == nil)
        #expect(company.manager.properties.map(\.name) == ["level", "reports"])
    }

    @Test("relationships: inverses, to-many, destinations")
    func relationships() {
        let company = CompanyModel()
        #expect(company.employees.isToMany)
        #expect(!company.employeeDepartment.isToMany)
        #expect(company.employees.inverseRelationship === company.employeeDepartment)
        #expect(company.employeeDepartment.inverseRelationship === company.employees)
        #expect(company.employees.deleteRule == .cascadeDeleteRule)
        #expect(company.employeeDepartment.deleteRule == .nullifyDeleteRule)
        company.reports.maxCount = 5
        #expect(company.reports.isToMany)
        company.reports.maxCount = 1
        #expect(!company.reports.isToMany)

        #expect(company.department.relationships(forDestination: company.employee) == [company.employees])
        #expect(company.manager.relationships(forDestination: company.department) == [company.employeeDepartment])
        #expect(company.manager.relationships(forDestination: company.employee) == [company.reports])
        #expect(company.department.relationships(forDestination: company.manager).isEmpty)
    }

    @Test("fetch indexes know their entity and elements their index")
    func fetchIndexes() {
        let company = CompanyModel()
        let index = company.salaryIndex
        #expect(index.entity === company.employee)
        #expect(index.elements.count == 1)
        let element = index.elements[0]
        #expect(element.indexDescription === index)
        #expect(element.property === company.salary)
        #expect(element.propertyName == "salary")
        #expect(element.collationType == .binary)
        #expect(element.isAscending)
        element.isAscending = false
        #expect(index.description == "bySalaryIndex(salary descending)")

        let replacement = FetchIndexElementDescription(property: company.hired, collationType: .binary)
        index.elements = [replacement]
        #expect(element.indexDescription == nil)
        #expect(replacement.indexDescription === index)
        company.employee.indexes = []
        #expect(index.entity == nil)
    }

    @Test("the model knows its entities and configurations")
    func modelEntitiesAndConfigurations() {
        let company = CompanyModel()
        let model = company.model
        #expect(model.entities.map(\.name) == ["Department", "Person", "Employee", "Manager"])
        #expect(model.entitiesByName["Manager"] === company.manager)
        #expect(company.department.managedObjectModel === model)
        #expect(model.configurations.isEmpty)

        model.setEntities([company.department], forConfigurationName: "Org")
        model.setEntities([company.person, company.employee, company.manager], forConfigurationName: "People")
        #expect(model.configurations == ["Org", "People"])
        #expect(model.entities(forConfigurationName: "Org") == [company.department])
        #expect(model.entities(forConfigurationName: nil)?.count == 4)
        #expect(model.entities(forConfigurationName: "Default")?.count == 4)
        #expect(model.entities(forConfigurationName: "PF_DEFAULT_CONFIGURATION_NAME")?.count == 4)
        #expect(model.entities(forConfigurationName: "Nope") == nil)
        model.setEntities([], forConfigurationName: "Org")
        #expect(model.entities(forConfigurationName: "Org") == [])

        model.entities = [company.person, company.employee, company.manager]
        #expect(company.department.managedObjectModel == nil)
        #expect(model.entities(forConfigurationName: "People")?.count == 3)
        #expect(Set(model.entityVersionHashesByName.keys) == ["Person", "Employee", "Manager"])
        model.versionIdentifiers = ["1.1"]
        #expect(model.versionIdentifiers == ["1.1"])
    }

    @Test("coordinators made with one model share its mapping; an invalid model fails each the same way")
    func coordinatorsShareTheModelsMapping() throws {
        let company = CompanyModel()
        let first = PersistentStoreCoordinator(managedObjectModel: company.model)
        let second = PersistentStoreCoordinator(managedObjectModel: company.model)
        #expect(company.model.isFrozen)
        #expect(try first.mapping.get() === second.mapping.get())
        #expect(try !first.mapping.get().schema.entities.isEmpty)

        let broken = CompanyModel()
        let untyped = AttributeDescription()
        untyped.name = "mystery"
        broken.department.properties.append(untyped)
        for coordinator in [
            PersistentStoreCoordinator(managedObjectModel: broken.model),
            PersistentStoreCoordinator(managedObjectModel: broken.model),
        ] {
            #expect(throws: CoreDataError.self) { try coordinator.mapping.get() }
            #expect(throws: CoreDataError.self) {
                try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
            }
        }
    }

    @Test("a consistent model validates; an inconsistent one says what is wrong")
    func validation() throws {
        let company = CompanyModel()
        try company.model.validate()

        // A destination outside the model.
        let stray = EntityDescription(name: "Stray")
        let link = RelationshipDescription()
        link.name = "stray"
        link.destinationEntity = stray
        company.department.properties.append(link)
        var error = #expect(throws: ModelError.self) { try company.model.validate() }
        #expect(error?.code == .missingEntity)
        #expect(error?.message.contains("Department.stray") == true)
        company.department.properties.removeLast()
        try company.model.validate()

        // A persistent attribute without a type.
        let untyped = AttributeDescription()
        untyped.name = "mystery"
        company.department.properties.append(untyped)
        error = #expect(throws: ModelError.self) { try company.model.validate() }
        #expect(error?.code == .unknownAttributeType)
        #expect(error?.propertyName == "mystery")
        untyped.isTransient = true
        try company.model.validate()

        // A sub-entity redefining an inherited property.
        company.manager.properties.append(AttributeDescription(name: "salary", type: .double))
        error = #expect(throws: ModelError.self) { try company.model.validate() }
        #expect(error?.code == .duplicateName)
        #expect(error?.message.contains("salary") == true)
        company.manager.properties = [company.level, company.reports]

        // An inverse that is not a relationship of the destination.
        let staff = RelationshipDescription()
        staff.name = "staff"
        staff.destinationEntity = company.employee
        staff.maxCount = 0
        staff.inverseRelationship = company.reports
        company.department.properties.append(staff)
        error = #expect(throws: ModelError.self) { try company.model.validate() }
        #expect(error?.code == .missingProperty)
        #expect(error?.message.contains("Manager.reports") == true)
        company.department.properties.removeLast()

        // Two sides that disagree: accepted, as Core Data accepts them.
        let alumni = RelationshipDescription()
        alumni.name = "alumni"
        alumni.destinationEntity = company.employee
        alumni.maxCount = 0
        alumni.inverseRelationship = company.employeeDepartment
        company.department.properties.append(alumni)
        try company.model.validate()
        company.department.properties.removeLast()

        // Two entities of one name.
        company.model.entities.append(EntityDescription(name: "Department"))
        error = #expect(throws: ModelError.self) { try company.model.validate() }
        #expect(error?.code == .duplicateName)
    }
}

@Suite("Layout hashes")
struct LayoutHashTests {
    @Test("equal models have equal hashes, across builds and runs")
    func stable() {
        let first = CompanyModel()
        let second = CompanyModel()
        #expect(first.model.entityVersionHashesByName == second.model.entityVersionHashesByName)
        #expect(first.model.entityLayoutHashesByName == second.model.entityLayoutHashesByName)
        #expect(first.model.versionChecksum == second.model.versionChecksum)
        #expect(first.employee.layoutHash.count == 8)
        #expect(first.employee.versionHash.count == 32)
        #expect(Set(first.model.entityVersionHashesByName.values).count == 4)

        // Pinned: the hash is part of the store format, so it must not drift between builds.
        let item = EntityDescription(name: "Item", properties: [AttributeDescription(name: "title", type: .string)])
        #expect(item.layoutHash.map { String(format: "%02x", $0) }.joined() == "fa4c0ac080390b28")
    }

    @Test("changing what shapes storage changes the layout hash")
    func changes() {
        func hash(_ change: (CompanyModel) -> Void) -> Data {
            let company = CompanyModel()
            change(company)
            return company.employee.layoutHash
        }
        let base = hash { _ in }
        #expect(hash { $0.salary.attributeType = .integer32AttributeType } != base)
        #expect(hash { $0.salary.name = "pay" } != base)
        #expect(hash { $0.salary.isOptional = false } != base)
        #expect(hash { $0.salary.isTransient = true } != base)
        #expect(hash { $0.salary.versionHashModifier = "cents" } != base)
        #expect(hash { $0.salary.preservesValueInHistoryOnDeletion = true } != base)
        #expect(hash { $0.employeeDepartment.maxCount = 0 } != base)
        #expect(hash { $0.employeeManager.isOrdered = true } != base)
        #expect(hash { $0.employee.isAbstract = true } != base)
        #expect(hash { $0.employee.name = "Staff" } != base)
        #expect(hash { $0.employee.indexes = [] } != base)
        #expect(hash { $0.salaryIndex.elements[0].isAscending = false } != base)
        #expect(hash { $0.employee.uniquenessConstraints = [["salary"]] } != base)
        // An inherited attribute is part of the sub-entity's storage.
        #expect(hash { $0.email.attributeType = .URIAttributeType } != base)
        #expect(hash { $0.person.subentities = [] } != base)
    }

    @Test("what does not shape storage leaves the layout hash alone")
    func unchanged() {
        func hash(_ change: (CompanyModel) -> Void) -> Data {
            let company = CompanyModel()
            change(company)
            return company.employee.layoutHash
        }
        let base = hash { _ in }
        #expect(hash { $0.salary.userInfo = ["unit": "EUR"] } == base)
        #expect(hash { $0.salary.defaultValue = Int64(1) } == base)
        #expect(hash { $0.salary.minValue = Int64(0) } == base)
        #expect(hash { $0.salary.renamingIdentifier = "pay" } == base)
        #expect(hash { $0.employee.managedObjectClassName = "Staff" } == base)
        #expect(hash { $0.employee.userInfo = ["a": 1] } == base)
        #expect(hash { $0.employeeDepartment.deleteRule = .denyDeleteRule } == base)
        #expect(
            hash { $0.employee.properties = [$0.employeeManager, $0.hired, $0.employeeDepartment, $0.salary] } == base)
    }
}

@Suite("Freezing")
struct FreezingTests {
    @Test("a frozen model answers as before and stays frozen")
    func frozenReads() async {
        let company = CompanyModel()
        let hashes = company.model.entityVersionHashesByName
        let names = company.manager.properties.map(\.name)
        #expect(!company.model.isFrozen)
        company.model.freeze()
        company.model.freeze()
        #expect(company.model.isFrozen)
        #expect(company.model.entityVersionHashesByName == hashes)
        #expect(company.manager.properties.map(\.name) == names)
        #expect(company.manager.attributesByName["name"] === company.personName)
        #expect(company.model.entitiesByName["Employee"] === company.employee)

        // Frozen models are shared between threads.
        let model = company.model
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<200).reduce(0) { sum, _ in sum + (model.entitiesByName["Manager"]?.propertiesByName.count ?? 0)
                    }
                }
            }
            for await total in group { #expect(total == 200 * 8) }
        }
    }

    @Test("freezing from several threads at once is safe")
    func concurrentFreeze() async {
        let model = CompanyModel().model
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { model.freeze() } }
        }
        #expect(model.isFrozen)
        #expect(model.entitiesByName["Manager"]?.properties.count == 8)
    }

    @Test("setting an attribute's name after freezing traps")
    func attributeSetterTraps() async {
        await #expect(processExitsWith: .failure) {
            let entity = EntityDescription(
                name: "Item", properties: [AttributeDescription(name: "title", type: .string)])
            let model = ManagedObjectModel()
            model.entities = [entity]
            model.freeze()
            entity.properties[0].name = "renamed"
        }
    }

    @Test("setting an entity's properties after freezing traps")
    func entitySetterTraps() async {
        await #expect(processExitsWith: .failure) {
            let entity = EntityDescription(name: "Item")
            let model = ManagedObjectModel()
            model.entities = [entity]
            model.freeze()
            entity.properties = [AttributeDescription(name: "late", type: .string)]
        }
    }

    @Test("setting a relationship's delete rule after freezing traps")
    func relationshipSetterTraps() async {
        await #expect(processExitsWith: .failure) {
            let entity = EntityDescription(name: "Node")
            let parent = RelationshipDescription()
            parent.name = "parent"
            parent.destinationEntity = entity
            entity.properties = [parent]
            let model = ManagedObjectModel()
            model.entities = [entity]
            model.freeze()
            parent.deleteRule = .cascadeDeleteRule
        }
    }

    @Test("setting a model's entities after freezing traps")
    func modelSetterTraps() async {
        await #expect(processExitsWith: .failure) {
            let model = ManagedObjectModel()
            model.entities = [EntityDescription(name: "Item")]
            model.freeze()
            model.entities = []
        }
    }

    @Test("editing a fetch index after freezing traps")
    func indexSetterTraps() async {
        await #expect(processExitsWith: .failure) {
            let title = AttributeDescription(name: "title", type: .string)
            let entity = EntityDescription(name: "Item", properties: [title])
            let index = FetchIndexDescription(
                name: "byTitle", elements: [FetchIndexElementDescription(property: title, collationType: .binary)])
            entity.indexes = [index]
            let model = ManagedObjectModel()
            model.entities = [entity]
            model.freeze()
            index.elements[0].isAscending = false
        }
    }

    @Test("adding a property that belongs to another entity traps")
    func foreignPropertyTraps() async {
        await #expect(processExitsWith: .failure) {
            let title = AttributeDescription(name: "title", type: .string)
            let first = EntityDescription(name: "First", properties: [title])
            let second = EntityDescription(name: "Second")
            withExtendedLifetime(first) { second.properties = [title] }
        }
    }

    @Test("making an entity its own ancestor traps")
    func subentityCycleTraps() async {
        await #expect(processExitsWith: .failure) {
            let parent = EntityDescription(name: "Parent")
            let child = EntityDescription(name: "Child")
            parent.subentities = [child]
            child.subentities = [parent]
        }
    }
}
