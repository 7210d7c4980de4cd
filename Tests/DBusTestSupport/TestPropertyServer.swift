import AppHostTestKit
import CSystemd
import Foundation
import Synchronization

/// A stand-in for a daemon that publishes properties on a test's bus (networkd's
/// `OperationalState`, NetworkManager's `State`, power-profiles-daemon's `ActiveProfile`,
/// UPower's `OnBattery`): it owns a name, answers `Get` and `GetAll` for its objects, and sends
/// `PropertiesChanged` when a test sets a value. The real daemons are the PID-1 suites'. sd-bus
/// blocks, so it serves on a thread of its own; the tests' calls are queued to it.
public final class TestPropertyServer: Sendable {
    /// A property's value.
    public enum Value: Sendable, Equatable {
        case string(String)
        case uint32(UInt32)
        case bool(Bool)
    }

    /// One object's interface and its properties.
    public struct Object: Sendable {
        public let path: String
        public let interface: String
        public var properties: [String: Value]

        /// An object as given.
        public init(path: String, interface: String, properties: [String: Value]) {
            (self.path, self.interface, self.properties) = (path, interface, properties)
        }
    }

    enum Action: Sendable {
        case set(path: String, property: String, value: Value)
        case leave
        case comeBack
    }

    /// The name it owns.
    public let name: String
    /// Each `GetAll` asked of it.
    public let reads = TestLog<String>()
    /// Each time it owns the name (again, after `comeBack()`).
    private let owned = TestLog<Int>()
    private let left = TestLog<Int>()
    private let finished = TestLog<Bool>()
    private let isStopped = Atomic<Bool>(false)
    private let actions = Mutex<[Action]>([])
    private let objects: Mutex<[Object]>

    private init(name: String, objects: [Object]) {
        self.name = name
        self.objects = Mutex(objects)
    }

    /// Serves `objects` as `name` on the bus at `address`; returns once it owns the name.
    public static func start(address: String, name: String, objects: [Object], timeout: Duration = .seconds(10)) async throws -> TestPropertyServer {
        let server = TestPropertyServer(name: name, objects: objects)
        Thread { server.serve(address: address) }.start()
        guard await server.owned.first(timeout: timeout, where: { _ in true }) != nil else {
            await server.stop()
            throw TestBusError(message: "\(name) on \(address): not on the bus within \(timeout)")
        }
        return server
    }

    /// Sets a property and sends `PropertiesChanged` for it.
    public func set(_ property: String, at path: String, to value: Value) {
        actions.withLock { $0.append(.set(path: path, property: property, value: value)) }
    }

    /// Goes off the bus (its connection closed); returns once it did.
    public func leave() async {
        let before = left.count
        actions.withLock { $0.append(.leave) }
        _ = await left.first { $0 > before }
    }

    /// Comes back on a new connection with the values it had; returns once it owns the name.
    public func comeBack() async {
        let before = owned.count
        actions.withLock { $0.append(.comeBack) }
        _ = await owned.first { $0 > before }
    }

    /// Stops serving and waits for the thread to end.
    public func stop() async {
        isStopped.store(true, ordering: .relaxed)
        _ = await finished.first { _ in true }
    }

    // MARK: On the server's thread

    private func serve(address: String) {
        defer { finished.append(true) }
        var bus = connect(address)
        while !isStopped.load(ordering: .relaxed) {
            if let current = bus {
                let processed = sd_bus_process(current, nil)
                if processed < 0 { break }
                if processed > 0 { continue }
            }
            while let action = actions.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                switch action {
                case .set(let path, let property, let value):
                    let interface = objects.withLock { objects -> String? in
                        guard let index = objects.firstIndex(where: { $0.path == path }) else { return nil }
                        objects[index].properties[property] = value
                        return objects[index].interface
                    }
                    if let bus, let interface { emitChanged(bus, path: path, interface: interface, property: property, value: value) }
                case .leave:
                    if let current = bus { sd_bus_flush_close_unref(current) }
                    bus = nil
                    left.append(left.count + 1)
                case .comeBack:
                    if bus == nil { bus = connect(address) }
                }
            }
            // Wakes every 20 ms to see the tests' actions.
            if let bus { _ = sd_bus_wait(bus, 20_000) } else { usleep(20_000) }
        }
        if let bus { sd_bus_flush_close_unref(bus) }
    }

    private func connect(_ address: String) -> OpaquePointer? {
        var made: OpaquePointer?
        guard sd_bus_new(&made) >= 0, let bus = made else { return nil }
        var result = sd_bus_set_address(bus, address)
        if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
        if result >= 0 { result = sd_bus_start(bus) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        for path in Set(objects.withLock { $0.map(\.path) }) where result >= 0 {
            result = sd_bus_add_object(bus, nil, path, { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                return Unmanaged<TestPropertyServer>.fromOpaque(userdata).takeUnretainedValue().handle(message)
            }, context)
        }
        if result >= 0 { result = sd_bus_request_name(bus, name, 0) }
        guard result >= 0 else {
            sd_bus_flush_close_unref(bus)
            return nil
        }
        owned.append(owned.count + 1)
        return bus
    }

    private func handle(_ message: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_method_call(message, "org.freedesktop.DBus.Properties", "GetAll") > 0 else { return 0 }
        var text: UnsafePointer<CChar>?
        _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &text)
        let interface = text.map { String(cString: $0) } ?? ""
        let path = sd_bus_message_get_path(message).map { String(cString: $0) } ?? ""
        reads.append(path)
        guard let object = objects.withLock({ $0.first { $0.path == path && $0.interface == interface } }) else {
            var error = sd_bus_error()
            defer { sd_bus_error_free(&error) }
            _ = sd_bus_error_set(&error, "org.freedesktop.DBus.Error.UnknownInterface", "no interface \(interface) at \(path)")
            return sd_bus_reply_method_error(message, &error) >= 0 ? 1 : -1
        }
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return -1 }
        defer { sd_bus_message_unref(reply) }
        appendProperties(reply, object.properties)
        return sd_bus_send(nil, reply, nil) >= 0 ? 1 : -1
    }

    private func emitChanged(_ bus: OpaquePointer, path: String, interface: String, property: String, value: Value) {
        var signal: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &signal, path, "org.freedesktop.DBus.Properties", "PropertiesChanged") >= 0, let signal else { return }
        defer { sd_bus_message_unref(signal) }
        _ = interface.withCString { sd_bus_message_append_basic(signal, CChar(UInt8(ascii: "s")), $0) }
        appendProperties(signal, [property: value])
        _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "a")), "s")
        _ = sd_bus_message_close_container(signal)
        _ = sd_bus_send(bus, signal, nil)
    }

    /// An `a{sv}` of `properties`.
    private func appendProperties(_ message: OpaquePointer, _ properties: [String: Value]) {
        _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}")
        for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
            _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "sv")
            _ = name.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
            switch value {
            case .string(let text):
                _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "s")
                _ = text.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
            case .uint32(var number):
                _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "u")
                _ = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &number)
            case .bool(let flag):
                var value: Int32 = flag ? 1 : 0
                _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "b")
                _ = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &value)
            }
            _ = sd_bus_message_close_container(message)
            _ = sd_bus_message_close_container(message)
        }
        _ = sd_bus_message_close_container(message)
    }
}
