import AppHost
import Testing
@testable import AppHostDaemon

/// `first-of:`, `one-of:` and `group:` entries in the config file.
@Suite("Composite configuration")
struct CompositeConfigurationTests {
    static let text = """
        services:
          - logger
          - name: notify
            required: true
            first-of:
              - name: desktop
                type: notification
              - name: journal
                type: logger
          - name: backup
            one-of:
              - name: local
                type: checked
                settings: {count: 2}
              - name: remote
                type: checked
            select: {environment: BACKUP_MODE, default: local}
          - name: sync
            group:
              - analytics
              - name: lock
                type: session-lock
                required: true
                deadline: 2s

        """

    func load(_ environment: [String: String] = [:]) throws -> DaemonConfiguration {
        try ConfigurationLoader(registry: makeTestRegistry(), environment: environment).load(text: Self.text, file: "f")
    }

    @Test("composites load with their kinds, children and flags; check's outline names them")
    func compositesLoad() throws {
        let configuration = try load()
        #expect(configuration.services.map(\.outline) == [
            "logger", "notify (first-of: desktop, journal)", "backup (one-of: local, by BACKUP_MODE not set, the default)", "sync (group: analytics, lock)",
        ])
        let descriptors = configuration.serviceDescriptors(registry: makeTestRegistry())
        #expect(descriptors[1].composite?.kind == .firstOf && descriptors[1].isRequired)
        let sync = try #require(descriptors[3].composite)
        #expect(sync.kind == .group && sync.children.map(\.isRequired) == [false, true])
        #expect(sync.children[1].deadline == .seconds(2))
        #expect(try PluggableApplicationHost(services: descriptors, logger: .init(label: "t")).status.services.map(\.name) == [
            "logger", "notify/desktop", "notify/journal", "backup/local", "sync/analytics", "sync/lock",
        ])
    }

    @Test("a one-of chooses from the environment variable its select: names, else its default")
    func oneOfReadsTheEnvironment() throws {
        #expect(try load(["BACKUP_MODE": "remote"]).services[2].composite?.kind == .oneOf(chosen: "remote", reason: "BACKUP_MODE=remote"))
        #expect(try load().services[2].composite?.kind == .oneOf(chosen: "local", reason: "BACKUP_MODE not set, the default"))
        let refused = configurationErrors { () throws(InvalidConfiguration) in try ConfigurationLoader(registry: makeTestRegistry(), environment: ["BACKUP_MODE": "cloud"]).load(text: Self.text, file: "f") }
        #expect(refused?.first.description.contains("services[2].select.environment: BACKUP_MODE=cloud: \"cloud\" is no child of this one-of") == true, "\(String(describing: refused))")
    }

    @Test("every problem of a composite at once, each with its line and key")
    func everyProblemAtOnce() throws {
        let text = """
            services:
              - name: notify
                first-of:
                  - name: desktop
                    type: notificaton
                    required: true
                  - logger
                  - logger
              - name: backup
                one-of: []
                select: cloud
              - group:
                  - analytics

            """
        let errors = try #require(configurationErrors { () throws(InvalidConfiguration) in
            try ConfigurationLoader(registry: makeTestRegistry(), environment: [:]).load(text: text, file: "f")
        })
        #expect(errors.errors.map { "\($0.line.map(String.init) ?? "-") \($0.keyPath)" } == [
            "5 services[0].first-of[0].type", "6 services[0].first-of[0].required", "8 services[0].first-of[2]",
            "10 services[1].one-of", "12 services[2]",
        ], "\(errors)")
    }
}
