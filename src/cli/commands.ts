// Every xling subcommand.
import { CliCommand } from './command.js';
import { embedCommand } from './embed.js';
import { evalXsimCommand } from './eval-xsim.js';
import { exportCommand } from './export.js';
import { trainCommand } from './train.js';

export const commands: CliCommand[] = [trainCommand, embedCommand, exportCommand, evalXsimCommand];
