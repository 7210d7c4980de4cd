import AppHostTestKit
import Testing

@testable import AppHostDaemon

/// A daemon whose service group failed exits non-zero, with the reason in the journal, so
/// `Restart=on-failure` and an operator see a failure.
@Suite struct DaemonExitStatusTests {
    @Test("a failed group turns a clean terminate into 70; a failed launch stays 1; no failure leaves 0", arguments: [
        (AppHostDaemon.ExitStatus.clean, String?("ServiceGroupError: … Service failed(memory-pressure)"), AppHostDaemon.ExitStatus.software),
        (.launchFailed, "ServiceGroupError: …", .launchFailed),
        (.clean, nil, .clean),
    ])
    func groupFailureExitStatus(_ status: AppHostDaemon.ExitStatus, _ failure: String?, _ expected: AppHostDaemon.ExitStatus) async {
        let logs = CapturedLogs()
        #expect(Daemon.exitStatus(status, groupFailure: failure, logger: logs.logger()) == expected)
        if expected == .software {
            let line = await logs.first { $0.level == .error }
            #expect(line?.message == "exiting with status 70: the daemon's service group failed: \(failure ?? "")")
        }
    }
}
