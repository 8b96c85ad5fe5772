import Logging

/// Where the model layer logs: what a model file has that Core Data accepts but that is likely
/// a mistake (at warning level), and why a model could not be loaded (at error level).
let modelLogger = Logger(label: "strata.model")
