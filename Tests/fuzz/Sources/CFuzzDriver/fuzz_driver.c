// Empty: the declaration in include/fuzz_driver.h is all this module provides.
#include "fuzz_driver.h"
