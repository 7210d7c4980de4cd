import Testing

@testable import AppHostSystemd

/// The object's answers, call by call, without a bus (`LogControlServiceTests` asks it through
/// one, with busctl).
@Suite struct LogControlObjectTests {
    static func call(_ member: String, signature: String = "", path: String = LogControlObject.path, sender: String = ":1.7", _ body: (inout BusWriter) -> Void = { _ in }) -> BusMessage {
        var writer = BusWriter()
        body(&writer)
        var message = BusMessage.call(destination: "org.apphost.x", path: path, interface: "org.freedesktop.DBus.Properties", member: member, signature: signature, body: writer.bytes)
        message.serial = 11
        message.sender = sender
        return message
    }

    static func setLogLevel(_ value: String) -> BusMessage {
        call("Set", signature: "ssv") { $0.string(LogControlObject.interface); $0.string("LogLevel"); $0.variant("s") { $0.string(value) } }
    }

    static func reply(_ outcome: LogControlObject.Outcome) -> BusMessage? {
        if case .reply(let message) = outcome { return message }
        return nil
    }

    @Test("a write on the system bus waits for the caller's uid; root and the daemon's own user may, nobody may not")
    func aWriteAsksWhoCalls() throws {
        let control = LogLevelControl(level: .info)
        let object = LogControlObject(identifier: "x", control: control, trustsEveryCaller: false, ownUID: 1000)
        let write = Self.setLogLevel("debug")
        guard case .askCallerUID(let pending) = object.handle(write) else {
            Issue.record("the write was answered before the caller was known")
            return
        }
        let query = LogControlObject.callerUIDQuery(for: pending)
        #expect(query.member == "GetConnectionUnixUser" && query.destination == "org.freedesktop.DBus")
        var reader = query.bodyReader
        #expect(try reader.string() == ":1.7")

        #expect(object.complete(pending, callerUID: 65534)?.errorName == "org.freedesktop.DBus.Error.AccessDenied")
        #expect(object.complete(pending, callerUID: nil)?.errorName == "org.freedesktop.DBus.Error.AccessDenied", "the bus did not say")
        #expect(control.level == .info)
        #expect(object.complete(pending, callerUID: 1000)?.kind == .methodReturn)
        #expect(control.level == .debug)
        guard case .askCallerUID(let rootsWrite) = object.handle(Self.setLogLevel("info")) else {
            Issue.record("the write was answered before the caller was known")
            return
        }
        #expect(object.complete(rootsWrite, callerUID: 0)?.kind == .methodReturn)
        #expect(control.level == .info)
    }

    @Test("a value of the wrong type is refused before the caller is asked for, as sd-bus orders its checks")
    func theTypeIsCheckedFirst() {
        let object = LogControlObject(identifier: "x", control: LogLevelControl(level: .info), trustsEveryCaller: false, ownUID: 0)
        let wrongType = Self.call("Set", signature: "ssv") { $0.string(LogControlObject.interface); $0.string("LogLevel"); $0.variant("u") { $0.uint32(7) } }
        #expect(Self.reply(object.handle(wrongType))?.errorMessage == "Incorrect parameters for property 'LogLevel', expected 's', got 'u'.")
    }

    @Test("on a user's bus a write applies at once")
    func aUserBusTrustsItsCallers() {
        let control = LogLevelControl(level: .info)
        let object = LogControlObject(identifier: "x", control: control, trustsEveryCaller: true, ownUID: 1000)
        #expect(Self.reply(object.handle(Self.setLogLevel("warning")))?.kind == .methodReturn)
        #expect(control.level == .warning)
    }

    @Test("GetAll lists the three properties; an unknown property, path or method gets sd-bus's error")
    func readsAndErrors() throws {
        let object = LogControlObject(identifier: "apphostd", control: LogLevelControl(level: .notice), trustsEveryCaller: true, ownUID: 0)
        let all = try #require(Self.reply(object.handle(Self.call("GetAll", signature: "s") { $0.string("") })))
        #expect(all.signature == "a{sv}")
        var reader = all.bodyReader
        var values: [String: String] = [:]
        let length = Int(try reader.uint32())
        try reader.align(8)
        let end = reader.offset + length
        while reader.offset < end {
            try reader.align(8)
            let name = try reader.string()
            #expect(try reader.signature() == "s")
            values[name] = try reader.string()
        }
        #expect(values == ["LogLevel": "notice", "LogTarget": "auto", "SyslogIdentifier": "apphostd"])

        let unknown = Self.call("Get", signature: "ss") { $0.string(LogControlObject.interface); $0.string("Colour") }
        #expect(Self.reply(object.handle(unknown))?.errorName == "org.freedesktop.DBus.Error.UnknownProperty")
        #expect(Self.reply(object.handle(Self.call("Get", signature: "ss", path: "/elsewhere") { $0.string(""); $0.string("LogLevel") }))?.errorName == "org.freedesktop.DBus.Error.UnknownObject")
        #expect(Self.reply(object.handle(Self.call("Frobnicate")))?.errorName == "org.freedesktop.DBus.Error.UnknownMethod")
        #expect(Self.reply(object.handle(Self.call("Get", signature: "s") { $0.string("") }))?.errorName == "org.freedesktop.DBus.Error.InvalidArgs")
        let wrongType = Self.call("Set", signature: "ssv") { $0.string(LogControlObject.interface); $0.string("LogLevel"); $0.variant("u") { $0.uint32(7) } }
        #expect(Self.reply(object.handle(wrongType))?.errorName == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(Self.reply(object.handle(Self.call("GetAll", signature: "s") { $0.string("org.example.Other") }))?.errorName == "org.freedesktop.DBus.Error.UnknownInterface")
        #expect(Self.reply(object.handle(Self.call("Get", signature: "ss") { $0.string(""); $0.string("LogLevel") }))?.errorName == "org.freedesktop.DBus.Error.UnknownProperty", "as sd-bus: Get names its interface")
    }

    @Test("a call that wants no reply gets none")
    func noReplyExpected() {
        let object = LogControlObject(identifier: "x", control: LogLevelControl(level: .info), trustsEveryCaller: true, ownUID: 0)
        var call = Self.call("Get", signature: "ss") { $0.string(LogControlObject.interface); $0.string("LogLevel") }
        call.flags = BusMessage.noReplyExpected
        #expect(object.handle(call) == .none)
    }
}
