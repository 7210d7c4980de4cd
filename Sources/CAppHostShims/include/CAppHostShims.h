#ifndef CAPPHOSTSHIMS_H
#define CAPPHOSTSHIMS_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/// The value of SIGRTMIN, which Swift cannot import because it is a function-like macro.
int apphost_sigrtmin(void);
/// The value of SIGRTMAX.
int apphost_sigrtmax(void);

/// Fills `set` with the signals apphostd turns into lifecycle events:
/// SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGRTMIN+1, SIGRTMIN+2 and SIGRTMIN+18.
void apphost_lifecycle_signal_set(sigset_t *set);

/// Blocks the lifecycle signals in the calling thread (and every thread it creates later).
/// Returns 0 or an errno value.
int apphost_block_lifecycle_signals(void);

/// Unblocks every signal in the calling thread; used before exec in children.
int apphost_unblock_all_signals(void);

/// Opens a non-blocking, close-on-exec signalfd for the lifecycle signals. Returns the fd or -1.
int apphost_open_lifecycle_signalfd(void);

/// One signal read from a signalfd.
typedef struct apphost_signal_info {
    int32_t signo;
    int32_t code;
    uint32_t pid;
    int32_t value;
} apphost_signal_info;

/// Reads up to `capacity` signals from a signalfd into `out`. Returns the count, 0 when none is
/// pending (EAGAIN), or -errno.
int apphost_read_signals(int fd, apphost_signal_info *out, int capacity);

/// Queues `signo` with `value` to `pid` (sigqueue). Returns 0 or -errno.
int apphost_sigqueue(pid_t pid, int signo, int value);

/// Gives freed heap memory back to the kernel (glibc's malloc_trim(0)). Returns 1 if memory was released.
int apphost_malloc_trim(void);

#endif
