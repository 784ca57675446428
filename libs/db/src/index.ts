export * from './orm.js';
export * from './busy.js';
export { dialectOf, fromDb, toDb, type ColumnKind, type Dialect } from './sql/convert.js';
export { entityOf, queries, Queries, type Columns, type Prepared, type Statement, type Tables } from './sql/queries.js';
export { sql } from 'kysely';
