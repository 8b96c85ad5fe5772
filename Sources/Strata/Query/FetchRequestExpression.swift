/// The fetch request expressions of Core Data (`NSFetchRequestExpression`): the objects a fetch
/// request gets, or their count. Such an expression is a ``FetchExpression`` (its
/// ``FetchExpression/fetch(request:context:countOnly:)`` case); this names the factory Core Data
/// code calls.
public enum FetchRequestExpression {
    /// An expression whose value is what `fetch` (an expression whose value is a
    /// ``FetchRequest``) fetches in `context` (an expression whose value is a
    /// ``ManagedObjectContext``): the objects, or their count when `countOnly` is `true`.
    public static func expression(
        forFetch fetch: FetchExpression, context: FetchExpression, countOnly: Bool
    ) -> FetchExpression {
        .fetch(request: fetch, context: context, countOnly: countOnly)
    }
}
