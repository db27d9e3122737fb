/* Opening a library described by loader.h: the sonames in order, every function resolved,
 * or one sentence saying what is missing and how to install it. Thread: the caller's
 * (inside pthread_once). */
#include "loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends to `message` (always NUL-terminated, cut when full). */
static void append(StageLibrary *library, const char *text) {
    size_t used = strlen(library->message);
    if (used + 1 < sizeof library->message)
        snprintf(library->message + used, sizeof library->message - used, "%s", text);
}

static void clear_slots(const StageLibrary *library) {
    for (size_t i = 0; i < library->count; i++) *library->symbols[i].slot = NULL;
}

/* Resolves every function from `handle`; the name of the first one missing, or NULL. */
static const char *resolve(const StageLibrary *library, void *handle) {
    for (size_t i = 0; i < library->count; i++) {
        void *address = dlsym(handle, library->symbols[i].name);
        if (!address) return library->symbols[i].name;
        *library->symbols[i].slot = address;
    }
    return NULL;
}

void stage_library_open(StageLibrary *library) {
    char last[512] = "";
    for (const char *const *soname = library->sonames; *soname; soname++) {
        /* RTLD_NOW: every symbol bound here, so no lazy binding runs later on the render
         * thread; RTLD_LOCAL: the library's symbols stay out of the global scope. */
        void *handle = dlopen(*soname, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            snprintf(last, sizeof last, "%s", dlerror());
            continue;
        }
        const char *missing = resolve(library, handle);
        if (!missing) return;
        clear_slots(library);
        snprintf(last, sizeof last, "%s has no %s", *soname, missing);
        dlclose(handle);
    }
    library->failed = 1;
    snprintf(library->message, sizeof library->message, "%s needs %s (apt install %s): tried ",
             library->feature, library->name, library->package);
    for (const char *const *soname = library->sonames; *soname; soname++) {
        if (soname != library->sonames) append(library, ", ");
        append(library, *soname);
    }
    append(library, ": ");
    append(library, last);
}

int stage_library_result(const StageLibrary *library, char *error, size_t size) {
    if (!library->failed) return 0;
    if (error && size > 0) snprintf(error, size, "%s", library->message);
    return -1;
}

void stage_library_not_loaded(const char *function) {
    fprintf(stderr, "stagerack: %s called before its library was loaded (a stage_load_* call is missing: a bug)\n",
            function);
    abort();
}
