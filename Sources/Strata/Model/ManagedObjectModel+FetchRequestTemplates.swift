extension ManagedObjectModel {
    /// The model's fetch request templates, by name (Core Data's `fetchRequestTemplatesByName`):
    /// the `<fetchRequest>` elements of a model file, and those set with
    /// ``setFetchRequestTemplate(_:forName:)``.
    public var fetchRequestTemplatesByName: [String: FetchRequest<FetchRequestResult>] {
        fetchRequestTemplateTable
    }

    /// The fetch request template named `name`, as stored (Core Data's
    /// `fetchRequestTemplate(forName:)`). Its predicate may hold `$VARIABLES`; use
    /// ``fetchRequestFromTemplate(withName:substitutionVariables:)`` to fill them in.
    ///
    /// - Parameter name: the template's name.
    /// - Returns: the template, or `nil` when the model has none of that name.
    public func fetchRequestTemplate(forName name: String) -> FetchRequest<FetchRequestResult>? {
        fetchRequestTemplateTable[name]
    }

    /// A new fetch request made from the template named `name`, its predicate's variables
    /// replaced by `variables` (Core Data's `fetchRequestFromTemplate(withName:substitutionVariables:)`).
    ///
    /// The template itself is not changed.
    ///
    /// - Parameters:
    ///   - name: the template's name.
    ///   - variables: a value for each `$VARIABLE` of the predicate (`NSNull()` for `nil`).
    /// - Returns: the request, or `nil` when the model has no template of that name.
    /// - Important: A variable of the predicate missing from `variables` stops the process with
    ///   a message naming the template and the variable, as Core Data raises an exception.
    public func fetchRequestFromTemplate(
        withName name: String, substitutionVariables variables: [String: Any]
    ) -> FetchRequest<FetchRequestResult>? {
        guard let template = fetchRequestTemplateTable[name] else { return nil }
        let request = template.copied()
        if let predicate = template.predicate {
            do {
                request.predicate = try predicate.withSubstitutionVariables(variables)
            } catch {
                fatalError("fetch request template \(name): \(error.message)")
            }
        }
        return request
    }

    /// Sets (or with `nil` removes) the fetch request template named `name` (Core Data's
    /// `setFetchRequestTemplate(_:forName:)`).
    ///
    /// - Parameters:
    ///   - fetchRequestTemplate: the template; its entity should be an entity of the model.
    ///   - name: the template's name.
    /// - Important: Calling it once the model is frozen stops the process.
    public func setFetchRequestTemplate(_ fetchRequestTemplate: FetchRequest<FetchRequestResult>?, forName name: String)
    {
        if isFrozen { immutableModelViolation("ManagedObjectModel.fetchRequestTemplate \(name)") }
        fetchRequestTemplateTable[name] = fetchRequestTemplate
    }
}
