@testable import AppHostSystemd
import CAppHostShims
import Glibc
import Testing

@Suite struct LifecycleSignalTests {
    @Test func mapsTheSignalMap() {
        let rt = LifecycleSignal.sigrtmin
        #expect(rt == apphost_sigrtmin())
        #expect(LifecycleSignal(signalNumber: SIGTERM) == .terminate(signal: SIGTERM))
        #expect(LifecycleSignal(signalNumber: SIGINT) == .terminate(signal: SIGINT))
        #expect(LifecycleSignal(signalNumber: SIGUSR1) == .toggleBackground)
        #expect(LifecycleSignal(signalNumber: SIGHUP) == .reload)
        #expect(LifecycleSignal(signalNumber: rt + 1) == .enterBackground)
        #expect(LifecycleSignal(signalNumber: rt + 2) == .enterForeground)
        #expect(LifecycleSignal(signalNumber: rt + 18) == .trimMemory)
        #expect(LifecycleSignal(signalNumber: SIGUSR2) == nil)
        #expect(LifecycleSignal(signalNumber: rt + 3) == nil)
    }

    @Test func signalNumbersRoundTrip() {
        for number in LifecycleSignal.allSignalNumbers {
            #expect(LifecycleSignal(signalNumber: number)?.signalNumber == number)
        }
        #expect(Set(LifecycleSignal.allSignalNumbers).count == 7)
    }

    @Test func namesAreTheConventionalOnes() {
        #expect(LifecycleSignal.terminate(signal: SIGTERM).name == "SIGTERM")
        #expect(LifecycleSignal.terminate(signal: SIGINT).name == "SIGINT")
        #expect(LifecycleSignal.toggleBackground.name == "SIGUSR1")
        #expect(LifecycleSignal.reload.name == "SIGHUP")
        #expect(LifecycleSignal.enterBackground.name == "SIGRTMIN+1")
        #expect(LifecycleSignal.enterForeground.name == "SIGRTMIN+2")
        #expect(LifecycleSignal.trimMemory.name == "SIGRTMIN+18")
        #expect(LifecycleSignal.name(of: 0) == "signal 0")
    }

    @Test func blockingIsVisibleInTheThreadThatBlocked() throws {
        let (before, after, unblocked) = try onFreshThread { () throws -> (Bool, Bool, Bool) in
            _ = apphost_unblock_lifecycle_signals()
            let before = LifecycleSignalMask.areBlockedInCurrentThread
            try LifecycleSignalMask.blockInCurrentThread()
            let after = LifecycleSignalMask.areBlockedInCurrentThread
            _ = apphost_unblock_lifecycle_signals()
            return (before, after, LifecycleSignalMask.unblockedInCurrentThread.count == 7)
        }
        #expect(!before)
        #expect(after)
        #expect(unblocked)
    }
}
