#ifndef CAPPHOSTDPRELUDE_H
#define CAPPHOSTDPRELUDE_H
/// 0 when the constructor blocked the lifecycle signals before main; an errno value otherwise.
int apphostd_prelude_block_result(void);

/// How many fds systemd passed this process (`sd_listen_fds_with_names`), from fd 3 on. The
/// constructor made them close-on-exec and removed `LISTEN_PID`, `LISTEN_FDS` and
/// `LISTEN_FDNAMES` from the environment before any thread existed; the daemon owns them.
int apphostd_prelude_listen_fds(void);

/// The fds' names separated by `:` (`unknown` for each when `$LISTEN_FDNAMES` was unset; as
/// given when it named a different number of fds), or NULL when no fd came.
const char *apphostd_prelude_listen_fd_names(void);
#endif
