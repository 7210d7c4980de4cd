// swift-tools-version: 6.1
import PackageDescription

// Linux only: the edge reads signals through signalfd and talks to systemd through libsystemd,
// so no Apple platform is listed.
let package = Package(
    name: "apphostd",
    products: [
        .library(name: "AppHost", targets: ["AppHost"]),
        .library(name: "AppHostSupport", targets: ["AppHostSupport"]),
        .library(name: "AppHostSystemd", targets: ["AppHostSystemd"]),
        .library(name: "AppHostServices", targets: ["AppHostServices"]),
        .library(name: "AppHostDaemon", targets: ["AppHostDaemon"]),
        .library(name: "AppHostTestKit", targets: ["AppHostTestKit"]),
        .executable(name: "apphostd", targets: ["apphostd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-service-context", from: "1.5.1"),
        // The figures: swift-metrics' CoreMetrics (its Metrics module pulls in
        // FoundationEssentials), rendered by swift-prometheus' registry into a node_exporter
        // textfile (no Foundation, no HTTP server).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Without its default SubprocessFoundation trait: nothing here needs Data or Foundation.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2", traits: []),
        // `swift package generate-documentation`: the DocC catalogs (Sources/*/*.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // libsystemd, how the daemon talks to systemd: sd_notify, the journal, the fds systemd
        // passes, the watchdog's settings (and, for the tests' stand-in notification server,
        // sd-bus). The target machine needs libsystemd0 (deploy/INSTALL.md).
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // libyaml, the reference C YAML parser: the config file's reader, without Foundation.
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // What Glibc's Swift module lacks: SIGRTMIN, malloc_trim, pthread_sigmask helpers; and
        // LogControl1's sd-bus vtable, which only C's macros build.
        .target(name: "CAppHostShims", linkerSettings: [.linkedLibrary("systemd")]),
        // Linked into the daemon only: blocks the lifecycle signals and takes systemd's fds
        // (sd_listen_fds_with_names) before any thread exists.
        .target(name: "CApphostdPrelude", dependencies: ["CAppHostShims"], linkerSettings: [.linkedLibrary("systemd")]),
        .target(
            name: "AppHost",
            dependencies: [
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // What the edge and the built-in services share, below both: JSON, atomic files and the
        // state directory's lock, error text, the process's environment, reading a whole fd.
        .target(
            name: "AppHostSupport",
            dependencies: [
                "AppHost",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "AppHostSystemd",
            dependencies: [
                "AppHost",
                "AppHostSupport",
                "CAppHostShims",
                "CSystemd",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "AppHostServices",
            dependencies: [
                "AppHost",
                "AppHostSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The daemon as a library: CLI, config loading, wiring. `ApphostdCommand.main(registry:)`.
        .target(
            name: "AppHostDaemon",
            dependencies: [
                "AppHost",
                "AppHostSupport",
                "AppHostSystemd",
                "AppHostServices",
                "CApphostdPrelude",
                "CYAML",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "apphostd",
            dependencies: ["AppHostDaemon", "AppHostServices"],
            // The release image, linked for a small footprint (Benchmarks/README.md): lld packs
            // the 30,000 relative relocations into a few KiB (`DT_RELR`), and none of the daemon's
            // 7,000 own symbols goes into the dynamic symbol table. scripts/build-release.sh adds
            // what makes it a static PIE.
            linkerSettings: [
                .unsafeFlags(
                    ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
                    .when(platforms: [.linux], configuration: .release)
                ),
            ]
        ),
        // One libFuzzer target per reader of outside bytes (Fuzz/: targets, corpora,
        // dictionaries; scripts/fuzz.sh builds it with the fuzzer and the address sanitizer).
        // The ordinary build replays each target's corpus once (scripts/test.sh).
        .executableTarget(
            name: "apphost-fuzz",
            dependencies: ["AppHost", "AppHostDaemon", "AppHostServices", "AppHostSystemd"],
            path: "Fuzz/Targets"
        ),
        // For services' own tests: hook handles, a recording host, captured logs. AppHost and
        // swift-log only, so a user's test target needs no libsystemd and no Foundation.
        .target(
            name: "AppHostTestKit",
            dependencies: [
                "AppHost",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What the test targets share: running a host beside a test, temporary directories.
        .target(name: "AppHostTestSupport", dependencies: ["AppHost"], path: "Tests/AppHostTestSupport"),
        // A private dbus-daemon, and stand-ins on it: a freedesktop notification server, and
        // logind (TestLogind), so that logind's client runs in `swift test` without root.
        .target(
            name: "DBusTestSupport",
            dependencies: ["AppHostTestKit", "AppHostTestSupport", "CSystemd"],
            path: "Tests/DBusTestSupport"
        ),
        // A program the tests run with an environment of their own: libsystemd reads
        // `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$LISTEN_FDS` from the process's.
        .executableTarget(
            name: "apphost-systemd-probe",
            dependencies: [
                "AppHost", "AppHostSystemd", "CApphostdPrelude", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/SystemdProbe"
        ),
        .testTarget(
            name: "AppHostTests",
            dependencies: [
                "AppHost",
                "AppHostTestKit",
                "AppHostTestSupport",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "AppHostSystemdTests",
            dependencies: [
                "AppHostSystemd",
                "AppHostTestKit",
                "AppHostTestSupport",
                "CAppHostShims",
                "DBusTestSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "AppHostSupportTests",
            dependencies: ["AppHostSupport", "AppHostTestSupport", .product(name: "SystemPackage", package: "swift-system")]
        ),
        .testTarget(
            name: "AppHostServicesTests",
            dependencies: ["AppHostServices", "AppHostSupport", "AppHostSystemd", "AppHostTestKit", "AppHostTestSupport", .product(name: "Logging", package: "swift-log"), .product(name: "Prometheus", package: "swift-prometheus")]
        ),
        .testTarget(
            name: "AppHostDaemonTests",
            dependencies: ["AppHostDaemon", "AppHostServices", "AppHostSystemd", "AppHostTestSupport"],
            exclude: ["BadConfigs"]
        ),
        .testTarget(name: "AppHostTestKitTests", dependencies: ["AppHostTestKit", "AppHost"]),
        .testTarget(name: "IntegrationTests", dependencies: ["apphostd", "AppHostTestKit", "AppHostTestSupport", "DBusTestSupport", "CSystemd"], exclude: ["Support"]),
    ]
)
