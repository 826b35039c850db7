// Range checks for configuration values and command-line numbers: one message format everywhere
// ("<where>: '<key>' must be …, got …").

export interface NumberRule {
  /** Inclusive bounds. */
  min?: number;
  max?: number;
  /** Exclusive bounds. */
  above?: number;
  below?: number;
  int?: boolean;
}

/** The rule in words, e.g. "an integer >= 1", "a number > 0 and < 1". */
export function describeRule(r: NumberRule): string {
  const parts: string[] = [];
  if (r.min !== undefined) parts.push(`>= ${r.min}`);
  if (r.above !== undefined) parts.push(`> ${r.above}`);
  if (r.max !== undefined) parts.push(`<= ${r.max}`);
  if (r.below !== undefined) parts.push(`< ${r.below}`);
  return `${r.int ? 'an integer' : 'a number'}${parts.length ? ' ' + parts.join(' and ') : ''}`;
}

/** Whether v is a finite number obeying the rule. */
export function obeys(v: unknown, r: NumberRule): v is number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  if (r.int && !Number.isInteger(v)) return false;
  if (r.min !== undefined && v < r.min) return false;
  if (r.max !== undefined && v > r.max) return false;
  if (r.above !== undefined && !(v > r.above)) return false;
  if (r.below !== undefined && !(v < r.below)) return false;
  return true;
}

/** Throws "<where>: '<key>' must be <rule>, got <v>" unless v obeys the rule. */
export function checkNumber(where: string, key: string, v: unknown, r: NumberRule): void {
  if (!obeys(v, r)) throw new Error(`${where}: '${key}' must be ${describeRule(r)}, got ${JSON.stringify(v)}`);
}

/** Throws unless v is an integer ≥ min (the common case of checkNumber in config sections). */
export function checkInt(where: string, key: string, v: unknown, min: number): void {
  checkNumber(where, key, v, { int: true, min });
}

/** Throws unless v is one of the allowed strings. */
export function checkChoice(where: string, key: string, v: unknown, allowed: readonly string[]): void {
  if (typeof v !== 'string' || !allowed.includes(v))
    throw new Error(`${where}: '${key}' must be ${allowed.map((a) => `'${a}'`).join(', ')}, got ${JSON.stringify(v)}`);
}
