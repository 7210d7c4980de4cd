/// Waits until the calling task is cancelled (a run loop the host stops), with no timer and no
/// polling: an AsyncStream's iteration ends on cancellation, and nothing is ever yielded to it.
func parkUntilCancelled() async {
    let (parked, keepOpen) = AsyncStream<Never>.makeStream()
    for await _ in parked {}
    keepOpen.finish()
}
