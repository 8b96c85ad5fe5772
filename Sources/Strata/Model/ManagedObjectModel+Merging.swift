import Foundation
import Logging

extension ManagedObjectModel {
    /// A model holding the entities of every model in `bundles` (Core Data's
    /// `mergedModel(from:)`): each `.xcdatamodel` and `.mom` at the top of a bundle's resources or
    /// in one of its folders, and the current version of each `.xcdatamodeld` and `.momd`. `nil`
    /// searches the main bundle and the package resource bundles next to the main executable, as
    /// ``PersistentContainer/init(name:)`` does.
    ///
    /// The configurations and fetch request templates of the models are merged too.
    ///
    /// - Parameter bundles: the bundles to search, or `nil`.
    /// - Returns: the merged model; `nil` when a model does not load (the reason is logged) or
    ///   two models have an entity, a configuration or a template of one name, as in Core Data.
    public class func mergedModel(from bundles: [Bundle]?) -> ManagedObjectModel? {
        let searched = bundles ?? ([Bundle.main] + PersistentContainer.packageResourceBundles())
        var models: [ManagedObjectModel] = []
        for url in searched.flatMap(PersistentContainer.modelFileURLs(in:)) {
            guard let model = ManagedObjectModel(contentsOf: url) else { return nil }
            models.append(model)
        }
        let merged = ManagedObjectModel()
        return merged.merge(loaded: models) ? merged : nil
    }

    /// Takes the entities, configurations and templates of `models`, which were loaded or copied
    /// for this model alone: their entities move into it. `false` (logged) when two have an
    /// entity, a configuration or a template of one name.
    func merge(loaded models: [ManagedObjectModel]) -> Bool {
        var entities: [EntityDescription] = []
        var configurations: [(String, [EntityDescription])] = []
        var templates: [String: FetchRequest<FetchRequestResult>] = [:]
        for model in models {
            let own = model.entities
            guard Set(own.map(\.entityName)).isDisjoint(with: entities.map(\.entityName)) else {
                modelLogger.error("The models to merge have two entities of one name")
                return false
            }
            for name in model.configurations {
                guard !configurations.contains(where: { $0.0 == name }) else {
                    modelLogger.error("The models to merge have two configurations named \(name)")
                    return false
                }
                configurations.append((name, model.entities(forConfigurationName: name) ?? []))
            }
            for (name, template) in model.fetchRequestTemplatesByName {
                guard templates.updateValue(template, forKey: name) == nil else {
                    modelLogger.error("The models to merge have two fetch request templates named \(name)")
                    return false
                }
            }
            versionIdentifiers.formUnion(model.versionIdentifiers)
            model.entities = []
            entities += own
        }
        self.entities = entities
        for (name, members) in configurations { setEntities(members, forConfigurationName: name) }
        for (name, template) in templates { setFetchRequestTemplate(template, forName: name) }
        return true
    }
}
