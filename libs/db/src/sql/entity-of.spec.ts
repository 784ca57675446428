import type { EntityManager } from '@mikro-orm/core';
import { entityOf } from './queries.js';

/** An entity manager whose metadata holds one table `t` of these properties (only what entityOf reads). */
function managerOf(props: { name: string; kind: string; runtimeType?: string }[]) {
  class T {}
  const meta = { className: 'T', tableName: 't', prototype: T.prototype, props: props.map((p) => ({ ...p, fieldNames: [p.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] })) };
  const storage = { get: () => meta, [Symbol.iterator]: function* () { yield meta; } };
  return { em: { getMetadata: () => storage } as unknown as EntityManager, T };
}

describe('entityOf', () => {
  it('copies a row\'s columns to their properties over the entity\'s prototype, leaving out columns the row lacks', () => {
    const { em, T } = managerOf([{ name: 'id', kind: 'scalar', runtimeType: 'string' }, { name: 'fileKey', kind: 'scalar', runtimeType: 'string' }, { name: 'sizeBytes', kind: 'scalar', runtimeType: 'number' }]);
    const made = entityOf(em, T, { id: 'a', file_key: 'k', other: 1 });
    expect(Object.getPrototypeOf(made)).toBe(T.prototype);
    expect({ ...made }).toEqual({ id: 'a', fileKey: 'k' });
  });

  it('refuses an entity with a relation or an embedded value: its raw column is not the property', () => {
    for (const kind of ['m:1', 'embedded']) {
      const { em, T } = managerOf([{ name: 'id', kind: 'scalar', runtimeType: 'string' }, { name: 'owner', kind }]);
      expect(() => entityOf(em, T, { id: 'a', owner: 'x' })).toThrow(`entityOf: T.owner is not a plain column (${kind})`);
    }
  });
});
