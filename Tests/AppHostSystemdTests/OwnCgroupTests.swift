import AppHostTestSupport
import Foundation
import Testing

@testable import AppHostSystemd

@Suite struct OwnCgroupTests {
    func files(own: String, manager: String) throws -> (own: String, manager: String) {
        let directory = try makeTemporaryDirectory("apphost-cgroup")
        try "0::\(own)\n".write(toFile: directory + "/self", atomically: true, encoding: .utf8)
        try "0::\(manager)\n".write(toFile: directory + "/init", atomically: true, encoding: .utf8)
        return (directory + "/self", directory + "/init")
    }

    @Test("a path is shifted below the manager's cgroup as systemd shifts it: a container without a cgroup namespace sees what one with it sees")
    func pathsAreShiftedBelowTheManager() throws {
        let container = try files(own: "/machine.slice/machine-kiosk.scope/user.slice/user-1000.slice/user@1000.service/app.slice/a.service", manager: "/machine.slice/machine-kiosk.scope/init.scope")
        #expect(OwnCgroup.pathBelowManager(cgroupFile: container.own, managerCgroupFile: container.manager) == "/user.slice/user-1000.slice/user@1000.service/app.slice/a.service")
        let host = try files(own: "/system.slice/apphostd.service", manager: "/init.scope")
        #expect(OwnCgroup.pathBelowManager(cgroupFile: host.own, managerCgroupFile: host.manager) == "/system.slice/apphostd.service")
        #expect(OwnCgroup.pathBelowManager(cgroupFile: host.own, managerCgroupFile: "/nonexistent") == "/system.slice/apphostd.service", "PID 1's cgroup unreadable")
    }
}
