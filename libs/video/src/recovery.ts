import { AsyncLocalStorage } from 'node:async_hooks';
import type { HeadlessBrowser } from '@remotion/renderer';

/** What the ledger needs of a Remotion tab. */
interface Tab {
  url(): string;
  close(...args: unknown[]): Promise<void>;
  target(): { _targetId: string };
}

interface Scope {
  readonly tabs: Set<Tab>;
  over: boolean;
  /** A tab of the call went away without Remotion closing it. */
  lost: () => void;
}

const WATCHED = Symbol('tabLedger');

/** How long a settled call waits for Chromium to confirm each of its tabs closed (a healthy close takes milliseconds). */
const CLOSE_WAIT_MS = 5_000;

/**
 * The tabs of each Remotion call, closed when that call settles.
 *
 * Remotion opens a render's tabs itself and, when the browser is ours (`puppeteerInstance`), closes
 * at the end only those it has in hand then: a render cancelled or failed while its tabs were still
 * opening leaves the late ones open, loaded and running (issue 32). Such a tab is a main tab of
 * @remotion/media on Remotion's server origin (`http://localhost:3000`, the first free port, so the
 * next render's origin too); every tab of that origin shares the `BroadcastChannel` by which a
 * render's helper tabs ask its main tab for video frames and audio. A render with helper tabs (an mp4
 * under SPLIT_MIN_FRAMES frames: at 12 or 15 fps, a few seconds) then has two main tabs answering
 * each request, and each main tab throws `Invalid message: {"type":"response-success", …}` on the
 * other's answer (the audio's Int16Array printed by JSON.stringify as `{"0":…}`): an exception in
 * the page, which fails every such render until the browser is restarted. Longer renders are split
 * into parts of one main tab each, so they never asked and never failed.
 *
 * The ledger knows which call a tab belongs to by the async context its `newPage` runs in: each call
 * runs `within` a scope of its own; a tab that finishes opening after its scope is over is closed at
 * once.
 */
export class TabLedger {
  private readonly scopes = new AsyncLocalStorage<Scope>();
  private readonly live = new Set<Scope>();
  /** Tabs Remotion (or the ledger) asked to close, with that close: their end is no loss. */
  private readonly closing = new WeakMap<Tab, Promise<unknown>>();

  /**
   * Records the tabs `browser.newPage` opens in the scope of the call that opened them, and tells a
   * call when one of its tabs ends without being closed (closed from outside, e.g. by CDP): its other
   * tabs would wait for it until Remotion's time-out (a helper tab for its main tab's frames, ~30 s).
   */
  watch(browser: HeadlessBrowser): void {
    const target = browser as unknown as { newPage: (...args: unknown[]) => Promise<Tab>; [WATCHED]?: true };
    if (target[WATCHED]) return;
    const raw = target.newPage;
    if (typeof raw !== 'function') throw new Error('Video engine: Remotion\'s browser has no newPage (Remotion version changed?)');
    target.newPage = async (...args: unknown[]) => {
      const tab = await raw.apply(browser, args);
      const scope = this.scopes.getStore();
      if (!scope) return tab;
      if (scope.over) {
        await this.close(tab);
        throw new Error('The render this tab was opened for is over');
      }
      const close = tab.close;
      tab.close = (...a: unknown[]) => {
        const closed = close.apply(tab, a);
        this.closing.set(tab, closed.catch(() => undefined));
        return closed;
      };
      scope.tabs.add(tab);
      return tab;
    };
    browser.connection.on('Target.targetDestroyed', (event: { targetId: string }) => {
      for (const scope of this.live) {
        for (const tab of scope.tabs) {
          if (tab.target()._targetId === event.targetId && !this.closing.has(tab)) scope.lost();
        }
      }
    });
    target[WATCHED] = true;
  }

  /** Runs one Remotion call; every tab it opened (now or later) is closed when it settles. `lost`: one of its tabs ended while it ran. */
  async within<T>(work: () => Promise<T>, lost: () => void = () => undefined): Promise<T> {
    const scope: Scope = { tabs: new Set(), over: false, lost };
    this.live.add(scope);
    try {
      return await this.scopes.run(scope, work);
    } finally {
      scope.over = true;
      this.live.delete(scope);
      // Remotion closes the tabs it holds just after its call settles: it goes first (a second close of
      // the same tab fails in Remotion's, which logs "Unable to close browser tab"); the ledger closes
      // the rest and waits for both.
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all([...scope.tabs].map((tab) => this.close(tab)));
    }
  }

  /**
   * Closes the tabs on Remotion's server origins (`http://localhost:<port>/`) that no running call
   * owns: whatever left them, they would answer the next render's frame requests. Print tabs (the
   * media server's origin) are not Remotion's and are left alone. Answers how many were closed.
   */
  async closeStrays(browser: HeadlessBrowser): Promise<number> {
    const owned = new Set<string>();
    for (const scope of this.live) for (const tab of scope.tabs) owned.add(tab.target()._targetId);
    // From Chromium's list: Remotion's own (`browser.pages()`) leaves out tabs it did not open.
    const send = browser.connection.send as unknown as (method: string, params?: Record<string, unknown>) => Promise<{ value: Record<string, unknown> }>;
    const call = async (method: string, params: Record<string, unknown> = {}) => (await send.call(browser.connection, method, params)).value;
    const { targetInfos } = (await call('Target.getTargets')) as { targetInfos: { targetId: string; type: string; url: string }[] };
    const strays = targetInfos.filter((t) => t.type === 'page' && !owned.has(t.targetId) && /^http:\/\/localhost:\d+\//.test(t.url));
    await Promise.all(strays.map((t) => call('Target.closeTarget', { targetId: t.targetId }).catch(() => undefined)));
    return strays.length;
  }

  /** Closes a tab, waiting at most CLOSE_WAIT_MS for Chromium to confirm (a call never hangs on its tabs). */
  private async close(tab: Tab): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.closing.get(tab) ?? tab.close().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }
}

/** A tab of a call was closed from outside while the call ran. */
export class TabLost extends Error {
  constructor() {
    super('A tab of the render was closed');
    this.name = 'TabLost';
  }
}

/** The browser this engine drives went away while a call used it (killed, crashed, its connection lost). */
export class BrowserGone extends Error {
  constructor() {
    super('The browser disconnected');
    this.name = 'BrowserGone';
  }
}

/**
 * A fault of the browser or of @remotion/media's messages between tabs, not of the edit: the tab
 * crashed or was closed (`Page crashed!`, `Target closed`, `Session closed`), the browser went away
 * (BrowserGone), or a tab received a message it cannot parse (`Invalid message: …`). Such a call
 * is worth one more try in fresh tabs; anything else (a bad file, a font, a time-out, a cancel) is
 * not, and fails as before.
 */
export function isBrowserFault(err: unknown): boolean {
  if (err instanceof BrowserGone || err instanceof TabLost) return true;
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  return /^Invalid message: |Page crashed!|Target closed|Session closed/.test(message);
}

/**
 * Calls `gone` when the browser's connection closes without the engine closing it (the process was
 * killed or crashed): Remotion's HeadlessBrowser emits `closed` only from its own `close()`, so a
 * dead browser would otherwise stay the engine's browser, and a render in it would wait for ever.
 */
export function onDisconnect(browser: HeadlessBrowser, gone: () => void): void {
  const transport = (browser.connection as unknown as { transport?: { onclose?: (() => void) | undefined } }).transport;
  if (!transport) throw new Error('Video engine: Remotion\'s browser connection has no transport (Remotion version changed?)');
  const close = transport.onclose;
  transport.onclose = () => {
    close?.();
    gone();
  };
}
