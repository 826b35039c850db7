// Long computations on the main thread await this now and then, so that the event loop runs: a
// signal handler (Ctrl-C stops a command at the next pause), timers, finalizers.

/** Resolves after the events already queued have run. */
export function pause(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
