import { ConnectionException } from '@mikro-orm/core';
import { isDatabaseUnavailable } from './unavailable.js';

// decisions.md "HTTP and errors": a database that cannot be reached answers 503, anything else is not an outage.
describe('isDatabaseUnavailable', () => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('recognises a server down, restarting or refusing connections, however the driver wraps it', () => {
    expect(isDatabaseUnavailable(coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe(true);
    expect(isDatabaseUnavailable(coded('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(isDatabaseUnavailable(coded('08006'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: coded('ECONNRESET') }))).toBe(true);
    expect(isDatabaseUnavailable(new ConnectionException(new Error('gone')))).toBe(true);
  });

  it('leaves every other failure alone (a constraint, SQLite busy, a bug)', () => {
    expect(isDatabaseUnavailable(coded('23505', 'duplicate key value'))).toBe(false);
    expect(isDatabaseUnavailable(coded('SQLITE_BUSY', 'database is locked'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });
});
