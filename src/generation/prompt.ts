import { InvalidModelOutputError } from './errors.js';
import { WORD_TARGETS, type GeneratedPost, type GenerationRequest, type Passage } from './types.js';
import { MAX_TAGS, MAX_TITLE_LENGTH } from '../limits.js';
import { distinctTags } from '../posts/tags.js';
import { passagesToGroundOn } from './relevance.js';

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** Keeps the prompt inside a small model's context window. */
export const MAX_PROMPT_PASSAGES = 8;
const MAX_PASSAGE_CHARS = 2000;

export const POST_JSON_SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string' },
    description: { type: 'string' },
    category: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    content: { type: 'string' },
  },
  required: ['title', 'description', 'category', 'tags', 'content'],
} as const;

const SYSTEM_PROMPT = [
  'You are an experienced blog writer.',
  'Answer with one JSON object and nothing else, with the fields:',
  'title (string), description (one or two sentences), category (one or two words),',
  'tags (3 to 6 short lowercase keywords) and content (the full post body in Markdown, using ## headings, without repeating the title).',
  'When sources are given, base the facts on them, do not invent facts that contradict them,',
  'and attribute what you take from a source by naming its file, e.g. "(source: guide.md)".',
].join(' ');

/** Highest-scoring passages first; ties keep their original order. */
export function topPassages(passages: readonly Passage[], limit: number): Passage[] {
  return [...passages].sort((a, b) => b.score - a.score).slice(0, limit);
}

function clip(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= maxChars ? flat : `${flat.slice(0, maxChars).trimEnd()}…`;
}

export function buildMessages(req: GenerationRequest): ChatMessage[] {
  const lines = [
    `Write a blog post about: ${req.topic.trim()}`,
    `Style: ${req.style}.`,
    `Tone: ${req.tone}.`,
    `Length: about ${WORD_TARGETS[req.length].toLocaleString('en-US')} words (${req.length}).`,
    `Audience: ${req.targetAudience?.trim() || 'a general audience'}.`,
    req.includeExamples
      ? 'Include concrete examples in a section headed "Examples".'
      : 'Do not include an examples section.',
  ];
  const sources = topPassages(passagesToGroundOn(req), MAX_PROMPT_PASSAGES);
  if (sources.length > 0) {
    lines.push(
      '',
      'Sources (rely on them and attribute each fact to its file name):',
      ...sources.map((p, i) => `[${i + 1}] (${p.fileName}) ${clip(p.text, MAX_PASSAGE_CHARS)}`),
    );
  } else {
    lines.push('', 'No sources are available: write from general knowledge and avoid precise claims you cannot support.');
  }
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: lines.join('\n') },
  ];
}

function requireString(record: Record<string, unknown>, field: string): string {
  const value = record[field];
  if (typeof value !== 'string') {
    throw new InvalidModelOutputError(value === undefined ? `${field} is missing` : `${field} is not a string`);
  }
  return value.trim();
}

/** The model's tags as posts keep them (distinct), cut to the posts' maximum rather than refused. */
function cleanTags(value: unknown): string[] {
  if (!Array.isArray(value)) {
    throw new InvalidModelOutputError(value === undefined ? 'tags is missing' : 'tags is not an array');
  }
  if (value.some((item) => typeof item !== 'string')) throw new InvalidModelOutputError('tags contains a non-string');
  return distinctTags(value).slice(0, MAX_TAGS);
}

/** Validates the model's raw answer; throws InvalidModelOutputError saying what is wrong. */
export function parseGeneratedPost(raw: string): GeneratedPost {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new InvalidModelOutputError('the answer is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidModelOutputError('the answer is not a JSON object');
  }
  const record = parsed as Record<string, unknown>;
  const title = requireString(record, 'title');
  if (title === '') throw new InvalidModelOutputError('title is empty');
  if (title.length > MAX_TITLE_LENGTH) throw new InvalidModelOutputError(`title is longer than ${MAX_TITLE_LENGTH} characters`);
  const content = requireString(record, 'content');
  if (content === '') throw new InvalidModelOutputError('content is empty');
  return {
    title,
    description: requireString(record, 'description'),
    category: requireString(record, 'category'),
    tags: cleanTags(record.tags),
    content,
  };
}
