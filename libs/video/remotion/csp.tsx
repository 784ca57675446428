import { pageCsp } from '../src/css.js';

/**
 * The page's Content-Security-Policy, put in the head when the bundle loads, before any clip of an
 * edit is drawn (Chromium enforces a policy a script adds as a meta element from then on). Built
 * from the input props Remotion sets before the page loads; unreadable props leave only 'self'.
 */
function mediaOrigin(): string | undefined {
  try {
    const raw = (window as { remotion_inputProps?: unknown }).remotion_inputProps;
    const props = (typeof raw === 'string' ? JSON.parse(raw) : undefined) as { mediaOrigin?: unknown } | undefined;
    return typeof props?.mediaOrigin === 'string' ? props.mediaOrigin : undefined;
  } catch {
    return undefined;
  }
}

const meta = document.createElement('meta');
meta.httpEquiv = 'Content-Security-Policy';
meta.content = pageCsp(mediaOrigin());
document.head.prepend(meta);
