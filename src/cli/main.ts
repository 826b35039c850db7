#!/usr/bin/env node
// The xling command: one tool per task over the shared library (like LASER's source/).
import { runCli } from './run.js';

// `xling … | head`: a reader that closes the pipe early ends the command quietly, as Unix tools do
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

process.exitCode = await runCli(process.argv.slice(2), undefined, true);
