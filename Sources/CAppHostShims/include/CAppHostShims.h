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

/// Queues `signo` with `value` to `pid` (sigqueue). Returns 0 or -errno.
int apphost_sigqueue(pid_t pid, int signo, int value);

/// Gives freed heap memory back to the kernel (glibc's malloc_trim(0)). Returns 1 if memory was released.
int apphost_malloc_trim(void);


/// Unblocks only the lifecycle signals in the calling thread. Returns 0 or an errno value.
int apphost_unblock_lifecycle_signals(void);

/// 1 when `signo` is blocked in the calling thread's signal mask, 0 when not, -errno on failure.
int apphost_signal_is_blocked(int signo);

/// The kernel thread id of the calling thread (gettid).
pid_t apphost_gettid(void);

/// Queues `signo` with `value` to one thread `tid` of thread group `tgid`
/// (rt_tgsigqueueinfo with SI_QUEUE). Returns 0 or -errno.
int apphost_thread_sigqueue(pid_t tgid, pid_t tid, int signo, int value);

/// Sends `signo` to one thread `tid` of thread group `tgid` (tgkill). Returns 0 or -errno.
int apphost_tgkill(pid_t tgid, pid_t tid, int signo);

/// Installs a process-wide handler for the lifecycle signals that re-queues a signal delivered to
/// any thread (one that left it unblocked, e.g. a library thread waiting in epoll_pwait with an
/// empty mask) to thread `tid` of this process, with rt_tgsigqueueinfo (SI_QUEUE, sender pid and
/// value kept). `tid` 0 drops such signals instead of letting them terminate the process. Returns 0
/// or an errno value.
int apphost_forward_lifecycle_signals(pid_t tid);

/// Opens an eventfd (non-blocking, close-on-exec) used to wake a poll loop. Returns the fd or -1.
int apphost_open_wake_eventfd(void);

/// Names the calling thread (at most 15 bytes are kept), so `top -H` and gdb show what it is.
void apphost_set_current_thread_name(const char *name);

/// The filesystem magic (statfs f_type) of the file behind `fd`, or -errno. Glibc's Swift module
/// lacks statfs; used to tell PSI files (procfs, cgroup2) from ordinary files.
long apphost_filesystem_type(int fd);

/// Creates an anonymous memory file that can be sealed (memfd_create with MFD_ALLOW_SEALING and
/// MFD_CLOEXEC), which Glibc's Swift module lacks. Returns the fd or -errno.
int apphost_memfd_create_sealable(const char *name);

/// F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL: the seals that make a memfd's
/// content final.
int apphost_complete_seals(void);

/// Adds `seals` to the memfd `fd` (F_ADD_SEALS). Returns 0 or -errno.
int apphost_add_seals(int fd, int seals);

/// The seals of `fd` (F_GET_SEALS), or -errno (-EINVAL for a file that cannot be sealed).
int apphost_seals(int fd);

/// Receives one datagram and the fds passed with it (SCM_RIGHTS, made close-on-exec), at most
/// `capacity` of them; `*count` gets their number. Returns the bytes received or -errno. For tests
/// that stand in for systemd's notify socket.
long apphost_receive_with_fds(int socket, void *data, size_t size, int *fds, int capacity, int *count);

/// Reads a LogControl1 property (`LogLevel`, `LogTarget`, `SyslogIdentifier`) as systemd spells
/// it; the text stays valid until the next call.
typedef const char *(*apphost_log_control_get)(void *context, const char *property);
/// Writes `LogLevel` or `LogTarget`; returns 0, or -EINVAL for a value it does not take.
typedef int (*apphost_log_control_set)(void *context, const char *property, const char *value);

/// Adds org.freedesktop.LogControl1 at /org/freedesktop/LogControl1 on `bus` (an `sd_bus *`, as
/// void: the header stays free of sd-bus's names), as systemd's own daemons have it
/// (src/shared/bus-log-control-api.c): the writable properties carry no
/// SD_BUS_VTABLE_UNPRIVILEGED, so sd-bus checks a writer's privilege. `*slot` gets the
/// `sd_bus_slot *`. Returns 0 or -errno.
int apphost_log_control_add(void *bus, void **slot, void *context, apphost_log_control_get get, apphost_log_control_set set);

/// Appends the Host1 property `property` to `reply` (an `sd_bus_message *`); 0 or -errno.
typedef int (*apphost_host_dbus_property)(void *context, const char *property, void *reply);
/// Handles the Host1 method `member` of `call` (an `sd_bus_message *`): 1 when the reply will
/// come later (the call referenced), or -errno.
typedef int (*apphost_host_dbus_method)(void *context, const char *member, void *call);

/// Adds org.apphost.Host1 at /org/apphost/Host on `bus` (an `sd_bus *`): its properties for
/// anyone, its methods (RestartService, EnterBackground, EnterForeground, Reload) without
/// SD_BUS_VTABLE_UNPRIVILEGED, so sd-bus checks the caller's privilege as for LogControl1's
/// writes. `*slot` gets the `sd_bus_slot *`. Returns 0 or -errno.
int apphost_host_dbus_add(void *bus, void **slot, void *context, apphost_host_dbus_property get, apphost_host_dbus_method call);

/// A CLOCK_REALTIME timerfd (non-blocking, close-on-exec) for the time-change source. Returns
/// the fd or -errno.
int apphost_open_realtime_timerfd(void);

/// Arms `fd` for `seconds` since 1970 with TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, so a
/// set clock cancels it. Returns 0 or -errno (-ECANCELED: the clock was set since the last
/// read; the timer is armed all the same).
int apphost_arm_realtime_timerfd(int fd, int64_t seconds);

/// The inotify mask PID 1 watches /etc/localtime with (the link itself: IN_DONT_FOLLOW): its
/// attributes, a write, a move and its removal.
uint32_t apphost_localtime_watch_mask(void);

/// glibc's `tzname[index]` (0: standard time's abbreviation, 1: daylight time's) after the last
/// tzset(); Swift cannot read the global safely.
const char *apphost_tzname(int index);

/// The inotify mask for /etc while /etc/localtime is missing: a file made or moved in.
uint32_t apphost_localtime_directory_watch_mask(void);

#endif
