// Types of grounding-set.mjs, for TypeScript tests that reuse the grounding evaluation.

export type GroundingKind = 'direct' | 'paraphrase' | 'generic' | 'question' | 'plural' | 'multilingual' | 'shape';

export interface GroundingTopic {
  kind: GroundingKind;
  topic: string;
  /** File names (as uploaded) a person would hand a writer for a post on the topic. */
  relevant: string[];
}

/** The documents, relative to test/fixtures/grounding. */
export const DOCUMENTS: readonly string[];
export const TOPICS: readonly GroundingTopic[];
export const KINDS: readonly GroundingKind[];
/** A second reader's blind judgments, topic -> relevant documents, where they differ from TOPICS'. */
export const SECOND_READER: Readonly<Record<string, readonly string[]>>;
export const TARGETS: { recall: number; precision: number; kindFloor: number };

export interface GroundingMeasure {
  topics: number;
  drawn: number;
  relevant: number;
  hits: number;
  precision: number;
  recall: number;
  /** Topics whose drawn set is exactly the relevant one. */
  exact: number;
}

export function groundingFigures(results: readonly { kind: string; topic?: string; relevant: readonly string[]; drawn: Iterable<string> }[]): {
  overall: GroundingMeasure;
  kinds: Record<string, GroundingMeasure>;
  pass: boolean;
  misses: string[];
};
