import Glibc

/// The pid of a process that ran `/bin/true` and was reaped: no process has it (until the
/// kernel hands it out again, far later), as a writer a kill cut short.
public func exitedProcessID() -> pid_t {
    var child = pid_t()
    var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
    defer { free(argv[0]) }
    guard posix_spawn(&child, "/bin/true", nil, nil, &argv, nil) == 0 else { return -1 }
    var status: Int32 = 0
    waitpid(child, &status, 0)
    return child
}
