extension CoreDataError.Code {
    /// The user (or the code acting for the user) cancelled the operation (Foundation's
    /// `NSUserCancelledError`, 3072), as Core Data reports a cancelled asynchronous fetch.
    public static let userCancelled = CoreDataError.Code(rawValue: 3072)
}
