// The effects of the test jobs of the queue and loop tests: a row in `jobs` of a kind of its
// own, grouped under the job it is the effect of, written through the queue's own steps inside
// the transaction that records that job's outcome. A test sees whether it committed, and how
// often. The queues the tests claim from leave these kinds alone (MARKS).
import type { Steps } from '../../src/db/steps.js';
import { enqueueSteps } from '../../src/jobs/store.js';

/** What a job's success commits. */
export const EFFECT = 'effect';
/** What a settle listener writes. */
export const SETTLED = 'settled';
/** The kinds tests write as marks: never claimed. */
export const MARKS = [EFFECT, SETTLED];

/** Writes a mark of `kind` for job `of`, in the transaction under way; answers its id. */
export function* markSteps(kind: string, siteId: string, of: string): Steps<string> {
  const [mark] = yield* enqueueSteps(siteId, [{ kind, payload: { of }, scheduledFor: new Date(0), groupId: of }], 1);
  return mark!.id;
}
