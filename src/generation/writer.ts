import type { PostInput } from '../posts/rules.js';
import type { PostRow, PostStore } from '../posts/store.js';
import type { GenerationResult } from './types.js';
import { writeGroundedPost, type GroundingDeps, type PostRequest } from './grounded.js';

/** A stored generated post, with what the writer says about it (for staff only). */
export interface WrittenPost {
  post: PostRow;
  generation: { provider: string; model: string; notes: string[]; outline: boolean; sources: string[]; unmatchedWords: string[] };
}

/** The generate endpoint's work: a grounded post, written and stored as a draft. */
export class PostWriter {
  constructor(private readonly deps: GroundingDeps & { posts: Pick<PostStore, 'create'> }) {}

  /** `image`: the feature image the stored post shows (checked by the caller before the writing starts), and who asked (`authorId`). */
  async write(siteId: string, request: PostRequest, signal?: AbortSignal, image: Pick<PostInput, 'featureImage' | 'featureImageAlt' | 'authorId'> = {}): Promise<WrittenPost> {
    const { result, unmatchedWords } = await writeGroundedPost(this.deps, siteId, request, signal);
    const post = await this.deps.posts.create(siteId, { ...result.post, isDraft: true, ...image }, { generatorProvider: result.provider, generatorModel: result.model });
    return { post, generation: { ...generationNotes(result), unmatchedWords } };
  }
}

/** The writer's notes on a result, as staff see them. */
export function generationNotes(result: GenerationResult): Omit<WrittenPost['generation'], 'unmatchedWords'> {
  return { provider: result.provider, model: result.model, notes: result.notes ?? [], outline: result.outline ?? false, sources: result.sources ?? [] };
}
