import { registerStatement, reusePgStatements, reuseSqliteStatements } from './prepared.js';

describe('statement reuse on the ORM\'s connection', () => {
  it('SQLite: a registered text is compiled once per connection, any other text every time', () => {
    const compiled: string[] = [];
    const db = { prepare: (text: string) => (compiled.push(text), { reader: true, text }) as never };
    reuseSqliteStatements(db);
    registerStatement('select 1 -- reuse test');
    const a = db.prepare('select 1 -- reuse test');
    expect(db.prepare('select 1 -- reuse test')).toBe(a);
    db.prepare('select 2 -- not registered');
    db.prepare('select 2 -- not registered');
    expect(compiled).toEqual(['select 1 -- reuse test', 'select 2 -- not registered', 'select 2 -- not registered']);
  });

  it('PostgreSQL: each client of the pool sends a registered text as a named statement, others as they come', () => {
    let onConnect: ((client: { query: (...args: unknown[]) => unknown }) => void) | undefined;
    reusePgStatements({ on: (_event, listener) => { onConnect = listener as never; } });
    const sent: unknown[][] = [];
    const client = { query: (...args: unknown[]) => sent.push(args) };
    onConnect!(client);
    registerStatement('select $1 -- named test');
    client.query('select $1 -- named test', [1]);
    client.query('select $1 -- other', [2]);
    expect(sent[0]).toEqual([{ name: expect.stringMatching(/^s\d+$/), text: 'select $1 -- named test' }, [1], undefined]);
    expect(sent[1]).toEqual(['select $1 -- other', [2], undefined]);
  });
});
