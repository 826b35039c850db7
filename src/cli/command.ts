// A CLI subcommand: its argument spec (also its --help) and what it runs.
import { CommandSpec, defineCommand, formatHelp, OptionDef, parseArgs, ParsedArgs, UsageError } from '../util/args.js';
import { requireNative } from '../tensor/backend.js';

export interface CliCommand {
  /** Words after `xling`, e.g. ['eval', 'xsim']. */
  path: string[];
  spec: CommandSpec;
  run(argv: string[]): Promise<void>;
  /** Handles SIGINT/SIGTERM itself (a server's graceful shutdown) instead of the default clean-up-and-exit. */
  ownSignals?: boolean;
}

/**
 * One spelling per concept across commands, applied to every command's spec here: the output is
 * `-o, --output` (an option named `out` is shown as --output and gets -o when free; `--out` is
 * accepted everywhere). Old spellings stay accepted as aliases.
 */
export function withConventions<S extends CommandSpec>(spec: S): S {
  const options: Record<string, OptionDef> = { ...spec.options };
  const shortTaken = new Set(
    Object.values(options)
      .map((d) => d.alias)
      .filter((x) => x !== undefined),
  );
  for (const [key, d] of Object.entries(options)) {
    if (d.type !== 'string') continue;
    if (key === 'out')
      options[key] = { ...d, long: 'output', aliases: [...(d.aliases ?? []), 'out'], alias: d.alias ?? (shortTaken.has('o') ? undefined : 'o') };
    else if (key === 'output' && !('out' in options)) options[key] = { ...d, aliases: [...(d.aliases ?? []), 'out'] };
  }
  return { ...spec, options };
}

/** Builds a command whose run() parses argv by spec (printing --help when asked). */
export function command<const S extends CommandSpec>(
  path: string[],
  given: S,
  run: (a: ParsedArgs<S>) => Promise<void>,
  o: { ownSignals?: boolean; native?: boolean } = {},
): CliCommand {
  const spec = withConventions(given);
  defineCommand(spec); // refuses a malformed spec (e.g. a number option without a range) when the CLI loads
  return {
    path,
    spec,
    ownSignals: o.ownSignals,
    async run(argv) {
      const a = parseArgs(spec, argv);
      if (a.help) {
        process.stdout.write(formatHelp(spec) + '\n');
        return;
      }
      // o.native: the command cannot run without the native backend; said before it starts any work
      if (o.native) requireNative();
      await run(a);
    },
  };
}

export function usage(msg: string): never {
  throw new UsageError(msg);
}
