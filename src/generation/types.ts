export const STYLES = ['professional', 'casual', 'technical', 'creative', 'academic'] as const;
export const LENGTHS = ['short', 'medium', 'long'] as const;
export const TONES = ['informative', 'persuasive', 'conversational', 'authoritative'] as const;

export type Style = (typeof STYLES)[number];
export type Length = (typeof LENGTHS)[number];
export type Tone = (typeof TONES)[number];

/** Approximate word count each length asks for; both generators aim for it. */
export const WORD_TARGETS: Record<Length, number> = { short: 400, medium: 900, long: 1600 };

/** A knowledge-base excerpt that grounds a post. */
export interface Passage {
  fileId: string;
  fileName: string;
  text: string;
  score: number;
}

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
