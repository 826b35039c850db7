export const commands: import('./command.js').CliCommand[] = [];
