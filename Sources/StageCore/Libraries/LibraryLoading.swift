/// Runs one of CLoadOnUse's `stage_load_X(char *error, size_t size)` (a library opened when
/// a feature first needs it) and returns nil when the library is open, else its sentence for
/// the user (which library, the apt package, the files tried). Each layer keeps the answer in
/// a `static let`, so the library is opened once, where the feature starts. Thread: a control
/// or main thread (opening a library reads files), never the render thread.
public func libraryLoadFailure(_ load: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> String? {
    var message = [CChar](repeating: 0, count: 1024)
    let status = message.withUnsafeMutableBufferPointer { load($0.baseAddress!, $0.count) }
    guard status != 0 else { return nil }
    return message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
