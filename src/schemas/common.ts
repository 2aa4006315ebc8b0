import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_CODES } from '../errors.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_PAGE } from '../limits.js';

/** Handlers give a Date; the serializer writes it as ISO 8601 UTC with milliseconds. */
export const Timestamp = Type.Unsafe<Date>({ type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
/** A string enumeration; validation errors name the allowed values ("must be one of: a, b"). */
export const StringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });

export const NullableString = Type.Union([Type.String(), Type.Null()]);

export const SiteSchema = Type.Object({ id: Type.String(), name: Type.String() }, { $id: 'Site' });
export const SiteRef = Type.Ref('Site');

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: StringEnum(ERROR_CODES, 'Stable UPPER_SNAKE error code'),
      message: Type.String(),
      details: Type.Optional(
        Type.Union([
          Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), { description: 'Which fields are wrong, and why' }),
          Type.Object({}, { additionalProperties: true, description: 'Facts about the error (the accepted types, the model, ...)' }),
        ]),
      ),
      requestId: Type.String(),
    }),
  },
  { $id: 'ErrorEnvelope' },
);

export const PaginationSchema = Type.Object({
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  pages: Type.Integer(),
});

export const PageQuery = {
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT }),
};

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** `{ success: true, data }` around a route's data schema. */
export const envelope = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data });

/** The answer to a conditional GET whose copy is current: no body. */
export const NotModified = Type.Null({ description: 'Not modified: the copy named by If-None-Match or If-Modified-Since is current (no body)' });

/** Error responses every route can give (malformed HTTP, 431, 429, 5xx), for the OpenAPI document. */
export const errorResponses = {
  '4xx': Type.Ref('ErrorEnvelope'),
  '5xx': Type.Ref('ErrorEnvelope'),
};
