import Foundation
import StrataTestSupport
import Strata

/// A versioned model (`Name.xcdatamodeld`) written into a temporary folder, one version per
/// text of entities, the last one current.
struct VersionedModelBundle {
    let url: URL

    /// Writes `name.xcdatamodeld` into `folder` with one version per element of `versions`
    /// (the entities' XML of each), the last one current.
    init(in folder: TemporaryDirectory, name: String, versions: [String]) throws {
        url = folder.url.appendingPathComponent("\(name).xcdatamodeld")
        for (index, entities) in versions.enumerated() {
            let directory = url.appendingPathComponent(Self.versionName(name, index + 1))
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let contents = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                \(entities)
                </model>
                """
            try Data(contents.utf8).write(to: directory.appendingPathComponent("contents"))
        }
        let current = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(Self.versionName(name, versions.count))</string></dict></plist>
            """
        try Data(current.utf8).write(to: url.appendingPathComponent(".xccurrentversion"))
    }

    /// The directory name of version `number` (from 1) of the model `name`.
    private static func versionName(_ name: String, _ number: Int) -> String {
        number == 1 ? "\(name).xcdatamodel" : "\(name) \(number).xcdatamodel"
    }

    /// One version on its own (no later versions to chain through).
    func version(_ number: Int) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            checkedContentsOf: url.appendingPathComponent(
                Self.versionName(url.deletingPathExtension().lastPathComponent, number)))
    }

    /// The bundle: its current version, reached from older stores through each version.
    func chained() throws -> ManagedObjectModel { try ManagedObjectModel(checkedContentsOf: url) }
}
