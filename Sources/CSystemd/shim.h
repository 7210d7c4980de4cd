#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
/* sd-bus, for the tests' stand-in notification server only: the daemon speaks D-Bus itself
 * (AppHostSystemd's BusConnection) and links no libsystemd. */
#include <systemd/sd-bus.h>
#endif
