/// One lifecycle signal as the kernel delivered it, with who sent it: for logs like
/// "SIGTERM from pid 1" and for tests that check order through the queued value.
public struct SignalDelivery: Sendable, Hashable {
    /// What the signal asks for.
    public let signal: LifecycleSignal
    /// The sender's pid (`ssi_pid`); 0 when the kernel sent it.
    public let senderPID: UInt32
    /// `si_code`: `SI_USER` (0) for kill, `SI_QUEUE` (-1) for sigqueue, `SI_TKILL` (-6) for tgkill.
    public let code: Int32
    /// The integer queued with sigqueue (`ssi_int`); 0 for kill.
    public let value: Int32

    /// Creates a delivery record; the reader thread makes these from signalfd records.
    public init(signal: LifecycleSignal, senderPID: UInt32, code: Int32, value: Int32) {
        self.signal = signal
        self.senderPID = senderPID
        self.code = code
        self.value = value
    }
}
