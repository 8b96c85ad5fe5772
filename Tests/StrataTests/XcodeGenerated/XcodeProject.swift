//
//  XcodeProject.swift
//  StrataTests
//
//  "Manual/None" codegen: the generated declarations, kept in the class body.
//

import Foundation
import Strata

public class XcodeProject: ManagedObject {

    @nonobjc public class func fetchRequest() -> FetchRequest<XcodeProject> {
        return FetchRequest<XcodeProject>(entityName: "XcodeProject")
    }

    @Managed public var estimate: NSNumber?
    @Managed public var headcount: Int
    @Managed public var priority: Int16
    @Managed public var title: String?
    @Managed public var department: XcodeDepartment?
    @Managed public var members: NSSet?

    // MARK: Generated accessors for members

    @ManagedAccessor public func addToMembers(_ value: XcodeEmployee)

    @ManagedAccessor public func removeFromMembers(_ value: XcodeEmployee)

    @ManagedAccessor public func addToMembers(_ values: NSSet)

    @ManagedAccessor public func removeFromMembers(_ values: NSSet)

}

extension XcodeProject: Identifiable {

}
