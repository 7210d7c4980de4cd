#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
    if (r < 0) return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid %s: \"%s\"", property, text);
    return 0;
}

static void free_control(void *userdata) {
    free(userdata);
}

/* As systemd's src/shared/bus-log-control-api.c. */
static const sd_bus_vtable log_control_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_WRITABLE_PROPERTY("LogLevel", "s", get_property, set_property, 0, 0),
    SD_BUS_WRITABLE_PROPERTY("LogTarget", "s", get_property, set_property, 0, 0),
    SD_BUS_PROPERTY("SyslogIdentifier", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_VTABLE_END
};

int apphost_log_control_add(void *bus, void **slot, void *context, apphost_log_control_get get, apphost_log_control_set set) {
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
