import Foundation

/// Who this process is, as the history records it with every commit.
public enum ProcessIdentity {
    /// `Bundle.main`'s identifier, else the executable's name.
    public static let bundleID: String = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName

    /// This process's id.
    public static let processID: Int32 = ProcessInfo.processInfo.processIdentifier
}
