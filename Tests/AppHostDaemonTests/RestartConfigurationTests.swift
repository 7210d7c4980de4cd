import AppHost
import Testing
@testable import AppHostDaemon

/// A service's restart keys: read, defaulted, and every mistake refused with what to write.
@Suite struct RestartConfigurationTests {
    let loader = ConfigurationLoader(registry: makeTestRegistry(), environment: ["STATE_DIRECTORY": "/var/lib/apphostd"])

    func load(_ entry: String) throws -> DaemonConfiguration {
        try loader.load(text: "services:\n  - name: logger\n" + entry, file: "r.yaml")
    }

    func problems(_ entry: String) -> [String] {
        do {
            _ = try load(entry)
            return []
        } catch let invalid as InvalidConfiguration {
            return invalid.errors.map { "\($0.keyPath): \($0.message) (\($0.hint ?? ""))" }
        } catch {
            return ["\(error)"]
        }
    }

    @Test("without restart keys a service is never restarted, and the descriptor says so")
    func theDefaultIsTemporary() throws {
        let configuration = try loader.load(text: "services:\n  - logger\n", file: "r.yaml")
        #expect(configuration.services[0].restart == .temporary)
        #expect(configuration.services[0].descriptor(registry: makeTestRegistry()).restart == .temporary)
    }

    @Test("every restart key is read")
    func everyKeyIsRead() throws {
        let configuration = try load("""
                restart: transient
                restart-scope: instance
                restart-delay: 250ms
                restart-delay-max: 10s
                restart-intensity: 3 in 2m

            """)
        let policy = RestartPolicy(mode: .transient, scope: .instance, delay: .milliseconds(250), maximumDelay: .seconds(10), intensity: 3, period: .seconds(120))
        #expect(configuration.services[0].restart == policy)
        #expect(configuration.services[0].descriptor(registry: makeTestRegistry()).restart == policy)
    }

    @Test("a restart-delay longer than the default maximum raises the maximum to it")
    func aLongDelayRaisesTheMaximum() throws {
        let configuration = try load("    restart: permanent\n    restart-delay: 1m\n")
        #expect(configuration.services[0].restart.maximumDelay == .seconds(60))
    }

    @Test("a composite's children each have their own policy")
    func compositeChildren() throws {
        let configuration = try loader.load(text: """
            services:
              - name: notify
                first-of:
                  - name: logger
                    restart: permanent
                  - name: analytics
            """, file: "r.yaml")
        let children = try #require(configuration.services[0].composite?.children)
        #expect(children.map(\.restart.mode) == [.permanent, .temporary])
        #expect(problems("") == [])
        let onComposite = (try? loader.load(text: "services:\n  - name: notify\n    restart: permanent\n    first-of:\n      - logger\n", file: "r.yaml")) == nil
        #expect(onComposite, "a first-of has no run loop of its own")
    }

    @Test("mistakes are refused, each with what to write", arguments: [
        ("    restart: always\n", "services[0].restart: \"always\" is not valid (expected one of permanent, transient, temporary)"),
        ("    restart: transient\n    restart-scope: process\n", "services[0].restart-scope: \"process\" is not valid (expected one of run-loop, instance)"),
        ("    restart: transient\n    restart-delay: 0s\n", "services[0].restart-delay: 0s is out of range"),
        ("    restart: transient\n    restart-delay: -1s\n", "services[0].restart-delay: \"-1s\" is negative"),
        ("    restart: transient\n    restart-delay: 2s\n    restart-delay-max: 1s\n", "services[0].restart-delay-max: 1s is shorter than restart-delay (2s)"),
        ("    restart: transient\n    restart-intensity: 5\n", "services[0].restart-intensity: expected a count and a window, found an integer"),
        ("    restart: transient\n    restart-intensity: five in 60s\n", "services[0].restart-intensity: \"five in 60s\" is not a count and a window"),
        ("    restart: transient\n    restart-intensity: 5 in 1e300s\n", "services[0].restart-intensity: \"5 in 1e300s\" is not a count and a window"),
        ("    restart: transient\n    restart-intensity: 5000 in 60s\n", "services[0].restart-intensity: \"5000 in 60s\" is not a count and a window"),
        ("    restart-delay: 1s\n", "services[0].restart-delay: restart-delay has no effect: the service is never restarted"),
        ("    restrat: transient\n", "services[0].restrat: unknown key"),
    ])
    func mistakes(entry: String, expected: String) {
        let found = problems(entry)
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix(expected) == true, "\(found)")
    }
}
