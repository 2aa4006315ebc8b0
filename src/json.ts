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
