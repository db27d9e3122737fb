import CFuzzDriver

#if canImport(Glibc)
import Glibc
#endif

// libFuzzer runs the target with its usual flags (corpus folders, -max_total_time, ...).
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzSync(data, size) })
