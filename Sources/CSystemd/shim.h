#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
/* libsystemd, how the daemon talks to systemd: sd-daemon (sd_notify, sd_pid_notify_with_fds,
 * sd_watchdog_enabled), sd-journal (sd_journal_sendv), sd-bus, sd-event and sd-login (sd_pid_get_user_unit). */
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>
#endif
