/* lilv, opened when LV2 is first needed (stage_load_lilv, from LV2World): it brings serd,
 * sord and sratom, ~3 M instructions of symbol lookup at start-up that a rack without an lv2
 * unit never needs. The instance calls on the render thread (lilv_instance_run and the like)
 * are static inlines in lilv.h calling the plugin's descriptor, not lilv. The functions
 * StageRack calls, with the header's prototypes. */
/* Six take `const LilvIter *` in lilv 0.24.26 (Debian 13) where 0.24.14 (Debian 12) took
 * `LilvIter *`: the header's declarations of those are renamed away, and they are declared
 * below in the newer, const form (the same ABI either way). */
#define lilv_nodes_get stage_lilv_header_nodes_get
#define lilv_nodes_is_end stage_lilv_header_nodes_is_end
#define lilv_plugins_get stage_lilv_header_plugins_get
#define lilv_plugins_is_end stage_lilv_header_plugins_is_end
#define lilv_scale_points_get stage_lilv_header_scale_points_get
#define lilv_scale_points_is_end stage_lilv_header_scale_points_is_end
#include <lilv-0/lilv/lilv.h>
#undef lilv_nodes_get
#undef lilv_nodes_is_end
#undef lilv_plugins_get
#undef lilv_plugins_is_end
#undef lilv_scale_points_get
#undef lilv_scale_points_is_end
const LilvNode *lilv_nodes_get(const LilvNodes *c, const LilvIter *i);
bool lilv_nodes_is_end(const LilvNodes *c, const LilvIter *i);
const LilvPlugin *lilv_plugins_get(const LilvPlugins *c, const LilvIter *i);
bool lilv_plugins_is_end(const LilvPlugins *c, const LilvIter *i);
const LilvScalePoint *lilv_scale_points_get(const LilvScalePoints *c, const LilvIter *i);
bool lilv_scale_points_is_end(const LilvScalePoints *c, const LilvIter *i);

#include "load_on_use.h"
#include "loader.h"

/* The collections (nodes, plugins, scale points): begin, get, is_end, next, free. */
#define LILV_COLLECTIONS(F, V)                                                                    \
    F(LilvIter *, lilv_nodes_begin, (const LilvNodes *c), (c))                                    \
    V(lilv_nodes_free, (LilvNodes * c), (c))                                                      \
    F(const LilvNode *, lilv_nodes_get, (const LilvNodes *c, const LilvIter *i), (c, i))                \
    F(LilvNode *, lilv_nodes_get_first, (const LilvNodes *c), (c))                                \
    F(bool, lilv_nodes_is_end, (const LilvNodes *c, const LilvIter *i), (c, i))                         \
    F(LilvIter *, lilv_nodes_next, (const LilvNodes *c, LilvIter *i), (c, i))                     \
    F(LilvIter *, lilv_plugins_begin, (const LilvPlugins *c), (c))                                \
    F(const LilvPlugin *, lilv_plugins_get, (const LilvPlugins *c, const LilvIter *i), (c, i))          \
    F(const LilvPlugin *, lilv_plugins_get_by_uri, (const LilvPlugins *c, const LilvNode *uri), (c, uri)) \
    F(bool, lilv_plugins_is_end, (const LilvPlugins *c, const LilvIter *i), (c, i))                     \
    F(LilvIter *, lilv_plugins_next, (const LilvPlugins *c, LilvIter *i), (c, i))                 \
    F(LilvIter *, lilv_scale_points_begin, (const LilvScalePoints *c), (c))                       \
    V(lilv_scale_points_free, (LilvScalePoints * c), (c))                                         \
    F(const LilvScalePoint *, lilv_scale_points_get, (const LilvScalePoints *c, const LilvIter *i), (c, i)) \
    F(bool, lilv_scale_points_is_end, (const LilvScalePoints *c, const LilvIter *i), (c, i))            \
    F(LilvIter *, lilv_scale_points_next, (const LilvScalePoints *c, LilvIter *i), (c, i))

/* The world, nodes and URIs. */
#define LILV_WORLD(F, V)                                                                          \
    F(char *, lilv_file_uri_parse, (const char *uri, char **hostname), (uri, hostname))           \
    V(lilv_free, (void *ptr), (ptr))                                                              \
    F(LilvNode *, lilv_new_file_uri, (LilvWorld * w, const char *host, const char *path), (w, host, path)) \
    F(LilvNode *, lilv_new_uri, (LilvWorld * w, const char *uri), (w, uri))                       \
    F(float, lilv_node_as_float, (const LilvNode *n), (n))                                        \
    F(const char *, lilv_node_as_string, (const LilvNode *n), (n))                                \
    F(const char *, lilv_node_as_uri, (const LilvNode *n), (n))                                   \
    F(LilvNode *, lilv_node_duplicate, (const LilvNode *n), (n))                                  \
    V(lilv_node_free, (LilvNode * n), (n))                                                        \
    F(bool, lilv_node_is_float, (const LilvNode *n), (n))                                         \
    F(bool, lilv_node_is_int, (const LilvNode *n), (n))                                           \
    F(LilvNode *, lilv_world_get, (LilvWorld * w, const LilvNode *s, const LilvNode *p, const LilvNode *o), \
      (w, s, p, o))                                                                               \
    F(const LilvPlugins *, lilv_world_get_all_plugins, (const LilvWorld *w), (w))                 \
    V(lilv_world_load_all, (LilvWorld * w), (w))                                                  \
    V(lilv_world_load_bundle, (LilvWorld * w, const LilvNode *bundle_uri), (w, bundle_uri))       \
    F(int, lilv_world_load_resource, (LilvWorld * w, const LilvNode *resource), (w, resource))    \
    F(LilvWorld *, lilv_world_new, (void), ())

/* Plugins and their ports. */
#define LILV_PLUGINS(F, V)                                                                        \
    F(const LilvNode *, lilv_plugin_class_get_label, (const LilvPluginClass *c), (c))             \
    F(const LilvNode *, lilv_plugin_get_bundle_uri, (const LilvPlugin *p), (p))                   \
    F(const LilvPluginClass *, lilv_plugin_get_class, (const LilvPlugin *p), (p))                 \
    F(LilvNodes *, lilv_plugin_get_extension_data, (const LilvPlugin *p), (p))                    \
    F(uint32_t, lilv_plugin_get_latency_port_index, (const LilvPlugin *p), (p))                   \
    F(const LilvNode *, lilv_plugin_get_library_uri, (const LilvPlugin *p), (p))                  \
    F(LilvNode *, lilv_plugin_get_name, (const LilvPlugin *p), (p))                               \
    F(uint32_t, lilv_plugin_get_num_ports, (const LilvPlugin *p), (p))                            \
    F(LilvNodes *, lilv_plugin_get_optional_features, (const LilvPlugin *p), (p))                 \
    F(const LilvPort *, lilv_plugin_get_port_by_index, (const LilvPlugin *p, uint32_t index), (p, index)) \
    F(LilvNodes *, lilv_plugin_get_related, (const LilvPlugin *p, const LilvNode *type), (p, type)) \
    F(LilvNodes *, lilv_plugin_get_required_features, (const LilvPlugin *p), (p))                 \
    F(const LilvNode *, lilv_plugin_get_uri, (const LilvPlugin *p), (p))                          \
    F(bool, lilv_plugin_has_feature, (const LilvPlugin *p, const LilvNode *feature), (p, feature)) \
    F(bool, lilv_plugin_has_latency, (const LilvPlugin *p), (p))                                  \
    F(LilvInstance *, lilv_plugin_instantiate,                                                    \
      (const LilvPlugin *p, double sample_rate, const LV2_Feature *const *features), (p, sample_rate, features)) \
    V(lilv_instance_free, (LilvInstance * instance), (instance))                                  \
    F(LilvNode *, lilv_port_get_name, (const LilvPlugin *p, const LilvPort *port), (p, port))     \
    V(lilv_port_get_range, (const LilvPlugin *p, const LilvPort *port, LilvNode **def, LilvNode **min, LilvNode **max), \
      (p, port, def, min, max))                                                                   \
    F(LilvScalePoints *, lilv_port_get_scale_points, (const LilvPlugin *p, const LilvPort *port), (p, port)) \
    F(const LilvNode *, lilv_port_get_symbol, (const LilvPlugin *p, const LilvPort *port), (p, port)) \
    F(LilvNodes *, lilv_port_get_value, (const LilvPlugin *p, const LilvPort *port, const LilvNode *predicate), \
      (p, port, predicate))                                                                       \
    F(bool, lilv_port_has_property, (const LilvPlugin *p, const LilvPort *port, const LilvNode *property), \
      (p, port, property))                                                                        \
    F(bool, lilv_port_is_a, (const LilvPlugin *p, const LilvPort *port, const LilvNode *port_class), \
      (p, port, port_class))                                                                      \
    F(bool, lilv_port_supports_event, (const LilvPlugin *p, const LilvPort *port, const LilvNode *event_type), \
      (p, port, event_type))                                                                      \
    F(const LilvNode *, lilv_scale_point_get_label, (const LilvScalePoint *point), (point))       \
    F(const LilvNode *, lilv_scale_point_get_value, (const LilvScalePoint *point), (point))

/* State (presets and a unit's saved state). */
#define LILV_STATE(F, V)                                                                          \
    V(lilv_state_emit_port_values, (const LilvState *state, LilvSetPortValueFunc set_value, void *user_data), \
      (state, set_value, user_data))                                                              \
    V(lilv_state_free, (LilvState * state), (state))                                              \
    F(LilvState *, lilv_state_new_from_world, (LilvWorld * w, LV2_URID_Map * map, const LilvNode *node), \
      (w, map, node))                                                                             \
    V(lilv_state_restore,                                                                         \
      (const LilvState *state, LilvInstance *instance, LilvSetPortValueFunc set_value, void *user_data, \
       uint32_t flags, const LV2_Feature *const *features),                                       \
      (state, instance, set_value, user_data, flags, features))

#define LILV(F, V) LILV_COLLECTIONS(F, V) LILV_WORLD(F, V) LILV_PLUGINS(F, V) LILV_STATE(F, V)

STAGE_LIBRARY(lilv, LILV, "lilv", "an lv2 unit", "liblilv-0-0", "liblilv-0.so.0")
