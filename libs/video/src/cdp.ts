import type { HeadlessBrowser } from '@remotion/renderer';

const PATCHED = Symbol('screenshotsWithinViewport');

type RawSend = (message: Record<string, unknown>) => number;

/**
 * Remotion asks for every frame with `Page.captureScreenshot { captureBeyondViewport: true }`, which
 * makes Chromium resize the view to the page's full size and back around each capture (a relayout and
 * a `resize` in the page, every frame). The clip Remotion asks for is always the viewport itself (the
 * composition's size), so the flag buys nothing: it is turned off in the messages of every tab, at
 * the browser's connection they all send through. 2–4 % less wall time (docs/benchmarks.md).
 *
 * Remotion is pinned to an exact version; if its connection stops having `_rawSend`, the engine fails
 * to start here rather than silently losing the gain.
 */
export function screenshotsWithinViewport(browser: HeadlessBrowser): void {
  const connection = browser.connection as unknown as { _rawSend?: RawSend; [PATCHED]?: true };
  if (connection[PATCHED]) return;
  const raw = connection._rawSend;
  if (typeof raw !== 'function') throw new Error('Video engine: Remotion\'s browser connection has no _rawSend (Remotion version changed?)');
  connection._rawSend = (message) => raw.call(connection, withinViewport(message));
  connection[PATCHED] = true;
}

/** The message with `captureBeyondViewport: false` when it is a screenshot of Remotion's whole view. */
export function withinViewport(message: Record<string, unknown>): Record<string, unknown> {
  if (message.method !== 'Page.captureScreenshot') return message;
  const params = message.params as { captureBeyondViewport?: boolean; fromSurface?: boolean; clip?: { x: number; y: number } } | undefined;
  // Remotion's clip starts at the origin and, read from the surface, is the view's size (with
  // DISABLE_FROM_SURFACE set it is scaled and may not be: left as it is).
  if (!params?.captureBeyondViewport || params.fromSurface === false || (params.clip && (params.clip.x !== 0 || params.clip.y !== 0))) return message;
  return { ...message, params: { ...params, captureBeyondViewport: false } };
}

interface TargetInfo {
  targetId: string;
  type: string;
  url: string;
}

/**
 * Closes the blank tab Chromium opens at launch. Remotion never draws in it (every render opens
 * tabs of its own), but it keeps a renderer process alive for the browser's whole life: 80–85 MB of
 * RSS (25 MB PSS) on this machine (docs/benchmarks.md "Video engine"). Called before the browser
 * is handed to any render, so the only page then is the launch tab; the headless shell stays up
 * with no tab open.
 */
export async function closeLaunchTab(browser: HeadlessBrowser): Promise<number> {
  const connection = browser.connection as unknown as { send: (method: string, params?: Record<string, unknown>) => Promise<{ value: unknown }> };
  const { value } = await connection.send('Target.getTargets');
  const blank = (value as { targetInfos: TargetInfo[] }).targetInfos.filter((t) => t.type === 'page' && t.url === 'about:blank');
  for (const t of blank) await connection.send('Target.closeTarget', { targetId: t.targetId });
  return blank.length;
}
