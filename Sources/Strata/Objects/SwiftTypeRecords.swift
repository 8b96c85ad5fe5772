internal import CStrataSupport

/// The Swift types the loaded images declare, found through their type metadata records (the
/// `swift5_types` sections the runtime enumerates), with no instance and no registration: how
/// a model's plain class name (`Employee`) finds its class, and how the `@Managed` properties
/// declared in extensions are found.
///
/// Linux only (elsewhere every search finds nothing): the records are read through the Swift
/// runtime's `swift_enumerateAllMetadataSections`, the way Swift Testing discovers tests on
/// ELF platforms. Each search is a pass over every type record of every image (a few
/// milliseconds with Foundation loaded), so callers keep what they find.
enum SwiftTypeRecords {
    /// The kinds of context descriptor a search selects.
    enum Kind: UInt32 {
        case `class` = 16
        case `struct` = 17
    }

    /// The non-generic types of `kind` named `name` (or whose name starts with `name` when
    /// `prefix`), in image and record order; only those declared at a module's top level with
    /// `topLevel`. Their metadata is initialized (the types' metadata accessors are called).
    static func types(named name: String, prefix: Bool = false, kind: Kind, topLevel: Bool) -> [Any.Type] {
        var capacity = 16
        while true {
            var found = [UnsafeRawPointer?](repeating: nil, count: capacity)
            let count = found.withUnsafeMutableBufferPointer { buffer in
                strata_swift_types(name, prefix, kind.rawValue, topLevel, buffer.baseAddress, capacity)
            }
            guard count > capacity else {
                return found.prefix(count).compactMap { $0.map { unsafeBitCast($0, to: Any.Type.self) } }
            }
            capacity = count
        }
    }

    /// The number of images the runtime has registered metadata sections for: a search's
    /// result holds while it stays the same.
    static var imageCount: Int { strata_swift_image_count() }
}
