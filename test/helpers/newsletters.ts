import type { TestApp } from './app.js';
import { multipart } from './multipart.js';

/**
 * A published post's newsletter to `count` imported subscribers (r0@example.com, ...): turns the
 * site's newsletters on, imports the addresses and publishes a post, whose id it answers. With
 * the job loops not started, a test claims the send's recipients by hand.
 */
export async function newsletterSendOf(ctx: TestApp, count: number, title = 'Newsletter'): Promise<string> {
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true } } });
  const form = multipart([{ name: 'file', filename: 'list.csv', content: Array.from({ length: count }, (_, i) => `r${i}@example.com`).join('\n') }]);
  await ctx.call({ method: 'POST', url: '/api/v1/subscribers/import', payload: form.payload, headers: form.headers });
  return (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title, isDraft: false } })).json().data.post.id;
}
