// libFuzzer's driver, called from each fuzz target's main (SwiftPM gives every executable
// its own main, so libFuzzer's is not used). Provided by -sanitize=fuzzer.
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
