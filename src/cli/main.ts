#!/usr/bin/env node
// The xling command: one tool per task over the shared library (like LASER's source/).
import { UsageError } from '../util/args.js';
import { removeTemporariesOnSignals } from '../util/atomic.js';
import { CliCommand } from './command.js';
import { commands } from './commands.js';

function help(): string {
  const rows = commands.map((c) => `  xling ${c.path.join(' ').padEnd(18)} ${c.spec.summary ?? ''}`);
  return ['xling — language-agnostic sentence embeddings', '', 'Commands:', ...rows, '', 'Run `xling <command> --help` for its options.'].join('\n');
}

async function main(argv: string[]): Promise<number> {
  if (!argv.length || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') { process.stdout.write(help() + '\n'); return argv.length ? 0 : 2; }
  let cmd: CliCommand | undefined;
  for (const c of commands) if (c.path.every((w, i) => argv[i] === w) && (!cmd || c.path.length > cmd.path.length)) cmd = c;
  if (!cmd) {
    process.stderr.write(`xling: unknown command '${argv.slice(0, 2).join(' ')}'\n\n${help()}\n`);
    return 2;
  }
  const name = `xling ${cmd.path.join(' ')}`;
  // an interrupted command leaves no temporary files (and no partial outputs: those are temporaries)
  if (!cmd.ownSignals) removeTemporariesOnSignals((signal) => process.stderr.write(`\n${name}: interrupted (${signal})\n`));
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
