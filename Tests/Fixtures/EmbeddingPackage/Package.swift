// swift-tools-version: 6.1
// The package README.md's "The host in your own ServiceGroup" describes; built by the tests.
import PackageDescription

let package = Package(
    name: "MyProgram",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "apphostd", path: "../../.."),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "MyProgram",
            dependencies: [
                .product(name: "AppHost", package: "apphostd"),
                .product(name: "AppHostSystemd", package: "apphostd"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
