import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// `ManagedObjectModel(byMerging:)` copies the models it merges, as Core Data's does: the merged
/// model stores and reopens objects of every model, and the models merged are unchanged.
@Suite struct ModelByMergingTests {
    typealias B = ModelBuilder

    /// Departments and employees (a subentity `Manager`, an index, a uniqueness constraint, a
    /// fetched property, a template and a configuration); and a model of notes.
    static func models() -> (company: ManagedObjectModel, notes: ManagedObjectModel) {
        let department = B.entity("Department", [B.attribute("name", .string, isOptional: false)])
        let employee = B.entity("Employee", [B.attribute("name", .string), B.attribute("salary", .integer64)])
        let manager = B.entity("Manager", [B.attribute("bonus", .integer64)])
        employee.subentities = [manager]
        B.inverse(
            B.relationship("employees", from: department, to: employee, toMany: true, isOrdered: true),
            B.relationship("department", from: employee, to: department))
        employee.indexes = [
            FetchIndexDescription(
                name: "bySalary",
                elements: [
                    FetchIndexElementDescription(property: employee.attributesByName["salary"]!, collationType: .binary)
                ])
        ]
        department.uniquenessConstraints = [["name"]]
        let request = FetchRequest<FetchRequestResult>(entityName: "Employee")
        request.predicate = FetchPredicate(format: "salary > 100")
        department.properties.append(FetchedPropertyDescription(name: "wellPaid", fetchRequest: request))
        let company = B.model([department, employee, manager])
        company.setEntities([department], forConfigurationName: "Departments")
        let template = FetchRequest<FetchRequestResult>(entityName: "Employee")
        template.predicate = FetchPredicate(format: "name == $NAME")
        company.setFetchRequestTemplate(template, forName: "ByName")
        let notes = B.model([B.entity("Note", [B.attribute("text", .string)])])
        return (company, notes)
    }

    @Test(
        "the merged model has copies of every entity, property, index and template, pointing into it; the models merged are unchanged"
    )
    func copies() throws {
        let (company, notes) = Self.models()
        let hashes = company.entityVersionHashesByName.merging(notes.entityVersionHashesByName) { first, _ in first }
        let merged = try #require(ManagedObjectModel(byMerging: [company, notes]))
        #expect(Set(merged.entitiesByName.keys) == ["Department", "Employee", "Manager", "Note"])
        #expect(merged.entityVersionHashesByName == hashes)
        #expect(company.entities.count == 3 && notes.entities.count == 1)
        let department = try #require(merged.entitiesByName["Department"])
        #expect(department !== company.entitiesByName["Department"])
        let employees = try #require(department.relationshipsByName["employees"])
        #expect(employees.destinationEntity === merged.entitiesByName["Employee"])
        #expect(employees.inverseRelationship === merged.entitiesByName["Employee"]?.relationshipsByName["department"])
        #expect(employees.isOrdered)
        #expect(merged.entitiesByName["Manager"]?.superentity === merged.entitiesByName["Employee"])
        #expect(
            merged.entitiesByName["Employee"]?.indexes.first?.elements.first?.property
                === merged.entitiesByName["Employee"]?.attributesByName["salary"])
        #expect(merged.entities(forConfigurationName: "Departments")?.first === department)
        #expect(merged.fetchRequestTemplate(forName: "ByName")?.predicate?.predicateFormat == "name == $NAME")
        #expect(department.propertiesByName["wellPaid"] is FetchedPropertyDescription)
        // The originals still point into their own model.
        #expect(
            company.entitiesByName["Department"]?.relationshipsByName["employees"]?.destinationEntity
                === company.entitiesByName["Employee"])
        // Two models with an entity of one name do not merge.
        #expect(ManagedObjectModel(byMerging: [notes, Self.models().notes]) == nil)
    }

    @Test(
        "a store written with a merged model reopens with another merge of the same models; store metadata selects it")
    func storeRoundTrip() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Merged")
        let (company, notes) = Self.models()
        let coordinator = PersistentStoreCoordinator(
            managedObjectModel: try #require(ManagedObjectModel(byMerging: [company, notes])))
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let department = EntityDescription.insertNewObject(forEntityName: "Department", into: context)
            department.setValue("Research", forKey: "name")
            let manager = EntityDescription.insertNewObject(forEntityName: "Manager", into: context)
            manager.setValue("Ada", forKey: "name")
            manager.setValue(Int64(500), forKey: "salary")
            manager.setValue(department, forKey: "department")
            EntityDescription.insertNewObject(forEntityName: "Note", into: context).setValue("hello", forKey: "text")
            try context.save()
        }
        try coordinator.remove(store)

        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        let reopened = try #require(ManagedObjectModel(byMerging: [company, notes], forStoreMetadata: metadata))
        #expect(ManagedObjectModel(byMerging: [notes], forStoreMetadata: metadata) == nil)
        let second = PersistentStoreCoordinator(managedObjectModel: reopened)
        try second.addPersistentStore(type: .sqlite, at: url)
        let readContext = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        readContext.persistentStoreCoordinator = second
        try readContext.performAndWait {
            let departments = try readContext.fetch(FetchRequest<ManagedObject>(entityName: "Department"))
            let employees = departments.first?.value(forKey: "employees") as? [ManagedObject]
            #expect(employees?.first?.value(forKey: "name") as? String == "Ada")
            #expect((departments.first?.value(forKey: "wellPaid") as? [ManagedObject])?.count == 1)
            #expect(try readContext.count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 1)
        }
    }
}
