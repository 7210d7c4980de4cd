// swift-tools-version: 6.1
// The design's floor for apphostd's start and footprint: a ServiceGroup (as the daemon runs one)
// of five services that do nothing, one of which sends READY=1 through libsystemd's sd_notify, as
// a daemon on swift-service-lifecycle and swift-systemd does. Linked as apphostd's release build
// is: lld's flags (Package.swift there), the Swift runtime inside, libsystemd and the C runtime
// shared. Built and run by ../run.sh.
import PackageDescription

let package = Package(
    name: "ServiceGroupFloor",
    dependencies: [
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "ServiceGroupFloor",
            dependencies: [
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: [
                .linkedLibrary("systemd"),
                .unsafeFlags(
                    ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
                    .when(platforms: [.linux], configuration: .release)
                ),
            ]
        ),
    ]
)
