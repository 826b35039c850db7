// The SentenceEncoder of a family that computes with libtorch: the family gives its vectors as a
// tensor (vectors / vectorsAsync); this class hands them over as float32 rows, L2-normalised
// inside the tensor when asked (the same torch op as the embed path's normaliser, so the same
// bits, and two copies of the rows fewer per batch than normalising after they left the tensor).
import { normalize } from '../tensor/ops.js';
import { noGrad, Tensor, tidy } from '../tensor/tensor.js';
import { EncodeOptions, SentenceEncoder } from './encoder.js';

export abstract class TensorEncoder implements SentenceEncoder {
  abstract readonly dim: number;
  /** Vectors [n, dim] (not normalised) of a batch, in inference mode: no gradient, no dropout. */
  abstract vectors(seqs: Int32Array[]): Tensor;
  /** vectors() with the heavy kernels on a worker thread; by default the same call on this thread. */
  vectorsAsync(seqs: Int32Array[]): Promise<Tensor> {
    return Promise.resolve(this.vectors(seqs));
  }

  encode(seqs: Int32Array[], o: EncodeOptions = {}): Float32Array {
    return noGrad(() => tidy(() => rowsOf(this.vectors(seqs), o)));
  }

  async encodeAsync(seqs: Int32Array[], o: EncodeOptions = {}): Promise<Float32Array> {
    const v = await this.vectorsAsync(seqs);
    try {
      return noGrad(() => tidy(() => rowsOf(v, o)));
    } finally {
      v.dispose();
    }
  }
}

/** A [n, dim] tensor as float32 rows, normalised when asked, in o.into when given (call inside tidy). */
function rowsOf(v: Tensor, o: EncodeOptions): Float32Array {
  const r = o.normalize ? normalize(v, 1) : v;
  if (!o.into) return r.toFloat32Array();
  r.copyInto(o.into);
  return o.into;
}

/** A TensorEncoder over two functions (fast paths and wrappers that are not classes of their own). */
export function tensorEncoder(
  dim: number,
  vectors: (seqs: Int32Array[]) => Tensor,
  vectorsAsync?: (seqs: Int32Array[]) => Promise<Tensor>,
  extra: { dispose?(): void; batchLimits?: SentenceEncoder['batchLimits'] } = {},
): TensorEncoder & { dispose(): void } {
  return new (class extends TensorEncoder {
    readonly dim = dim;
    readonly batchLimits = extra.batchLimits;
    vectors(seqs: Int32Array[]): Tensor {
      return vectors(seqs);
    }
    override vectorsAsync(seqs: Int32Array[]): Promise<Tensor> {
      return vectorsAsync ? vectorsAsync(seqs) : super.vectorsAsync(seqs);
    }
    dispose(): void {
      extra.dispose?.();
    }
  })();
}
