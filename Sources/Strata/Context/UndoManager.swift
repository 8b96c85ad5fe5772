import Foundation

/// Records changes so they can be undone and redone (Foundation's `NSUndoManager`, which
/// swift-corelibs-foundation does not provide on Linux).
///
/// Actions are registered with ``registerUndo(withTarget:handler:)`` and gathered in groups;
/// ``undo()`` runs the newest group's actions in reverse order, and whatever they register
/// meanwhile becomes the group ``redo()`` runs. With ``groupsByEvent`` (the default) a group is
/// opened by the first registration and closed at the end of the event: a managed object
/// context ends an event at `processPendingChanges()`, which `perform`, `performAndWait` and
/// `save()` call. Not `Sendable`: use an undo manager on the queue of the context it serves.
open class UndoManager {
    /// A registered action or a nested group.
    private enum Entry {
        case action(target: ObjectIdentifier, () -> Void)
        case group(Group)
    }

    /// A group of actions, undone together.
    private final class Group {
        var entries: [Entry] = []
        var actionName = ""
        var isEmpty: Bool {
            entries.allSatisfy { if case .group(let group) = $0 { group.isEmpty } else { false } }
        }

        /// Drops the actions registered for `target`, in nested groups too.
        func removeActions(of target: ObjectIdentifier) {
            entries.removeAll { if case .action(let owner, _) = $0 { owner == target } else { false } }
            for case .group(let nested) in entries { nested.removeActions(of: target) }
        }
    }

    /// Groups that `undo()` runs, newest last.
    private var undoStack: [Group] = []
    /// Groups that `redo()` runs, newest last.
    private var redoStack: [Group] = []
    /// The open groups, innermost last.
    private var openGroups: [Group] = []
    /// Whether the outermost open group was opened by a registration (``groupsByEvent``).
    private var eventGroupIsOpen = false
    /// How many ``disableUndoRegistration()`` calls are not balanced yet.
    private var disabledCount = 0
    /// Called at each checkpoint, by the contexts using this manager.
    var checkpointObservers: [(owner: ObjectIdentifier, handler: () -> Void)] = []

    /// Whether the first registration outside any group opens a group that closes at the end of
    /// the event. The default is `true`.
    open var groupsByEvent = true
    /// The most groups kept for undo; older ones are dropped. 0, the default, keeps them all.
    open var levelsOfUndo = 0 {
        didSet { trim() }
    }
    /// Whether ``undo()`` is running actions.
    public private(set) var isUndoing = false
    /// Whether ``redo()`` is running actions.
    public private(set) var isRedoing = false

    /// Creates an empty undo manager.
    public init() {}

    /// The number of open groups.
    open var groupingLevel: Int { openGroups.count }

    /// Whether registrations are recorded (no ``disableUndoRegistration()`` is in effect).
    open var isUndoRegistrationEnabled: Bool { disabledCount == 0 }

    /// Whether there is anything to undo: a closed group, or actions in the open group.
    open var canUndo: Bool {
        !undoStack.isEmpty || !(openGroups.first?.isEmpty ?? true)
    }

    /// Whether there is anything to redo; posts a checkpoint first, since registering a change
    /// clears the redo stack.
    open var canRedo: Bool {
        postCheckpoint()
        return !redoStack.isEmpty
    }

    /// The name of the action ``undo()`` would undo (empty when unnamed).
    open var undoActionName: String { undoStack.last?.actionName ?? "" }
    /// The name of the action ``redo()`` would redo (empty when unnamed).
    open var redoActionName: String { redoStack.last?.actionName ?? "" }

    /// Names the group being recorded (the open one, or the last closed one), for menus.
    open func setActionName(_ actionName: String) {
        (openGroups.first ?? (isUndoing ? redoStack.last : undoStack.last))?.actionName = actionName
    }

    // MARK: Grouping

    /// Opens a group: the actions registered until the matching ``endUndoGrouping()`` are undone
    /// together. Groups nest.
    open func beginUndoGrouping() {
        postCheckpoint()
        openGroups.append(Group())
        NotificationCenter.default.post(name: Self.didOpenUndoGroupNotification, object: self)
    }

    /// Closes the innermost open group. An empty group is dropped.
    ///
    /// - Important: calling it without an open group is a programmer error, as in Foundation.
    open func endUndoGrouping() {
        precondition(!openGroups.isEmpty, "endUndoGrouping called without a matching beginUndoGrouping")
        postCheckpoint()
        NotificationCenter.default.post(name: Self.willCloseUndoGroupNotification, object: self)
        let group = openGroups.removeLast()
        if openGroups.isEmpty { eventGroupIsOpen = false }
        if !group.isEmpty {
            if let parent = openGroups.last {
                parent.entries.append(.group(group))
            } else {
                undoStack.append(group)
                trim()
            }
        }
        NotificationCenter.default.post(name: Self.didCloseUndoGroupNotification, object: self)
    }

    /// Closes the group that ``groupsByEvent`` opened, at the end of an event.
    func endEventGroup() {
        if eventGroupIsOpen, openGroups.count == 1 { endUndoGrouping() }
    }

    // MARK: Registering

    /// Registers `handler` to be called with `target` when the current group is undone
    /// (Foundation's `registerUndo(withTarget:handler:)`). While undoing, the registration is
    /// the redo action; otherwise registering a new action clears the redo stack.
    ///
    /// - Important: with ``groupsByEvent`` off, a group must be open, as in Foundation.
    open func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
        guard isUndoRegistrationEnabled else { return }
        if openGroups.isEmpty {
            precondition(
                groupsByEvent,
                "registerUndo called outside a group with groupsByEvent off; call beginUndoGrouping first")
            openGroups.append(Group())
            eventGroupIsOpen = true
            NotificationCenter.default.post(name: Self.didOpenUndoGroupNotification, object: self)
        }
        if !isUndoing && !isRedoing { redoStack = [] }
        openGroups.last!.entries.append(.action(target: ObjectIdentifier(target)) { handler(target) })
    }

    /// Stops recording registrations until the matching ``enableUndoRegistration()``; calls nest.
    open func disableUndoRegistration() {
        disabledCount += 1
    }

    /// Balances a ``disableUndoRegistration()``.
    ///
    /// - Important: calling it more often than `disableUndoRegistration()` is a programmer error.
    open func enableUndoRegistration() {
        precondition(disabledCount > 0, "enableUndoRegistration called without a matching disableUndoRegistration")
        disabledCount -= 1
    }

    /// Forgets every undo and redo group, closes open groups and enables registration.
    open func removeAllActions() {
        undoStack = []
        redoStack = []
        openGroups = []
        eventGroupIsOpen = false
        disabledCount = 0
    }

    /// Forgets the actions registered with `target` as their target, keeping the others.
    open func removeAllActions(withTarget target: AnyObject) {
        let identifier = ObjectIdentifier(target)
        for group in undoStack + redoStack + openGroups { group.removeActions(of: identifier) }
        undoStack.removeAll(where: \.isEmpty)
        redoStack.removeAll(where: \.isEmpty)
    }

    // MARK: Undoing

    /// Undoes the newest group: closes the event's group if ``groupsByEvent`` opened one, then
    /// runs the group's actions newest first; what they register becomes the redo group.
    ///
    /// - Important: calling it with a group opened by ``beginUndoGrouping()`` still open is a
    ///   programmer error, as in Foundation.
    open func undo() {
        postCheckpoint()
        if groupsByEvent { endEventGroup() }
        precondition(openGroups.isEmpty, "undo called with an open undo group; call endUndoGrouping first")
        guard let group = undoStack.popLast() else { return }
        NotificationCenter.default.post(name: Self.willUndoChangeNotification, object: self)
        isUndoing = true
        run(group, into: &redoStack)
        isUndoing = false
        NotificationCenter.default.post(name: Self.didUndoChangeNotification, object: self)
    }

    /// Undoes the newest group, nested or not, without closing open groups (Foundation's
    /// `undoNestedGroup()`): the last group closed inside the innermost open group, or with
    /// none, the newest undo group. What its actions register becomes one redo group.
    ///
    /// - Important: calling it when actions were registered in the open group since its last
    ///   nested group closed is a programmer error, as in Foundation.
    open func undoNestedGroup() {
        postCheckpoint()
        let group: Group
        if let open = openGroups.last, !open.entries.isEmpty {
            guard case .group(let nested) = open.entries.removeLast() else {
                preconditionFailure(
                    "undoNestedGroup called with undo actions registered since the last nested group closed")
            }
            group = nested
        } else if let last = undoStack.popLast() {
            group = last
        } else {
            return
        }
        NotificationCenter.default.post(name: Self.willUndoChangeNotification, object: self)
        isUndoing = true
        run(group, into: &redoStack)
        isUndoing = false
        NotificationCenter.default.post(name: Self.didUndoChangeNotification, object: self)
    }

    /// Redoes the newest undone group; what its actions register becomes undoable again.
    ///
    /// - Important: calling it with an open group is a programmer error, as in Foundation.
    open func redo() {
        postCheckpoint()
        if groupsByEvent { endEventGroup() }
        precondition(openGroups.isEmpty, "redo called with an open undo group; call endUndoGrouping first")
        guard let group = redoStack.popLast() else { return }
        NotificationCenter.default.post(name: Self.willRedoChangeNotification, object: self)
        isRedoing = true
        run(group, into: &undoStack)
        trim()
        isRedoing = false
        NotificationCenter.default.post(name: Self.didRedoChangeNotification, object: self)
    }

    /// Runs `group`'s actions newest first, collecting what they register in a new group pushed
    /// on `stack`.
    private func run(_ group: Group, into stack: inout [Group]) {
        let inverse = Group()
        inverse.actionName = group.actionName
        openGroups.append(inverse)
        func perform(_ group: Group) {
            for entry in group.entries.reversed() {
                switch entry {
                case .action(_, let action): action()
                case .group(let nested): perform(nested)
                }
            }
        }
        perform(group)
        openGroups.removeLast()
        if !inverse.isEmpty { stack.append(inverse) }
    }

    /// Drops the oldest undo groups beyond ``levelsOfUndo``.
    private func trim() {
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    /// Lets the contexts using the manager end their event, then posts the checkpoint notification.
    private func postCheckpoint() {
        for observer in checkpointObservers { observer.handler() }
        NotificationCenter.default.post(name: Self.checkpointNotification, object: self)
    }
}

extension UndoManager {
    /// Posted at each checkpoint: when a group opens or closes, and before undo and redo.
    public static let checkpointNotification = Notification.Name("NSUndoManagerCheckpointNotification")
    /// Posted after a group opens.
    public static let didOpenUndoGroupNotification = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted before a group closes.
    public static let willCloseUndoGroupNotification = Notification.Name("NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted after a group closes.
    public static let didCloseUndoGroupNotification = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")
    /// Posted before a group is undone.
    public static let willUndoChangeNotification = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted after a group is undone.
    public static let didUndoChangeNotification = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted before a group is redone.
    public static let willRedoChangeNotification = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted after a group is redone.
    public static let didRedoChangeNotification = Notification.Name("NSUndoManagerDidRedoChangeNotification")
}
