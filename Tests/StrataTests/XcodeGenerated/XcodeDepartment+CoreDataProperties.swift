//
//  XcodeDepartment+CoreDataProperties.swift
//  StrataTests
//
//  This file was automatically generated and should not be edited.
//

import Foundation
import Strata

extension XcodeDepartment {

    @nonobjc public class func fetchRequest() -> FetchRequest<XcodeDepartment> {
        return FetchRequest<XcodeDepartment>(entityName: "XcodeDepartment")
    }

    @Managed public var budget: Int64
    @Managed public var founded: Date?
    @Managed public var name: String?
    @Managed public var employees: NSSet?
    @Managed public var projects: NSOrderedSet?

}

// MARK: Generated accessors for employees
extension XcodeDepartment {

    @ManagedAccessor public func addToEmployees(_ value: XcodeEmployee)

    @ManagedAccessor public func removeFromEmployees(_ value: XcodeEmployee)

    @ManagedAccessor public func addToEmployees(_ values: NSSet)

    @ManagedAccessor public func removeFromEmployees(_ values: NSSet)

}

// MARK: Generated accessors for projects
extension XcodeDepartment {

    @ManagedAccessor public func insertIntoProjects(_ value: XcodeProject, at idx: Int)

    @ManagedAccessor public func removeFromProjects(at idx: Int)

    @ManagedAccessor public func insertIntoProjects(_ values: [XcodeProject], at indexes: NSIndexSet)

    @ManagedAccessor public func removeFromProjects(at indexes: NSIndexSet)

    @ManagedAccessor public func replaceProjects(at idx: Int, with value: XcodeProject)

    @ManagedAccessor public func replaceProjects(at indexes: NSIndexSet, with values: [XcodeProject])

    @ManagedAccessor public func addToProjects(_ value: XcodeProject)

    @ManagedAccessor public func removeFromProjects(_ value: XcodeProject)

    @ManagedAccessor public func addToProjects(_ values: NSOrderedSet)

    @ManagedAccessor public func removeFromProjects(_ values: NSOrderedSet)

}

extension XcodeDepartment: Identifiable {

}
