// Whether the native backend (the addon over libtorch and faiss) is there, for the layers above
// that choose a runtime (the CLI runs xling embed on xling/lite without it). Loads it if it can.
export { nativeAvailable, nativeProblem } from '../native.js';
export { NativeBackendMissing, NATIVE_INSTALL_HINT, nativeSkipped } from '../util/native-missing.js';
