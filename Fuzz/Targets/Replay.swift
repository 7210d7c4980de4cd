#if !APPHOST_FUZZ
#if canImport(Glibc)
import Glibc
#endif

/// Without libFuzzer (the ordinary build): runs each target once over the files of its corpus,
/// so scripts/test.sh checks that every seed still passes the target's invariants.
///
///     apphost-fuzz replay CORPUS_ROOT [TARGET ...]    every target, or the named ones
@main
enum Replay {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 2, arguments[0] == "replay" else {
            print("usage: apphost-fuzz replay CORPUS_ROOT [TARGET ...]   (targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))")
            exit(2)
        }
        let root = arguments[1]
        let targets = arguments.count > 2 ? arguments[2...].compactMap(FuzzTarget.init(rawValue:)) : FuzzTarget.allCases
        for target in targets {
            let directory = root + "/" + target.rawValue
            let files = FuzzScratch.entries(of: directory)
            guard !files.isEmpty else {
                print("apphost-fuzz: \(target.rawValue): no seeds in \(directory)")
                exit(1)
            }
            for file in files {
                target.run(contents(of: directory + "/" + file))
            }
            print("\(target.rawValue): \(files.count) seeds passed")
        }
    }

    static func contents(of path: String) -> [UInt8] {
        guard let file = fopen(path, "rb") else { return [] }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }
}
#endif
