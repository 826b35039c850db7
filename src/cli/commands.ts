// Every xling subcommand, loaded (the table, its order and its summaries: command-table.ts). For
// what needs every spec at once (docs/cli.md, the tests of the shared conventions); the CLI itself
// loads only the command it runs.
import { CliCommand } from './command.js';
import { COMMAND_TABLE } from './command-table.js';

export const commands: CliCommand[] = await Promise.all(COMMAND_TABLE.map((e) => e.load()));
