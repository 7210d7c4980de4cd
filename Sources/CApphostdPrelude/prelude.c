#include "CApphostdPrelude.h"
#include "CAppHostShims.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Runs before Swift's main and before the concurrency runtime starts a thread, so every thread
// inherits the blocked mask and lifecycle signals reach only the daemon's signalfd; and so the
// environment can still be changed safely (setenv and unsetenv race with any other thread).
static int block_result = -1;
static int listen_fd_count = 0;
static char *listen_fd_names = NULL;

/// systemd's `SD_LISTEN_FDS_START`.
static const int listen_fds_start = 3;

/// Takes what systemd passed (the fd store's entries after a restart): close-on-exec, so no
/// stored fd reaches a program the daemon starts, and out of the environment, so no child
/// mistakes them for its own.
static void take_listen_fds(void) {
    listen_fd_count = apphost_claim_listen_fds(getenv("LISTEN_PID"), getenv("LISTEN_FDS"), getpid(), listen_fds_start);
    const char *names = getenv("LISTEN_FDNAMES");
    if (listen_fd_count > 0 && names != NULL) listen_fd_names = strdup(names);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
}

__attribute__((constructor)) static void apphostd_prelude(void) {
    block_result = apphost_block_lifecycle_signals();
    take_listen_fds();
}

int apphostd_prelude_block_result(void) { return block_result; }

int apphostd_prelude_listen_fds(void) { return listen_fd_count; }

const char *apphostd_prelude_listen_fd_names(void) { return listen_fd_names; }
