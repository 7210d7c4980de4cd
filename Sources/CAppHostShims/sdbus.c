/* sd-bus's entry points the daemon uses, resolved from libsystemd.so.0 on first use.
 *
 * sd-bus (log control, desktop notifications) is all the daemon still takes from libsystemd; the
 * notify and journal protocols it speaks itself. Linked at start, libsystemd and the six
 * libraries it pulls in (libgcrypt, liblzma, libzstd, liblz4, libcap, libgpg-error) cost every
 * exec about 0.5 ms and every instance 124 KiB of relocated data, bus or no bus. Loaded here,
 * they cost that only where a bus is used, on the thread that uses it.
 *
 * Each function below has sd-bus's own name and prototype, so callers read as sd-bus(3) says,
 * and hidden visibility, so that no library (libsystemd itself, where a test links it) binds to
 * them. Until the library loads they fail with -ENOSYS (a NULL for the unref calls, which only
 * ever get objects the library made); apphost_sd_bus_load_failure() says why it did not. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "CAppHostShims.h"

#define SD_BUS_FUNCTIONS(X)                                                                                 \
    X(int, sd_bus_open, (sd_bus **ret), (ret))                                                              \
    X(int, sd_bus_new, (sd_bus **ret), (ret))                                                               \
    X(int, sd_bus_set_address, (sd_bus *bus, const char *address), (bus, address))                          \
    X(int, sd_bus_set_bus_client, (sd_bus *bus, int b), (bus, b))                                           \
    X(int, sd_bus_start, (sd_bus *bus), (bus))                                                              \
    X(int, sd_bus_request_name, (sd_bus *bus, const char *name, uint64_t flags), (bus, name, flags))        \
    X(int, sd_bus_process, (sd_bus *bus, sd_bus_message **r), (bus, r))                                     \
    X(int, sd_bus_flush, (sd_bus *bus), (bus))                                                              \
    X(int, sd_bus_get_fd, (sd_bus *bus), (bus))                                                             \
    X(int, sd_bus_get_events, (sd_bus *bus), (bus))                                                         \
    X(int, sd_bus_get_timeout, (sd_bus *bus, uint64_t *timeout_usec), (bus, timeout_usec))                  \
    X(int, sd_bus_slot_set_destroy_callback, (sd_bus_slot *s, sd_bus_destroy_t callback), (s, callback))   \
    X(int, sd_bus_add_object_vtable,                                                                        \
      (sd_bus *bus, sd_bus_slot **slot, const char *path, const char *interface, const sd_bus_vtable *vtable, \
       void *userdata),                                                                                     \
      (bus, slot, path, interface, vtable, userdata))                                                       \
    X(int, sd_bus_message_new_method_call,                                                                  \
      (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface,  \
       const char *member),                                                                                 \
      (bus, m, destination, path, interface, member))                                                       \
    X(int, sd_bus_message_append_basic, (sd_bus_message *m, char type, const void *p), (m, type, p))        \
    X(int, sd_bus_message_open_container, (sd_bus_message *m, char type, const char *contents),             \
      (m, type, contents))                                                                                  \
    X(int, sd_bus_message_close_container, (sd_bus_message *m), (m))                                        \
    X(int, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p), (m, type, p))                \
    X(int, sd_bus_error_set, (sd_bus_error *e, const char *name, const char *message), (e, name, message))  \
    X(int, sd_bus_call,                                                                                     \
      (sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply),     \
      (bus, m, usec, ret_error, reply))

#define SD_BUS_POINTER_FUNCTIONS(X)                                                                         \
    X(sd_bus *, sd_bus_unref, (sd_bus *bus), (bus))                                                         \
    X(sd_bus *, sd_bus_flush_close_unref, (sd_bus *bus), (bus))                                             \
    X(sd_bus_slot *, sd_bus_slot_unref, (sd_bus_slot *slot), (slot))                                        \
    X(sd_bus_message *, sd_bus_message_unref, (sd_bus_message *m), (m))

#define DECLARE(type, name, parameters, arguments) static type(*loaded_##name) parameters;
SD_BUS_FUNCTIONS(DECLARE)
SD_BUS_POINTER_FUNCTIONS(DECLARE)
static void (*loaded_sd_bus_error_free)(sd_bus_error *e);
static const unsigned *loaded_vtable_format;

static pthread_once_t loading = PTHREAD_ONCE_INIT;
static char load_failure[256];

static void load(void) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(load_failure, sizeof load_failure, "%s", reason ? reason : "libsystemd.so.0 cannot be loaded");
        return;
    }
    int missing = 0;
#define RESOLVE(type, name, parameters, arguments)                                                          \
    if (!(loaded_##name = (type(*) parameters)dlsym(library, #name))) missing = 1;
    SD_BUS_FUNCTIONS(RESOLVE)
    SD_BUS_POINTER_FUNCTIONS(RESOLVE)
    if (!(loaded_sd_bus_error_free = (void (*)(sd_bus_error *))dlsym(library, "sd_bus_error_free"))) missing = 1;
    if (!(loaded_vtable_format = dlsym(library, "sd_bus_object_vtable_format"))) missing = 1;
    if (missing) {
        snprintf(load_failure, sizeof load_failure, "libsystemd.so.0 lacks sd-bus functions (systemd 243 or later is needed)");
        loaded_sd_bus_open = NULL;
        dlclose(library);
    }
}

/* Loads the library once; nonzero when sd-bus is usable. */
static int loaded(void) {
    pthread_once(&loading, load);
    return loaded_sd_bus_open != NULL;
}

const char *apphost_sd_bus_load_failure(void) { return loaded() ? NULL : load_failure; }

#pragma GCC visibility push(hidden)

#define FORWARD(type, name, parameters, arguments)                                                          \
    type name parameters { return loaded() ? loaded_##name arguments : -ENOSYS; }
SD_BUS_FUNCTIONS(FORWARD)

#define FORWARD_POINTER(type, name, parameters, arguments)                                                  \
    type name parameters { return loaded() ? loaded_##name arguments : NULL; }
SD_BUS_POINTER_FUNCTIONS(FORWARD_POINTER)

void sd_bus_error_free(sd_bus_error *e) {
    if (loaded()) loaded_sd_bus_error_free(e);
}

#pragma GCC visibility pop

const unsigned *apphost_sd_bus_vtable_format(void) { return loaded() ? loaded_vtable_format : NULL; }
