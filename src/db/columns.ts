import type { SQL } from 'drizzle-orm';

/*
 * A column kit that knows no dialect: tables.ts defines every table once with it, and
 * schema.ts (SQLite) and pg-schema.ts (PostgreSQL) each turn those definitions into drizzle
 * tables, mapping every column kind to a column type of their own.
 *
 * The definitions are data, not functions of a dialect's builders, because TypeScript cannot
 * follow a generic builder through `.notNull().default(...)`: the row types would widen. So a
 * column here records what was asked of it, and its type carries the same facts drizzle's
 * builders carry (`notNull`, `hasDefault`, `isPrimaryKey`, `$type`): the dialect modules add
 * them to their builder types, which gives exactly the row types of hand-written tables.
 */

/** What a column holds; each dialect has one column type per kind. */
export type ColumnKind =
  | 'text'
  | 'integer'
  // An integer that may outgrow 32 bits (byte sizes, references to identities), read as a number.
  | 'bigInteger'
  // A growing integer key the database assigns when an insert leaves it out.
  | 'identity'
  | 'boolean'
  // A Date, kept to the millisecond.
  | 'timestamp'
  // Any JSON value (its TypeScript type given with `$type<T>()`).
  | 'json'
  // An embedding, a Float32Array in TypeScript (each dialect stores it its own way).
  | 'vector';

type TextEnum = [string, ...string[]];

/** Type-level facts about a column; `flags` holds those drizzle's builder types carry in `_`. */
export interface ColumnConfig {
  kind: ColumnKind;
  name: string;
  data: unknown;
  enumValues: TextEnum | undefined;
  flags: object;
}

type Flagged<C extends ColumnConfig, F extends object> = {
  kind: C['kind'];
  name: C['name'];
  data: C['data'];
  enumValues: C['enumValues'];
  flags: C['flags'] & F;
};

type Typed<C extends ColumnConfig, T> = {
  kind: C['kind'];
  name: C['name'];
  data: T;
  enumValues: C['enumValues'];
  flags: C['flags'] & { $type: T };
};

export type ForeignKeyAction = 'cascade' | 'restrict' | 'no action' | 'set null' | 'set default';
export interface ForeignKeyActions {
  onDelete?: ForeignKeyAction;
  onUpdate?: ForeignKeyAction;
}

export type AnyColumnSpec = ColumnSpec<ColumnConfig>;

/** One column as a table definition asks for it; its methods mirror drizzle's builders. */
export class ColumnSpec<C extends ColumnConfig> {
  /** Type only, like drizzle's builders: what the dialects' builder types are made of. */
  declare readonly _: C;
  /** The column's property name in its table, set by defineTable. */
  key = '';
  isNotNull = false;
  isPrimaryKey = false;
  hasDefault = false;
  defaultValue: unknown = undefined;
  reference: { column: () => AnyColumnSpec; actions: ForeignKeyActions } | undefined = undefined;

  constructor(
    readonly kind: C['kind'],
    readonly name: C['name'],
    /** Undefined for text without an enum, whose type-level values are any strings. */
    readonly enumValues: TextEnum | undefined,
  ) {}

  notNull(): ColumnSpec<Flagged<C, { notNull: true }>> {
    this.isNotNull = true;
    return this as never;
  }

  /**
   * Text keys only: SQLite's `integer primary key` would be optional on insert where
   * PostgreSQL's is not (an integer key is `identity()`, or a table-level primaryKey()).
   */
  primaryKey(): ColumnSpec<Flagged<C, { notNull: true; isPrimaryKey: true }>> {
    this.isPrimaryKey = true;
    return this as never;
  }

  /** A value the database fills in; a JSON value becomes an SQL literal of the column's type. */
  default(value: C['data']): ColumnSpec<Flagged<C, { hasDefault: true }>> {
    this.hasDefault = true;
    this.defaultValue = value;
    return this as never;
  }

  $type<T>(): ColumnSpec<Typed<C, T>> {
    return this as never;
  }

  references(column: () => AnyColumnSpec, actions: ForeignKeyActions = {}): this {
    this.reference = { column, actions };
    return this;
  }
}

type Column<K extends ColumnKind, N extends string, Data, E extends TextEnum | undefined = undefined> = ColumnSpec<{
  kind: K;
  name: N;
  data: Data;
  enumValues: E;
  flags: object;
}>;

type Writable<T> = { -readonly [P in keyof T]: T[P] };

export function text<N extends string>(name: N): Column<'text', N, string, TextEnum>;
export function text<N extends string, U extends string, E extends Readonly<[U, ...U[]]>>(
  name: N,
  config: { enum: E },
): Column<'text', N, E[number], Writable<E>>;
export function text(name: string, config?: { enum: Readonly<TextEnum> }): Column<'text', string, string, TextEnum> {
  return new ColumnSpec('text', name, config?.enum as TextEnum | undefined);
}

export const integer = <N extends string>(name: N): Column<'integer', N, number> => new ColumnSpec('integer', name, undefined);
export const bigInteger = <N extends string>(name: N): Column<'bigInteger', N, number> => new ColumnSpec('bigInteger', name, undefined);
export const identity = <N extends string>(name: N): Column<'identity', N, number> => new ColumnSpec('identity', name, undefined);
export const boolean = <N extends string>(name: N): Column<'boolean', N, boolean> => new ColumnSpec('boolean', name, undefined);
export const timestamp = <N extends string>(name: N): Column<'timestamp', N, Date> => new ColumnSpec('timestamp', name, undefined);
export const json = <N extends string>(name: N): Column<'json', N, unknown> => new ColumnSpec('json', name, undefined);
export const vector = <N extends string>(name: N): Column<'vector', N, Float32Array> => new ColumnSpec('vector', name, undefined);

/** An index or a table-level primary key, over columns of one table definition. */
export type ConstraintSpec =
  | { type: 'index'; name: string; unique: boolean; columns: AnyColumnSpec[] }
  | { type: 'primaryKey'; columns: AnyColumnSpec[] };

type Columns = [AnyColumnSpec, ...AnyColumnSpec[]];

export const index = (name: string) => ({
  on: (...columns: Columns): ConstraintSpec => ({ type: 'index', name, unique: false, columns }),
});
export const uniqueIndex = (name: string) => ({
  on: (...columns: Columns): ConstraintSpec => ({ type: 'index', name, unique: true, columns }),
});
export const primaryKey = (config: { columns: Columns }): ConstraintSpec => ({ type: 'primaryKey', columns: config.columns });

export interface TableSpec<N extends string = string, Cols extends Record<string, AnyColumnSpec> = Record<string, AnyColumnSpec>> {
  name: N;
  columns: Cols;
  constraints: ConstraintSpec[];
}

export function defineTable<N extends string, Cols extends Record<string, AnyColumnSpec>>(
  name: N,
  columns: Cols,
  constraints: (columns: Cols) => ConstraintSpec[] = () => [],
): TableSpec<N, Cols> {
  for (const [key, column] of Object.entries(columns)) column.key = key;
  return { name, columns, constraints: constraints(columns) };
}

/** What every drizzle column builder can do, of what the definitions ask. */
interface ColumnBuilder {
  notNull(): ColumnBuilder;
  primaryKey(): ColumnBuilder;
  default(value: unknown): ColumnBuilder;
  references(column: () => unknown, actions: ForeignKeyActions): ColumnBuilder;
}

/** A dialect's half of the kit: its column type for every kind, and its indexes and keys. */
export interface Dialect<TColumn, TConstraint> {
  columns: { [K in ColumnKind]: (name: string, enumValues: TextEnum | undefined) => ColumnBuilder };
  /** A JSON default as an SQL literal of the dialect's JSON type, as the migrations write it. */
  jsonLiteral: (value: unknown) => SQL;
  index: (name: string, unique: boolean, columns: [TColumn, ...TColumn[]]) => TConstraint;
  primaryKey: (columns: [TColumn, ...TColumn[]]) => TConstraint;
}

/**
 * Builds one dialect's tables from the definitions. It keeps the column each definition
 * became, so that foreign keys (which drizzle resolves lazily) find their target among the
 * tables of the same dialect.
 */
export class DialectTables<TColumn, TConstraint> {
  private readonly columnsBuilt = new Map<AnyColumnSpec, unknown>();

  constructor(private readonly dialect: Dialect<TColumn, TConstraint>) {}

  /**
   * `make` calls the dialect's table function with the column builders and the constraints
   * (for the columns that function hands its extra config) and returns the table.
   */
  build<TTable extends object>(
    table: TableSpec,
    make: (builders: Record<string, unknown>, constraints: (columns: Record<string, TColumn>) => TConstraint[]) => TTable,
  ): TTable {
    const builders = Object.fromEntries(Object.entries(table.columns).map(([key, spec]) => [key, this.columnBuilder(spec)]));
    const built = make(builders, (columns) => this.constraints(table, columns));
    for (const [key, spec] of Object.entries(table.columns)) this.columnsBuilt.set(spec, (built as Record<string, unknown>)[key]);
    return built;
  }

  private constraints(table: TableSpec, columns: Record<string, TColumn>): TConstraint[] {
    return table.constraints.map((constraint) => {
      const on = constraint.columns.map((spec) => columns[spec.key]) as [TColumn, ...TColumn[]];
      return constraint.type === 'index' ? this.dialect.index(constraint.name, constraint.unique, on) : this.dialect.primaryKey(on);
    });
  }

  private columnBuilder(spec: AnyColumnSpec): ColumnBuilder {
    let builder = this.dialect.columns[spec.kind](spec.name, spec.enumValues);
    if (spec.isPrimaryKey) builder = builder.primaryKey();
    if (spec.isNotNull) builder = builder.notNull();
    if (spec.hasDefault) builder = builder.default(spec.kind === 'json' ? this.dialect.jsonLiteral(spec.defaultValue) : spec.defaultValue);
    const reference = spec.reference;
    if (reference) builder = builder.references(() => this.builtColumn(reference.column()), reference.actions);
    return builder;
  }

  private builtColumn(spec: AnyColumnSpec): unknown {
    const column = this.columnsBuilt.get(spec);
    if (column === undefined) throw new Error(`A foreign key references ${spec.name}, in a table not built for this dialect`);
    return column;
  }
}
