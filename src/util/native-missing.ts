// The error of a native-only capability (training, faiss indexes, tensors…) used where the native
// backend (the N-API addon over libtorch and faiss) is not there: not built at install (no libtorch,
// faiss or compiler found), unloadable (a library gone since), or set aside with XLING_SKIP_NATIVE=1.
// One line for the user: what is missing, how to add it, what works without it.

/** How to add the native backend, in one line. */
export const NATIVE_INSTALL_HINT =
  'install libtorch and faiss (Debian: apt install libtorch-dev libfaiss-dev, or set LIBTORCH / FAISS_HOME), then build the addon with `npm rebuild xling` (in a checkout: npm run build:native)';

/** XLING_SKIP_NATIVE set to anything but '', '0' or 'false': behave as if the addon were not built. */
export function nativeSkipped(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.XLING_SKIP_NATIVE;
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}

export class NativeBackendMissing extends Error {
  /** Why the addon is not there (XLING_SKIP_NATIVE, not built, or why it failed to load). */
  readonly reason: string;
  constructor(reason: string) {
    super(
      `this needs xling's native backend (libtorch + faiss), which is not available (${reason}); ${NATIVE_INSTALL_HINT}. Without it, xling embed, xling eval xsim and xling/lite run on the portable runtime`,
    );
    this.name = 'NativeBackendMissing';
    this.reason = reason;
  }
}
