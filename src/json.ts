/**
 * JSON text that is already serialized (a database can build a page of posts as JSON faster
 * than the rows can be mapped and serialized again); `stringifyWithRaw` emits it as it is.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON.stringify for plain objects, arrays and values, with RawJson emitted verbatim. */
export function stringifyWithRaw(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : stringifyWithRaw(item))).join(',')}]`;
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !('toJSON' in value)) {
    const members: string[] = [];
    for (const [key, member] of Object.entries(value)) {
      if (member !== undefined && typeof member !== 'function') members.push(`${JSON.stringify(key)}:${stringifyWithRaw(member)}`);
    }
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * How deep the objects and arrays of a JSON text nest, counted without parsing (one pass, no
 * recursion) and stopping once past `limit`: checked before anything walks the value.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
