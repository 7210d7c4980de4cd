#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
/* sd-bus's declarations; CAppHostShims defines the functions the daemon calls, loading
 * libsystemd.so.0 on first use. */
#include <systemd/sd-bus.h>
#endif
