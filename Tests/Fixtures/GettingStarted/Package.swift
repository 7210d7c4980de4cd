// swift-tools-version: 6.1
// The package of the getting-started article (Sources/AppHost/AppHost.docc/GettingStarted.md)
// and of README.md's "Write your own service"; the integration tests copy it out of the
// repository, build it, run its tests and run its programs.
import PackageDescription

let package = Package(
    name: "Heartbeat",
    dependencies: [
        .package(name: "apphostd", path: "../../.."),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "Heartbeat",
            dependencies: [
                .product(name: "AppHost", package: "apphostd"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "heartbeatd",
            dependencies: [
                "Heartbeat",
                .product(name: "AppHostDaemon", package: "apphostd"),
                .product(name: "AppHostServices", package: "apphostd"),
            ]
        ),
        .testTarget(
            name: "HeartbeatTests",
            dependencies: [
                "Heartbeat",
                .product(name: "AppHost", package: "apphostd"),
                .product(name: "AppHostTestKit", package: "apphostd"),
            ]
        ),
        .executableTarget(
            name: "MyProgram",
            dependencies: [
                "Heartbeat",
                .product(name: "AppHost", package: "apphostd"),
                .product(name: "AppHostSystemd", package: "apphostd"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
