import type { MailContent } from '../mail/render.js';
import { visibleText } from './render.js';

/** At most one mail to staff per post in this time, however many comments arrive. */
export const NOTICE_INTERVAL_MS = 60 * 60 * 1000;

const EXCERPT_LENGTH = 300;

/** The mail telling a moderator that comments on a post wait for them. */
export function pendingCommentsMail(input: { postTitle: string; pending: number; latest: { name: string; body: string }; moderateUrl: string }): MailContent {
  const body = visibleText(input.latest.body).replace(/\s+/g, ' ').trim();
  const excerpt = [...body].length > EXCERPT_LENGTH ? `${[...body].slice(0, EXCERPT_LENGTH).join('')}…` : body;
  const many = input.pending === 1 ? 'A comment waits' : `${input.pending} comments wait`;
  return {
    subject: `Comments wait for a moderator on “${input.postTitle}”`,
    heading: `${many} on “${input.postTitle}”`,
    paragraphs: [`${many} for a moderator on “${input.postTitle}”.`, `The latest, by ${visibleText(input.latest.name)}: “${excerpt}”`],
    action: { label: 'Moderate comments', url: input.moderateUrl },
    footer: 'You get this mail as an owner or editor of the site; turn it off on the Comments screen. At most one mail per post an hour.',
  };
}
