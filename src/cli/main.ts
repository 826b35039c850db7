#!/usr/bin/env node
// The xling command: one tool per task over the shared library (like LASER's source/).
import { readFileSync } from 'node:fs';
import { editDistance, UsageError } from '../util/args.js';
import { removeTemporariesOnSignals } from '../util/atomic.js';
import { CliCommand } from './command.js';
import { commands } from './commands.js';
import { removeCreatedDirectories } from './io.js';

/** The package's version (package.json, two folders above dist/src/cli). */
export function version(): string {
  try { return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version; } catch { return 'unknown'; }
}

function rows(cs: CliCommand[]): string[] {
  return cs.map((c) => `  xling ${c.path.join(' ').padEnd(18)} ${c.spec.summary ?? ''}`);
}

function help(): string {
  return ['xling — language-agnostic sentence embeddings', '', 'Usage: xling <command> [options]', '', 'Commands:', ...rows(commands), '',
    'Run `xling <command> --help` (or `xling help <command>`) for its options; `xling --version` for the version.'].join('\n');
}

/** The commands of a group (`xling graph`): those whose path starts with its words. */
function groupOf(words: string[]): CliCommand[] {
  return commands.filter((c) => c.path.length > words.length && words.every((w, i) => c.path[i] === w));
}

function groupHelp(words: string[]): string {
  return [`Usage: xling ${words.join(' ')} <command> [options]`, '', 'Commands:', ...rows(groupOf(words)), '', `Run \`xling ${words.join(' ')} <command> --help\` for its options.`].join('\n');
}

/** The command argv names (the longest path that matches). */
function find(argv: string[]): CliCommand | undefined {
  let cmd: CliCommand | undefined;
  for (const c of commands) if (c.path.every((w, i) => argv[i] === w) && (!cmd || c.path.length > cmd.path.length)) cmd = c;
  return cmd;
}

/** The nearest command to a mistyped one ("did you mean"), when it is near enough. */
function suggest(argv: string[]): string | undefined {
  const words: string[] = [];
  for (const w of argv) { if (w.startsWith('-') || words.length === 2) break; words.push(w); }
  let best: string | undefined, bestD = Infinity;
  for (const c of commands) {
    const name = c.path.join(' ');
    const typed = words.slice(0, c.path.length).join(' ');
    const d = editDistance(typed, name);
    if (d < bestD) { bestD = d; best = name; }
    // a group alone ("grph") against the group's word
    const g = editDistance(words[0] ?? '', c.path[0]!);
    if (c.path.length > 1 && words.length === 1 && g < bestD) { bestD = g; best = c.path[0]; }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(words.join(' ').length / 3)) ? best : undefined;
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') { process.stdout.write(`xling ${version()}\n`); return 0; }
  if (!argv.length) { process.stderr.write(help() + '\n'); return 2; }
  if (argv[0] === '--help' || argv[0] === '-h') { process.stdout.write(help() + '\n'); return 0; }
  if (argv[0] === 'help') {
    const words = argv.slice(1);
    if (!words.length) { process.stdout.write(help() + '\n'); return 0; }
    const c = find(words);
    if (c && c.path.length === words.length) return main([...words, '--help']);
    if (!c && groupOf(words).length) { process.stdout.write(groupHelp(words) + '\n'); return 0; }
    const hint = suggest(words);
    process.stderr.write(`xling help: no command '${words.join(' ')}'${hint ? ` (did you mean 'xling ${hint}'?)` : ''}\n`);
    return 2;
  }
  const cmd = find(argv);
  if (!cmd) {
    // a group (`xling graph`, `xling graph --help`): its commands
    const group = argv.slice(0, 1);
    if (groupOf(group).length && (argv.length === 1 || argv[1] === '--help' || argv[1] === '-h')) { process.stdout.write(groupHelp(group) + '\n'); return 0; }
    const hint = suggest(argv);
    const typed = groupOf(group).length ? argv.slice(0, 2).join(' ') : argv[0]!;
    process.stderr.write(`xling: unknown command '${typed}'${hint ? ` (did you mean 'xling ${hint}'?)` : ''}\n\n${groupOf(group).length ? groupHelp(group) : help()}\n`);
    return 2;
  }
  const name = `xling ${cmd.path.join(' ')}`;
  // an interrupted command leaves no temporary files (and no partial outputs: those are temporaries)
  if (!cmd.ownSignals) removeTemporariesOnSignals((signal) => process.stderr.write(`\n${name}: interrupted (${signal})\n`));
  // a command that fails (or is interrupted) leaves no output directory it created, as it leaves no output
  process.once('exit', (code) => { if (code !== 0) removeCreatedDirectories(); });
  try {
    await cmd.run(argv.slice(cmd.path.length));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) { process.stderr.write(`${name}: ${e.message}\n(see ${name} --help)\n`); return 2; }
    process.stderr.write(`${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    if (process.env.XLING_DEBUG && e instanceof Error) process.stderr.write(`${e.stack}\n`);
    return 1;
  }
}

// `xling … | head`: a reader that closes the pipe early ends the command quietly, as Unix tools do
process.stdout.on('error', (e: NodeJS.ErrnoException) => { if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0); throw e; });

process.exitCode = await main(process.argv.slice(2));
