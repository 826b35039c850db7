// Progress reporting for long jobs: count, rate, percentage and ETA, throttled.
// On a TTY it redraws one line with '\r'; otherwise it prints a line every interval.

export interface ProgressStream {
  write(s: string): unknown;
  isTTY?: boolean;
}

export interface ProgressOptions {
  /** Total units, when known (enables percentage and ETA). */
  total?: number;
  /** Prefix of each line, e.g. 'embed'. */
  label?: string;
  /** Unit name, e.g. 'sents'. Default 'it'. */
  unit?: string;
  /** Default process.stderr. */
  stream?: ProgressStream;
  /** Minimum time between updates. Default 1000 on a TTY, 10000 otherwise. */
  intervalMs?: number;
  /** Print nothing at all. */
  silent?: boolean;
  /** Clock in ms (for tests). Default performance.now. */
  now?: () => number;
}

/** 0.42 → '0.4s', 75 → '1m15s', 3725 → '1h02m', 200000 → '2d07h'. Input in seconds. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 10) return `${seconds.toFixed(1)}s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

/** 999 → '999', 2500 → '2500', 12345 → '12.3k', 4.5e6 → '4.50M', 2.5 → '2.50'. */
export function formatCount(n: number): string {
  const a = Math.abs(n);
  const fmt = (v: number, suf: string): string => `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)}${suf}`;
  if (a < 10000 && Number.isInteger(n)) return String(n);
  if (a < 1000) return n.toFixed(a < 10 ? 2 : 1);
  if (a < 1e6) return fmt(n / 1e3, 'k');
  if (a < 1e9) return fmt(n / 1e6, 'M');
  return fmt(n / 1e9, 'G');
}

export class Progress {
  readonly total: number | undefined;
  readonly label: string;
  readonly unit: string;
  private readonly stream: ProgressStream;
  private readonly tty: boolean;
  private readonly intervalMs: number;
  private readonly silent: boolean;
  private readonly now: () => number;
  private readonly start: number;
  private last: number;
  private lastLen = 0;
  private finished = false;
  private n = 0;

  constructor(opts: ProgressOptions = {}) {
    this.total = opts.total;
    this.label = opts.label ?? '';
    this.unit = opts.unit ?? 'it';
    this.stream = opts.stream ?? process.stderr;
    this.tty = this.stream.isTTY === true;
    this.intervalMs = opts.intervalMs ?? (this.tty ? 1000 : 10000);
    this.silent = opts.silent ?? false;
    this.now = opts.now ?? (() => performance.now());
    this.start = this.now();
    this.last = this.start;
  }

  get count(): number {
    return this.n;
  }

  /** Seconds since construction. */
  elapsed(): number {
    return (this.now() - this.start) / 1000;
  }

  /** Adds `n` units (default 1); prints if the interval has passed. */
  tick(n = 1): void {
    this.n += n;
    this.maybeRender();
  }

  /** Sets the absolute count; prints if the interval has passed. */
  set(count: number): void {
    this.n = count;
    this.maybeRender();
  }

  private maybeRender(): void {
    if (this.silent || this.finished) return;
    const t = this.now();
    if (t - this.last < this.intervalMs) return;
    this.last = t;
    this.emit(this.line(false), false);
  }

  /** The status text, e.g. 'embed 1.20k/10.0k sents (12.0%) 340 sents/s ETA 26s'. */
  line(final: boolean): string {
    const el = this.elapsed();
    const rate = el > 0 ? this.n / el : 0;
    const parts: string[] = [];
    if (this.label) parts.push(`${this.label}:`);
    parts.push(this.total !== undefined ? `${formatCount(this.n)}/${formatCount(this.total)} ${this.unit}` : `${formatCount(this.n)} ${this.unit}`);
    if (this.total !== undefined && this.total > 0) parts.push(`(${((100 * this.n) / this.total).toFixed(1)}%)`);
    parts.push(`${formatCount(rate)} ${this.unit}/s`);
    if (final) {
      parts.push(`in ${formatDuration(el)}`);
    } else if (this.total !== undefined) {
      parts.push(`ETA ${rate > 0 ? formatDuration(Math.max(0, this.total - this.n) / rate) : '?'}`);
      parts.push(`elapsed ${formatDuration(el)}`);
    } else {
      parts.push(`elapsed ${formatDuration(el)}`);
    }
    return parts.join(' ');
  }

  private emit(text: string, final: boolean): void {
    if (this.tty) {
      const pad = this.lastLen > text.length ? ' '.repeat(this.lastLen - text.length) : '';
      this.stream.write(`\r${text}${pad}${final ? '\n' : ''}`);
      this.lastLen = text.length;
    } else {
      this.stream.write(`${text}\n`);
    }
  }

  /** Prints a line of its own (on a terminal, over the status line, which comes back at the next update). */
  note(text: string): void {
    if (this.tty && this.lastLen) {
      this.stream.write(`\r${' '.repeat(this.lastLen)}\r`);
      this.lastLen = 0;
    }
    this.stream.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Prints the final line (count, average rate, elapsed). Idempotent. */
  done(): void {
    if (this.finished) return;
    this.finished = true;
    if (!this.silent) this.emit(this.line(true), true);
  }
}
