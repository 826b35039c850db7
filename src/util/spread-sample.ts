// A deterministic sample of lines spread over a whole input (for identifying its language).

/**
 * A deterministic sample spread over a whole stream of lines, for identifying its language: every
 * step-th non-blank line, the step doubling whenever more than `cap` are kept. It depends only on
 * the lines, never on how they are read (chunks), and blank lines never vote.
 */
export class SpreadSample {
  readonly lines: string[] = [];
  private step = 1;
  private seen = 0;
  constructor(readonly cap = 2000) {}
  add(line: string): void {
    if (!line.trim() || this.seen++ % this.step !== 0) return;
    this.lines.push(line);
    if (this.lines.length > this.cap) {
      // keep the lines at multiples of the doubled step: every other kept line
      let j = 0;
      for (let i = 0; i < this.lines.length; i += 2) this.lines[j++] = this.lines[i]!;
      this.lines.length = j;
      this.step *= 2;
    }
  }
}

/** The SpreadSample of `lines`. */
export function spreadSample(lines: Iterable<string>, cap = 2000): string[] {
  const s = new SpreadSample(cap);
  for (const l of lines) s.add(l);
  return s.lines;
}
