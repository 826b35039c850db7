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
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const MAX_LINES = 100;

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

/** The check's complaints (none: it passes). */
export function check(root) {
  const listFile = join(root, 'scripts', 'long-functions.json');
  const listed = existsSync(listFile) ? JSON.parse(readFileSync(listFile, 'utf8')) : {};
  const found = longFunctions(root);
  const problems = [];
  for (const f of found)
    if (!listed[f.file]?.includes(f.name))
      problems.push(`${f.file}:${f.line}: ${f.name} spans ${f.lines} lines (at most ${MAX_LINES}, nested functions included): split it`);
  for (const [file, names] of Object.entries(listed))
    for (const name of names)
      if (!found.some((f) => f.file === file && f.name === name))
        problems.push(`scripts/long-functions.json: ${file} ${name} is no longer over ${MAX_LINES} lines (or not there): take it out of the list`);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const problems = check(root);
  for (const p of problems) console.error(p);
  process.exit(problems.length ? 1 : 0);
}
