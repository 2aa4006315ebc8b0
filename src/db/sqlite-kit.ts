import type { HasDefault, IsPrimaryKey, NotNull } from 'drizzle-orm';
import type { AnySQLiteColumn, ConvertCustomConfig, SQLiteBooleanBuilderInitial, SQLiteCustomColumnBuilder, SQLiteIntegerBuilderInitial, SQLiteTableExtraConfigValue, SQLiteTextBuilderInitial, SQLiteTextJsonBuilderInitial, SQLiteTimestampBuilderInitial } from 'drizzle-orm/sqlite-core';
import { DialectTables, type AnyColumnSpec, type ColumnConfig, type TableSpec } from './columns.js';
import { fromInt8Blob, toInt8Blob } from './vectors.js';
import { sql, sqliteCore } from './orm.js';

const { customType, index, integer, primaryKey, sqliteTable, text, uniqueIndex } = sqliteCore;

/** A vector, stored as the int8 BLOB sqlite-vec reads with vec_int8() (vectors.ts says why). */
type EmbeddingVector = { data: Float32Array; driverData: Buffer };
const embeddingVector = customType<EmbeddingVector>({
  dataType: () => 'blob',
  toDriver: toInt8Blob,
  fromDriver: fromInt8Blob,
});

/** The SQLite column builder of each kind of columns.ts, as its type. */
interface SqliteColumnTypes<C extends ColumnConfig> {
  // The length type is what sqlite-core's text() infers without a length.
  text: SQLiteTextBuilderInitial<C['name'], Exclude<C['enumValues'], undefined>, number | undefined>;
  integer: SQLiteIntegerBuilderInitial<C['name']>;
  bigInteger: SQLiteIntegerBuilderInitial<C['name']>;
  identity: IsPrimaryKey<HasDefault<NotNull<SQLiteIntegerBuilderInitial<C['name']>>>>;
  boolean: SQLiteBooleanBuilderInitial<C['name']>;
  timestamp: SQLiteTimestampBuilderInitial<C['name']>;
  json: SQLiteTextJsonBuilderInitial<C['name']>;
  vector: SQLiteCustomColumnBuilder<ConvertCustomConfig<C['name'], EmbeddingVector>>;
}

/** The builders a table definition's columns become: the kind's type, plus what was asked of the column. */
type SqliteBuilders<Columns extends Record<string, AnyColumnSpec>> = {
  [K in keyof Columns]: SqliteColumnTypes<Columns[K]['_']>[Columns[K]['_']['kind']] & { _: Columns[K]['_']['flags'] };
};

const tables = new DialectTables<AnySQLiteColumn, SQLiteTableExtraConfigValue>({
  columns: {
    text: (name, enumValues) => text(name, { enum: enumValues }),
    integer: (name) => integer(name),
    bigInteger: (name) => integer(name),
    // `integer primary key` is SQLite's rowid; AUTOINCREMENT keeps ids of deleted rows from coming back.
    identity: (name) => integer(name).primaryKey({ autoIncrement: true }),
    boolean: (name) => integer(name, { mode: 'boolean' }),
    // Epoch milliseconds: they sort and compare as integers and keep the milliseconds.
    timestamp: (name) => integer(name, { mode: 'timestamp_ms' }),
    json: (name) => text(name, { mode: 'json' }),
    vector: (name) => embeddingVector(name),
  },
  jsonLiteral: (value) => sql.raw(`'${JSON.stringify(value).replaceAll("'", "''")}'`),
  index: (name, unique, columns) => (unique ? uniqueIndex(name) : index(name)).on(...columns),
  primaryKey: (columns) => primaryKey({ columns }),
});

/** The SQLite table of a definition in tables.ts. */
export function sqliteTableOf<S extends TableSpec>(spec: S) {
  return tables.build(spec, (builders, constraints) =>
    sqliteTable(spec.name as S['name'], builders as SqliteBuilders<S['columns']>, (columns) => constraints(columns as Record<string, AnySQLiteColumn>)),
  );
}
