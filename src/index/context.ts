// Errors of faiss work named by what the user gave: the option or file in front, faiss's C++
// function and source location dropped.
import { faissMessage } from './faiss.js';

/**
 * Runs fn; an error it throws (or rejects with) gets `what` (the file or option the user gave)
 * in front, and loses faiss's C++ function and source location.
 */
export function inContext<T>(what: string, fn: () => T): T {
  const fail = (e: unknown): never => {
    throw new Error(`${what}: ${faissMessage(e)}`);
  };
  let r: T;
  try {
    r = fn();
  } catch (e) {
    return fail(e);
  }
  return (r instanceof Promise ? r.catch(fail) : r) as T;
}
