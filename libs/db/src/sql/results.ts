import type { OperationNode } from 'kysely';
import type { ColumnKind, TableInfo } from './convert.js';

/** A result column to convert: its name in the row and how its stored value is read. */
export type ResultColumn = readonly [name: string, kind: ColumnKind];

/** A node of Kysely's query tree, read by kind. */
export interface Node {
  kind: string;
  [key: string]: unknown;
}

/** The name an identifier, table or column node holds. */
export function name(node: unknown): string | undefined {
  const n = node as Node | undefined;
  if (!n) return undefined;
  if (n.kind === 'IdentifierNode') return n.name as string;
  if (n.kind === 'TableNode') return name((n.table as Node).identifier);
  if (n.kind === 'ColumnNode') return name(n.column);
  return undefined;
}

/**
 * The columns of a statement's rows that need reading back (dates, booleans, JSON, bigints), found
 * once per statement from its query tree: the selections or `returning` of the statement, each
 * resolved to the column it reads in one of the statement's tables (aliases of tables and columns
 * followed; `*` and `t.*` expand to the table's columns). Computed values (`count(*) as n`, raw SQL)
 * are left as the driver answers them.
 */
export function resultColumns(root: OperationNode, tables: ReadonlyMap<string, TableInfo>): ResultColumn[] {
  const node = root as unknown as Node;
  // Tables in scope, by the name a reference uses (alias or table name).
  const scope = new Map<string, TableInfo>();
  const addTable = (n: unknown) => {
    const t = n as Node | undefined;
    if (!t) return;
    const [table, alias] = t.kind === 'AliasNode' ? [name(t.node), name(t.alias)] : [name(t), name(t)];
    const info = table === undefined ? undefined : tables.get(table);
    if (info && alias !== undefined) scope.set(alias, info);
  };
  let selections: unknown[] | undefined;
  switch (node.kind) {
    case 'SelectQueryNode':
      for (const f of ((node.from as Node | undefined)?.froms as unknown[] | undefined) ?? []) addTable(f);
      selections = node.selections as unknown[] | undefined;
      break;
    case 'InsertQueryNode':
      addTable(node.into);
      break;
    case 'UpdateQueryNode':
      addTable(node.table);
      for (const f of ((node.from as Node | undefined)?.froms as unknown[] | undefined) ?? []) addTable(f);
      break;
    case 'DeleteQueryNode':
      for (const f of ((node.from as Node | undefined)?.froms as unknown[] | undefined) ?? []) addTable(f);
      break;
    default:
      return [];
  }
  for (const j of (node.joins as Node[] | undefined) ?? []) addTable(j.table);
  selections ??= ((node.returning as Node | undefined)?.selections as unknown[] | undefined) ?? [];

  const out = new Map<string, ColumnKind>();
  const all = (info: TableInfo | undefined) => {
    for (const [column, kind] of info?.kinds ?? []) if (!out.has(column)) out.set(column, kind);
  };
  const kindOf = (ref: Node): ColumnKind | undefined => {
    const column = name(ref.column);
    if (column === undefined) return undefined;
    if (ref.table) return scope.get(name(ref.table) ?? '')?.kinds.get(column);
    for (const info of scope.values()) if (info.meta.props.some((p) => p.fieldNames?.[0] === column)) return info.kinds.get(column);
    return undefined;
  };
  for (const s of selections as Node[]) {
    const sel = s.selection as Node;
    if (sel.kind === 'SelectAllNode') {
      for (const info of scope.values()) all(info);
    } else if (sel.kind === 'ReferenceNode' && (sel.column as Node).kind === 'SelectAllNode') {
      all(scope.get(name(sel.table) ?? ''));
    } else if (sel.kind === 'ReferenceNode') {
      const kind = kindOf(sel);
      if (kind) out.set(name(sel.column) as string, kind);
    } else if (sel.kind === 'AliasNode' && (sel.node as Node).kind === 'ReferenceNode') {
      const kind = kindOf(sel.node as Node);
      if (kind) out.set(name(sel.alias) as string, kind);
    }
  }
  return [...out];
}
