/**
 * Offline composer: writes a complete, source-grounded post from the topic and the passages
 * without any model. Deterministic (no clock, no randomness: variety comes from a hash of the
 * topic) and linear in the passages it is given.
 */

import type { GenerationRequest, GenerationResult, Generator } from '../types.js';
import { Composer } from './composer.js';

export { countWords } from './text.js';

export const BUILTIN_MODEL = 'builtin-composer-1';

export class BuiltinGenerator implements Generator {
  readonly provider = 'builtin' as const;
  readonly model = BUILTIN_MODEL;

  async generate(req: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult> {
    signal?.throwIfAborted();
    return { ...new Composer(req).compose(), provider: this.provider, model: this.model };
  }
}
