import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// Inputs of the model-file fuzzer (`make fuzz-model`) that crashed or hung the loaders: each
/// must now fail with a `ModelError` naming what is wrong, through the initializer a user calls.
@Suite struct ModelFileFuzzRegressionTests {
    typealias A = AppleArchives

    /// A binary property list of one object (`object`), one-byte offsets, `referenceSize`-byte
    /// references.
    static func propertyList(_ object: [UInt8], referenceSize: UInt8) -> Data {
        let table = 8 + object.count
        var trailer: [UInt8] = [0, 0, 0, 0, 0, 0, 1, referenceSize]
        trailer += [0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 8)
        trailer += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        return Data(Array("bplist00".utf8) + object + [8] + trailer)
    }

    /// Writes `data` as `name` in a new folder and loads it as a mapping model.
    static func loadMapping(_ data: Data, as name: String, in folder: TemporaryDirectory) throws -> MappingModel {
        let url = folder.url.appendingPathComponent(name)
        try data.write(to: url)
        return try MappingModel(checkedContentsOf: url)
    }

    /// Expects `body` to throw a `ModelError` of `code` whose message contains `words`.
    static func expectModelError(
        _ code: ModelError.Code, mentioning words: String, _ body: () throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = #expect(throws: ModelError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.message.contains(words) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    @Test("a compiled mapping model whose top object is a UID past Int.max is malformed, not a trap")
    func uidPastIntMax() throws {
        let folder = TemporaryDirectory()
        let data = Self.propertyList([0x87] + [UInt8](repeating: 0xFF, count: 8), referenceSize: 1)
        Self.expectModelError(.invalidValue, mentioning: "UID too large") {
            _ = try Self.loadMapping(data, as: "Huge.cdm", in: folder)
        }
    }

    @Test("an eight-byte object reference past Int.max is malformed, not a trap")
    func referencePastIntMax() throws {
        let folder = TemporaryDirectory()
        let data = Self.propertyList([0xA1] + [UInt8](repeating: 0xFF, count: 8), referenceSize: 8)
        Self.expectModelError(.invalidValue, mentioning: "reference too large") {
            _ = try Self.loadMapping(data, as: "Huge.cdm", in: folder)
        }
    }

    @Test("a negative NSMappingType reads as undefined, as an unknown one does, not a trap")
    func negativeMappingType() throws {
        let folder = TemporaryDirectory()
        let entity = AppleArchived("NSEntityMapping", [("NSMappingName", "AToA"), ("NSMappingType", -1)])
        let data = A.archive(AppleArchived("NSMappingModel", [("NSEntityMappings", [entity])]))
        let mapping = try Self.loadMapping(data, as: "Negative.cdm", in: folder)
        #expect(mapping.entityMappings.map(\.name) == ["AToA"])
        #expect(mapping.entityMappings.first?.mappingType == .undefinedEntityMappingType)
    }

    @Test("an expression whose parts each use the next twice is refused, not expanded 2^40 times")
    func exponentialExpression() throws {
        let folder = TemporaryDirectory()
        var expression = A.variable("x")
        for _ in 0..<40 { expression = A.function(expression, "f:", [expression]) }
        let property = AppleArchived(
            "NSPropertyMapping", [("NSDestinationPropertyName", "name"), ("NSValueExpression", expression)])
        let entity = AppleArchived("NSEntityMapping", [("NSMappingName", "AToA"), ("NSAttributeMappings", [property])])
        let data = A.archive(AppleArchived("NSMappingModel", [("NSEntityMappings", [entity])]))
        Self.expectModelError(.invalidValue, mentioning: "more than \(KeyedArchive.maximumResolutions) objects") {
            _ = try Self.loadMapping(data, as: "Exponential.cdm", in: folder)
        }
    }

    @Test("a user info value whose arrays each hold the next twice is refused, not expanded 2^40 times")
    func exponentialValue() throws {
        let folder = TemporaryDirectory()
        // `$objects` laid out by hand: the archive writer of the tests writes each array once
        // per use, and an array's elements are references only in an archive's own objects.
        func classEntry(_ name: String) -> BinaryPlist.Value {
            .dictionary([("$classname", .string(name)), ("$classes", .array([.string(name), .string("NSObject")]))])
        }
        func array(_ elements: [Int]) -> BinaryPlist.Value {
            .dictionary([("$class", .uid(1)), ("NS.objects", .array(elements.map { .uid($0) }))])
        }
        var objects: [BinaryPlist.Value] = [.string("$null"), classEntry("NSArray"), .string("leaf"), array([2])]
        for level in 0..<40 { objects.append(array([3 + level, 3 + level])) }
        let userInfo = objects.count - 1
        objects += [
            classEntry("NSEntityMapping"),
            .dictionary([
                ("$class", .uid(userInfo + 1)), ("NSMappingName", .uid(userInfo + 3)), ("NSUserInfo", .uid(userInfo)),
            ]),
            .string("AToA"), classEntry("NSMappingModel"),
            .dictionary([("$class", .uid(userInfo + 4)), ("NSEntityMappings", .uid(userInfo + 6))]),
            array([userInfo + 2]),
        ]
        let data = BinaryPlist.data(
            .dictionary([
                ("$version", .integer(100_000)), ("$archiver", .string("NSKeyedArchiver")),
                ("$top", .dictionary([("root", .uid(userInfo + 5))])), ("$objects", .array(objects)),
            ]))
        Self.expectModelError(.invalidValue, mentioning: "more than \(KeyedArchive.maximumResolutions) objects") {
            _ = try Self.loadMapping(data, as: "Exponential.cdm", in: folder)
        }
    }

    @Test("a versioned model whose current version is the bundle itself is invalid, not an endless recursion")
    func currentVersionNamesItsBundle() throws {
        let folder = TemporaryDirectory()
        let bundle = folder.url.appendingPathComponent("Loop.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["_XCCurrentVersionName": "../Loop.xcdatamodeld"], format: .xml, options: 0)
        try plist.write(to: bundle.appendingPathComponent(".xccurrentversion"))
        Self.expectModelError(.invalidModel, mentioning: "a versioned model, not a version") {
            _ = try ManagedObjectModel(checkedContentsOf: bundle)
        }
    }

    @Test("a mapping model that records /dev/zero as its source model fails to read it, not reads without end")
    func recordedModelIsADevice() throws {
        let folder = TemporaryDirectory()
        let up = String(repeating: "../", count: folder.url.pathComponents.count + 1)
        let xml = """
            <?xml version="1.0" standalone="yes"?>
            <database>
                <object type="XDDEVMAPPINGMODEL" id="z1"><attribute name="sourcemodelpath" type="string">\(up)dev/zero</attribute><attribute name="destinationmodelpath" type="string">\(up)dev/zero</attribute></object>
            </database>
            """
        Self.expectModelError(.unreadableFile, mentioning: "not a regular file") {
            _ = try Self.loadMapping(Data(xml.utf8), as: "Device.xml", in: folder)
        }
    }

    @Test("a model file in an unknown encoding with bytes that are no characters is malformed XML, not a crash in libxml2")
    func unknownEncodingAndInvalidBytes() throws {
        let folder = TemporaryDirectory()
        // `encoding="UT-F-8"`, then 0x88 bytes inside an element: the parser's error callback
        // used to stop the parser, and libxml2 then read a freed input on its next chunk; bytes
        // that are not UTF-8 are now refused before parsing.
        let base64 = [
            "PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0iVVQtRi04IiBzdGFuZGFsb25lPSJ5ZXMiPz4KPG1vZGVsIHR5cGU9ImNv",
            "bS5hcHBsZS5JREVDb3JlRGF0YU1vZGVsZXIuRGF0YU1vZGVsIiBkb2N1bWVudFZlcnNpb249IjEuMCIgbGFzdFNhdmVkYWdl",
            "PSJTd2lmdCIgdXNlckRlZmluIG5hbWU9Im5vdGVib29rIiBvcHRpb25hbD0iWUVTIiBtYXhDb3VudD0iMSIgZGVsZXRpb25S",
            "dWxlPSJOdWxsaWZ5IiBkZXN0aW5hdGlvbkVudGl0eT0iTm90ZWJvb2siIGludmVyc2VOYW1lPSJlbnRyaWVzIiBpbnZlcnNl",
            "RW50aXR5PSJOb3RlYm9vayIvPgogcyI+CiAgiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI",
            "iIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIICAgICAgPGF0dHJpYnV0ZSBu",
            "YW1lPSJmb250TmFtZSIgb3B0aW9uYWw9IllFUyIgYXR0cmlidXRlVHlwZT0iU3RyaW5nIiBkZWZhdWx0VmFsdWVTdHJpbmc9",
            "Ikdlb3JnaWEiLz4KICAgIDwvZW50aXR5Pgo8L21vZGVsPgo=",
        ].joined()
        let url = folder.url.appendingPathComponent("contents")
        try #require(Data(base64Encoded: base64)).write(to: url)
        Self.expectModelError(.malformedXML, mentioning: "malformed XML") {
            _ = try ManagedObjectModel(checkedContentsOf: url)
        }
    }

    @Test("a processing instruction without data is read as one with empty data, not a crash in FoundationXML")
    func processingInstructionWithoutData() throws {
        let folder = TemporaryDirectory()
        // The fuzzer's input: FoundationXML on Linux called `strlen` on the instruction's data,
        // which libxml2 passes as NULL for `<?name?>`. (A target starting with "xml" is reserved.)
        let url = folder.url.appendingPathComponent("contents")
        try Data("<?xmlrenamingIdentifier?>\n<modersio@I  <entity name=Del>\n".utf8).write(to: url)
        Self.expectModelError(.malformedXML, mentioning: "malformed XML at line 1") {
            _ = try ManagedObjectModel(checkedContentsOf: url)
        }
        // A valid model with such instructions loads; one inside a comment gets its space too,
        // which changes nothing the loader reads.
        let model = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <?generator?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <!-- <?kept?> -->
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                </entity><?after?>
            </model>
            """
        try Data(model.utf8).write(to: url)
        let loaded = try ManagedObjectModel(checkedContentsOf: url)
        #expect(loaded.entitiesByName["Item"]?.attributesByName["name"] != nil)
        let spaced = ModelXMLDocument.withDataInEveryProcessingInstruction(Data(model.utf8))
        #expect(String(decoding: spaced, as: UTF8.self) == model
            .replacingOccurrences(of: "<?generator?>", with: "<?generator ?>")
            .replacingOccurrences(of: "<?kept?>", with: "<?kept ?>")
            .replacingOccurrences(of: "<?after?>", with: "<?after ?>"))
    }

    @Test("an element name that is not UTF-8 is malformed XML at its line, not a trap in FoundationXML")
    func elementNameNotUTF8() throws {
        let folder = TemporaryDirectory()
        // `<mod\u{FF}\u{FF}\u{FF}\t…` on line 2: FoundationXML traps turning such a name into a String.
        let base64 = [
            "PD94bU5vIEFjdGlvbj0iMS4wIiBlbmNvZGluZz0iVVRGLTgiIHN0YW5kYWxvbmU9InllcyI/Pgo8bW9k////CXlwZT0iY29t",
            "LmFwcGxlLklERUNvcmVEYXRhTW9kZWxlci5EYXRhTW9kZWwiIGN1bWVudFZlcnNpb249IjEuMCIgbGFzdFPm39/fPC9lbnRp",
            "dHk+CjwvbW9kZWw+Cg==",
        ].joined()
        let url = folder.url.appendingPathComponent("contents")
        try #require(Data(base64Encoded: base64)).write(to: url)
        let error = #expect(throws: ModelError.self) { _ = try ManagedObjectModel(checkedContentsOf: url) }
        #expect(error?.code == .malformedXML)
        #expect(error?.message.contains("not UTF-8 text") == true)
        #expect(error?.line == 2)
    }

    @Test("a binary .xccurrentversion is read by the project's reader: it names the version, and a damaged one is no crash in Foundation")
    func binaryCurrentVersion() throws {
        let folder = TemporaryDirectory()
        let bundle = folder.url.appendingPathComponent("Shop.xcdatamodeld")
        try FileManager.default.copyItem(at: ShopModels.bundle, to: bundle)
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        func hashes(_ url: URL) throws -> [String: Data] {
            try ManagedObjectModel(checkedContentsOf: url).entityVersionHashesByName
        }
        let second = try hashes(bundle.appendingPathComponent("Shop 2.xcdatamodel"))
        let last = try hashes(bundle.appendingPathComponent("Shop 4.xcdatamodel"))
        #expect(second != last)
        try PropertyListSerialization.data(
            fromPropertyList: ["_XCCurrentVersionName": "Shop 2.xcdatamodel"], format: .binary, options: 0
        ).write(to: marker)
        #expect(try hashes(bundle) == second)

        // The fuzzer's input: a keyed archive of a mapping model, whose objects Foundation's
        // binary reader on Linux turned into a value that crashed bridging it to Swift. It is a
        // dictionary naming no version, so the last version loads.
        let base64 = [
            "YnBsaXN0MDDUAQIDBAUGBwpYJHZlcnNpb25ZJGFyY2hpdmVyVCR0b3BYJG9iamVjdHMSAAGGoF8QD05TS2V5ZWRBcmNoaXZl",
            "ctEICVRyb290gAGvEEsLDBEXGjI1Njc2Nzg5QUROUVZZWltgNmNmZ21zdll5en+Cg4eKi4yTmp2eo6Z5p6qrr7Cxt7u/wMVZ",
            "yMnMzdKmedW/2Nzh5czq6+xVJG51bGzSDQ4PEFYkY2xhc3NfEBBOU0VudGl0eU1hcHBpbmdzgAKAStISExQVWiRjbGFzc25h",
            "bWVYJGNsYXNzZXNeTlNNYXBwaW5nTW9kZWyiFBZYTlNPYmplY3TSEhMYGVdOU0FycmF5ohgW3A0bHB0eHyAhIiMkJSYnKCkq",
            "KywtLi8wMF1OU01hcHBpbmdOYW1lXU5TTWFwcGluZ1R5cGVfEBJOU1NvdXJjZUVudGl0eU5hbWVfEBlOU1NvdXJjZUVudGl0",
            "eVZlcnNpb25IYXNoXxAXTlNEZXN0aW5hdGlvbkVudGl0eU5hbWVfEB5OU0Rlc3RpbmF0aW9uRW50aXR5VmVyc2lvbkhhc2hf",
            "ECBOU0VudGl0eU1pZ3JhdGlvblBvbGljeUNsYXNzTmFtZV8QEk5TU291cmNlRXhwcmVzc2lvblpOU1VzZXJJbmZvXxATTlNB",
            "dHRyaWJ1dGVNYXBwaW5nc18QFk5TUmVsYXRpb25zaGlwTWFwcGluZ3OABYAGEAWAB4AIgAmACoALgAyAJoA0gEXSEhMzNF8Q",
            "D05TRW50aXR5TWFwcGluZ6IzFlpOb3RlVG9Ob3RlVE5vdGVPECAHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHB15B",
            "cHAuTm90ZVBvbGljedQNOjs8PT4/QF5OU0ZSRXhwcmVzc2lvbl8QD05TTU9DRXhwcmVzc2lvbl8QD05TQ291bnRPbmx5Rmxh",
            "Z4ANgA6AGgjSEhNCQ18QGE5TRmV0Y2hSZXF1ZXN0RXhwcmVzc2lvbqJCFtUNRUZHSElKS0xNXxAQTlNFeHByZXNzaW9uVHlw",
            "ZVlOU09wZXJhbmReTlNTZWxlY3Rvck5hbWVbTlNBcmd1bWVucHOADxAEgBCAE4AZ0hITT1BfEBROU0Z1bmN0aW9uRXhwcmVz",
            "c2lvbqJPFtMNRVJTVFVaTlNWYXJpYWJsZYAREAKAEtISE1dYXxAUTlNWYXJpYWJsZUV4cHJlc3Npb26iVxZXbWFuYWdlcl8Q",
            "MWZldGNoUmVxdS05MjIzMzcyMDM2ODU0Nzc1ODA5AAAAAAAAAABpY2F0ZVN0cmluZzrTDUVcXV5fXxAPTlNDb25zdGFudFZh",
            "bHVlgBUQAIAW0hITYWJfEBlOU0NvbnN0YW50VmFsdWVFeHByZXNzaW9uomEW0w1FXGReZYAVgBhdVFJVRVBSRURJQ0FURdIN",
            "aGlqWk5TLm9iamVjdHOAA6JrbIAUgBfVDUVGR0hub3BxcoAbEAOAHIAegCLSEhN0dV8QE05TS2V5UGF0aEV4cHJlc3Npb26i",
            "dBbTDUVSd1R4gBGAHV8QEHZhbHVlRm9yS2V5UGF0aDrTDUV7fH1+WU5TS2V5UGF0aIAgEAqAIdISE4CBXxAcTlNLZXlQYXRo",
            "U3BlY2lmaWVyRXhwcmVzc2lvbqKAFl1zb3VyY2VDb250ZXh00g1ohIWAA6GGgB/SEhOIiVxOU0RpY3Rpb25hcnmiiBZRa1F2",
            "0w2NaI6PkVdOUy5rZXlzgCOhkIAkoZKAJdQNlJUjlpeYmV8QGU5TRGVzdGluYXRpb25Qcm9wZXJ0eU5hbWVfEBFOU1ZhbHVl",
            "RXhwcmVzc2lvboAogCmAKoAz0hITm5xfEBFOU1Byb3BlcnR5TWFwcGluZ6KbFlV0aXRsZdUNRUZHSJ9voKGigBuAK4AtgDDT",
            "DUVSpFSlgBGALFZzb3VyY2XTDUV7qH2pgCCAL1RuYW1l0g1orK2AA6GugC5UdW5pdFRub25l0w2NaLKztYAjobSAMaG2gDLS",
            "DWi4uYADobqAJ9MNlJW8vb6AKIA2gDdYbm90ZWJvb2vVDUVGR0jBSsLDxMQPgDiAOoBE0w1FUsZUx4ARgDlfEDpkZXN0aW5h",
            "dGlvbkluc3RhbmNlc0ZvckVudGl0eU1hcHBpbmdOYW1lZDpzb3VyY2VJbnN0YW5jZXM60w1FXMpey4AVgDxfEBJOb3RlYm9v",
            "a1RvUm90ZWJvb2vVDUVGR0jOb8/Q0YAbgD6AQIBD0w1FUtNU1IARgD/TDUV71n3XgCCAQtINaNnagAOh24BB0g1o3d6AA6Lf",
            "4IA7gD3SDWji44ADoeSANdUNGxwfIObnVOjpgAWAR4BIgElYTm90ZWJvb2tPECAJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJ",
            "CQkJCQkJCdINaO3ugAOi7/CABIBGAAgAEQAaACQAKQAyADcASQBMAFEAUwChAKcArACzAMYAyADKAM8A2gDjAPIA9QD+AQMB",
            "CwEOAScBNQFDAVgBdAGOAa8B0gHnAfICCAIhAiMCJQInAikCKwItAi8CMQIzAjUCNwI5Aj4CUAJTAl4CYwKGApUCngKtAr8C",
            "0QLTAtUC1wLYAt0C+AL7AwYDGQMjAzIDPgNAA0IDRANGA0gDTQNkA2cDbgN5A3sDfQN/A4QDmwOeA6YD2gPhA/MD9QP3A/kD",
            "/gQaBB0EJAQmBCgENgQ7BEYESARLBE0ETwRaBFwEXgRgBGIEZARpBH8EggSJBIsEjQSgBKcEsQSzBLUEtwS8BNsE3gTsBPEE",
            "8wT1BPcE/AUJBQwFDgUQBRcFHwUhBSMFJQUnBSkFMgVOBWIFZAVmBWgFagVvBYMFhgWMBZcFmQWbBZ0FnwWmBagFqgWxBbgF",
            "ugW8BcEFxgXIBcoFzAXRBdYF3QXfBeEF4wXlBecF7AXuBfAF8gX5BfsF/QX/BggGEwYVBhcGGQYbBiIGJAYmBmMGagZsBm4G",
            "gwaOBpAGkgaUBpYGnQafBqEGqAaqBqwGsQazBrUGtwa8Br4GwQbDBsUGygbMBs4G0AbbBt0G3wbhBuMG7AcPBxQHFgcZBxsA",
            "AAAAAAACAQAAAAAAAADxAAAAAAAAAAAAAAAAAAAHHQ==",
        ].joined()
        try #require(Data(base64Encoded: base64)).write(to: marker)
        #expect(try hashes(bundle) == last)
        try Data(Array("bplist00".utf8) + [UInt8](repeating: 7, count: 50)).write(to: marker)
        Self.expectModelError(.invalidValue, mentioning: "not a binary property list") {
            _ = try ManagedObjectModel(checkedContentsOf: bundle)
        }
    }
}
