import Foundation

/// Debian's node_exporter and Prometheus on loopback, for the metrics scenarios: node_exporter
/// reads one textfile directory (its textfile collector only), Prometheus scrapes it every
/// second and answers PromQL over its HTTP API (`/api/v1/query`, through curl).
final class PrometheusStack: Sendable {
    /// Where `scripts/deps.sh test` unpacks Debian's programs without installing their packages
    /// (whose units would listen on the network).
    static let tools = IntegrationSuites.GettingStartedPackageTests.repository + "/.build-tools/root/usr/bin"
    static let nodeExporter = program("prometheus-node-exporter")
    static let prometheus = program("prometheus")

    /// `name` from `tools`, else from the system's PATH.
    static func program(_ name: String) -> String {
        let unpacked = tools + "/" + name
        return FileManager.default.isExecutableFile(atPath: unpacked) ? unpacked : ProcessRunner.resolve(name) ?? unpacked
    }

    /// Why the stack cannot run here, or nil.
    static let problem: String? = {
        for program in [nodeExporter, prometheus] where !FileManager.default.isExecutableFile(atPath: program) {
            return "\(program) missing (bash scripts/deps.sh test unpacks it from Debian's prometheus-node-exporter and prometheus)"
        }
        if ProcessRunner.resolve("curl") == nil { return "curl missing" }
        return nil
    }()

    let directory: String
    let prometheusPort: Int
    private let processes: [Process]

    private init(directory: String, prometheusPort: Int, processes: [Process]) {
        self.directory = directory
        self.prometheusPort = prometheusPort
        self.processes = processes
    }

    /// Starts both, node_exporter reading `textfileDirectory`, runs `body`, stops both.
    static func with<R: Sendable>(textfileDirectory: String, in directory: String, _ body: (PrometheusStack) async throws -> R) async throws -> R {
        let exporterPort = try freePort()
        let prometheusPort = try freePort()
        try FileManager.default.createDirectory(atPath: directory + "/tsdb", withIntermediateDirectories: true)
        let config = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            scrape_configs:
              - job_name: node
                static_configs:
                  - targets: ["127.0.0.1:\(exporterPort)"]
            """
        try config.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        var processes: [Process] = []
        defer { for process in processes where process.isRunning { process.terminate() } }
        processes.append(try launch(nodeExporter, [
            "--web.listen-address=127.0.0.1:\(exporterPort)", "--collector.disable-defaults", "--collector.textfile",
            "--collector.textfile.directory=\(textfileDirectory)",
        ], log: directory + "/node-exporter.log"))
        processes.append(try launch(prometheus, [
            "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/tsdb",
            "--web.listen-address=127.0.0.1:\(prometheusPort)",
        ], log: directory + "/prometheus.log"))
        let stack = PrometheusStack(directory: directory, prometheusPort: prometheusPort, processes: processes)
        let result = try await body(stack)
        for process in processes {
            process.terminate()
            process.waitUntilExit()
        }
        return result
    }

    /// The samples of an instant query: each result's labels and value.
    func query(_ promql: String) async throws -> [(labels: [String: String], value: Double)] {
        let result = try await ProcessRunner.run([
            "curl", "-sS", "--max-time", "5", "--get", "--data-urlencode", "query=\(promql)",
            "http://127.0.0.1:\(prometheusPort)/api/v1/query",
        ])
        guard result.succeeded,
            let json = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            json["status"] as? String == "success",
            let data = json["data"] as? [String: Any], let results = data["result"] as? [[String: Any]]
        else { return [] }
        return results.compactMap { item in
            guard let metric = item["metric"] as? [String: String], let value = item["value"] as? [Any],
                let text = value.last as? String, let number = Double(text)
            else { return nil }
            return (metric, number)
        }
    }

    /// The single value of `promql`, nil while it has none.
    func value(_ promql: String) async throws -> Double? {
        let samples = try await query(promql)
        return samples.count == 1 ? samples[0].value : nil
    }

    /// What the two wrote, for a failure's message.
    var logs: String {
        ["node-exporter.log", "prometheus.log"].map { name in
            "--- \(name)\n" + ((try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)).map { String($0.suffix(3000)) } ?? "")
        }.joined(separator: "\n")
    }

    private static func launch(_ program: String, _ arguments: [String], log: String) throws -> Process {
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    /// A loopback TCP port nobody listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw HarnessError("bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
