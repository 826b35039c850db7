// The function-length check of `npm test` (`npm run lint:functions`): no function in src/ spans
// more than MAX_LINES lines, counting the functions nested inside it (a closure is part of the
// function that holds it, so splitting a long function into closures does not pass). A function's
// length is its line span, first line to last; the TypeScript compiler's parser finds them
// (declarations, methods, constructors, accessors, function expressions and arrow functions).
//
//   node scripts/check-function-length.mjs [ROOT]
//
// ROOT (default: the repository) holds src/ and, optionally, scripts/long-functions.json: the
// functions still over the limit, { "src/file.ts": ["name", …] }, each to be split. The check fails
// on a long function not in that list, and on a listed one that is no longer long (take it out).
// A function's name: its own, Class.method for members, the variable or property an anonymous
// function is assigned to, "callee callback" for one passed as an argument.
// Command run bodies (the function passed to `command(['eval', 'xsim'], spec, run)` in src/cli/) are
// held to MAX_RUN_LINES; scripts/long-run-bodies.json lists the commands still over it,
// { "src/cli/file.ts": ["eval xsim", …] }, on the same terms.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const MAX_LINES = 100;
/** A command's run body (the function given to `command(path, spec, run)` in src/cli/): parse, then one library call. */
export const MAX_RUN_LINES = 40;

function* sources(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield path;
  }
}

function nameOf(node, sf) {
  const own = node.name?.getText(sf);
  const cls = ts.isClassLike(node.parent) ? (node.parent.name?.getText(sf) ?? 'class') : null;
  if (ts.isConstructorDeclaration(node)) return `${cls}.constructor`;
  if (own) return cls ? `${cls}.${own}` : own;
  const p = node.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return p.name.getText(sf);
  if (ts.isCallExpression(p)) return `${p.expression.getText(sf).replace(/\s+/g, '')} callback`;
  return 'anonymous function';
}

/** Every function in ROOT/src longer than MAX_LINES: { file, name, line, lines }. */
export function longFunctions(root) {
  const found = [];
  for (const path of sources(join(root, 'src'))) {
    const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const file = relative(root, path).split(sep).join('/');
    const visit = (node) => {
      if (ts.isFunctionLike(node) && node.body) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const lines = sf.getLineAndCharacterOfPosition(node.end).line - first + 1;
        if (lines > MAX_LINES) found.push({ file, name: nameOf(node, sf), line: first + 1, lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

/** Every command run body in ROOT/src/cli longer than MAX_RUN_LINES: { file, name (the command's words), line, lines }. */
export function longRunBodies(root) {
  const found = [];
  if (!existsSync(join(root, 'src', 'cli'))) return found;
  for (const path of sources(join(root, 'src', 'cli'))) {
    const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const file = relative(root, path).split(sep).join('/');
    const visit = (node) => {
      if (ts.isCallExpression(node) && node.expression.getText(sf) === 'command' && node.arguments.length >= 3) {
        const [words, , run] = node.arguments;
        if (ts.isArrayLiteralExpression(words) && ts.isFunctionLike(run)) {
          const name = words.elements.map((e) => (ts.isStringLiteral(e) ? e.text : e.getText(sf))).join(' ');
          const first = sf.getLineAndCharacterOfPosition(run.getStart(sf)).line;
          const lines = sf.getLineAndCharacterOfPosition(run.end).line - first + 1;
          if (lines > MAX_RUN_LINES) found.push({ file, name, line: first + 1, lines });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

function listedIn(root, name) {
  const listFile = join(root, 'scripts', name);
  return existsSync(listFile) ? JSON.parse(readFileSync(listFile, 'utf8')) : {};
}

function compare(found, listed, listName, max, what) {
  const problems = [];
  for (const f of found)
    if (!listed[f.file]?.includes(f.name)) problems.push(`${f.file}:${f.line}: ${f.name} spans ${f.lines} lines (at most ${max}${what}): split it`);
  for (const [file, names] of Object.entries(listed))
    for (const name of names)
      if (!found.some((f) => f.file === file && f.name === name))
        problems.push(`scripts/${listName}: ${file} ${name} is no longer over ${max} lines (or not there): take it out of the list`);
  return problems;
}

/** The check's complaints (none: it passes). */
export function check(root) {
  return [
    ...compare(longFunctions(root), listedIn(root, 'long-functions.json'), 'long-functions.json', MAX_LINES, ', nested functions included'),
    ...compare(
      longRunBodies(root),
      listedIn(root, 'long-run-bodies.json'),
      'long-run-bodies.json',
      MAX_RUN_LINES,
      ' for a command run body: parse, then one library call',
    ),
  ];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const problems = check(root);
  for (const p of problems) console.error(p);
  process.exit(problems.length ? 1 : 0);
}
