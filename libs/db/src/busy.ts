/**
 * SQLite lets one process write at a time. A transaction that read first and then writes fails at
 * once with "database is locked" (SQLITE_BUSY_SNAPSHOT) when another process committed in between:
 * busy_timeout cannot help, the transaction must start over. `retryBusy` runs it again (jittered,
 * up to ~1 s in total); PostgreSQL never raises this, so the wrapper costs nothing there.
 */
export function isBusy(err: unknown): boolean {
  const e = err as { code?: string; message?: string; cause?: { code?: string } } | null;
  return !!e && (/SQLITE_BUSY/.test(String(e.code ?? e.cause?.code ?? '')) || /database is locked/.test(String(e.message ?? '')));
}

export async function retryBusy<T>(fn: () => Promise<T>, attempts = 10): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i + 1 >= attempts || !isBusy(err)) throw err;
      await new Promise((r) => setTimeout(r, 2 + Math.random() * 10 * 2 ** Math.min(i, 5)));
    }
  }
}
