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
        let url = try Self.write(
            """
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
        let url = try Self.write(
            """
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
        #expect(
            department.relationshipsByName["alumni"]?.inverseRelationship === employee.relationshipsByName["department"]
        )
        #expect(
            employee.relationshipsByName["department"]?.inverseRelationship
                === department.relationshipsByName["employees"])

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
                #expect(
                    grace.value(forKey: "department") as? ManagedObject === sales, "alumni maintains its own inverse")
                try context.save()
                departmentURI = sales.objectID.uriRepresentation()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: store, model: ManagedObjectModel(checkedContentsOf: url))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let sales = try DerivedAttributeTests.object(try #require(departmentURI), in: container, context)
            let names = (sales.value(forKey: "employees") as? Set<ManagedObject>)?.compactMap {
                $0.value(forKey: "name") as? String
            }
            #expect(Set(names ?? []) == ["Ada", "Grace"])
        }
        try container.close()
    }

    @Test func aCompositeAttributeWithNoElementsLoadsAndSaves() throws {
        let folder = TemporaryDirectory()
        let url = try Self.write(
            """
            <entity name="Place" representedClassName="Place" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="location" optional="YES" attributeType="Composite" composite="Location"/>
            </entity>
            <composite name="Location"/>
            """, in: folder)
        let model = try #require(ManagedObjectModel(contentsOf: url))
        let location = try #require(
            model.entitiesByName["Place"]?.attributesByName["location"] as? CompositeAttributeDescription)
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

    /// A model as Xcode 16 writes it (SwiftData flag, composite, derived and encrypted
    /// attributes, constraints, fetch indexes, a fetched property, configurations, templates)
    /// loads, and its objects save and read back.
    @Test func anXcode16ModelLoadsAndSaves() throws {
        let folder = TemporaryDirectory()
        let model = folder.url.appendingPathComponent("Trips.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let document = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="23231" systemVersion="24A335" minimumToolsVersion="Automatic" sourceLanguage="Swift" usedWithSwiftData="YES" userDefinedModelVersionIdentifier="">
                <entity name="Trip" representedClassName="Trip" syncable="YES" codeGenerationType="class">
                    <attribute name="id" optional="YES" attributeType="UUID" usesScalarValueType="NO" allowsCloudEncryption="YES"/>
                    <attribute name="name" attributeType="String" defaultValueString="" spotlightIndexingEnabled="YES"/>
                    <attribute name="searchName" optional="YES" attributeType="String" derived="YES" derivationExpression="lowercase:(name)"/>
                    <attribute name="start" optional="YES" attributeType="Date" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <attribute name="place" optional="YES" attributeType="Composite" composite="Place"/>
                    <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromDataTransformer" customClassName="[String]"/>
                    <relationship name="stops" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Stop" inverseName="trip" inverseEntity="Stop"/>
                    <fetchedProperty name="longStops" optional="YES">
                        <fetchRequest name="fetchedPropertyFetchRequest" entity="Stop" predicateString="trip == $FETCH_SOURCE AND minutes &gt; 60"/>
                    </fetchedProperty>
                    <fetchIndex name="byName">
                        <fetchIndexElement property="name" type="Binary" order="ascending"/>
                    </fetchIndex>
                    <uniquenessConstraints>
                        <uniquenessConstraint>
                            <constraint value="id"/>
                        </uniquenessConstraint>
                    </uniquenessConstraints>
                </entity>
                <entity name="Stop" representedClassName="Stop" syncable="YES" codeGenerationType="class">
                    <attribute name="minutes" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                    <relationship name="trip" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Trip" inverseName="stops" inverseEntity="Trip"/>
                </entity>
                <composite name="Place">
                    <attribute name="latitude" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                    <attribute name="longitude" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                </composite>
                <fetchRequest name="TripsNamed" entity="Trip" predicateString="name == $NAME"/>
                <configuration name="Cloud" usedWithCloudKit="YES">
                    <memberEntity name="Trip"/>
                    <memberEntity name="Stop"/>
                </configuration>
            </model>
            """
        try document.write(to: model.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let loaded = try ManagedObjectModel(checkedContentsOf: model)
        #expect(loaded.entitiesByName.keys.sorted() == ["Stop", "Trip"])
        #expect(loaded.configurations == ["Cloud"])
        let container = try GraphModel.container(at: folder.store("Trips"), model: loaded)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let trip = EntityDescription.insertNewObject(forEntityName: "Trip", into: context)
            trip.setValue("Coast", forKey: "name")
            trip.setValue(["latitude": 1.5, "longitude": 2.5], forKey: "place")
            for minutes in [30, 90] {
                let stop = EntityDescription.insertNewObject(forEntityName: "Stop", into: context)
                stop.setValue(Int64(minutes), forKey: "minutes")
                trip.mutableOrderedSetValue(forKey: "stops").add(stop)
            }
            try context.save()
        }
        try container.close()
        let reopened = try GraphModel.container(
            at: folder.store("Trips"), model: try ManagedObjectModel(checkedContentsOf: model))
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let trip = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Trip")).first)
            #expect(trip.value(forKey: "searchName") as? String == "coast")
            #expect((trip.value(forKey: "place") as? [String: Any])?["longitude"] as? Double == 2.5)
            #expect((trip.value(forKey: "stops") as? [ManagedObject])?.count == 2)
            #expect((trip.value(forKey: "longStops") as? [ManagedObject])?.count == 1)
        }
        try reopened.close()
    }

    /// A model Xcode 3 saved (an `elements` archive, no `contents`) is a typed error that says
    /// how to convert it.
    @Test func anXcode3ModelIsATypedErrorThatSaysHowToConvertIt() throws {
        let folder = TemporaryDirectory()
        let model = folder.url.appendingPathComponent("Old.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data([0x62, 0x70, 0x6C, 0x69, 0x73, 0x74]).write(to: model.appendingPathComponent("elements"))
        try Data().write(to: model.appendingPathComponent("layout"))
        let error = #expect(throws: ModelError.self) { _ = try ManagedObjectModel(checkedContentsOf: model) }
        #expect(error?.code == .unreadableFile)
        #expect(error?.message.contains("Xcode 3") == true)
        #expect(ManagedObjectModel(contentsOf: model) == nil)
    }
}
