import { validationError, type ErrorDetail } from '../errors.js';
import { MAX_COMMENT_BODY_LENGTH, MAX_COMMENT_EMAIL_LENGTH, MAX_COMMENT_NAME_LENGTH } from '../limits.js';
import { hasVisibleCharacter, isWellFormed } from '../text/wellformed.js';

/** What a reader sends, as typed. */
export interface CommentInput {
  name?: unknown;
  email?: unknown;
  body?: unknown;
  parentId?: unknown;
}

/** A comment's fields once checked: trimmed, the email folded to lower case. */
export interface CheckedComment {
  name: string;
  email: string | null;
  body: string;
  parentId: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The email as kept (lower case, trimmed), or null when none was given. */
export const foldEmail = (email: string): string => email.trim().toLowerCase();

/**
 * The problems of each field, named by the field (`name`, `email`, `body`, `parentId`): every
 * one at once, so a form can show them all beside what was typed. Empty: the comment is good.
 */
export function commentProblems(input: CommentInput): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const text = (field: string, value: unknown, required: boolean, max: number) => {
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
      if (required) problems.push({ path: `/body/${field}`, message: 'is required' });
      return;
    }
    if (typeof value !== 'string') return problems.push({ path: `/body/${field}`, message: 'must be text' });
    const trimmed = value.trim();
    if ([...trimmed].length > max) problems.push({ path: `/body/${field}`, message: `must be at most ${max} characters` });
    else if (!isWellFormed(trimmed)) problems.push({ path: `/body/${field}`, message: 'must be well-formed Unicode' });
    else if (required && !hasVisibleCharacter(trimmed)) problems.push({ path: `/body/${field}`, message: 'must have a visible character' });
  };
  text('name', input.name, true, MAX_COMMENT_NAME_LENGTH);
  text('email', input.email, false, MAX_COMMENT_EMAIL_LENGTH);
  if (typeof input.email === 'string' && input.email.trim() !== '' && !EMAIL.test(input.email.trim())) problems.push({ path: '/body/email', message: 'must be an email address' });
  text('body', input.body, true, MAX_COMMENT_BODY_LENGTH);
  if (input.parentId !== undefined && input.parentId !== null && input.parentId !== '' && (typeof input.parentId !== 'string' || input.parentId.length > 100)) {
    problems.push({ path: '/body/parentId', message: 'must be the id of a comment' });
  }
  return problems;
}

/** The checked comment, or 400 VALIDATION_ERROR naming every bad field. */
export function checkComment(input: CommentInput): CheckedComment {
  const problems = commentProblems(input);
  if (problems.length > 0) throw validationError(`Invalid comment: ${problems.map((p) => `${p.path.replace('/body/', '')} ${p.message}`).join('; ')}`, problems);
  const email = typeof input.email === 'string' && input.email.trim() !== '' ? foldEmail(input.email) : null;
  return {
    name: (input.name as string).trim(),
    email,
    // Forms send line ends as CRLF: kept as LF, whichever way the comment came.
    body: (input.body as string).trim().replace(/\r\n?/g, '\n'),
    parentId: typeof input.parentId === 'string' && input.parentId !== '' ? input.parentId : null,
  };
}
