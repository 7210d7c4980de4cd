import CAppHostShims

/// Gives freed heap pages back to the kernel after a memory warning, so pressure actually drops
/// (glibc keeps freed memory in its arenas otherwise).
public enum HeapTrimmer {
    /// Calls `malloc_trim(0)`. Returns whether any memory was released.
    @discardableResult
    public static func trim() -> Bool {
        apphost_malloc_trim() != 0
    }
}
