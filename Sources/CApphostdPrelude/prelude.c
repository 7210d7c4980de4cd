#include "CApphostdPrelude.h"
#include "CAppHostShims.h"

// Runs before Swift's main and before the concurrency runtime starts a thread, so every thread
// inherits the blocked mask and lifecycle signals reach only the daemon's signalfd.
static int block_result = -1;

__attribute__((constructor)) static void apphostd_prelude(void) {
    block_result = apphost_block_lifecycle_signals();
}

int apphostd_prelude_block_result(void) { return block_result; }
