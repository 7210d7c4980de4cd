#include <errno.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>

#include "CAppHostShims.h"

typedef struct {
    void *context;
    apphost_host_dbus_property get;
    apphost_host_dbus_method call;
} host_object;

static int get_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void) bus; (void) path; (void) interface; (void) error;
    const host_object *object = userdata;
    return object->get(object->context, property, reply);
}

static int call_method(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void) error;
    const host_object *object = userdata;
    return object->call(object->context, sd_bus_message_get_member(message), message);
}

static void free_object(void *userdata) {
    free(userdata);
}

/* Read by anyone; the methods carry no SD_BUS_VTABLE_UNPRIVILEGED, so sd-bus lets only root
 * and the daemon's own user call them on the system bus (on a user's bus, which only that user
 * reaches, anyone). A request's end sends one PropertiesChanged for what it changed, with the
 * values; Services only as invalidated (each service's in-hook time moves on its own). */
static const sd_bus_vtable host_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("State", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Status", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("SessionLocked", "b", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("SessionLockReason", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Healthy", "b", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("HealthProblem", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Services", "a(ssbssusts)", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
    SD_BUS_PROPERTY("Network", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("NetworkExpensive", "b", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("LowPowerMode", "b", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("OnBattery", "b", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BatteryWarningLevel", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("RestartService", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT, call_method, 0),
    SD_BUS_METHOD_WITH_ARGS("EnterBackground", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", state), call_method, 0),
    SD_BUS_METHOD_WITH_ARGS("EnterForeground", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", state), call_method, 0),
    SD_BUS_METHOD_WITH_ARGS("Reload", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", id), call_method, 0),
    SD_BUS_SIGNAL_WITH_ARGS("ReloadFinished", SD_BUS_ARGS("s", id, "b", applied, "s", message), 0),
    SD_BUS_VTABLE_END
};

int apphost_host_dbus_add(void *bus, void **slot, void *context, apphost_host_dbus_property get, apphost_host_dbus_method call) {
    host_object *object = malloc(sizeof(host_object));
    if (!object) return -ENOMEM;
    object->context = context;
    object->get = get;
    object->call = call;
    sd_bus_slot *made = NULL;
    int r = sd_bus_add_object_vtable(bus, &made, "/org/apphost/Host", "org.apphost.Host1", host_vtable, object);
    if (r < 0) {
        free(object);
        return r;
    }
    sd_bus_slot_set_destroy_callback(made, free_object);
    *slot = made;
    return 0;
}
