// Writes docs/cli.md, the command reference, from the command specs (every command's --help text
// in the order of the commands list; src/cli/help-docs.ts). Run after `npm run build:ts` whenever a
// command's options or help change: node scripts/gen-cli-docs.mjs
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commands } from '../dist/src/cli/commands.js';
import { cliHelpMarkdown } from '../dist/src/cli/help-docs.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const file = join(root, 'docs', 'cli.md');
writeFileSync(file, cliHelpMarkdown(commands));
console.log(`wrote ${file} (${commands.length} commands)`);
