// The xling command line: finds the command argv names and runs it; help, version, command groups
// and suggestions for mistyped commands. main.ts runs it as the process.
import { readFileSync } from 'node:fs';
import { editDistance, UsageError } from '../util/args.js';
import { removeTemporariesOnSignals } from '../util/atomic.js';
import { COMMAND_TABLE as commands, CommandEntry } from './command-table.js';
import { removeCreatedDirectories } from './io.js';

/** The package's version (package.json, two folders above dist/src/cli). */
export function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function rows(cs: CommandEntry[]): string[] {
  return cs.map((c) => `  xling ${c.path.join(' ').padEnd(18)} ${c.summary}`);
}

function help(): string {
  return [
    'xling — language-agnostic sentence embeddings',
    '',
    'Usage: xling <command> [options]',
    '',
    'Commands:',
    ...rows(commands),
    '',
    'Run `xling <command> --help` (or `xling help <command>`) for its options; `xling --version` for the version.',
  ].join('\n');
}

/** The commands of a group (`xling graph`): those whose path starts with its words. */
function groupOf(words: string[]): CommandEntry[] {
  return commands.filter((c) => c.path.length > words.length && words.every((w, i) => c.path[i] === w));
}

function groupHelp(words: string[]): string {
  return [
    `Usage: xling ${words.join(' ')} <command> [options]`,
    '',
    'Commands:',
    ...rows(groupOf(words)),
    '',
    `Run \`xling ${words.join(' ')} <command> --help\` for its options.`,
  ].join('\n');
}

/** The command argv names (the longest path that matches). */
function find(argv: string[]): CommandEntry | undefined {
  let cmd: CommandEntry | undefined;
  for (const c of commands) if (c.path.every((w, i) => argv[i] === w) && (!cmd || c.path.length > cmd.path.length)) cmd = c;
  return cmd;
}

/** The nearest command to a mistyped one ("did you mean"), when it is near enough. */
function suggest(argv: string[]): string | undefined {
  const words: string[] = [];
  for (const w of argv) {
    if (w.startsWith('-') || words.length === 2) break;
    words.push(w);
  }
  let best: string | undefined,
    bestD = Infinity;
  for (const c of commands) {
    const name = c.path.join(' ');
    const typed = words.slice(0, c.path.length).join(' ');
    const d = editDistance(typed, name);
    if (d < bestD) {
      bestD = d;
      best = name;
    }
    // a group alone ("grph") against the group's word
    const g = editDistance(words[0] ?? '', c.path[0]!);
    if (c.path.length > 1 && words.length === 1 && g < bestD) {
      bestD = g;
      best = c.path[0];
    }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(words.join(' ').length / 3)) ? best : undefined;
}

/** Where runCli writes its own text (help, errors); the commands write to the process's streams. */
export interface CliStreams {
  out: (text: string) => void;
  err: (text: string) => void;
}
const processStreams: CliStreams = {
  out: (t) => {
    process.stdout.write(t);
  },
  err: (t) => {
    process.stderr.write(t);
  },
};

/**
 * Runs `xling ...argv`; resolves to the exit code. `asProcess`: the command owns the process
 * (signal handlers; the directories it created are removed when the process exits non-zero).
 */
export async function runCli(argv: string[], io: CliStreams = processStreams, asProcess = false): Promise<number> {
  const main = (a: string[]) => runCli(a, io, asProcess);
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
    io.out(`xling ${version()}\n`);
    return 0;
  }
  if (!argv.length) {
    io.err(help() + '\n');
    return 2;
  }
  if (argv[0] === '--help' || argv[0] === '-h') {
    io.out(help() + '\n');
    return 0;
  }
  if (argv[0] === 'help') {
    const words = argv.slice(1);
    if (!words.length) {
      io.out(help() + '\n');
      return 0;
    }
    const c = find(words);
    if (c && c.path.length === words.length) return main([...words, '--help']);
    if (!c && groupOf(words).length) {
      io.out(groupHelp(words) + '\n');
      return 0;
    }
    const hint = suggest(words);
    io.err(`xling help: no command '${words.join(' ')}'${hint ? ` (did you mean 'xling ${hint}'?)` : ''}\n`);
    return 2;
  }
  const found = find(argv);
  if (!found) {
    // a group (`xling graph`, `xling graph --help`): its commands
    const group = argv.slice(0, 1);
    if (groupOf(group).length && (argv.length === 1 || argv[1] === '--help' || argv[1] === '-h')) {
      io.out(groupHelp(group) + '\n');
      return 0;
    }
    const hint = suggest(argv);
    const typed = groupOf(group).length ? argv.slice(0, 2).join(' ') : argv[0]!;
    io.err(`xling: unknown command '${typed}'${hint ? ` (did you mean 'xling ${hint}'?)` : ''}\n\n${groupOf(group).length ? groupHelp(group) : help()}\n`);
    return 2;
  }
  const name = `xling ${found.path.join(' ')}`;
  // only the command that runs is imported (with what it needs)
  const cmd = await found.load();
  // an interrupted command leaves no temporary files (and no partial outputs: those are temporaries)
  if (asProcess) {
    if (!cmd.ownSignals) removeTemporariesOnSignals((signal) => io.err(`\n${name}: interrupted (${signal})\n`));
    // a command that fails (or is interrupted) leaves no output directory it created, as it leaves no output
    process.once('exit', (code) => {
      if (code !== 0) removeCreatedDirectories();
    });
  }
  try {
    await cmd.run(argv.slice(cmd.path.length));
    return 0;
  } catch (e) {
    if (!asProcess) removeCreatedDirectories();
    if (e instanceof UsageError) {
      io.err(`${name}: ${e.message}\n(see ${name} --help)\n`);
      return 2;
    }
    io.err(`${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    if (process.env.XLING_DEBUG && e instanceof Error) io.err(`${e.stack}\n`);
    return 1;
  }
}
