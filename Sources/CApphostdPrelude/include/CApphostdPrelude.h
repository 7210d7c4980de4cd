#ifndef CAPPHOSTDPRELUDE_H
#define CAPPHOSTDPRELUDE_H
/// 0 when the constructor blocked the lifecycle signals before main; an errno value otherwise.
int apphostd_prelude_block_result(void);

/// How many fds systemd passed this process (`$LISTEN_FDS` when `$LISTEN_PID` is this process),
/// from fd 3 on. The constructor made them close-on-exec and removed `LISTEN_PID`, `LISTEN_FDS`
/// and `LISTEN_FDNAMES` from the environment before any thread existed; the daemon owns them.
int apphostd_prelude_listen_fds(void);

/// `$LISTEN_FDNAMES` as it was (the fds' names, separated by `:`), or NULL when unset or when no
/// fd came.
const char *apphostd_prelude_listen_fd_names(void);
#endif
