//
//  XcodeEmployee+CoreDataProperties.swift
//  StrataTests
//
//  This file was automatically generated and should not be edited.
//

import Foundation
import Strata

extension XcodeEmployee {

    @nonobjc public class func fetchRequest() -> FetchRequest<XcodeEmployee> {
        return FetchRequest<XcodeEmployee>(entityName: "XcodeEmployee")
    }

    @Managed public var active: Bool
    @Managed public var age: Int16
    @Managed public var badge: UUID?
    @Managed public var homepage: URL?
    @Managed public var level: Int32
    @Managed public var name: String?
    @Managed public var photo: Data?
    @Managed public var rating: Double
    @Managed public var salary: NSDecimalNumber?
    @Managed public var score: Float
    @Managed public var department: XcodeDepartment?
    @Managed public var projects: NSSet?

}

// MARK: Generated accessors for projects
extension XcodeEmployee {

    @ManagedAccessor public func addToProjects(_ value: XcodeProject)

    @ManagedAccessor public func removeFromProjects(_ value: XcodeProject)

    @ManagedAccessor public func addToProjects(_ values: NSSet)

    @ManagedAccessor public func removeFromProjects(_ values: NSSet)

}

extension XcodeEmployee: Identifiable {

}
