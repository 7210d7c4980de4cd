import AppHost
import ServerFrameworkNames
import Testing

/// AppHost beside a server framework: the framework's type names stay unambiguous.
struct EcosystemNameTests {
    struct Greeter: ApplicationService {
        func applicationDidBecomeActive(_ application: HostedApplication) async throws {}
    }

    @Test("Application, Request, Response, Router and Environment mean the server framework's types next to import AppHost")
    func serverFrameworkNamesStayUnambiguous() throws {
        let application = Application()
        let exchange = (Request(), Response())
        let setup = (Router(), Environment())
        let host = try PluggableApplicationHost(services: [ServiceDescriptor(name: "greeter", service: Greeter())])
        #expect(type(of: application) == ServerFrameworkNames.Application.self)
        #expect(type(of: exchange.0) == ServerFrameworkNames.Request.self)
        #expect(type(of: setup.1) == ServerFrameworkNames.Environment.self)
        #expect(host.serviceNames == ["greeter"])
    }
}
