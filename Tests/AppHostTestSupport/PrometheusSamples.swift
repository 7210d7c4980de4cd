/// The samples of a Prometheus text-format rendering (a textfile, a registry's output,
/// node_exporter's `/metrics`): `name{labels}` → the value as written. Comments and blank lines
/// are skipped.
public func prometheusSamples(_ text: String) -> [String: String] {
    var samples: [String: String] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        samples[String(line[..<space])] = String(line[line.index(after: space)...])
    }
    return samples
}
