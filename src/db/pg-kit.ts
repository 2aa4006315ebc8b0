import type { BuildExtraConfigColumns, IsIdentity, IsPrimaryKey, NotNull } from 'drizzle-orm';
import type { ConvertCustomConfig, ExtraConfigColumn, PgBigInt53BuilderInitial, PgBooleanBuilderInitial, PgColumnBuilderBase, PgCustomColumnBuilder, PgIntegerBuilderInitial, PgJsonbBuilderInitial, PgTableExtraConfigValue, PgTextBuilderInitial, PgTimestampBuilderInitial } from 'drizzle-orm/pg-core';
import { DialectTables, type AnyColumnSpec, type ColumnConfig, type TableSpec } from './columns.js';
import { sql } from './orm.js';
import { pgCore } from './pg-orm.js';

const { bigint, boolean, customType, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } = pgCore;

/*
 * PostgreSQL's column types for the kinds of columns.ts, chosen so that every row comes out
 * with the same TypeScript type as from SQLite, and service code can be shared:
 *
 * - times: SQLite keeps epoch milliseconds and drizzle hands out Dates; here `timestamptz(3)`,
 *   also handed out as Dates, to the millisecond (JSON `toISOString()` is byte for byte the same);
 * - JSON: `jsonb`, with the same TypeScript types (key order inside objects is not kept: nothing
 *   reads a stored object's key order);
 * - booleans: `boolean`, read as booleans as SQLite's 0/1 are;
 * - integers: `integer`, or `bigint` read as numbers where SQLite's 64 bits could matter (byte
 *   sizes, row ids that only grow);
 * - vectors: `real[]` (pgvector is not assumed; cosine is computed in SQL).
 */

/** A vector of 32-bit floats: `real[]`. */
type Float32Vector = { data: Float32Array; driverData: number[] };
const float32Vector = customType<Float32Vector>({
  dataType: () => 'real[]',
  toDriver: (value) => Array.from(value),
  fromDriver: (value) => Float32Array.from(value),
});

/** The PostgreSQL column builder of each kind of columns.ts, as its type. */
interface PgColumnTypes<C extends ColumnConfig> {
  text: PgTextBuilderInitial<C['name'], Exclude<C['enumValues'], undefined>>;
  integer: PgIntegerBuilderInitial<C['name']>;
  bigInteger: PgBigInt53BuilderInitial<C['name']>;
  identity: IsIdentity<IsPrimaryKey<NotNull<PgBigInt53BuilderInitial<C['name']>>>, 'byDefault'>;
  boolean: PgBooleanBuilderInitial<C['name']>;
  timestamp: PgTimestampBuilderInitial<C['name']>;
  json: PgJsonbBuilderInitial<C['name']>;
  vector: PgCustomColumnBuilder<ConvertCustomConfig<C['name'], Float32Vector>>;
}

/** The builders a table definition's columns become: the kind's type, plus what was asked of the column. */
type PgBuilders<Columns extends Record<string, AnyColumnSpec>> = {
  [K in keyof Columns]: PgColumnTypes<Columns[K]['_']>[Columns[K]['_']['kind']] & { _: Columns[K]['_']['flags'] };
};

const tables = new DialectTables<ExtraConfigColumn, PgTableExtraConfigValue>({
  columns: {
    text: (name, enumValues) => text(name, { enum: enumValues }),
    integer: (name) => integer(name),
    bigInteger: (name) => bigint(name, { mode: 'number' }),
    identity: (name) => bigint(name, { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    boolean: (name) => boolean(name),
    // Dates to the millisecond, as JavaScript has them, with the time zone kept (an instant).
    timestamp: (name) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' }),
    json: (name) => jsonb(name),
    vector: (name) => float32Vector(name),
  },
  jsonLiteral: (value) => sql.raw(`'${JSON.stringify(value).replaceAll("'", "''")}'::jsonb`),
  index: (name, unique, columns) => (unique ? uniqueIndex(name) : index(name)).on(...columns),
  primaryKey: (columns) => primaryKey({ columns }),
});

/** What PostgreSQL alone has in a table: columns, and indexes (over any of its columns). */
interface PgOnly<S extends TableSpec, Extra extends Record<string, PgColumnBuilderBase>> {
  columns: Extra;
  constraints?: (columns: BuildExtraConfigColumns<S['name'], PgBuilders<S['columns']> & Extra, 'pg'>) => PgTableExtraConfigValue[];
}

/** The PostgreSQL table of a definition in tables.ts, with what PostgreSQL alone has in it. */
export function pgTableOf<S extends TableSpec, Extra extends Record<string, PgColumnBuilderBase> = Record<never, never>>(spec: S, pgOnly?: PgOnly<S, Extra>) {
  return tables.build(spec, (builders, constraints) =>
    pgTable(spec.name as S['name'], { ...builders, ...pgOnly?.columns } as PgBuilders<S['columns']> & Extra, (columns) => [
      ...constraints(columns as Record<string, ExtraConfigColumn>),
      ...(pgOnly?.constraints?.(columns) ?? []),
    ]),
  );
}
