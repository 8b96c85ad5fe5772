import Foundation

#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path of an item in a section, as UIKit's `IndexPath(item:section:)`.
    ///
    /// - Parameters:
    ///   - item: the position in the section.
    ///   - section: the section's position.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// An index path of a row in a section, as UIKit's `IndexPath(row:section:)`.
    ///
    /// - Parameters:
    ///   - row: the position in the section.
    ///   - section: the section's position.
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The section: the first index.
    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }

    /// The item in the section: the second index.
    public var item: Int {
        get { self[1] }
        set { self[1] = newValue }
    }

    /// The row in the section: the second index (the same as ``item``).
    public var row: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}
#endif
