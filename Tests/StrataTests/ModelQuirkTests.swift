import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Model files that Core Data loads although they hold something odd, loaded here with Core
/// Data's outcome (and a warning logged): a default value string that is not of the attribute's
/// type (no default), inverses whose two sides disagree (each side keeps its own), a composite
/// attribute with no elements, and a versioned bundle whose `.xccurrentversion` names no version.
@Suite struct ModelQuirkTests {
    /// Writes `body` as the `contents` of `Name.xcdatamodel` in `folder`; returns the model's URL.
    static func write(_ body: String, in folder: TemporaryDirectory, name: String = "Quirk") throws -> URL {
        let model = folder.url.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let document = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            \(body)
            </model>
            """
        try document.write(to: model.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return model
    }

    @Test func aDefaultValueStringThatIsNotOfTheAttributesTypeGivesNoDefault() throws {
        let folder = TemporaryDirectory()
        let url = try Self.write("""
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="identifier" optional="YES" attributeType="UUID" defaultValueString="not-a-uuid" usesScalarValueType="NO"/>
                <attribute name="count" optional="YES" attributeType="Integer 32" defaultValueString="many" usesScalarValueType="YES"/>
                <attribute name="small" optional="YES" attributeType="Integer 16" defaultValueString="70000" usesScalarValueType="YES"/>
                <attribute name="title" optional="YES" attributeType="String" defaultValueString="untitled"/>
            </entity>
            """, in: folder)
        let model = try #require(ManagedObjectModel(contentsOf: url))
        let item = try #require(model.entitiesByName["Item"])
        #expect(item.attributesByName["identifier"]?.defaultValue == nil)
        #expect(item.attributesByName["count"]?.defaultValue == nil)
        #expect(item.attributesByName["small"]?.defaultValue == nil)
        #expect(item.attributesByName["title"]?.defaultValue as? String == "untitled", "valid defaults are kept")

        let container = try GraphModel.container(at: folder.store("Quirk"), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let object = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            #expect(object.value(forKey: "identifier") == nil)
            #expect(object.value(forKey: "count") == nil)
            #expect(object.value(forKey: "title") as? String == "untitled")
            try context.save()
        }
        try container.close()
    }

    /// `Department.alumni` names `Employee.department` as its inverse, whose own inverse is
    /// `Department.employees`: setting either to-many side sets the employee's department, and
    /// the links survive a reopen.
    @Test func inversesWhoseSidesDisagreeKeepTheirOwnAndRoundTrip() throws {
        let folder = TemporaryDirectory()
        let url = try Self.write("""
            <entity name="Department" representedClassName="Department" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="employees" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Employee" inverseName="department" inverseEntity="Employee"/>
                <relationship name="alumni" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Employee" inverseName="department" inverseEntity="Employee"/>
            </entity>
            <entity name="Employee" representedClassName="Employee" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="department" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Department" inverseName="employees" inverseEntity="Department"/>
            </entity>
            """, in: folder)
        let model = try #require(ManagedObjectModel(contentsOf: url))
        let department = try #require(model.entitiesByName["Department"])
        let employee = try #require(model.entitiesByName["Employee"])
        #expect(department.relationshipsByName["alumni"]?.inverseRelationship === employee.relationshipsByName["department"])
        #expect(employee.relationshipsByName["department"]?.inverseRelationship === department.relationshipsByName["employees"])

        let store = folder.store("Disagree")
        var departmentURI: URL?
        do {
            let container = try GraphModel.container(at: store, model: model)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let sales = EntityDescription.insertNewObject(forEntityName: "Department", into: context)
                sales.setValue("Sales", forKey: "name")
                let ada = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                ada.setValue("Ada", forKey: "name")
                ada.setValue(sales, forKey: "department")
                let grace = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                grace.setValue("Grace", forKey: "name")
                sales.mutableSetValue(forKey: "alumni").add(grace)
                #expect(grace.value(forKey: "department") as? ManagedObject === sales, "alumni maintains its own inverse")
                try context.save()
                departmentURI = sales.objectID.uriRepresentation()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: store, model: ManagedObjectModel(checkedContentsOf: url))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let sales = try DerivedAttributeTests.object(try #require(departmentURI), in: container, context)
            let names = (sales.value(forKey: "employees") as? Set<ManagedObject>)?.compactMap { $0.value(forKey: "name") as? String }
            #expect(Set(names ?? []) == ["Ada", "Grace"])
        }
        try container.close()
    }

    @Test func aCompositeAttributeWithNoElementsLoadsAndSaves() throws {
        let folder = TemporaryDirectory()
        let url = try Self.write("""
            <entity name="Place" representedClassName="Place" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="location" optional="YES" attributeType="Composite" composite="Location"/>
            </entity>
            <composite name="Location"/>
            """, in: folder)
        let model = try #require(ManagedObjectModel(contentsOf: url))
        let location = try #require(model.entitiesByName["Place"]?.attributesByName["location"] as? CompositeAttributeDescription)
        #expect(location.elements.isEmpty)
        #expect(location.defaultValue == nil)

        let store = folder.store("Composite")
        do {
            let container = try GraphModel.container(at: store, model: model)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let place = EntityDescription.insertNewObject(forEntityName: "Place", into: context)
                place.setValue("Lyon", forKey: "name")
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: store, model: ManagedObjectModel(checkedContentsOf: url))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let places = try context.fetch(FetchRequest<ManagedObject>(entityName: "Place"))
            #expect(places.map { $0.value(forKey: "name") as? String } == ["Lyon"])
            #expect(places.first?.value(forKey: "location") == nil)
        }
        try container.close()
    }

    @Test func anEmptyCurrentVersionFileLoadsTheLastVersion() throws {
        let folder = TemporaryDirectory()
        let bundle = folder.url.appendingPathComponent("Quirk.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for (version, entity) in [("Quirk", "First"), ("Quirk 2", "Second")] {
            let model = try Self.write(#"<entity name="\#(entity)" syncable="YES"/>"#, in: folder, name: version)
            try FileManager.default.moveItem(at: model, to: bundle.appendingPathComponent(model.lastPathComponent))
        }
        let marker = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict/>
            </plist>
            """
        try marker.write(to: bundle.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        let model = try #require(ManagedObjectModel(contentsOf: bundle))
        #expect(model.entities.map(\.name) == ["Second"])
    }

    @Test func aModelThatCannotBeLoadedIsNilAndTheCheckedFormSaysWhy() throws {
        let folder = TemporaryDirectory()
        let missing = folder.url.appendingPathComponent("Missing.xcdatamodeld")
        #expect(ManagedObjectModel(contentsOf: missing) == nil)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(checkedContentsOf: missing) }
        #expect(error?.code == .fileNotFound)
    }
}
