import { validationError } from '../errors.js';

/**
 * When each post of a batch is due. A post's own `scheduledFor` wins; the others are spread
 * evenly from startDate (first) to endDate (last), in order; with neither, they are due now.
 */
export function scheduleBatch(
  posts: readonly { scheduledFor?: Date | null }[],
  window: { startDate?: Date | null; endDate?: Date | null },
  now: Date,
): Date[] {
  const { startDate, endDate } = window;
  if (!startDate !== !endDate) {
    throw validationError('startDate and endDate go together', [
      { path: startDate ? '/body/endDate' : '/body/startDate', message: 'is required when the other is given' },
    ]);
  }
  if (startDate && endDate && endDate.getTime() < startDate.getTime()) {
    throw validationError('endDate is before startDate', [{ path: '/body/endDate', message: 'must not be before startDate' }]);
  }
  const spread = posts.filter((post) => !post.scheduledFor).length;
  let index = 0;
  return posts.map((post) => {
    if (post.scheduledFor) return post.scheduledFor;
    if (!startDate || !endDate) return now;
    const span = endDate.getTime() - startDate.getTime();
    const at = spread === 1 ? startDate.getTime() : startDate.getTime() + Math.round((span * index) / (spread - 1));
    index++;
    return new Date(at);
  });
}
