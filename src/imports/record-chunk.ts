/**
 * Consecutive records: `cells(i)` is row `firstRow + i` of the file, for i below `length`,
 * as a reader yields them, whichever thread parsed them.
 */
export interface RecordChunk {
  firstRow: number;
  length: number;
  /** Bytes of the file read so far (read ahead of the records a little), for progress. */
  bytesRead: number;
  /** The cells of one record, made when asked for: a chunk's cells all alive at once are garbage to copy. */
  cells(i: number): string[];
}
