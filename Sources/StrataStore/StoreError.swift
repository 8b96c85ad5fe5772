/// An error thrown by the store: a ``Code``, a message, and where known the file, offset and cause.
///
/// `StoreError` is `Sendable`. New codes may be added; switch over them with a `default`.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. An extensible set of codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let name: String
        private init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// Another process (or another open store in this process) holds the store's write lock.
        public static let locked = Code("locked")
        /// A file of the store failed a checksum or does not parse; `path` and `offset` say where.
        public static let corrupt = Code("corrupt")
        /// The store was written with a different schema.
        public static let schemaMismatch = Code("schemaMismatch")
        /// The schema given is not valid.
        public static let invalidSchema = Code("invalidSchema")
        /// A setting of the ``StoreConfiguration`` given is outside its range.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The directory is not a store, or its format version is not one this build reads.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The store does not exist and was not to be created.
        public static let notFound = Code("notFound")
        /// A system call failed; `cause` holds the `errno`.
        public static let io = Code("io")
        /// The disk is full (`ENOSPC`); nothing was committed.
        public static let diskFull = Code("diskFull")
        /// An earlier `fsync` failed, so the store refuses writes until it is reopened.
        public static let failStopped = Code("failStopped")
        /// A value does not fit its column (wrong type, out of range, `nil` where not allowed).
        public static let invalidValue = Code("invalidValue")
        /// An update or delete names a row that does not exist, or an insert one that does.
        public static let keyConflict = Code("keyConflict")
        /// A commit's ``CommitCondition`` failed: a commit since the writer's reads wrote a row
        /// it depends on. Nothing was written; read again and retry.
        public static let writeConflict = Code("writeConflict")
        /// The store is closed.
        public static let closed = Code("closed")
        /// The store was opened read-only.
        public static let readOnly = Code("readOnly")
        /// History tracking is off, or the history asked for was deleted.
        public static let historyUnavailable = Code("historyUnavailable")
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence saying what failed.
    public var message: String
    /// The file concerned, if any.
    public var path: String?
    /// The byte offset in ``path`` concerned, if any.
    public var offset: Int64?
    /// The underlying error, such as an `Errno`.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        path: String? = nil,
        offset: Int64? = nil,
        cause: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
        self.cause = cause
    }

    /// The code, message, file and offset in one line.
    public var description: String {
        var text = "\(code): \(message)"
        if let path { text += " (file \(path)" + (offset.map { ", offset \($0)" } ?? "") + ")" }
        if let cause { text += " [\(cause)]" }
        return text
    }
}
