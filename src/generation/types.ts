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
}

export interface Generator {
  readonly provider: ProviderName;
  readonly model: string;
  generate(req: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult>;
}
