/// Strata's object graph (the Core Data API) is built on the StrataStore engine, which this
/// module re-exports so that `import Strata` gives both.
@_exported import StrataStore
