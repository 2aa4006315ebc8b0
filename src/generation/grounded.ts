import { validationError } from '../errors.js';
import type { KnowledgeService } from '../knowledge/service.js';
import { queryTerms } from '../knowledge/search.js';
import { MAX_TOPIC_LENGTH } from '../limits.js';
import type { GenerationRequest, GenerationResult, Generator, Length, Style, Tone } from './types.js';

/** What writing a grounded post needs: the site's knowledge and a generator. */
export interface GroundingDeps {
  knowledge: Pick<KnowledgeService, 'search' | 'existingIds'>;
  generator: Pick<Generator, 'generate'>;
}

/** A topic trimmed, and 1-300 characters long once trimmed. */
export function cleanTopic(raw: string, path = '/body/topic'): string {
  const topic = raw.trim();
  if (!topic || topic.length > MAX_TOPIC_LENGTH) {
    throw validationError(`topic must be 1-${MAX_TOPIC_LENGTH} characters after trimming`, [{ path, message: `must be 1-${MAX_TOPIC_LENGTH} characters after trimming` }]);
  }
  return topic;
}

export const GENERATION_DEFAULTS = { style: 'professional', length: 'medium', tone: 'informative', includeExamples: false } as const;

/** Passages given to a generator: enough grounding for a long post, small enough for a prompt. */
export const GROUNDING_PASSAGES = 6;
/**
 * Passages retrieved to choose them from: some fail the relevance floor or repeat a passage
 * already kept (the same file uploaded twice), and must not crowd out the ones after them.
 */
export const RETRIEVED_PASSAGES = 2 * GROUNDING_PASSAGES;

export interface PostRequest {
  topic: string;
  style?: Style;
  length?: Length;
  tone?: Tone;
  includeExamples?: boolean;
  targetAudience?: string | null;
  model?: string | null;
  /** Draw on the site's knowledge base (default true). */
  useKnowledge?: boolean;
  /** Restrict the knowledge used to these files; ids no longer present are skipped and reported. */
  selectedFileIds?: readonly string[] | null;
}

export interface GroundedPost {
  result: GenerationResult;
  missingFileIds: string[];
  /** With no source drawn on: the topic's words that no passage (of the files searched) contains, so staff know what to reword. */
  unmatchedWords: string[];
}

/**
 * Retrieves the site's passages for the topic and has the generator write the post on those
 * that may ground it (relevant to the topic and distinct: relevance.ts), at most
 * GROUNDING_PASSAGES. Both generators choose them alike (`groundingLimit`): with none, the post
 * claims no source.
 */
export async function writeGroundedPost(
  deps: GroundingDeps,
  siteId: string,
  request: PostRequest,
  signal?: AbortSignal,
): Promise<GroundedPost> {
  let missingFileIds: string[] = [];
  let retrieved: Pick<GenerationRequest, 'passages' | 'groundingLimit'> = { passages: [] };
  const useKnowledge = request.useKnowledge ?? true;
  let fileIds: string[] | undefined;
  if (useKnowledge) {
    if (request.selectedFileIds?.length) {
      const present = await deps.knowledge.existingIds(siteId, request.selectedFileIds);
      fileIds = request.selectedFileIds.filter((id) => present.has(id));
      missingFileIds = request.selectedFileIds.filter((id) => !present.has(id));
    }
    const passages = await deps.knowledge.search(siteId, request.topic, { fileIds, limit: RETRIEVED_PASSAGES });
    retrieved = { passages, groundingLimit: GROUNDING_PASSAGES };
  }
  const result = await deps.generator.generate(
    {
      topic: request.topic,
      style: request.style ?? GENERATION_DEFAULTS.style,
      length: request.length ?? GENERATION_DEFAULTS.length,
      tone: request.tone ?? GENERATION_DEFAULTS.tone,
      includeExamples: request.includeExamples ?? GENERATION_DEFAULTS.includeExamples,
      targetAudience: request.targetAudience?.trim() || null,
      ...retrieved,
      model: request.model ?? null,
    },
    signal,
  );
  const drewOnNothing = useKnowledge && (result.sources ?? []).length === 0;
  return { result, missingFileIds, unmatchedWords: drewOnNothing ? await wordsFoundNowhere(deps, siteId, request.topic, fileIds) : [] };
}

/** The topic's search terms that find no passage at all on their own (one small search each, only when nothing was drawn on). */
async function wordsFoundNowhere(deps: GroundingDeps, siteId: string, topic: string, fileIds: string[] | undefined): Promise<string[]> {
  if (fileIds?.length === 0) return [];
  const words = queryTerms(topic).map((term) => term.join(' '));
  const found = await Promise.all(words.map(async (word) => (await deps.knowledge.search(siteId, word, { fileIds, limit: 1 })).length > 0));
  return words.filter((_, i) => !found[i]);
}
