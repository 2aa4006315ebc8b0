import type { DbHandle } from '../db/client.js';
import { writeGroundedPost } from '../generation/grounded.js';
import type { Generator } from '../generation/types.js';
import { insertPost } from '../posts/service.js';
import { postStateFor } from './batch.js';
import type { TaskWork } from './loop.js';

/**
 * The work of a batch task: write the post with the same generator as the generate endpoint.
 * The post is inserted by the loop in the transaction that marks the task succeeded.
 */
export function generationWork(deps: { handle: DbHandle; generator: Pick<Generator, 'generate'> }): TaskWork {
  return async (task, signal) => {
    const params = task.params;
    const { result, missingFileIds } = await writeGroundedPost(deps, task.siteId, { ...params, topic: task.topic }, signal);
    const generated = result.post;
    return {
      missingFileIds,
      insertPost: (tx) =>
        insertPost(
          tx,
          task.siteId,
          {
            title: generated.title,
            description: generated.description,
            content: generated.content,
            category: params.category ?? generated.category,
            tags: params.tags ?? generated.tags,
            authorId: params.authorId ?? null,
            ...postStateFor(params.status),
          },
          { generatorProvider: result.provider, generatorModel: result.model, sourceTaskId: task.id },
        ),
    };
  };
}
