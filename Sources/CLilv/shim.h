// lilv (Debian's liblilv-dev): discovers LV2 plugins, reads their descriptions and
// instantiates them. Wrapped only by StageLV2 (LilvCalls.swift).
// The header by its full path: the target has no pkg-config flags (it links nothing; lilv
// is opened on first use, Sources/CLoadOnUse).
#include <lilv-0/lilv/lilv.h>
