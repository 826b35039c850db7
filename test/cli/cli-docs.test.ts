// docs/cli.md is current: regenerated in memory from the command specs, it equals the committed
// page; and the page has one section per command, in the commands list's order, holding its help.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { commands } from '../../src/cli/commands.js';
import { cliHelpMarkdown } from '../../src/cli/help-docs.js';
import { formatHelp } from '../../src/util/args.js';
import { root } from '../fixtures/cli.js';

describe('docs/cli.md', () => {
  const page = readFileSync(join(root, 'docs', 'cli.md'), 'utf8');
  const generated = cliHelpMarkdown(commands);

  it('equals the page generated from the command specs', () => {
    assert.ok(
      page === generated,
      'docs/cli.md is out of date with the command specs: run `npm run build:ts && node scripts/gen-cli-docs.mjs` and commit docs/cli.md',
    );
  });

  it('has every command under its own heading, in the commands list order, with its help text', () => {
    let at = 0;
    for (const c of commands) {
      const heading = `\n## xling ${c.path.join(' ')}\n`;
      const i = generated.indexOf(heading, at);
      assert.ok(i > at, `missing or out of order: ${heading.trim()}`);
      assert.ok(generated.indexOf(formatHelp(c.spec).split('\n')[0]!, i) > i, `no help under ${heading.trim()}`);
      at = i;
    }
    assert.equal(generated.split('\n## ').length - 1, commands.length);
  });
});

describe('the command surface', () => {
  it('every command takes at most 20 options besides --help (settings beyond that live in --config files)', () => {
    const over = commands.filter((c) => Object.keys(c.spec.options).filter((k) => k !== 'help').length > 20);
    assert.deepEqual(
      over.map((c) => `xling ${c.path.join(' ')}: ${Object.keys(c.spec.options).length}`),
      [],
    );
    assert.ok(commands.length >= 30, 'the commands list is the whole CLI');
  });
});
