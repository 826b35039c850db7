// The signal handling of the training commands (xling train, xling distill): SIGINT/SIGTERM stop
// the job after its current step with a checkpoint (the trainer checks the signal between steps and
// in its long loops) and exit 130/143; a second signal exits at once.
import { TrainingInterrupted } from '../train/trainer.js';
import { removeTemporaries } from '../util/atomic.js';

/** The shell's 128 + signal number. */
const exitCode = (sig: NodeJS.Signals) => (sig === 'SIGTERM' ? 143 : 130);

/** Runs `job` with an abort signal that SIGINT/SIGTERM fire; `name` (e.g. 'xling train') is said on stderr. */
export async function runInterruptible(name: string, job: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
  const stop = new AbortController();
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) {
      removeTemporaries();
      process.exit(exitCode(sig));
    }
    signalled = sig;
    process.stderr.write(`\n${name}: interrupted (${sig}): stopping and writing a checkpoint (${sig} again to exit at once)\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await job(stop.signal);
  } catch (e) {
    if (!(e instanceof TrainingInterrupted) || !signalled) throw e;
    removeTemporaries();
    process.exit(exitCode(signalled));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
