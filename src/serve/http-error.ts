// Errors as xling serve answers them: an HTTP status and Hugging Face text-embeddings-inference's
// JSON body {error, error_type}, thrown anywhere in a request's life and sent by the error handler
// (plugins/errors.ts).

/** A JSON error as TEI answers it. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
  ) {
    super(message);
  }
}

/** An error message without the directories of paths in it (file names are kept). */
export function withoutPaths(m: string): string {
  return m.replace(/(?:[A-Za-z]:)?(?:[\\/][^\s'"`:,()\\/]+)+[\\/]([^\s'"`:,()\\/]*)/g, '$1');
}

/** A request URL's path, without its query. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
