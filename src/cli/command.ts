// A CLI subcommand: its argument spec (also its --help) and what it runs.
import { CommandSpec, defineCommand, formatHelp, parseArgs, ParsedArgs, UsageError } from '../util/args.js';

export interface CliCommand {
  /** Words after `xling`, e.g. ['eval', 'xsim']. */
  path: string[];
  spec: CommandSpec;
  run(argv: string[]): Promise<void>;
  /** Handles SIGINT/SIGTERM itself (a server's graceful shutdown) instead of the default clean-up-and-exit. */
  ownSignals?: boolean;
}

/** Builds a command whose run() parses argv by spec (printing --help when asked). */
export function command<const S extends CommandSpec>(path: string[], spec: S, run: (a: ParsedArgs<S>) => Promise<void>, o: { ownSignals?: boolean } = {}): CliCommand {
  defineCommand(spec); // refuses a malformed spec (e.g. a number option without a range) when the CLI loads
  return {
    path, spec, ownSignals: o.ownSignals,
    async run(argv) {
      const a = parseArgs(spec, argv);
      if (a.help) { process.stdout.write(formatHelp(spec) + '\n'); return; }
      await run(a);
    },
  };
}

export function usage(msg: string): never { throw new UsageError(msg); }
