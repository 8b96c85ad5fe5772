//
//  XcodeEmployee+CoreDataClass.swift
//  StrataTests
//
//  This file was automatically generated and should not be edited.
//

import Foundation
import Strata

public class XcodeEmployee: ManagedObject {

}
