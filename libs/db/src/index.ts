export * from './orm.js';
export * from './busy.js';
export * from './unavailable.js';
export { dbArray, dialectOf, fromDb, toDb, type ColumnKind, type DbArray, type Dialect } from './sql/convert.js';
export { entityOf, queries, Queries, writeTogether, type Columns, type Prepared, type Statement, type StatementOptions, type Tables, type Write } from './sql/queries.js';
export { sql } from 'kysely';
export { allWorkspaces, forWorkspace, isWorkspaceOwned, workspaceFilter, WORKSPACE_FILTER, type WorkspaceFilterOptions, type WorkspaceScope } from './workspace.js';
