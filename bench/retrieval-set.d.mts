// Types of retrieval-set.mjs, for the TypeScript tests that run the same evaluation.

/** Any one of a query's answers makes a result relevant. */
export interface Answer {
  /** Names of the files the answer may come from. */
  files: string[];
  /** Words the passage must contain (whitespace runs compared as one space). */
  contains: string;
}

export interface RetrievalQuery {
  kind: 'code' | 'words' | 'cjk';
  q: string;
  answers: Answer[];
}

/** Fixture files, relative to test/fixtures. */
export const FILES: readonly string[];
export const QUERIES: readonly RetrievalQuery[];
export const TOP: number;
export const RECALL_AT: number;

export function firstRelevant(results: readonly { fileName: string; text: string }[], answers: readonly Answer[]): number | null;

export function retrievalFigures(ranks: readonly (number | null)[]): { queries: number; recallAt5: number; mrrAt10: number };
