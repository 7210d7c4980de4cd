// swift-tools-version: 6.1
// Benchmarks for the AppHost core, kept in their own package so the main package does not
// depend on package-benchmark. Run: swift package --scratch-path ../.build-bench benchmark
import PackageDescription

// SwiftPM names a path dependency after its folder, so the parent package's identity is the name
// of the folder the clone lives in ("apphostd", "main", ...), not a constant.
let parentPackage = Context.packageDirectory
    .split(separator: "/").dropLast().last.map { String($0).lowercased() } ?? "apphostd"

let package = Package(
    name: "apphostd-benchmarks",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "HostFanOut",
            dependencies: [
                .product(name: "AppHost", package: parentPackage),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "HostFanOut",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "package-benchmark"),
            ]
        ),
        .executableTarget(
            name: "HostSupervision",
            dependencies: [
                .product(name: "AppHost", package: parentPackage),
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "HostSupervision",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "package-benchmark"),
            ]
        ),
    ]
)
