// Progress of faiss index training from faiss's own verbose lines (FaissIndex.trainAsync's
// onLine): the OPQ rotation's iterations, the k-means iterations of the IVF coarse quantizer and
// the product quantizer's slices each become a progress line (count, rate, ETA), and faiss's
// "WARNING clustering N points to K centroids" — printed once per k-means, i.e. for every PQ
// slice of every OPQ iteration — is folded into one line with its count.
import { Progress, ProgressStream } from '../util/progress.js';

export interface TrainingLogOptions {
  /** Prefix of the lines, e.g. 'index train'. */
  label: string;
  /** The OPQ iterations set on the index (setTrainingParams), for the OPQ line's total. */
  opqIters?: number;
  stream?: ProgressStream;
  intervalMs?: number;
  silent?: boolean;
}

export class TrainingLog {
  private phase: { name: 'opq' | 'kmeans' | 'pq'; progress: Progress } | null = null;
  private readonly warnings = new Map<string, number>();
  /** Every phase seen, with its final count (for tests and summaries). */
  readonly phases: { name: string; done: number; total: number | undefined }[] = [];
  constructor(private readonly o: TrainingLogOptions) {}

  private start(name: 'opq' | 'kmeans' | 'pq', what: string, unit: string, total?: number): void {
    this.end();
    this.phase = {
      name,
      progress: new Progress({ label: `${this.o.label}: ${what}`, unit, total, stream: this.o.stream, intervalMs: this.o.intervalMs, silent: this.o.silent }),
    };
  }
  private end(): void {
    if (!this.phase) return;
    this.phase.progress.done();
    this.phases.push({ name: this.phase.progress.label, done: this.phase.progress.count, total: this.phase.progress.total });
    this.phase = null;
  }

  /** One line of faiss's verbose training output. */
  line(l: string): void {
    let m: RegExpExecArray | null;
    if ((m = /^WARNING clustering (\d+) points to (\d+) centroids: please provide at least (\d+) training points/.exec(l))) {
      const key = `k-means of ${m[1]} points into ${m[2]} centroids (faiss asks for at least ${m[3]} training points)`;
      this.warnings.set(key, (this.warnings.get(key) ?? 0) + 1);
    } else if ((m = /^OPQMatrix::train: training an OPQ rotation matrix for M=(\d+) from (\d+) vectors in (\d+)D/.exec(l))) {
      this.start('opq', `OPQ${m[1]} rotation on ${m[2]} vectors in ${m[3]}D`, 'iterations', this.o.opqIters);
    } else if (this.phase?.name === 'opq') {
      // inside OPQ, every iteration trains a PQ (its k-means lines are not the index's own)
      if ((m = /^ {4}Iteration (\d+) \(\d+ PQ iterations\)/.exec(l))) {
        this.phase.progress.set(Number(m[1]) + 1);
        if (this.o.opqIters && Number(m[1]) + 1 >= this.o.opqIters) this.end();
      } else if (/^(Training level-1 quantizer|IVF quantizer|training \d+x\d+ product quantizer|computing residuals)/.test(l)) {
        this.end();
        this.line(l);
      }
    } else if ((m = /^Clustering (\d+) points in (\d+)D to (\d+) clusters, redo (\d+) times, (\d+) iterations/.exec(l))) {
      if (this.phase?.name !== 'pq')
        this.start('kmeans', `k-means, ${m[3]} centroids from ${m[1]} vectors in ${m[2]}D`, 'iterations', Number(m[4]) * Number(m[5]));
    } else if ((m = /^ {2}Iteration (\d+) \(/.exec(l))) {
      if (this.phase?.name === 'kmeans') this.phase.progress.tick();
    } else if ((m = /^training (\d+)x(\d+) product quantizer on (\d+) vectors in (\d+)D/.exec(l))) {
      this.start('pq', `product quantizer ${m[1]}×${m[2]} on ${m[3]} vectors`, 'slices', Number(m[1]));
    } else if ((m = /^Training PQ slice (\d+)\/(\d+)/.exec(l))) {
      if (this.phase?.name !== 'pq') this.start('pq', `product quantizer, ${m[2]} slices`, 'slices', Number(m[2]));
      this.phase!.progress.set(Number(m[1]));
    }
  }

  /** Ends the last phase and prints the folded warnings. */
  done(): void {
    if (this.phase?.name === 'pq') this.phase.progress.set(this.phase.progress.total ?? this.phase.progress.count);
    this.end();
    for (const [what, n] of this.warnings)
      if (!this.o.silent) (this.o.stream ?? process.stderr).write(`${this.o.label}: faiss warned ${n}× about a small training set: ${what}\n`);
  }

  get warningCount(): number {
    let n = 0;
    for (const v of this.warnings.values()) n += v;
    return n;
  }
}
