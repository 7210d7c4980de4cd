#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "CAppHostShims.h"

typedef struct {
    void *context;
    apphost_log_control_get get;
    apphost_log_control_set set;
} log_control;

static int get_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void) bus; (void) path; (void) interface; (void) error;
    const log_control *control = userdata;
    const char *value = control->get(control->context, property);
    return sd_bus_message_append_basic(reply, 's', value ? value : "");
}

static int set_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *value, void *userdata, sd_bus_error *error) {
    (void) bus; (void) path; (void) interface;
    const log_control *control = userdata;
    const char *text = NULL;
    int r = sd_bus_message_read_basic(value, 's', &text);
    if (r < 0) return r;
    r = control->set(control->context, property, text);
    if (r < 0) {
        char message[256];
        snprintf(message, sizeof message, "Invalid %s: \"%s\"", property, text);
        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, message);
    }
    return 0;
}

static void free_control(void *userdata) {
    free(userdata);
}

/* As systemd's src/shared/bus-log-control-api.c: no SD_BUS_VTABLE_UNPRIVILEGED, so sd-bus
 * checks the caller's privilege before a write. Its first element is SD_BUS_VTABLE_START's, with
 * the format reference libsystemd gives once loaded (the macro would link to it). */
static sd_bus_vtable log_control_vtable[] = {
    {.type = _SD_BUS_VTABLE_START, .flags = 0,
     .x = {.start = {.element_size = sizeof(sd_bus_vtable), .features = _SD_BUS_VTABLE_PARAM_NAMES}}},
    SD_BUS_WRITABLE_PROPERTY("LogLevel", "s", get_property, set_property, 0, 0),
    SD_BUS_WRITABLE_PROPERTY("LogTarget", "s", get_property, set_property, 0, 0),
    SD_BUS_PROPERTY("SyslogIdentifier", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_VTABLE_END
};
static pthread_once_t vtable_completion = PTHREAD_ONCE_INIT;

static void complete_vtable(void) {
    log_control_vtable[0].x.start.vtable_format_reference = apphost_sd_bus_vtable_format();
}

int apphost_log_control_add(void *bus, void **slot, void *context, apphost_log_control_get get, apphost_log_control_set set) {
    pthread_once(&vtable_completion, complete_vtable);
    if (!log_control_vtable[0].x.start.vtable_format_reference) return -ENOSYS;
    log_control *control = malloc(sizeof(log_control));
    if (!control) return -ENOMEM;
    control->context = context;
    control->get = get;
    control->set = set;
    sd_bus_slot *made = NULL;
    int r = sd_bus_add_object_vtable(bus, &made, "/org/freedesktop/LogControl1", "org.freedesktop.LogControl1",
                                     log_control_vtable, control);
    if (r < 0) {
        free(control);
        return r;
    }
    sd_bus_slot_set_destroy_callback(made, free_control);
    *slot = made;
    return 0;
}
