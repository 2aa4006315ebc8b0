import type { PostRow, PostStore } from '../posts/store.js';
import { writeGroundedPost, type GroundingDeps, type PostRequest } from './grounded.js';

/** The generate endpoint's work: a grounded post, written and stored as a draft. */
export class PostWriter {
  constructor(private readonly deps: GroundingDeps & { posts: Pick<PostStore, 'create'> }) {}

  async write(siteId: string, request: PostRequest, signal?: AbortSignal): Promise<PostRow> {
    const { result } = await writeGroundedPost(this.deps, siteId, request, signal);
    return this.deps.posts.create(siteId, { ...result.post, isDraft: true }, { generatorProvider: result.provider, generatorModel: result.model });
  }
}
