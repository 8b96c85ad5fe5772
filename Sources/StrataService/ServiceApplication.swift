import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals

/// The service assembled: the routes over a backend, request metrics and logs, `/metrics`, and
/// the service group that runs them and shuts them down gracefully.
///
/// ```swift
/// let backend = try StrataBackend(directory: configuration.directory, logger: logger)
/// let group = ServiceApplication.serviceGroup(
///     configuration: configuration, backend: backend, registry: registry, logger: logger)
/// try await group.run()  // until SIGTERM or SIGINT
/// ```
public enum ServiceApplication {
    /// The HTTP application: ``ServiceRoutes`` over `backend`, Hummingbird's metrics and
    /// request-log middleware, and `GET /metrics` from `registry`.
    ///
    /// - Parameters:
    ///   - configuration: the address to listen on.
    ///   - backend: the store behind the routes.
    ///   - registry: what `/metrics` reports; bootstrap swift-metrics with a
    ///     `PrometheusMetricsFactory` on it so the service's and the store's metrics land there.
    ///   - logger: the server's logger; requests are logged at debug.
    ///   - onServerRunning: called with the bound port once the server listens (port 0 binds
    ///     a free one).
    public static func application(
        configuration: ServiceConfiguration, backend: any Backend, registry: PrometheusCollectorRegistry,
        logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: LogRequestsMiddleware(.debug))
        ServiceRoutes.add(to: router, backend: backend)
        router.get("metrics") { _, _ in
            let text = registry.emitToBuffer()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
        }
        return Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "strata-service"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }

    /// The service group: a ``BackendService`` for `backend`, a ``HistoryRetentionService``
    /// when the configuration keeps history for a while, then the application, so that a
    /// graceful shutdown stops the server, finishes the requests in flight and their saves,
    /// and then closes the store.
    ///
    /// - Parameters:
    ///   - gracefulShutdownSignals: the signals that start a graceful shutdown. The default
    ///     is SIGTERM and SIGINT; tests pass none and call `triggerGracefulShutdown()`.
    ///   - others: as ``application(configuration:backend:registry:logger:onServerRunning:)``.
    public static func serviceGroup(
        configuration: ServiceConfiguration, backend: any Backend, registry: PrometheusCollectorRegistry,
        logger: Logger, gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> ServiceGroup {
        let application = application(
            configuration: configuration, backend: backend, registry: registry, logger: logger,
            onServerRunning: onServerRunning)
        var services: [any Service] = [BackendService(backend: backend, logger: logger)]
        if let retention = configuration.historyRetention {
            services.append(HistoryRetentionService(backend: backend, retention: retention, logger: logger))
        }
        services.append(application)
        return ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services,
                gracefulShutdownSignals: gracefulShutdownSignals,
                logger: logger))
    }
}
