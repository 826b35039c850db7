// Tiny CLI argument parser for xling subcommands.
//
//   const spec = defineCommand({
//     name: 'xling search', summary: 'k-NN search',
//     options: {
//       topK: { type: 'number', alias: 'k', default: 10, help: 'neighbours per query' },
//       output: { type: 'string', alias: 'o', required: true, help: 'output file' },
//       langs: { type: 'list', help: 'languages (repeat or comma-separate)' },
//       gpu: { type: 'boolean', default: true, help: 'use the GPU' },
//     },
//     positionals: [{ name: 'queries', required: true }],
//   });
//   const a = parseArgs(spec, process.argv.slice(3)); // a.topK: number, a.output: string, a._: string[]
//   if (a.help) console.log(formatHelp(spec));
//
// Option keys are camelCase; on the command line they are kebab-case (`topK` → `--top-k`), and the
// key itself is accepted too. Forms: `--k v`, `--k=v`, `-k v`, `-k=v`, `--flag`, `--no-flag`,
// `-abc` (bundled boolean aliases), `--` ends options. Lists repeat and/or split on commas.

import { describeRule, NumberRule, obeys } from './check.js';

export type OptType = 'string' | 'number' | 'boolean' | 'list';

type TypeOf<T extends OptType> = T extends 'number' ? number : T extends 'boolean' ? boolean : T extends 'list' ? string[] : string;

export interface OptionDef {
  type: OptType;
  /** Single-letter short form, without the dash: 'k' for -k. */
  alias?: string;
  default?: string | number | boolean | readonly string[];
  required?: boolean;
  help?: string;
  /** Allowed values (string and list options). */
  choices?: readonly string[];
  /** Placeholder in help text, e.g. 'FILE'. */
  metavar?: string;
  /** Not shown by formatHelp. */
  hidden?: boolean;
  /** Allowed values of a number option (required for every number option). */
  range?: NumberRule;
  /** List options: false = one value per occurrence, commas kept (values that are paths or carry their own lists). */
  splitCommas?: boolean;
  /** The long name shown and used in messages, when it is not kebab(key) (which is still accepted). */
  long?: string;
  /** More long names accepted for this option (old spellings kept as aliases), without dashes. */
  aliases?: readonly string[];
  /**
   * String options: the value of the bare flag (`--json` alone means `--json -`). The next
   * argument is taken as the value unless it is an option, or unless taking it leaves a required
   * positional missing (then it goes back to the positionals: `--json "query"` keeps the old form).
   */
  implicit?: string;
}

export interface PositionalDef {
  name: string;
  help?: string;
  required?: boolean;
  /** Takes all remaining positionals (last one only). */
  variadic?: boolean;
}

export interface CommandSpec {
  /** Shown in usage, e.g. 'xling embed'. */
  name: string;
  summary?: string;
  description?: string;
  options: Readonly<Record<string, OptionDef>>;
  positionals?: readonly PositionalDef[];
  examples?: readonly string[];
}

type OptValue<D> = D extends { type: infer T extends OptType }
  ? D extends { required: true }
    ? TypeOf<T>
    : D extends { default: string | number | boolean | readonly string[] }
      ? TypeOf<T>
      : T extends 'boolean' | 'list'
        ? TypeOf<T>
        : TypeOf<T> | undefined
  : never;

/** Parsed values: one property per option, plus `_` (positionals) and `help`. */
export type ParsedArgs<S extends CommandSpec> = { -readonly [K in keyof S['options']]: OptValue<S['options'][K]> } & {
  _: string[];
  help: boolean;
};

/** A command-line mistake; the message names the offending argument. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Identity helper that keeps literal types for ParsedArgs inference. */
export function defineCommand<const S extends CommandSpec>(spec: S): S {
  validateSpec(spec);
  return spec;
}

export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Every long name of an option (without dashes): its shown name first, then kebab(key), then its aliases. */
export function longNames(key: string, d: OptionDef): string[] {
  return [...new Set([d.long ?? kebab(key), kebab(key), ...(d.aliases ?? [])])];
}

function validateSpec(spec: CommandSpec): void {
  const seen = new Set<string>();
  for (const [key, d] of Object.entries(spec.options)) {
    if (!['string', 'number', 'boolean', 'list'].includes(d.type)) throw new Error(`option '${key}': bad type '${String(d.type)}'`);
    if (d.alias !== undefined && !/^[A-Za-z0-9]$/.test(d.alias)) throw new Error(`option '${key}': alias must be one character`);
    if (d.type === 'number' && !d.range) throw new Error(`option '${key}': a number option needs a range`);
    if (d.type === 'number' && d.default !== undefined && !obeys(d.default, d.range!))
      throw new Error(`option '${key}': default ${String(d.default)} is outside its range`);
    if (d.implicit !== undefined && d.type !== 'string') throw new Error(`option '${key}': only string options take an implicit value`);
    for (const n of [...longNames(key, d), ...(d.alias ? [`-${d.alias}`] : [])]) {
      if (seen.has(n)) throw new Error(`option '${key}': duplicate name '${n}'`);
      seen.add(n);
    }
  }
  const pos = spec.positionals ?? [];
  pos.forEach((p, i) => {
    if (p.variadic && i !== pos.length - 1) throw new Error(`positional '${p.name}': only the last positional may be variadic`);
  });
}

function flagName(key: string, d?: OptionDef): string {
  return `--${d?.long ?? kebab(key)}`;
}

/**
 * Edit distance with transpositions (optimal string alignment: insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1; `--modle` is one edit from `--model`), for
 * "did you mean" hints.
 */
export function editDistance(a: string, b: string): number {
  // three rows: the one before the previous (for transpositions), the previous, the current
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const sub = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + sub);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      cur[j] = d;
    }
    [before, prev, cur] = [prev, cur, before];
  }
  return prev[b.length]!;
}

function convert(_key: string, d: OptionDef, raw: string, shown: string, cmd: string): string | number | boolean {
  switch (d.type) {
    case 'number': {
      const v = raw.trim() === '' ? NaN : Number(raw);
      if (!Number.isFinite(v)) throw new UsageError(`${shown} expects a number, got '${raw}'`, cmd);
      if (d.range && !obeys(v, d.range)) throw new UsageError(`${shown} must be ${describeRule(d.range)}, got '${raw}'`, cmd);
      return v;
    }
    case 'boolean': {
      const s = raw.toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return true;
      if (['false', '0', 'no', 'off'].includes(s)) return false;
      throw new UsageError(`${shown} expects true or false, got '${raw}'`, cmd);
    }
    default:
      if (d.choices && d.type === 'string' && !d.choices.includes(raw)) {
        throw new UsageError(`${shown} must be one of ${d.choices.join(', ')}; got '${raw}'`, cmd);
      }
      return raw;
  }
}

/** Parses `argv` (without node/script/subcommand) against `spec`. Throws UsageError on mistakes. */
export function parseArgs<const S extends CommandSpec>(spec: S, argv: readonly string[]): ParsedArgs<S> {
  return new ArgParser(spec, argv).parse() as ParsedArgs<S>;
}

/** One run of parseArgs: the argument at hand and what the arguments before it gave. */
class ArgParser {
  private readonly cmd: string;
  private readonly byLong = new Map<string, string>();
  private readonly byShort = new Map<string, string>();
  private readonly hasHelpOpt: boolean;
  private readonly values: Record<string, unknown> = {};
  private readonly lists: Record<string, string[]> = {};
  private readonly positionals: string[] = [];
  private help = false;
  private i = 0;
  /** Values of options with an implicit value taken from the next argument: [key, positional index]. */
  private readonly tookNext: [string, number][] = [];

  constructor(
    private readonly spec: CommandSpec,
    private readonly argv: readonly string[],
  ) {
    this.cmd = spec.name;
    for (const [key, d] of Object.entries(spec.options)) {
      for (const n of longNames(key, d)) this.byLong.set(n, key);
      this.byLong.set(key, key);
      if (d.alias) this.byShort.set(d.alias, key);
    }
    this.hasHelpOpt = 'help' in spec.options;
  }

  parse(): Record<string, unknown> {
    this.readArguments();
    this.giveBackTaken();
    const out = this.result();
    if (!this.help) this.checkComplete(out);
    return out;
  }

  private readArguments(): void {
    for (; this.i < this.argv.length; this.i++) {
      const arg = this.argv[this.i]!;
      if (arg === '--') {
        this.positionals.push(...this.argv.slice(this.i + 1));
        return;
      }
      if (arg.startsWith('--') && arg.length > 2) this.longOption(arg);
      else if (arg.startsWith('-') && arg.length > 1 && !/^-\d/.test(arg)) this.shortOption(arg);
      else this.positionals.push(arg);
    }
  }

  private flag(key: string): string {
    return flagName(key, this.spec.options[key]);
  }

  /** `--name`, `--name=value` or `--no-name`. */
  private longOption(arg: string): void {
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
    const key = this.byLong.get(name);
    if (key !== undefined) this.option(key, inline, `--${name}`);
    else if (name === 'help' && !this.hasHelpOpt) {
      if (inline !== undefined) throw new UsageError(`--help takes no value`, this.cmd);
      this.help = true;
    } else if (name.startsWith('no-')) this.negated(arg, name, inline);
    else this.unknown(arg);
  }

  /** `--no-name`: a boolean option set to false. */
  private negated(arg: string, name: string, inline: string | undefined): void {
    const key = this.byLong.get(name.slice(3));
    if (key === undefined) this.unknown(arg);
    if (this.spec.options[key]!.type !== 'boolean') throw new UsageError(`--${name}: ${this.flag(key)} is not a boolean option`, this.cmd);
    if (inline !== undefined) throw new UsageError(`--${name} takes no value`, this.cmd);
    this.values[key] = false;
  }

  /** `-k`, `-k=value`, or bundled boolean flags `-abc`. */
  private shortOption(arg: string): void {
    const eq = arg.indexOf('=');
    const letters = eq >= 0 ? arg.slice(1, eq) : arg.slice(1);
    const inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
    const key = letters.length === 1 ? this.byShort.get(letters) : undefined;
    if (letters.length !== 1) this.bundled(arg, letters, inline);
    else if (key !== undefined) this.option(key, inline, `-${letters}`);
    else if (letters === 'h' && !this.hasHelpOpt) this.help = true;
    else this.unknown(arg);
  }

  /** Bundled boolean short flags: -abc. */
  private bundled(arg: string, letters: string, inline: string | undefined): void {
    if (inline !== undefined) throw new UsageError(`invalid argument '${arg}'`, this.cmd);
    for (const c of letters) {
      const key = this.byShort.get(c);
      if (key === undefined && c === 'h' && !this.hasHelpOpt) this.help = true;
      else if (key === undefined) throw new UsageError(`unknown option '-${c}' in '${arg}'`, this.cmd);
      else if (this.spec.options[key]!.type !== 'boolean') throw new UsageError(`-${c} in '${arg}' needs a value and cannot be bundled`, this.cmd);
      else this.values[key] = true;
    }
  }

  /** An option named as `shown`: a boolean takes its inline value or true, any other its inline value or the next argument. */
  private option(key: string, inline: string | undefined, shown: string): void {
    const d = this.spec.options[key]!;
    if (d.type === 'boolean') this.values[key] = inline === undefined ? true : convert(key, d, inline, shown, this.cmd);
    else this.assign(key, inline ?? this.takeValue(shown, key), shown);
  }

  private unknown(arg: string): never {
    const name = arg.replace(/^-+/, '').split('=')[0]!;
    let best: string | undefined;
    let bestD = Infinity;
    for (const [k, d] of Object.entries(this.spec.options)) {
      for (const n of longNames(k, d)) {
        const dist = editDistance(name, n);
        if (dist < bestD) {
          bestD = dist;
          best = k;
        }
      }
    }
    const hint = best !== undefined && bestD <= Math.max(1, Math.floor(name.length / 3)) ? ` (did you mean ${this.flag(best)}?)` : '';
    throw new UsageError(`unknown option '${arg.split('=')[0]}'${hint}`, this.cmd);
  }

  private assign(key: string, raw: string, shown: string): void {
    const d = this.spec.options[key]!;
    if (d.type !== 'list') {
      this.values[key] = convert(key, d, raw, shown, this.cmd);
      return;
    }
    const items = (d.splitCommas === false ? [raw] : raw.split(',')).map((s) => s.trim()).filter((s) => s.length > 0);
    if (d.choices) {
      for (const it of items) {
        if (!d.choices.includes(it)) throw new UsageError(`${shown} values must be among ${d.choices.join(', ')}; got '${it}'`, this.cmd);
      }
    }
    (this.lists[key] ??= []).push(...items);
  }

  /** The next argument as the value of `shown` (an option with an implicit value keeps it where the next argument is an option). */
  private takeValue(shown: string, key: string): string {
    const v = this.argv[this.i + 1];
    const implicit = this.spec.options[key]!.implicit;
    if (v === undefined || (v.startsWith('--') && v.length > 2) || (implicit !== undefined && v.startsWith('-') && v !== '-')) {
      if (implicit !== undefined) return implicit;
      throw new UsageError(`${shown} requires a value`, this.cmd);
    }
    if (implicit !== undefined) this.tookNext.push([key, this.positionals.length]);
    this.i++;
    return v;
  }

  /** `--json "query"` (the old bare flag before a positional): the value goes back where it was. */
  private giveBackTaken(): void {
    const required = (this.spec.positionals ?? []).filter((p) => p.required).length;
    for (let t = this.tookNext.length - 1; t >= 0 && this.positionals.length < required; t--) {
      const [key, at] = this.tookNext[t]!;
      this.positionals.splice(at, 0, this.values[key] as string);
      this.values[key] = this.spec.options[key]!.implicit;
    }
  }

  /** Every option's value: given, else its default, else false (booleans), [] (lists) or undefined. */
  private result(): Record<string, unknown> {
    const out: Record<string, unknown> = { _: this.positionals, help: this.help };
    for (const [key, d] of Object.entries(this.spec.options)) {
      if (d.type === 'list') out[key] = this.lists[key] ?? (d.default !== undefined ? [...(d.default as readonly string[])] : []);
      else if (key in this.values) out[key] = this.values[key];
      else if (d.default !== undefined) out[key] = d.default;
      else out[key] = d.type === 'boolean' ? false : undefined;
    }
    return out;
  }

  /** Required options and positionals present, no positional too many. */
  private checkComplete(out: Record<string, unknown>): void {
    for (const [key, d] of Object.entries(this.spec.options)) {
      const missing = d.type === 'list' ? (out[key] as string[]).length === 0 : out[key] === undefined;
      if (d.required && missing) throw new UsageError(`missing required option ${this.flag(key)}`, this.cmd);
    }
    const pos = this.spec.positionals ?? [];
    const variadic = pos.length > 0 && pos[pos.length - 1]!.variadic === true;
    const req = pos.filter((p) => p.required).length;
    if (this.positionals.length < req) {
      throw new UsageError(`missing required argument <${pos[this.positionals.length]!.name}>`, this.cmd);
    }
    if (this.spec.positionals !== undefined && !variadic && this.positionals.length > pos.length) {
      throw new UsageError(`unexpected argument '${this.positionals[pos.length]}'`, this.cmd);
    }
  }
}

function metavar(key: string, d: OptionDef): string {
  if (d.metavar) return d.metavar;
  if (d.choices) return `{${d.choices.join('|')}}`;
  if (d.type === 'number') return 'N';
  if (d.type === 'list') return d.splitCommas === false ? 'VALUE' : 'A,B,...';
  return kebab(key).toUpperCase().replace(/-/g, '_');
}

function wrap(text: string, width: number): string[] {
  const words = text.split(/\s+/).filter((w) => w.length > 0);
  const lines: string[] = [];
  let cur = '';
  for (const w of words) {
    if (cur && cur.length + 1 + w.length > width) {
      lines.push(cur);
      cur = w;
    } else cur = cur ? `${cur} ${w}` : w;
  }
  if (cur) lines.push(cur);
  return lines.length ? lines : [''];
}

/** `--help` text: usage line, summary, positionals, options with defaults, examples. */
export function formatHelp(spec: CommandSpec, width = 80): string {
  const pos = spec.positionals ?? [];
  const usage = [`Usage: ${spec.name} [options]`];
  for (const p of pos) {
    const n = p.variadic ? `${p.name}...` : p.name;
    usage.push(p.required ? `<${n}>` : `[${n}]`);
  }
  const out: string[] = [usage.join(' ')];
  if (spec.summary) out.push('', spec.summary);
  if (spec.description) out.push('', ...wrap(spec.description, width));

  const rows: [string, string][] = [];
  for (const [key, d] of Object.entries(spec.options)) {
    if (d.hidden) continue;
    const short = d.alias ? `-${d.alias}, ` : '    ';
    const name = d.long ?? kebab(key);
    const value = d.implicit !== undefined ? `[${metavar(key, d)}]` : metavar(key, d);
    const long = d.type === 'boolean' ? `--${name}` : `--${name} ${value}`;
    const extras: string[] = [];
    const others = longNames(key, d).slice(1);
    if (others.length) extras.push(`also ${others.map((n) => `--${n}`).join(', ')}`);
    if (d.implicit !== undefined) extras.push(`alone: ${d.implicit}`);
    if (d.required) extras.push('required');
    if (d.default !== undefined && !(d.type === 'boolean' && d.default === false)) {
      const dv = Array.isArray(d.default) ? (d.default as string[]).join(',') : String(d.default);
      extras.push(`default: ${dv}`);
    }
    if (d.type === 'boolean' && d.default === true) extras.push(`--no-${name} to disable`);
    const help = [d.help ?? '', extras.length ? `(${extras.join('; ')})` : ''].filter((s) => s).join(' ');
    rows.push([`${short}${long}`, help]);
  }
  if (!('help' in spec.options)) rows.push(['-h, --help', 'show this help']);

  const left = Math.min(32, Math.max(...rows.map((r) => r[0].length), ...pos.map((p) => p.name.length + 2)) + 2);
  const fmtRows = (rs: [string, string][]): string[] => {
    const lines: string[] = [];
    for (const [l, r] of rs) {
      const wrapped = wrap(r, Math.max(20, width - 2 - left));
      if (l.length + 2 > left) {
        lines.push(`  ${l}`);
        for (const w of wrapped) if (w) lines.push(`  ${' '.repeat(left)}${w}`);
      } else {
        lines.push(`  ${l.padEnd(left)}${wrapped[0]}`.trimEnd());
        for (const w of wrapped.slice(1)) lines.push(`  ${' '.repeat(left)}${w}`);
      }
    }
    return lines;
  };
  if (pos.length) {
    out.push('', 'Arguments:');
    out.push(...fmtRows(pos.map((p) => [p.name, p.help ?? ''] as [string, string])));
  }
  out.push('', 'Options:');
  out.push(...fmtRows(rows));
  if (spec.examples?.length) {
    out.push('', 'Examples:');
    for (const e of spec.examples) out.push(`  ${e}`);
  }
  return `${out.join('\n')}\n`;
}
