extension DBusConnection {
    /// What became of the connection, told to its owner on the loop's thread.
    package enum Event {
        /// The bus went away after the owner had it working (`markEstablished`); a new
        /// connection follows.
        case lost(reason: String)
        /// It went away before the owner had it working (a bus that drops the connection): no
        /// new one is made.
        case endedBeforeEstablished(reason: String)
        /// A new connection could not be made, or went away before the owner had it working;
        /// the next try is after `retryIn`.
        case reconnectFailed(reason: String, retryIn: Duration)
        /// No further try can be scheduled (the event loop refused a timer): the connection
        /// stays gone.
        case gaveUp(reason: String)
    }
}
