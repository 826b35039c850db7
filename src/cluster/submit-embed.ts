// xling cluster embed's submitting side: one pass over the input (its lines counted, where every
// SEEK_EVERY-th starts, a spread sample), the centring language decided once as xling embed decides
// it, then one job per shard and a merge job submitted and followed.
import { SpreadSample } from '../embed/centering.js';
import { InputEmbedder } from '../embed/input.js';
import { PER_SENTENCE } from '../embed/language.js';
import { loadSentenceEncoder, readModelConfig } from '../embed/model-dir.js';
import { isGzipFile, readLines } from '../io/input.js';
import { writeNpy } from '../io/npy.js';
import { SEEK_EVERY } from './embed.js';
import { Following, submitAndFollowEmbed } from './follow.js';
import { pingRedis } from './queue.js';

/** xling cluster embed's options, parsed and checked (the model directory absolute: every worker loads it). */
export interface ClusterEmbedJob extends Following {
  model: string;
  input: string;
  output: string;
  dtype: 'float32' | 'float16';
  precision: 'fp32' | 'bf16';
  lang?: string;
  center: boolean;
  forceCenter: boolean;
  normalize: boolean;
  batchTokens?: number;
  batchSentences?: number;
  /** Lines between a shard's progress reports. */
  chunk: number;
}

/** Submits xling cluster embed's flow (or finds it) and follows it; an empty input gives a (0, d) array at once. */
export async function submitClusterEmbed(o: ClusterEmbedJob): Promise<void> {
  readModelConfig(o.model); // a bad model directory is named before Redis is asked
  // the model is loaded here only to check --lang and identify the input's language (one decision for every shard)
  const job = new InputEmbedder(
    loadSentenceEncoder(o.model, { precision: o.precision }),
    { lang: o.lang, langFlag: '--lang', center: o.center, forceCenter: o.forceCenter, quiet: o.quiet, label: 'cluster embed' },
    o.input,
  );
  const { lines, seekMarks, sample } = await scanInput(o.input);
  const fp16 = o.dtype === 'float16';
  if (!lines) {
    // as xling embed: an empty input gives a (0, d) array (written here; there is no shard to run)
    const d = loadSentenceEncoder(o.model).dim;
    writeNpy(o.output, fp16 ? new Uint16Array(0) : new Float32Array(0), [0, d], fp16 ? 'float16' : 'float32');
    if (!o.quiet) process.stderr.write(`[cluster] ${o.input} is empty: wrote a (0, ${d}) array to ${o.output}\n`);
    return;
  }
  await pingRedis(o.redis);
  job.identify(sample.lines);
  const lang = job.perSentence && !job.choice ? PER_SENTENCE : (job.lang ?? undefined);
  const center = !o.center || (!job.perSentence && !job.lang) ? false : o.forceCenter ? ('force' as const) : true;
  const request = {
    redis: o.redis,
    work: o.work,
    model: o.model,
    input: o.input,
    output: o.output,
    lines,
    seekMarks,
    shards: o.shards,
    lang,
    center,
    normalize: o.normalize,
    fp16,
    batchTokens: o.batchTokens,
    batchSentences: o.batchSentences,
    precision: o.precision,
    chunk: o.chunk,
    attempts: o.attempts,
  };
  await submitAndFollowEmbed(request, o);
}

/**
 * One pass over the input: its lines (xling embed's rows), where every SEEK_EVERY-th line starts
 * (shards of a plain file start reading there; null for .gz) and a spread sample for the language.
 */
async function scanInput(input: string): Promise<{ lines: number; seekMarks: number[] | null; sample: SpreadSample }> {
  const sample = new SpreadSample();
  const seekMarks: number[] | null = isGzipFile(input) ? null : [];
  let lines = 0;
  for await (const { line, offset } of readLines(input)) {
    if (seekMarks && lines % SEEK_EVERY === 0) seekMarks.push(offset);
    lines++;
    sample.add(line);
  }
  return { lines, seekMarks, sample };
}
