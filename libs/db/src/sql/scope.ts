import type { OperationNode } from 'kysely';
import { isWorkspaceOwned } from '../workspace.js';
import type { TableInfo } from './convert.js';
import { name as identifier, type Node } from './results.js';

/** A workspace's table a statement reads or changes: its name, the name references use, its workspace and key columns. */
interface Target {
  table: string;
  alias: string;
  workspace: string;
  keys: readonly string[];
}

/** The conditions a row must meet: a WHERE's or ON's operands joined by AND. */
function conjuncts(node: unknown, out: Node[] = []): Node[] {
  const n = node as Node | undefined;
  if (!n) return out;
  if (n.kind === 'WhereNode') return conjuncts(n.where, out);
  if (n.kind === 'OnNode') return conjuncts(n.on, out);
  if (n.kind === 'ParensNode') return conjuncts(n.node, out);
  if (n.kind === 'AndNode') return conjuncts(n.right, conjuncts(n.left, out));
  out.push(n);
  return out;
}

/** The column an operand names in `alias` (an unqualified column counts as the target's), else undefined. */
function columnOf(operand: unknown, alias: string): string | undefined {
  const ref = operand as Node;
  if (ref.kind === 'ColumnNode') return identifier(ref);
  if (ref.kind !== 'ReferenceNode') return undefined;
  const qualifier = identifier(ref.table);
  return qualifier === undefined || qualifier === alias ? identifier(ref.column) : undefined;
}

/** Whether one of the conditions is `<column> = …` or `<column> in (…)` for one of `columns` of the target (either side of `=`). */
function pinned(conds: readonly Node[], alias: string, columns: readonly string[]): boolean {
  return conds.some((c) => {
    if (c.kind !== 'BinaryOperationNode') return false;
    const op = (c.operator as Node | undefined)?.operator;
    const sides = op === '=' ? [c.leftOperand, c.rightOperand] : op === 'in' ? [c.leftOperand] : [];
    return sides.some((side) => columns.includes(columnOf(side, alias) ?? ''));
  });
}

/**
 * Checks a statement against the workspace rule (libs/db/src/workspace.ts) once, when it is first
 * compiled: every read of a workspace's table (its entity has the `workspace` filter on) names
 * `workspace_id = …` in its WHERE (a joined table: in its WHERE, or its primary key in the ON: a row
 * reached from one already pinned); an update or delete names the workspace or the row's primary key
 * (a row read in its workspace). A statement that must read across workspaces says so with
 * `{ allWorkspaces: true }` and is not checked. Throws naming the table.
 */
export function checkWorkspaceScope(root: OperationNode, tables: ReadonlyMap<string, TableInfo>): void {
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) visit(v);
      return;
    }
    if (!value || typeof value !== 'object' || typeof (value as Node).kind !== 'string') return;
    const node = value as Node;
    if (node.kind === 'SelectQueryNode' || node.kind === 'UpdateQueryNode' || node.kind === 'DeleteQueryNode') checkQuery(node, tables);
    for (const child of Object.values(node)) visit(child);
  };
  visit(root);
}

function targetOf(node: unknown, tables: ReadonlyMap<string, TableInfo>): Target | undefined {
  const t = node as Node | undefined;
  if (!t) return undefined;
  const [table, alias] = t.kind === 'AliasNode' ? [identifier(t.node), identifier(t.alias)] : [identifier(t), identifier(t)];
  const info = table === undefined ? undefined : tables.get(table);
  const workspace = info?.columns.get('workspaceId');
  if (!info || !workspace || alias === undefined || !isWorkspaceOwned(info.meta)) return undefined;
  return { table: info.meta.tableName, alias, workspace, keys: info.meta.primaryKeys.map((pk) => info.columns.get(pk) ?? pk) };
}

function checkQuery(node: Node, tables: ReadonlyMap<string, TableInfo>): void {
  const reads = node.kind === 'SelectQueryNode';
  const where = conjuncts(node.where);
  const refuse = (t: Target) => new Error(
    `A statement ${reads ? 'reads' : 'changes'} ${t.table} without naming the workspace (\`${t.workspace} = …\`${reads ? '' : ' or its primary key'}): ` +
    'add it, or declare the statement { allWorkspaces: true } where it must see every workspace',
  );
  const froms = [...(((node.from as Node | undefined)?.froms as unknown[] | undefined) ?? []), ...(node.kind === 'UpdateQueryNode' ? [node.table] : [])];
  for (const f of froms) {
    const t = targetOf(f, tables);
    if (t && !pinned(where, t.alias, reads ? [t.workspace] : [t.workspace, ...t.keys])) throw refuse(t);
  }
  for (const j of (node.joins as Node[] | undefined) ?? []) {
    const t = targetOf(j.table, tables);
    if (t && !pinned(conjuncts(j.on), t.alias, [t.workspace, ...t.keys]) && !pinned(where, t.alias, [t.workspace])) throw refuse(t);
  }
}
