// Cross-lingual document classification end to end (xling classify train / eval): labelled
// documents embedded as document vectors (the mean of each document's sentence vectors, centred
// as xling embed centres) with a model, then a classifier trained on them or evaluated on them.
import { ClassifierOptions, evaluate, Evaluation, loadClassifier, predict, trainClassifier } from '../classify/classifier.js';
import { LabelledDocs, readLabelledDocs } from '../classify/documents.js';
import { spreadSample } from '../embed/centering.js';
import { InputEmbedder } from '../embed/input.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { documentVectors } from './documents.js';

/** Labelled documents (label<TAB>id<TAB>text lines, readLabelledDocs) and how they are embedded. */
export interface LabelledData {
  /** The sentence encoder's model directory. */
  model: string;
  data: string;
  /** The documents' language for centring ('auto': identified), and whether to centre. */
  lang: string;
  center: boolean;
}

/** Reads the documents, checks them (`check`, before any embedding) and embeds them as document vectors. */
async function embedLabelled(m: SentenceEncoderModel, o: LabelledData, check?: (docs: LabelledDocs) => void): Promise<{ docs: LabelledDocs; x: Float32Array }> {
  const job = new InputEmbedder(m, { lang: o.lang, langFlag: '--lang', center: o.center, label: 'classify' }, o.data);
  const docs = await readLabelledDocs(o.data);
  check?.(docs);
  job.identify(spreadSample(docs.texts));
  return { docs, x: documentVectors(m, docs.texts, job.embedOptions()) };
}

/** Trains a classifier on the documents and writes it to `output`; returns the line to log (classes, how it was chosen, training accuracy). */
export async function trainClassifierRun(o: LabelledData & { output: string; classifier: ClassifierOptions }): Promise<string> {
  const m = loadSentenceEncoder(o.model);
  const { docs, x } = await embedLabelled(m, o);
  const labels = [...new Set(docs.labels)].sort();
  const y = Int32Array.from(docs.labels, (l) => labels.indexOf(l));
  const clf = trainClassifier(x, y, labels, o.classifier);
  clf.save(o.output);
  const train = evaluate(y, predict(clf, x), labels);
  return `${docs.texts.length} documents, ${labels.length} classes: ${clf.info}; training accuracy ${(100 * train.accuracy).toFixed(1)}% → ${o.output}`;
}

/** Evaluates the classifier in directory `classifier` on the documents (their labels must be the classifier's). */
export async function evaluateClassifierRun(o: LabelledData & { classifier: string }): Promise<Evaluation> {
  const clf = loadClassifier(o.classifier);
  const m = loadSentenceEncoder(o.model);
  if (m.dim !== clf.dim) throw new Error(`--classifier ${o.classifier} takes ${clf.dim}-d document vectors, --model ${o.model} gives ${m.dim}-d`);
  const { docs, x } = await embedLabelled(m, o, (d) => {
    const unknown = [...new Set(d.labels.filter((l) => !clf.labels.includes(l)))];
    if (unknown.length) throw new Error(`${o.data}: labels the classifier does not know: ${unknown.join(', ')}`);
  });
  return evaluate(
    Int32Array.from(docs.labels, (l) => clf.labels.indexOf(l)),
    predict(clf, x),
    clf.labels,
  );
}
