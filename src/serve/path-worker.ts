// The worker thread behind PathFinder (paths.ts): opens the graph directory itself (rows are read
// on demand, the reversed edges built here on first use) and answers one path request at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { GraphReader, minimaxPath } from '../graph/query.js';

export interface PathRequest {
  id: number;
  from: number;
  to: number;
  undirected: boolean;
}

const graph = new GraphReader((workerData as { dir: string }).dir);
parentPort!.on('message', (m: PathRequest) => {
  try {
    const path = minimaxPath(m.undirected ? (i) => graph.undirectedRow(i) : (i) => graph.row(i), graph.size, m.from, m.to);
    parentPort!.postMessage({ id: m.id, path });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message });
  }
});
