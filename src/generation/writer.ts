import type { PostInput } from '../posts/rules.js';
import type { PostRow, PostStore } from '../posts/store.js';
import { writeGroundedPost, type GroundingDeps, type PostRequest } from './grounded.js';

/** The generate endpoint's work: a grounded post, written and stored as a draft. */
export class PostWriter {
  constructor(private readonly deps: GroundingDeps & { posts: Pick<PostStore, 'create'> }) {}

  /** `image`: the feature image the stored post shows (checked by the caller before the writing starts). */
  async write(siteId: string, request: PostRequest, signal?: AbortSignal, image: Pick<PostInput, 'featureImage' | 'featureImageAlt'> = {}): Promise<PostRow> {
    const { result } = await writeGroundedPost(this.deps, siteId, request, signal);
    return this.deps.posts.create(siteId, { ...result.post, isDraft: true, ...image }, { generatorProvider: result.provider, generatorModel: result.model });
  }
}
