import type { Passage } from '../knowledge/search.js';
import type { Length, Style, Tone } from '../limits.js';

export type { Length, Passage, Style, Tone };

/** Approximate word count each length asks for; both generators aim for it. */
export const WORD_TARGETS: Record<Length, number> = { short: 400, medium: 900, long: 1600 };

export interface GenerationRequest {
  topic: string;
  style: Style;
  length: Length;
  tone: Tone;
  includeExamples: boolean;
  targetAudience: string | null;
  passages: Passage[];
  /**
   * Set when `passages` are what the search retrieved, best first: the generator grounds the
   * post on those that may ground the topic (relevance.ts), at most this many, and claims no
   * source when none may. Choosing where the post is written lets the builtin composer's
   * thread analyse each passage once, for choosing and for writing, instead of the event loop
   * analysing them first. Unset: `passages` were chosen already, and all of them are used.
   */
  groundingLimit?: number;
  /** Overrides the configured model; 'builtin' asks for the offline composer. */
  model?: string | null;
}

export interface GeneratedPost {
  title: string;
  description: string;
  category: string;
  tags: string[];
  /** Markdown. */
  content: string;
}

export type ProviderName = 'ollama' | 'builtin';

export interface GenerationResult {
  post: GeneratedPost;
  provider: ProviderName;
  model: string;
  /**
   * What the writer says about its work, for staff only ("Drawn from guide.md.", why a post is
   * short): never part of the post's description or content, which readers see.
   */
  notes?: string[];
  /** No source covered the topic: the post is an outline for a person to write, and stays a draft. */
  outline?: boolean;
  /** Files the post was grounded on. */
  sources?: string[];
}

export interface Generator {
  readonly provider: ProviderName;
  readonly model: string;
  generate(req: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult>;
}
