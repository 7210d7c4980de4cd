// swift-tools-version: 6.1
// README.md's "READY=1 when your server listens": the host inside a Hummingbird application, with
// READY=1 held until the HTTP server accepts connections. The integration tests copy it out of
// the repository, build it and run it. NameClashCheck names every public type of apphostd
// unqualified beside Hummingbird, swift-configuration and ServiceLifecycle (scripts/check-names.py
// writes it): a clash does not build.
import PackageDescription

let package = Package(
    name: "HelloServer",
    dependencies: [
        .package(name: "apphostd", path: "../../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(
            url: "https://github.com/apple/swift-configuration", from: "1.4.0",
            traits: ["JSON", "YAML", "PropertyList", "Logging", "Reloading", "CommandLineArguments"]
        ),
    ],
    targets: [
        .executableTarget(
            name: "HelloServer",
            dependencies: [
                .product(name: "AppHost", package: "apphostd"),
                .product(name: "AppHostSystemd", package: "apphostd"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NameClashCheck",
            dependencies: [
                .product(name: "AppHost", package: "apphostd"),
                .product(name: "AppHostDaemon", package: "apphostd"),
                .product(name: "AppHostServices", package: "apphostd"),
                .product(name: "AppHostSupport", package: "apphostd"),
                .product(name: "AppHostSystemd", package: "apphostd"),
                .product(name: "AppHostTestKit", package: "apphostd"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ]
)
