/*
 * Embedding vectors as SQLite keeps them: int8, each vector scaled so that its largest component
 * is ±127. Cosine similarity ignores a vector's length, so the scale need not be kept; a quarter
 * of float32's bytes makes a search's scan of a site's vectors (the bulk of its cost: reading
 * them) about twice as fast, for an error in cosine distance under 0.001 (768 dimensions).
 */

/** A vector as the int8 BLOB sqlite-vec reads with vec_int8(). */
export function toInt8Blob(vector: Float32Array): Buffer {
  let max = 0;
  for (const value of vector) max = Math.max(max, Math.abs(value));
  const out = new Int8Array(vector.length);
  if (max > 0) for (let i = 0; i < vector.length; i++) out[i] = Math.round((vector[i]! * 127) / max);
  return Buffer.from(out.buffer);
}

/** The vector of an int8 BLOB, scaled to length 1 (its direction is what was kept). */
export function fromInt8Blob(blob: Buffer): Float32Array {
  const values = new Int8Array(blob.buffer, blob.byteOffset, blob.byteLength);
  let norm = 0;
  for (const value of values) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  return Float32Array.from(values, (value) => value / norm);
}
