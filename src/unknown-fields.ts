/**
 * Request bodies are closed: a field no schema declares is a 400 naming it (and the declared
 * field it probably meant), never dropped in silence. A misspelt or misplaced field that was
 * dropped changed the outcome without a word (`defaults: { isDraft: false }` made drafts).
 */
import type { ErrorObject } from 'ajv';

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

// Keywords whose value is a schema, or a list or map of schemas.
const ONE_SCHEMA = ['items', 'additionalItems', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems'];
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];

/**
 * A copy of a body schema in which every object that declares its properties and says nothing
 * of others takes no others (`additionalProperties: false`). An explicit `additionalProperties`
 * is kept; the parts of an `allOf` are left open, as closing each would refuse the others' fields.
 */
export function closeObjects<T>(schema: T, insideAllOf = false): T {
  if (!isSchema(schema)) return schema;
  const closed: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ONE_SCHEMA.includes(key) || key === 'additionalProperties') closed[key] = closeObjects(value);
    else if (SCHEMA_LISTS.includes(key) && Array.isArray(value)) closed[key] = value.map((item) => closeObjects(item));
    else if (key === 'allOf' && Array.isArray(value)) closed[key] = value.map((item) => closeObjects(item, true));
    else if (SCHEMA_MAPS.includes(key) && isSchema(value)) closed[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, closeObjects(item)]));
    else closed[key] = value;
  }
  const declaresProperties = isSchema(schema.properties) || schema.type === 'object';
  if (declaresProperties && !insideAllOf && schema.additionalProperties === undefined && schema.patternProperties === undefined && schema.unevaluatedProperties === undefined) {
    closed.additionalProperties = false;
  }
  return closed as T;
}

/** Optimal string alignment distance (Levenshtein plus swapped neighbours), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const rows: number[][] = Array.from({ length: x.length + 1 }, (_, i) => [i, ...Array<number>(y.length).fill(0)]);
  for (let j = 1; j <= y.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[x.length]![y.length]!;
}

/**
 * Fields one operation names differently from another: a client that sends the other
 * operation's name is pointed at this one's (a post's `isDraft` is a batch's `status`).
 */
const COUNTERPARTS: Record<string, string[]> = {
  isDraft: ['status'],
  status: ['isDraft'],
  scheduledAt: ['scheduledFor', 'publishAt'],
  publishedAt: ['publishAt'],
};

// Longer names than this are no typo worth comparing (and would cost time to).
const MAX_COMPARED_LENGTH = 64;

/** The declared field an unknown one probably meant: a close spelling, or its counterpart here. */
export function probableField(unknown: string, declared: readonly string[]): string | undefined {
  const counterpart = COUNTERPARTS[unknown]?.find((name) => declared.includes(name));
  if (counterpart) return counterpart;
  if (unknown.length > MAX_COMPARED_LENGTH) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of declared) {
    const distance = editDistance(unknown, name);
    // Close means at most a third of the longer name differs (one edit for short names).
    const allowed = Math.max(1, Math.floor(Math.max(unknown.length, name.length) / 3));
    if (distance <= allowed && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** A field name as a JSON pointer segment. */
const pointerSegment = (name: string) => name.replaceAll('~', '~0').replaceAll('/', '~1');

// A body with thousands of unknown fields gets the first ones named, not a huge answer.
const MAX_NAMED = 20;
const MAX_NAME_LENGTH = 100;

/**
 * Validation errors of unknown fields (Ajv's `additionalProperties`, found with `allErrors` and
 * `verbose` so every one is there with its schema), each as an error on the field itself whose
 * message says which declared field it probably meant. Undefined when there are none.
 */
export function unknownFieldErrors(errors: readonly ErrorObject[] | null | undefined): ErrorObject[] | undefined {
  const unknown = (errors ?? []).filter((error) => error.keyword === 'additionalProperties' && error.parentSchema?.additionalProperties === false);
  if (unknown.length === 0) return undefined;
  const seen = new Set<string>();
  const named: ErrorObject[] = [];
  for (const error of unknown) {
    const field = String((error.params as { additionalProperty: string }).additionalProperty);
    const key = `${error.instancePath}/${pointerSegment(field)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const declared = Object.keys((error.parentSchema?.properties as Schema | undefined) ?? {});
    const meant = probableField(field, declared);
    const shown = field.length > MAX_NAME_LENGTH ? `${field.slice(0, MAX_NAME_LENGTH)}…` : field;
    named.push({
      ...error,
      instancePath: `${error.instancePath}/${pointerSegment(shown)}`,
      params: { additionalProperty: field },
      message: meant ? `is not a known field: did you mean ${meant}?` : `is not a known field${declared.length ? ` (known: ${declared.join(', ')})` : ''}`,
    });
  }
  if (named.length > MAX_NAMED) {
    const rest = named.length - MAX_NAMED;
    return [...named.slice(0, MAX_NAMED), { ...named[MAX_NAMED]!, instancePath: '', message: `and ${rest} more unknown field${rest === 1 ? '' : 's'}` }];
  }
  return named;
}
