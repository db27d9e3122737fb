// lilv (Debian's liblilv-dev): discovers LV2 plugins, reads their descriptions and
// instantiates them. Wrapped only by StageLV2 (LilvCalls.swift).
#include <lilv/lilv.h>
