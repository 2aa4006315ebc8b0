// Types of grounding-second-set.mjs.

export type SecondGroundingKind = 'direct' | 'synonym' | 'name' | 'paraphrase' | 'question' | 'generic';

export interface SecondGroundingTopic {
  kind: SecondGroundingKind;
  topic: string;
  /** File names (as uploaded) a person would hand a writer for a post on the topic. */
  relevant: string[];
}

/** The documents, relative to test/fixtures/grounding-second. */
export const DOCUMENTS: readonly string[];
/** Topics the rules may be tuned against. */
export const TOPICS: readonly SecondGroundingTopic[];
/** Held out: reported as figures only. */
export const HELD_OUT: readonly SecondGroundingTopic[];
export const KINDS: readonly SecondGroundingKind[];
