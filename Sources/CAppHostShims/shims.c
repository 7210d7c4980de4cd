#define _GNU_SOURCE
#include "CAppHostShims.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

int apphost_sigrtmin(void) { return SIGRTMIN; }
int apphost_sigrtmax(void) { return SIGRTMAX; }

void apphost_lifecycle_signal_set(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGRTMIN + 1);
    sigaddset(set, SIGRTMIN + 2);
    sigaddset(set, SIGRTMIN + 18);
}

int apphost_block_lifecycle_signals(void) {
    sigset_t set;
    apphost_lifecycle_signal_set(&set);
    return pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int apphost_unblock_all_signals(void) {
    sigset_t set;
    sigemptyset(&set);
    return pthread_sigmask(SIG_SETMASK, &set, NULL);
}

int apphost_sigqueue(pid_t pid, int signo, int value) {
    union sigval v;
    memset(&v, 0, sizeof v);
    v.sival_int = value;
    return sigqueue(pid, signo, v) == 0 ? 0 : -errno;
}

int apphost_malloc_trim(void) { return malloc_trim(0); }

int apphost_unblock_lifecycle_signals(void) {
    sigset_t set;
    apphost_lifecycle_signal_set(&set);
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int apphost_signal_is_blocked(int signo) {
    sigset_t current;
    int rc = pthread_sigmask(SIG_BLOCK, NULL, &current);
    if (rc != 0) return -rc;
    int member = sigismember(&current, signo);
    return member < 0 ? -errno : member;
}

pid_t apphost_gettid(void) { return (pid_t)syscall(SYS_gettid); }

int apphost_thread_sigqueue(pid_t tgid, pid_t tid, int signo, int value) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = signo;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_uid = getuid();
    info.si_value.sival_int = value;
    return syscall(SYS_rt_tgsigqueueinfo, tgid, tid, signo, &info) == 0 ? 0 : -errno;
}

int apphost_tgkill(pid_t tgid, pid_t tid, int signo) {
    return syscall(SYS_tgkill, tgid, tid, signo) == 0 ? 0 : -errno;
}

static pid_t apphost_forward_target = 0;

static void apphost_forward_handler(int signo, siginfo_t *info, void *context) {
    (void)context;
    int saved = errno;
    pid_t tid = __atomic_load_n(&apphost_forward_target, __ATOMIC_RELAXED);
    if (tid > 0 && info != NULL) {
        siginfo_t copy = *info;
        // The kernel lets a thread other than the group leader queue only negative codes.
        copy.si_code = SI_QUEUE;
        syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, signo, &copy);
    }
    errno = saved;
}

int apphost_forward_lifecycle_signals(pid_t tid) {
    __atomic_store_n(&apphost_forward_target, tid, __ATOMIC_RELAXED);
    sigset_t set;
    apphost_lifecycle_signal_set(&set);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = apphost_forward_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&action.sa_mask);
    for (int signo = 1; signo < NSIG; signo++) {
        if (sigismember(&set, signo) != 1) continue;
        if (sigaction(signo, &action, NULL) != 0) return errno;
    }
    return 0;
}

int apphost_open_wake_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

void apphost_set_current_thread_name(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = '\0';
    pthread_setname_np(pthread_self(), shortened);
}

long apphost_filesystem_type(int fd) {
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return -errno;
    return (long)info.f_type;
}

int apphost_memfd_create_sealable(const char *name) {
    int fd = memfd_create(name, MFD_ALLOW_SEALING | MFD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int apphost_complete_seals(void) { return F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL; }

int apphost_add_seals(int fd, int seals) { return fcntl(fd, F_ADD_SEALS, seals) == 0 ? 0 : -errno; }

int apphost_seals(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    return seals >= 0 ? seals : -errno;
}

long apphost_receive_with_fds(int socket, void *data, size_t size, int *fds, int capacity, int *count) {
    *count = 0;
    if (capacity < 0 || capacity > 253) return -EINVAL;
    struct iovec vector = {.iov_base = data, .iov_len = size};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * 253)];
    } control;
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = &control;
    message.msg_controllen = sizeof control;
    ssize_t received;
    do {
        received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return -errno;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int passed = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        const int *passed_fds = (const int *)CMSG_DATA(header);
        for (int i = 0; i < passed; i++) {
            if (*count < capacity) {
                fds[(*count)++] = passed_fds[i];
            } else {
                close(passed_fds[i]);
            }
        }
    }
    return (long)received;
}

int apphost_open_realtime_timerfd(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int apphost_arm_realtime_timerfd(int fd, int64_t seconds) {
    struct itimerspec value = { .it_value = { .tv_sec = (time_t)seconds } };
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &value, NULL) < 0 ? -errno : 0;
}

uint32_t apphost_localtime_watch_mask(void) {
    return IN_ATTRIB | IN_MOVE_SELF | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_DONT_FOLLOW;
}

const char *apphost_tzname(int index) {
    return tzname[index ? 1 : 0];
}

uint32_t apphost_localtime_directory_watch_mask(void) {
    return IN_CREATE | IN_MOVED_TO | IN_ONLYDIR;
}
