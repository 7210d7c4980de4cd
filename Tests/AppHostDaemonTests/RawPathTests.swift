import AppHost
import AppHostTestSupport
@testable import AppHostDaemon
import AppHostServices
import Foundation
import Glibc
import Testing

/// Config paths are the bytes given, not text.
@Suite struct RawPathTests {
    @Test("UTF-8 arguments stay as they are; other bytes survive the trip and show as \\xHH")
    func bytesSurvive() {
        let latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".yaml".utf8)
        let path = RawPath.decode(latin1)
        #expect(RawPath.bytes(path) == latin1)
        #expect(RawPath.displayed(path) == "caf\\xe9.yaml")
        #expect(RawPath.decode(Array("café/日本.yaml".utf8)) == "café/日本.yaml")
        let mixed: [UInt8] = [0xC3, 0xA9, 0xFF, 0xE2, 0x82]  // é, a stray byte, a cut-off sequence
        #expect(RawPath.bytes(RawPath.decode(mixed)) == mixed)
        #expect(RawPath.displayed(RawPath.decode(mixed)) == "é\\xff\\xe2\\x82")
    }

    @Test("a name that spells a scalar of the escape range in UTF-8 keeps its four bytes (a fuzzer's finding)")
    func escapeRangeInUTF8Survives() {
        let odd: [UInt8] = Array("u-c".utf8) + [0xF4, 0x8F, 0xBF, 0xA9] + Array(".yaml".utf8)  // U+10FFE9
        #expect(RawPath.bytes(RawPath.decode(odd)) == odd)
        #expect(RawPath.displayed(RawPath.decode(odd)) == "u-c\\xf4\\x8f\\xbf\\xa9.yaml")
        let alone: [UInt8] = [0xF4, 0x8F, 0xBC, 0x80]  // U+10FF00, valid UTF-8 on its own
        #expect(RawPath.bytes(RawPath.decode(alone)) == alone)
    }

    @Test("a config file whose name is not UTF-8 loads; a missing one is named with the byte escaped")
    func nonUTF8ConfigPathLoads() throws {
        let directory = try makeTemporaryDirectory("rawpath")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let name: [UInt8] = Array("\(directory)/caf".utf8) + [0xE9] + Array(".yaml".utf8)
        let config = "host:\n  state-directory: \(directory)/state\nservices:\n  - logger\n"
        let fd = (name + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC, 0o600) } }
        #expect(fd >= 0)
        _ = Array(config.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)

        let loader = ConfigurationLoader(registry: BuiltinServices.registry())
        let loaded = try loader.load(path: RawPath.decode(name))
        #expect(loaded.services.map(\.name) == ["logger"])

        let missing = RawPath.decode(Array("\(directory)/na".utf8) + [0xEF] + Array("ve.yaml".utf8))
        let error = #expect(throws: InvalidConfiguration.self) { try loader.load(path: missing) }?.first
        #expect(error?.file == "\(directory)/na\\xefve.yaml")
        #expect(error?.message.contains("ENOENT") == true)
    }
}
