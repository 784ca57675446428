import type { HeadlessBrowser } from '@remotion/renderer';
import type { Size } from '#libs/edit-spec';

/** CSS pixels per inch: Chromium's page sizes are in inches, the html's layout in CSS px. */
const CSS_PX_PER_INCH = 96;
/** The longest a page may take to load its local files and print. */
export const PRINT_TIMEOUT_MS = 30_000;

type Send = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>;

/**
 * Whether the print tab may load `url`: the render's media server (`origin`), data: and about:
 * URLs. Anything else (a `<meta http-equiv="refresh">` navigating the tab to a loopback port: the
 * document's CSP cannot stop a top-level navigation) is failed before it leaves the browser.
 */
export function printMayLoad(url: string, origin: string): boolean {
  return url.startsWith(`${origin}/`) || /^(?:data|about):/i.test(url);
}

/**
 * An html document (htmlDocument: its CSP allows no script and no network beyond the render's media
 * server; the tab's requests are held to the same by the Fetch domain, printMayLoad) printed by Chromium to a one-page PDF of `size` CSS px: vector, its text real text in
 * subset-embedded fonts, its links kept as link annotations. A tab of its own, shown as a screen
 * (not the print media type, so it looks as in a video frame), backgrounds printed, no margins.
 */
export async function printHtml(browser: HeadlessBrowser, html: string, size: Size, origin: string, signal?: AbortSignal): Promise<Buffer> {
  const connection = browser.connection;
  const raw = connection.send as unknown as (method: string, params?: Record<string, unknown>) => Promise<{ value: Record<string, unknown> }>;
  const call: Send = async (method, params = {}) => (await raw.call(connection, method, params)).value;
  const { targetId } = (await call('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
  let timer: NodeJS.Timeout | undefined;
  try {
    const { sessionId } = (await call('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    const session = connection.session(sessionId);
    if (!session) throw new Error('Chromium gave no session for the print tab');
    const sessionSend = session.send as unknown as (method: string, params?: Record<string, unknown>) => Promise<{ value: Record<string, unknown> }>;
    const send: Send = async (method, params = {}) => (await sessionSend.call(session, method, params)).value;
    // Every request of the tab is paused: the media server's continue, the rest fail (a navigation
    // is aborted, so no error page replaces the document).
    session.on('Fetch.requestPaused', (event: { requestId: string; request: { url: string }; resourceType?: string }) => {
      const allowed = printMayLoad(event.request.url, origin);
      void send(allowed ? 'Fetch.continueRequest' : 'Fetch.failRequest', {
        requestId: event.requestId,
        ...(allowed ? {} : { errorReason: event.resourceType === 'Document' ? 'Aborted' : 'BlockedByClient' }),
      }).catch(() => undefined);
    });
    await send('Fetch.enable', { patterns: [{ urlPattern: '*' }] });
    const work = (async () => {
      const { frameTree } = (await send('Page.getFrameTree')) as { frameTree: { frame: { id: string } } };
      await send('Emulation.setDeviceMetricsOverride', { width: Math.ceil(size.width), height: Math.ceil(size.height), deviceScaleFactor: 1, mobile: false });
      await send('Emulation.setEmulatedMedia', { media: 'screen' });
      await send('Page.setDocumentContent', { frameId: frameTree.frame.id, html });
      // A navigation the document starts (a meta refresh) is aborted by the request filter, but it may
      // interrupt the evaluation or the print below: each is tried again, up to three times.
      const settled = async <T>(step: () => Promise<T>): Promise<T> => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await step();
          } catch (err) {
            if (attempt >= 3 || signal?.aborted) throw err;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      };
      // Pictures decoded and every font the laid-out text uses loaded (DevTools evaluation is not
      // subject to the document's CSP, which refuses the page's own scripts).
      await settled(() => send('Runtime.evaluate', {
        awaitPromise: true,
        expression: `(async () => {
          if (document.readyState !== 'complete') await new Promise((r) => addEventListener('load', r, { once: true }));
          void document.body.offsetHeight;
          await Promise.all([...document.images].map((i) => i.decode().catch(() => undefined)));
          await document.fonts.ready;
          return true;
        })()`,
      }));
      const { data } = (await settled(() => send('Page.printToPDF', {
        paperWidth: size.width / CSS_PX_PER_INCH,
        paperHeight: size.height / CSS_PX_PER_INCH,
        marginTop: 0, marginBottom: 0, marginLeft: 0, marginRight: 0,
        printBackground: true,
        preferCSSPageSize: false,
        pageRanges: '1',
        generateTaggedPDF: false,
      }))) as { data: string };
      return Buffer.from(data, 'base64');
    })();
    const stop = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the html did not print within ${PRINT_TIMEOUT_MS / 1000} s`)), PRINT_TIMEOUT_MS);
      signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
    return await Promise.race([work, stop]);
  } finally {
    clearTimeout(timer);
    await call('Target.closeTarget', { targetId }).catch(() => undefined);
  }
}
