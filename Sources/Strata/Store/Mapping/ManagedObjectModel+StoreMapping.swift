import StrataSynchronization
import Synchronization

extension ManagedObjectModel {
    /// The model validated, frozen and mapped to the engine's schema, or why it cannot be: what
    /// every coordinator made with the model stores its objects by. The first coordinator makes
    /// it; the next ones share it, as a frozen model never changes (a service making a container
    /// a request, or a test a container a case, validated and mapped the model every time).
    func storeMapping() -> Result<StoreMapping, CoreDataError> {
        storeMappingOnceFrozen.withLock { kept in
            if let kept { return kept }
            let validation = Result { try validate() }
            freeze()
            let mapping: Result<StoreMapping, CoreDataError>
            do {
                try validation.get()
                mapping = .success(try StoreMapping(model: self))
            } catch let error as CoreDataError {
                mapping = .failure(error)
            } catch {
                mapping = .failure(CoreDataError(.coreData, "the model cannot be stored: \(error)"))
            }
            kept = mapping
            return mapping
        }
    }
}
