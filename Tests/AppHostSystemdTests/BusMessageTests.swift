import Testing

@testable import AppHostSystemd

@Suite struct BusMessageTests {
    @Test("a call encodes as the D-Bus spec lays it out: fixed header, 8-aligned fields, 8-aligned body")
    func aCallEncodesAsTheSpecSays() throws {
        var arguments = BusWriter()
        arguments.string("org.apphost.x")
        arguments.uint32(4)
        var call = BusMessage.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "RequestName", signature: "su", body: arguments.bytes)
        call.serial = 7
        let bytes = call.encoded()
        #expect(Array(bytes[0..<4]) == [UInt8(ascii: "l"), 1, 0, 1])
        #expect(Array(bytes[4..<8]) == [UInt8(arguments.bytes.count), 0, 0, 0], "the body's length")
        #expect(Array(bytes[8..<12]) == [7, 0, 0, 0], "the serial")
        #expect((bytes.count - arguments.bytes.count) % 8 == 0, "the body starts 8-aligned")
        #expect(Array(bytes.suffix(arguments.bytes.count)) == arguments.bytes)
        #expect(try BusMessage.length(of: bytes) == bytes.count)
        #expect(try BusMessage.length(of: Array(bytes.prefix(15))) == nil, "not yet a fixed header")
        #expect(try BusMessage(decoding: bytes) == call)
    }

    @Test("an error reply names the call it answers and carries its message")
    func anErrorReplyRoundTrips() throws {
        var call = BusMessage.call(destination: "x", path: "/", interface: "i", member: "M")
        call.serial = 3
        call.sender = ":1.9"
        let decoded = try #require(try BusMessage(decoding: call.errorReply("org.freedesktop.DBus.Error.AccessDenied", "no").encoded()))
        #expect(decoded.kind == .error && decoded.replySerial == 3 && decoded.destination == ":1.9")
        #expect(decoded.errorName == "org.freedesktop.DBus.Error.AccessDenied" && decoded.errorMessage == "no")
        #expect(!decoded.wantsReply)
    }

    @Test("a big-endian message from the bus reads as well as a little-endian one")
    func bigEndianReads() throws {
        // METHOD_RETURN, serial 2, REPLY_SERIAL 1 and SIGNATURE "u" fields, body UInt32 1.
        let bytes: [UInt8] = [
            UInt8(ascii: "B"), 2, 1, 1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 15,
            5, 1, UInt8(ascii: "u"), 0, 0, 0, 0, 1,
            8, 1, UInt8(ascii: "g"), 0, 1, UInt8(ascii: "u"), 0, 0,
            0, 0, 0, 1,
        ]
        #expect(try BusMessage.length(of: bytes) == bytes.count)
        let message = try #require(try BusMessage(decoding: bytes))
        #expect(message.kind == .methodReturn && message.serial == 2 && message.replySerial == 1 && message.signature == "u")
        var reader = message.bodyReader
        #expect(try reader.uint32() == 1)
    }

    @Test("header fields the daemon does not use, of any type, are skipped")
    func unknownFieldsAreSkipped() throws {
        var writer = BusWriter()
        writer.byte(UInt8(ascii: "l")); writer.byte(4); writer.byte(0); writer.byte(1)
        writer.uint32(0); writer.uint32(5)
        writer.array(elementAlignment: 8) { fields in
            fields.structure { $0.byte(42); $0.variant("a(sv)") { value in
                value.array(elementAlignment: 8) { $0.structure { $0.string("k"); $0.variant("t") { $0.pad(to: 8); $0.uint32(1); $0.uint32(0) } } }
            } }
            fields.structure { $0.byte(3); $0.variant("s") { $0.string("NameAcquired") } }
        }
        writer.pad(to: 8)
        let message = try #require(try BusMessage(decoding: writer.bytes))
        #expect(message.kind == .signal && message.member == "NameAcquired")
    }

    @Test("bad lengths, types or byte orders from a peer are errors, never a trap", arguments: [
        ("a body longer than the bytes", [UInt8(ascii: "l"), 2, 0, 1, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
        ("an unknown byte order", [UInt8(ascii: "x"), 2, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
        ("header fields that run past their array", [UInt8(ascii: "l"), 2, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 5, 1, UInt8(ascii: "u"), 0, 1, 0, 0, 0]),
        ("a field array past the end", [UInt8(ascii: "l"), 2, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 64, 0, 0, 0, 3, 1, UInt8(ascii: "s"), 0, 200, 0, 0, 0]),
    ])
    func malformedMessagesThrow(_ case: String, bytes: [UInt8]) {
        #expect(throws: BusError.self, "\(`case`)") {
            _ = try BusMessage(decoding: bytes)
        }
    }

    @Test("a message type newer than the spec's four is ignored, not an error")
    func unknownTypesAreIgnored() throws {
        #expect(try BusMessage(decoding: [UInt8(ascii: "l"), 9, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]) == nil)
    }

    @Test("variants nested past the spec's 64 levels are a malformed message, not a stack overflow")
    func deepNestingIsRefused() {
        var writer = BusWriter()
        for _ in 0..<100 { writer.signature("v") }
        writer.signature("y")
        writer.byte(1)
        var reader = BusReader(writer.bytes)
        #expect(throws: BusError.self) { try reader.skip("v") }
    }

    @Test("a string with a NUL inside is cut there, as sd-bus's C strings were: the bus drops a connection that sends one")
    func stringsAreCutAtNUL() throws {
        var writer = BusWriter()
        writer.string("before" + String(Unicode.Scalar(0)) + "after")
        var reader = BusReader(writer.bytes)
        #expect(try reader.string() == "before")
    }
}

@Suite struct BusAddressTests {
    @Test("unix paths and abstract names are read, escapes decoded, other transports skipped")
    func addressesParse() throws {
        let address = try BusAddress("tcp:host=localhost,port=1;unix:path=/run/x%20y/bus,guid=abc;unix:abstract=/tmp/dbus-1")
        #expect(address.sockets == [NotifySocketAddress("/run/x y/bus")!, NotifySocketAddress("@/tmp/dbus-1")!])
        #expect(throws: BusError.unsupportedAddress("tcp:host=localhost")) { try BusAddress("tcp:host=localhost") }
    }

    @Test("the default bus is sd_bus_open's: the user's in a user's slice, else the system's, unless the environment says")
    func defaultBusIsSdBusOpens() throws {
        let user = try BusAddress.processDefault(environment: ["XDG_RUNTIME_DIR": "/run/user/0"], cgroupPath: "/user.slice/user-0.slice/user@0.service/app.slice/apphostd.service")
        #expect(user.text == "unix:path=/run/user/0/bus" && user.isUserBus)
        let system = try BusAddress.processDefault(environment: ["XDG_RUNTIME_DIR": "/run/user/0"], cgroupPath: "/system.slice/apphostd.service")
        #expect(system.text == "unix:path=/run/dbus/system_bus_socket" && !system.isUserBus)
        let set = try BusAddress.processDefault(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/x"], cgroupPath: "/")
        #expect(set.text == "unix:path=/x")
        let starter = try BusAddress.processDefault(environment: ["DBUS_STARTER_BUS_TYPE": "system"], cgroupPath: "/user.slice/user-1000.slice/session-2.scope")
        #expect(!starter.isUserBus)
        #expect(throws: BusError.noUserBus) { try BusAddress.processDefault(environment: [:], cgroupPath: "/user.slice/user-1000.slice/session-2.scope") }
    }

    @Test("a cgroup's owner is the user slice right under the root's slices, as systemd finds it")
    func cgroupOwner() {
        #expect(BusAddress.ownerUID(ofCgroup: "/user.slice/user-1000.slice/user@1000.service/app.slice/a.service") == 1000)
        #expect(BusAddress.ownerUID(ofCgroup: "/system.slice/apphostd.service") == nil)
        #expect(BusAddress.ownerUID(ofCgroup: "/") == nil)
        #expect(BusAddress.ownerUID(ofCgroup: "/user.slice") == nil)
    }
}
