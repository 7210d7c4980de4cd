#if canImport(Glibc)
import Glibc
#endif

/// The target `$APPHOST_FUZZ_TARGET` names, chosen once.
let selectedTarget: FuzzTarget = {
    guard let name = getenv("APPHOST_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        let message = Array("apphost-fuzz: set APPHOST_FUZZ_TARGET to one of: \(names)\n".utf8)
        _ = message.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        exit(2)
    }
    return target
}()

/// libFuzzer's entry: one input to the selected target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    selectedTarget.run(bytes)
    return 0
}
