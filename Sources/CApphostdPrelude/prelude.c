#include "CApphostdPrelude.h"
#include "CAppHostShims.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

// Runs before Swift's main and before the concurrency runtime starts a thread, so every thread
// inherits the blocked mask and lifecycle signals reach only the daemon's signalfd; and so the
// environment can still be changed safely (sd_listen_fds' unsetenv races with any other thread).
static int block_result = -1;
static int listen_fd_count = 0;
static char *listen_fd_names = NULL;

/// `names` joined with ':' (none of them holds one: sd_listen_fds_with_names split on it).
static char *joined(char **names) {
    size_t length = 1;
    for (char **name = names; *name != NULL; name++) length += strlen(*name) + 1;
    char *text = calloc(length, 1);
    if (text == NULL) return NULL;
    for (char **name = names; *name != NULL; name++) {
        if (name != names) strcat(text, ":");
        strcat(text, *name);
    }
    return text;
}

/// Takes what systemd passed (the fd store's entries after a restart) with
/// sd_listen_fds_with_names: close-on-exec, so no stored fd reaches a program the daemon starts,
/// and out of the environment, so no child mistakes them for its own. When `$LISTEN_FDNAMES`
/// names more or fewer fds than came (-EINVAL), the fds are still the daemon's: they keep the
/// names given, by position, and "unknown" past them (ReceivedFileDescriptors).
static void take_listen_fds(void) {
    const char *given = getenv("LISTEN_FDNAMES");
    char *given_copy = given != NULL ? strdup(given) : NULL;
    int count = sd_listen_fds(0);
    char **names = NULL;
    int result = sd_listen_fds_with_names(1, &names);
    if (result > 0) {
        listen_fd_count = result;
        listen_fd_names = joined(names);
    } else if (result == -EINVAL && count > 0) {
        listen_fd_count = count;
        listen_fd_names = given_copy;
        given_copy = NULL;
    }
    if (names != NULL) {
        for (char **name = names; *name != NULL; name++) free(*name);
        free(names);
    }
    free(given_copy);
}

__attribute__((constructor)) static void apphostd_prelude(void) {
    block_result = apphost_block_lifecycle_signals();
    take_listen_fds();
}

int apphostd_prelude_block_result(void) { return block_result; }

int apphostd_prelude_listen_fds(void) { return listen_fd_count; }

const char *apphostd_prelude_listen_fd_names(void) { return listen_fd_names; }
